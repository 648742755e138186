//! Helpers shared by the integration tests (`mod common;` in a test file).
//!
//! Not every test uses every helper, hence the crate-wide `dead_code` allowance.
#![allow(dead_code)]

pub mod corpus;
pub mod cxx;
pub mod emu;
pub mod harness;
