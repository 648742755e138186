//! What stays on the host at a host level, and why:
//! - a top-level map named by `--host-map` runs on the host as a sequential
//!   loop; the maps directly below it become kernels launched once per host
//!   iteration, the nested SDFGs directly below it are host levels of their
//!   own (or run whole in a one-thread kernel), the tasklets directly below
//!   it run in one-thread kernels (ICON's shape: an outer block loop
//!   launching inner work);
//! - a top-level map that holds a callback (a tasklet that calls back into
//!   Python or a stateful host function, DaCe's `side_effects`), anywhere
//!   below it or in the nested SDFGs it calls, stays on the host whole, as
//!   the CPU code has it; its data stays on the host.

use crate::ir::*;

use super::placement::each_state;

/// A part of the program that stays on the host, for the `--offload` report.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostPart {
    /// The map's (or node's) label.
    pub label: String,
    /// The JSON pointer of the node.
    pub path: String,
    /// Why it stays on the host.
    pub why: String,
}

/// The label of the first callback tasklet in the SDFG (nested SDFGs included).
pub(super) fn callback_in_sdfg(sdfg: &Sdfg) -> Option<String> {
    let mut found = None;
    each_state(&sdfg.body, &mut |st| {
        for n in &st.nodes {
            if found.is_some() {
                return;
            }
            found = callback_at(n);
        }
    });
    found
}

fn callback_at(n: &Node) -> Option<String> {
    match &n.kind {
        NodeKind::Tasklet(t) if t.callback => Some(n.label.clone()),
        NodeKind::Nested(ns) => callback_in_sdfg(&ns.sdfg),
        _ => None,
    }
}

/// The label of the first callback tasklet in the scope of `entry`
/// (nested SDFGs included).
pub(super) fn callback_below(st: &State, entry: NodeId) -> Option<String> {
    (0..st.nodes.len())
        .map(|i| NodeId(i as u32))
        .filter(|&id| st.is_below(id, entry))
        .find_map(|id| callback_at(&st.nodes[id.index()]))
}

/// True if the node is the entry or exit of a top-level map that stays on
/// the host because it holds a callback, or lies inside one.
pub(super) fn in_callback_map(st: &State, id: NodeId) -> bool {
    let mut cur = Some(id);
    let mut guard = 0;
    while let Some(x) = cur {
        let n = &st.nodes[x.index()];
        let entry = match &n.kind {
            NodeKind::MapEntry(_) => Some(x),
            NodeKind::MapExit { entry } => Some(*entry),
            _ => None,
        };
        if let Some(e) = entry
            && st.nodes[e.index()].scope.is_none()
            && let NodeKind::MapEntry(m) = &st.nodes[e.index()].kind
            && !super::placement::is_gpu_schedule(m.schedule)
            && callback_below(st, e).is_some()
        {
            return true;
        }
        cur = n.scope;
        guard += 1;
        if guard > st.nodes.len() {
            break;
        }
    }
    false
}

/// The nodes directly in the scope of `entry`.
pub(super) fn children(st: &State, entry: NodeId) -> Vec<NodeId> {
    (0..st.nodes.len())
        .map(|i| NodeId(i as u32))
        .filter(|&id| st.nodes[id.index()].scope == Some(entry))
        .collect()
}
