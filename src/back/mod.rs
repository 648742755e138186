//! Target writers.

pub mod body;
pub mod complex;
pub mod cpp;
pub mod emit;
pub mod gpu;
pub mod half;
pub mod sample;

/// The generated files of one SDFG: (file name, contents).
pub type Outputs = Vec<(String, String)>;
