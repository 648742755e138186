//! Target writers.

pub mod cexpr;
pub mod cpp;
pub mod emit;
