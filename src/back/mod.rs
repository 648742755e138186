//! Target writers.

pub mod body;
pub mod cexpr;
pub mod complex;
pub mod cpp;
pub mod emit;
pub mod gpu;
pub mod sample;
