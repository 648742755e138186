//! GPU offloading (`--offload`): turns a CPU SDFG into a GPU one, as DaCe's
//! `GPUTransformSDFG` does, after library nodes were expanded (so they
//! become real kernels).
//!
//! A *host level* is the top-level SDFG, or a nested SDFG called at the top
//! of a host level's state that holds a top-level map of its own. At a host
//! level:
//! - [`placement`]: every top-level map becomes a `GPU_Device` kernel (maps
//!   and nested SDFGs below it run sequentially in its threads); a nested
//!   SDFG with no map of its own runs whole in a one-thread kernel; other
//!   code nodes that touch device data run in one-thread kernels (the writer
//!   does that for every host-level code node on device data).
//! - [`data`]: every container the dataflow touches lives on the device:
//!   arguments of the program get a `GPU_Global` twin, transients (views
//!   included) take `GPU_Global` storage, except those used only inside one
//!   kernel (they stay registers / local arrays in the kernel).
//! - [`copies`]: twins are filled once at program start and written back
//!   once at the end (and before every return); containers the host reads
//!   in interstate code (conditions, assignments, loop bounds) get a host
//!   copy refreshed after every state that writes them on the device.
//!
//! The C ABI does not change: arguments stay host arrays.

mod copies;
mod data;
mod placement;

use std::collections::BTreeSet;

use crate::diag::{Error, Result};
use crate::ir::*;

/// What offloading did, for `--stats` and the comparison with DaCe.
#[derive(Clone, Debug, Default)]
pub struct OffloadStats {
    /// Top-level maps made `GPU_Device` kernels.
    pub map_kernels: usize,
    /// Nested SDFGs with no map of their own run in a one-thread kernel.
    pub nested_kernels: usize,
    /// Host-level tasklets on device data (each a one-thread kernel).
    pub tasklet_kernels: usize,
    /// Nested SDFGs that are host levels of their own.
    pub host_levels: usize,
    /// Host-to-device copies at program start: (container, bytes).
    pub copy_in: Vec<(String, Expr)>,
    /// Device-to-host copies at program end: (container, bytes).
    pub copy_out: Vec<(String, Expr)>,
    /// Device-to-host copies after states whose result the host reads: (container, bytes).
    pub host_reads: Vec<(String, Expr)>,
}

impl OffloadStats {
    /// Kernels in the program text (each may launch many times).
    pub fn kernels(&self) -> usize {
        self.map_kernels + self.nested_kernels + self.tasklet_kernels
    }
}

/// Offloads the SDFG to the GPU in place (see the module documentation).
///
/// `available`: the symbols the program receives (sizes of device twins are
/// written in them).
pub fn offload(sdfg: &mut Sdfg, available: &BTreeSet<String>) -> Result<OffloadStats> {
    refuse_gpu(sdfg)?;
    let mut stats = OffloadStats::default();
    host_level(sdfg, true, &BTreeSet::new(), available, &mut stats)?;
    Ok(stats)
}

/// An SDFG that already has GPU storage or schedules is not offloaded again.
fn refuse_gpu(sdfg: &Sdfg) -> Result<()> {
    let mut found: Option<(String, String)> = None;
    sdfg.for_each_sdfg(&mut |s| {
        for (name, d) in &s.arrays {
            if found.is_none() && d.storage.is_gpu() {
                found = Some((
                    d.path.clone(),
                    format!("container '{name}' has storage {}", d.storage.dace_name()),
                ));
            }
        }
        placement::each_node(&s.body, &mut |n| {
            let sched = match &n.kind {
                NodeKind::MapEntry(m) => m.schedule,
                NodeKind::Nested(ns) => ns.schedule,
                _ => return,
            };
            if found.is_none() && placement::is_gpu_schedule(sched) {
                found = Some((
                    n.path.clone(),
                    format!("'{}' has schedule {}", n.label, sched.dace_name()),
                ));
            }
        });
    });
    match found {
        Some((path, what)) => Err(Error::unsupported(
            path,
            format!("--offload takes a CPU SDFG, but {what}; compile it without --offload"),
        )),
        None => Ok(()),
    }
}

/// Offloads one host level. `device_args`: the non-transients of a nested
/// SDFG whose outer container lives on the device.
fn host_level(
    sdfg: &mut Sdfg,
    top: bool,
    device_args: &BTreeSet<String>,
    available: &BTreeSet<String>,
    stats: &mut OffloadStats,
) -> Result<()> {
    // Which host-level nested SDFGs are host levels of their own.
    let nested_levels = placement::place(sdfg, stats)?;
    let plan = data::place(sdfg, top, device_args, available)?;
    // Recurse into nested host levels with the connectors that point to device data.
    let device = plan.device.clone();
    let mut err = None;
    placement::each_host_nested_mut(&mut sdfg.body, &mut |st_nodes_edges| {
        let (ns, outer_data) = st_nodes_edges;
        if err.is_some() || !nested_levels.contains(&ns.sdfg.path) {
            return;
        }
        let args: BTreeSet<String> = outer_data
            .into_iter()
            .filter(|(_, outer)| device.contains(outer))
            .map(|(inner, _)| inner)
            .collect();
        stats.host_levels += 1;
        if let Err(e) = host_level(&mut ns.sdfg, false, &args, available, stats) {
            err = Some(e);
        }
    });
    if let Some(e) = err {
        return Err(e);
    }
    // Host-level tasklets on device data run in one-thread kernels.
    placement::each_state(&sdfg.body, &mut |st| {
        for (i, n) in st.nodes.iter().enumerate() {
            let id = NodeId(i as u32);
            if n.scope.is_none()
                && matches!(n.kind, NodeKind::Tasklet(_))
                && st.edges.iter().any(|e| {
                    (e.src == id || e.dst == id)
                        && e.memlet
                            .data
                            .as_ref()
                            .is_some_and(|d| plan.device.contains(d))
                })
            {
                stats.tasklet_kernels += 1;
            }
        }
    });
    copies::insert(sdfg, top, &plan, stats)
}

#[cfg(test)]
mod tests;
