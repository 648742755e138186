//! sdfgc: a code generator for DaCe SDFGs.
//!
//! Layering: [`front`] turns DaCe's JSON into the [`ir`], [`valid`] checks it,
//! [`passes`] infer and plan (lifetimes, storage, workspace layout), and
//! [`back`] holds one writer per target. [`driver`] ties them together for
//! the command line; [`options`] holds what shapes a compile.

pub mod back;
pub mod diag;
pub mod driver;
pub mod front;
pub mod ir;
pub mod options;
pub mod passes;
pub mod report;
pub mod summary;
pub mod valid;
