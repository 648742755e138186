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
//! The C ABI does not change: arguments stay host arrays, unless
//! [`Settings::device_args`] (`--offload=device-args`): the array arguments
//! are then `GPU_Global` themselves (the caller passes device pointers) and
//! nothing is copied in or out. [`host`]: what stays on the host, and why.

mod copies;
mod data;
mod host;
mod placement;

pub use host::HostPart;

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
    /// Device-to-host copies after states whose result the host reads
    /// (and, for device arguments the host reads, at entry): (container, bytes).
    pub host_reads: Vec<(String, Expr)>,
    /// `--offload=device-args`: the array arguments taken on the device.
    pub device_args: Vec<String>,
    /// Maps (and nested SDFGs) that stay on the host, and why.
    pub host_parts: Vec<HostPart>,
}

/// How to offload (from the compile options).
#[derive(Clone, Debug, Default)]
pub struct Settings {
    /// The array arguments are device memory (`--offload=device-args`).
    pub device_args: bool,
    /// Labels of top-level maps that stay on the host (`--host-map`).
    pub host_maps: Vec<String>,
}

impl Settings {
    /// The offload settings of the compile options.
    pub fn of(opts: &crate::options::CompileOptions) -> Settings {
        Settings {
            device_args: opts.offload_args == crate::options::OffloadArgs::DeviceArgs,
            host_maps: opts.host_maps.clone(),
        }
    }
}

/// What one host level needs besides its SDFG.
struct Level<'a> {
    settings: &'a Settings,
    available: &'a BTreeSet<String>,
    /// `--host-map` labels found so far.
    matched: BTreeSet<String>,
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
    offload_with(sdfg, available, &Settings::default())
}

/// [`offload`] with settings: device arguments, host maps. A `--host-map`
/// label that names no top-level map of a host level is a usage error.
pub fn offload_with(
    sdfg: &mut Sdfg,
    available: &BTreeSet<String>,
    settings: &Settings,
) -> Result<OffloadStats> {
    refuse_gpu(sdfg)?;
    let mut stats = OffloadStats::default();
    let mut level = Level {
        settings,
        available,
        matched: BTreeSet::new(),
    };
    host_level(sdfg, true, &BTreeSet::new(), &mut level, &mut stats)?;
    if let Some(missing) = settings
        .host_maps
        .iter()
        .find(|l| !level.matched.contains(*l))
    {
        return Err(Error::new(
            crate::diag::ErrorKind::Usage,
            "",
            format!(
                "--host-map {missing}: no map at the top of a state of '{}' (or of a nested SDFG called there) has the label '{missing}'",
                sdfg.name
            ),
        ));
    }
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
    level: &mut Level,
    stats: &mut OffloadStats,
) -> Result<()> {
    // Which host-level nested SDFGs are host levels of their own.
    let nested_levels =
        placement::place(sdfg, stats, &level.settings.host_maps, &mut level.matched)?;
    let args_on_device = top && level.settings.device_args;
    let plan = data::place(sdfg, top, device_args, level.available, args_on_device)?;
    stats
        .device_args
        .extend(plan.args_on_device.iter().cloned());
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
        if let Err(e) = host_level(&mut ns.sdfg, false, &args, level, stats) {
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
mod host_tests;
#[cfg(test)]
mod tests;
