//! DaCe's default schedules inside kernels (`infer_types.
//! set_default_schedule_and_storage_types`, which DaCe's generator runs
//! before writing code): a map of schedule `Default` directly in the scope
//! of a `GPU_Device` map is a `GPU_ThreadBlock` map
//! (`dtypes.SCOPEDEFAULT_SCHEDULE[GPU_Device]`). Such maps are what
//! `GPUTransformSDFG(sequential_innermaps=False)` leaves; with the default
//! `sequential_innermaps=True` the inner maps are `Sequential` already.
//! Only for GPU targets, and before `--offload` places maps (its kernels'
//! inner maps stay loops). A map whose range has a size known only at run
//! time (DaCe over-approximates it, `min(N, 32 i + 32) - 32 i` to 32, or
//! launches a block of that many threads) stays a loop in each thread.
//! A `GPU_Persistent` map with device maps directly inside (DaCe's
//! persistent kernel: its range ignored, the inner maps grid-strided over
//! one grid) runs its body once, each inner map a kernel of its own.

use crate::ir::simplify::{eval_int, simplify};
use crate::ir::*;

/// Gives the `Default` maps directly inside `GPU_Device` maps DaCe's
/// `GPU_ThreadBlock` schedule, in every state of the SDFG tree.
pub fn infer_thread_block_maps(sdfg: &mut Sdfg) {
    fn region(r: &mut Region) {
        each_state_mut(r, &mut |st| {
            let device: Vec<bool> = st
                .nodes
                .iter()
                .map(|n| matches!(&n.kind, NodeKind::MapEntry(m) if m.schedule == Schedule::GpuDevice))
                .collect();
            // GPU_Persistent maps with device maps directly inside.
            let inner_device = |m: &MapEntry| {
                matches!(
                    m.schedule,
                    Schedule::Default | Schedule::GpuDevice | Schedule::GpuDefault
                )
            };
            let persistent: Vec<bool> = st
                .nodes
                .iter()
                .enumerate()
                .map(|(i, n)| {
                    matches!(&n.kind, NodeKind::MapEntry(m) if m.schedule == Schedule::GpuPersistent)
                        && st.nodes.iter().any(|c| {
                            c.scope.is_some_and(|p| p.index() == i)
                                && matches!(&c.kind, NodeKind::MapEntry(m) if inner_device(m))
                        })
                })
                .collect();
            for (i, n) in st.nodes.iter_mut().enumerate() {
                let parent_is_device = n.scope.is_some_and(|p| device[p.index()]);
                let in_persistent = n.scope.is_some_and(|p| persistent[p.index()]);
                match &mut n.kind {
                    // DaCe's persistent kernel ignores the GPU_Persistent
                    // map's range and runs its body once, the device maps
                    // inside grid-strided over one grid: the same values
                    // as the body run once on the host, each inner map a
                    // kernel of its own.
                    NodeKind::MapEntry(m) if persistent[i] => {
                        m.schedule = Schedule::Sequential;
                        for r in &mut m.range {
                            r.end = r.start.clone();
                            r.step = Expr::Int(1);
                        }
                    }
                    NodeKind::MapEntry(m) if in_persistent && inner_device(m) => {
                        m.schedule = Schedule::GpuDevice;
                    }
                    NodeKind::MapEntry(m)
                        if parent_is_device
                            && m.schedule == Schedule::Default
                            && m.range.iter().all(|r| {
                                eval_int(&simplify(&r.extent()), &mut |_| None).is_some()
                            }) =>
                    {
                        m.schedule = Schedule::GpuThreadBlock;
                    }
                    NodeKind::Nested(ns) => region(&mut ns.sdfg.body),
                    _ => {}
                }
            }
        });
    }
    region(&mut sdfg.body);
}
