//! Passes: check what the writers need and plan, once per SDFG, every
//! decision the writers must not recompute (ABI, where each transient lives
//! and when it is allocated, the workspace layout).

pub mod abi;
pub mod alloc;

use crate::diag::Result;
use crate::driver::CompileOptions;
use crate::ir::Sdfg;

pub use alloc::{AllocPlan, AllocScope, Memory};

/// An SDFG with everything the writers need.
#[derive(Debug)]
pub struct Program {
    /// The SDFG (library nodes still unexpanded; the writers expand them).
    pub sdfg: Sdfg,
    /// Exported interface.
    pub abi: abi::Abi,
    /// Where each transient lives.
    pub alloc: AllocPlan,
    /// The memory mode asked for.
    pub mode: Option<crate::driver::Mode>,
}

/// Runs the passes for one SDFG.
pub fn prepare(sdfg: Sdfg, opts: &CompileOptions) -> Result<Program> {
    let abi = abi::compute(&sdfg);
    let alloc = alloc::plan(&sdfg, &abi, opts)?;
    Ok(Program {
        sdfg,
        abi,
        alloc,
        mode: opts.mode,
    })
}
