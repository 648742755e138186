//! The body writer shared by every target: one SDFG (top level or nested)
//! as a C++ function body — control flow, dataflow, tasklets, and (for GPU
//! targets) kernels, launches and copies (library nodes are expanded before,
//! by [`crate::passes::expand`]). Targets
//! differ only in the file skeleton and in the memory and stream APIs.

mod callback;
pub mod constants;
mod copies;
mod dataflow;
pub(crate) mod datastream;
mod function;
mod hostsync;
pub(crate) mod instrument;
mod kernel;
mod library;
mod parallel_work;
mod reduction;
mod streams;
mod tasklet;
mod threadblock;
pub(crate) mod vector;
mod views;

pub(crate) use function::{FnWriter, WriterState};
pub use function::{copy_stride_name, member_name};
