//! DaCe JSON → IR.

pub mod json;
pub mod nonfinite;
pub mod python;
pub mod scope_subsets;
pub mod sympy;
pub mod tree;
pub mod tree_de;
mod tree_parse;

use std::path::Path;

use crate::diag::{Error, ErrorKind, Result};
use crate::ir::Sdfg;

/// Reads and parses an SDFG file; errors carry the file name.
pub fn load_file(path: &Path) -> Result<Sdfg> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| Error::new(ErrorKind::Io, "", format!("cannot read: {e}")).in_file(path))?;
    json::load_str(&text).map_err(|e| e.in_file(path))
}
