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
            for n in &mut st.nodes {
                let parent_is_device = n.scope.is_some_and(|p| device[p.index()]);
                match &mut n.kind {
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
