//! What the C++ writer cannot express on the chosen target, refused by
//! name. Checked on the prepared program (after the passes have expanded
//! library nodes), before anything is written.

use super::environments::{declared_members, refuse_environments, tasklet_state_fields};
use super::wcr::refuse_wcr;
use crate::diag::{Error, Result};
use crate::ir::*;

/// Refuses what the writer cannot express for `sdfg` on a GPU target
/// (`gpu`; `cuda`: CUDA, not HIP) or on the CPU: library environments it
/// does not provide, struct data and Structures on GPUs, arguments of GPU
/// storage on the CPU, and write-conflict resolutions it has no code for.
pub fn refuse_unsupported(sdfg: &Sdfg, gpu: bool, cuda: bool) -> Result<()> {
    let mut all = Vec::new();
    sdfg.for_each_sdfg(&mut |s| all.push(s));
    let members = declared_members(&tasklet_state_fields(&all));
    refuse_environments(&sdfg.body, cuda, &members)?;
    if gpu
        && let Some((n, d)) = all
            .iter()
            .flat_map(|s| s.arrays.iter())
            .find(|(_, d)| matches!(d.dtype, DType::Record(_)))
    {
        return Err(Error::unsupported(
            &d.path,
            format!("data '{n}' of struct type '{}' on a GPU target", d.dtype),
        ));
    }
    if gpu && let Some(s) = all.iter().find(|s| !s.struct_types.is_empty()) {
        return Err(Error::unsupported(
            &s.path,
            format!(
                "structure type '{}' on a GPU target (DaCe Structures are compiled for the CPU only)",
                s.struct_types[0].name
            ),
        ));
    }
    for (n, d) in &sdfg.arrays {
        if !gpu && !d.transient && d.storage.is_gpu() {
            return Err(Error::unsupported(
                &d.path,
                format!(
                    "argument '{n}' has GPU storage {}; compile this SDFG with --target cuda or hip",
                    d.storage.dace_name()
                ),
            ));
        }
    }
    refuse_wcr(&all, gpu)
}
