//! The intermediate representation sdfgc's passes and writers work on.

pub mod callback;
pub mod cexpr;
pub mod data;
pub mod dtype;
pub mod environments;
pub mod expr;
pub mod order;
pub mod record;
pub mod sdfg;
pub mod simplify;
pub mod symtypes;

pub use callback::{Callback, CbValue};
pub use data::*;
pub use dtype::{DType, StructName};
pub use expr::*;
pub use record::Record;
pub use sdfg::*;
