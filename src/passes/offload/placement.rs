//! Placement: which code runs where at a host level.
//!
//! - A map at the top of a state becomes a `GPU_Device` kernel; the maps
//!   below it (and in nested SDFGs below it) run sequentially in its threads.
//! - A nested SDFG at the top of a state with a top-level map of its own is a
//!   host level of its own (its maps become kernels); one without runs whole
//!   in a one-thread kernel (a sequential scan stays one unit).

pub(super) use crate::ir::{each_node, each_state, each_state_mut};
use std::collections::BTreeSet;

use crate::diag::{Error, Result};
use crate::ir::*;

use super::OffloadStats;
use super::host::{self, HostPart};

/// True for the GPU schedules.
pub(super) fn is_gpu_schedule(s: Schedule) -> bool {
    matches!(
        s,
        Schedule::GpuDevice
            | Schedule::GpuDefault
            | Schedule::GpuPersistent
            | Schedule::GpuThreadBlock
            | Schedule::GpuThreadBlockDynamic
    )
}

/// The connector → outer container pairs of a nested SDFG node.
pub(super) type Connections = Vec<(String, String)>;

/// True if a map around the node is a kernel.
fn in_kernel_scope(st: &State, id: NodeId) -> bool {
    st.enclosing_scopes(id).any(|x| {
        matches!(&st.nodes[x.index()].kind, NodeKind::MapEntry(m) if is_gpu_schedule(m.schedule))
    })
}

/// Calls `f` on every nested SDFG on the host side of a state of the region
/// (at the top, or below host maps), with
/// its connections (inner name, outer container).
pub(super) fn each_host_nested_mut(
    r: &mut Region,
    f: &mut dyn FnMut((&mut NestedSdfg, Connections)),
) {
    each_state_mut(r, &mut |st| {
        for i in 0..st.nodes.len() {
            if in_kernel_scope(st, NodeId(i as u32))
                || !matches!(st.nodes[i].kind, NodeKind::Nested(_))
            {
                continue;
            }
            let id = NodeId(i as u32);
            let conns: Connections = st
                .edges
                .iter()
                .filter_map(|e| {
                    let data = e.memlet.data.clone()?;
                    if e.dst == id {
                        Some((e.dst_conn.clone()?, data))
                    } else if e.src == id {
                        Some((e.src_conn.clone()?, data))
                    } else {
                        None
                    }
                })
                .collect();
            if let NodeKind::Nested(ns) = &mut st.nodes[i].kind {
                f((ns, conns));
            }
        }
    });
}

/// True if the SDFG, as a host level, has a map at the top of a state (its
/// own or that of a nested SDFG at the top of a state).
pub(super) fn has_top_map(sdfg: &Sdfg) -> bool {
    let mut found = false;
    each_state(&sdfg.body, &mut |st| {
        for n in st.nodes.iter().filter(|n| n.scope.is_none()) {
            match &n.kind {
                NodeKind::MapEntry(_) => found = true,
                NodeKind::Nested(ns) if !found => found = has_top_map(&ns.sdfg),
                _ => {}
            }
        }
    });
    found
}

/// Places the code of one host level: top-level maps become kernels, nested
/// SDFGs without maps are wrapped in one-thread kernels; maps named in
/// `host_maps` and maps holding callbacks stay on the host ([`super::host`]).
/// Returns the JSON paths of the nested SDFGs that are host levels of their
/// own; adds the host map labels it found to `matched`.
pub(super) fn place(
    sdfg: &mut Sdfg,
    stats: &mut OffloadStats,
    host_maps: &[String],
    matched: &mut BTreeSet<String>,
) -> Result<BTreeSet<String>> {
    let mut levels = BTreeSet::new();
    let mut refused: Option<Error> = None;
    each_state_mut(&mut sdfg.body, &mut |st| {
        let n = st.nodes.len();
        for i in 0..n {
            if st.nodes[i].scope.is_some() {
                continue;
            }
            let id = NodeId(i as u32);
            match &st.nodes[i].kind {
                NodeKind::MapEntry(m) => {
                    if host_maps.contains(&m.label) {
                        matched.insert(m.label.clone());
                        stats.host_parts.push(HostPart {
                            label: m.label.clone(),
                            path: st.nodes[i].path.clone(),
                            why: "--host-map: a host loop launching the maps below it".into(),
                        });
                        if let Err(e) = host_map(st, id, stats, &mut levels) {
                            refused.get_or_insert(e);
                        }
                    } else if let Some(cb) = host::callback_below(st, id) {
                        stats.host_parts.push(HostPart {
                            label: m.label.clone(),
                            path: st.nodes[i].path.clone(),
                            why: format!("holds the callback '{cb}'"),
                        });
                    } else {
                        make_kernel(st, id, stats);
                    }
                }
                NodeKind::Nested(ns) => {
                    if has_top_map(&ns.sdfg) {
                        stats.host_parts.push(HostPart {
                            label: st.nodes[i].label.clone(),
                            path: st.nodes[i].path.clone(),
                            why: "a nested SDFG with maps of its own: a host level (its maps are kernels)".into(),
                        });
                        levels.insert(ns.sdfg.path.clone());
                    } else if let Some(cb) = host::callback_in_sdfg(&ns.sdfg) {
                        stats.host_parts.push(HostPart {
                            label: st.nodes[i].label.clone(),
                            path: st.nodes[i].path.clone(),
                            why: format!("holds the callback '{cb}'"),
                        });
                    } else {
                        wrap_nested(st, id, stats);
                    }
                }
                NodeKind::Tasklet(t) if t.code.language == Language::Cpp || t.callback => {
                    stats.host_parts.push(HostPart {
                        label: st.nodes[i].label.clone(),
                        path: st.nodes[i].path.clone(),
                        why: if t.callback {
                            "a callback at the top of a state: host code".into()
                        } else {
                            "C++ code at the top of a state: host code (a timer, a library call)"
                                .into()
                        },
                    });
                }
                _ => {}
            }
        }
    });
    if let Some(e) = refused {
        return Err(e);
    }
    Ok(levels)
}

/// A map becomes a `GPU_Device` kernel; everything below it runs in its threads.
fn make_kernel(st: &mut State, entry: NodeId, stats: &mut OffloadStats) {
    if let NodeKind::MapEntry(m) = &mut st.nodes[entry.index()].kind {
        m.schedule = Schedule::GpuDevice;
        m.omp_num_threads = 0;
        stats.map_kernels += 1;
        sequential_below(st, entry);
    }
}

/// A nested SDFG without maps of its own runs whole in a one-thread kernel.
fn wrap_nested(st: &mut State, id: NodeId, stats: &mut OffloadStats) {
    if let NodeKind::Nested(ns) = &mut st.nodes[id.index()].kind {
        sequential_sdfg(&mut ns.sdfg);
        stats.nested_kernels += 1;
        wrap_in_kernel(st, id);
    }
}

/// A `--host-map` map: a sequential host loop (its iterations launch kernels
/// on one stream, which runs them one after another anyway); the code
/// directly below it becomes kernels.
fn host_map(
    st: &mut State,
    entry: NodeId,
    stats: &mut OffloadStats,
    levels: &mut BTreeSet<String>,
) -> Result<()> {
    let host_label = match &st.nodes[entry.index()].kind {
        NodeKind::MapEntry(m) => m.label.clone(),
        _ => st.nodes[entry.index()].label.clone(),
    };
    if let NodeKind::MapEntry(m) = &mut st.nodes[entry.index()].kind {
        m.schedule = Schedule::Sequential;
        m.omp_num_threads = 0;
    }
    // Code nodes below it become separate kernels: none may pass a value
    // directly to another (code to code, without a container between).
    for c in host::children(st, entry) {
        let code = |id: NodeId| {
            matches!(
                st.nodes[id.index()].kind,
                NodeKind::Tasklet(_) | NodeKind::Nested(_)
            )
        };
        if let Some(e) = st
            .edges
            .iter()
            .find(|e| e.src == c && code(c) && code(e.dst))
        {
            return Err(Error::unsupported(
                &e.path,
                format!(
                    "--host-map: '{}' and '{}' below the host map '{host_label}' pass a value from code to code; each would be a kernel of its own",
                    st.nodes[e.src.index()].label,
                    st.nodes[e.dst.index()].label
                ),
            ));
        }
    }
    for c in host::children(st, entry) {
        let node = &st.nodes[c.index()];
        let callback = match &node.kind {
            NodeKind::MapEntry(_) => host::callback_below(st, c),
            NodeKind::Nested(ns) if !has_top_map(&ns.sdfg) => host::callback_in_sdfg(&ns.sdfg),
            NodeKind::Tasklet(t) if t.callback => Some(node.label.clone()),
            _ => None,
        };
        if let Some(cb) = callback {
            stats.host_parts.push(HostPart {
                label: node.label.clone(),
                path: node.path.clone(),
                why: format!("holds the callback '{cb}'"),
            });
            continue;
        }
        match &st.nodes[c.index()].kind {
            NodeKind::MapEntry(_) => make_kernel(st, c, stats),
            NodeKind::Nested(ns) if has_top_map(&ns.sdfg) => {
                levels.insert(ns.sdfg.path.clone());
            }
            NodeKind::Nested(_) => wrap_nested(st, c, stats),
            NodeKind::Tasklet(_) => {
                stats.tasklet_kernels += 1;
                wrap_in_kernel(st, c);
            }
            _ => {}
        }
    }
    Ok(())
}

/// The schedule a map gets inside a kernel: its threads run it sequentially.
fn in_kernel(s: Schedule) -> Schedule {
    match s {
        Schedule::Unrolled => Schedule::Unrolled,
        _ => Schedule::Sequential,
    }
}

/// Everything below a kernel's map runs in its threads.
fn sequential_below(st: &mut State, entry: NodeId) {
    for i in 0..st.nodes.len() {
        if !st.is_below(NodeId(i as u32), entry) {
            continue;
        }
        match &mut st.nodes[i].kind {
            NodeKind::MapEntry(m) => {
                m.schedule = in_kernel(m.schedule);
                m.omp_num_threads = 0;
            }
            NodeKind::Nested(ns) => {
                ns.schedule = Schedule::Default;
                sequential_sdfg(&mut ns.sdfg);
            }
            _ => {}
        }
    }
}

/// Every map of an SDFG that runs inside a kernel becomes sequential.
fn sequential_sdfg(sdfg: &mut Sdfg) {
    each_state_mut(&mut sdfg.body, &mut |st| {
        for n in &mut st.nodes {
            match &mut n.kind {
                NodeKind::MapEntry(m) => {
                    m.schedule = in_kernel(m.schedule);
                    m.omp_num_threads = 0;
                }
                NodeKind::Nested(ns) => {
                    ns.schedule = Schedule::Default;
                    sequential_sdfg(&mut ns.sdfg);
                }
                _ => {}
            }
        }
    });
}

/// Puts a host-side node in a one-iteration `GPU_Device` map: its memlets
/// go through the map's entry and exit.
pub(super) fn wrap_in_kernel(st: &mut State, id: NodeId) {
    let label = format!("{}_kernel", st.nodes[id.index()].label);
    let path = st.nodes[id.index()].path.clone();
    let outer = st.nodes[id.index()].scope;
    let entry = NodeId(st.nodes.len() as u32);
    let exit = NodeId(entry.0 + 1);
    let zero = RangeDim {
        start: Expr::Int(0),
        end: Expr::Int(0),
        step: Expr::Int(1),
        tile: Expr::Int(1),
    };
    st.nodes.push(Node {
        label: label.clone(),
        scope: outer,
        kind: NodeKind::MapEntry(MapEntry {
            label: label.clone(),
            params: vec!["__offload_i".into()],
            range: vec![zero],
            schedule: Schedule::GpuDevice,
            collapse: 1,
            gpu_block_size: Some(vec![1, 1, 1]),
            omp_num_threads: 0,
            unroll: false,
            exit,
            consume: None,
            dynamic_inputs: NameMap::default(),
        }),
        path: path.clone(),
    });
    st.nodes.push(Node {
        label,
        scope: outer,
        kind: NodeKind::MapExit { entry },
        path: path.clone(),
    });
    st.nodes[id.index()].scope = Some(entry);
    let empty = Memlet {
        data: None,
        subset: None,
        other_subset: None,
        wcr: None,
        dynamic: false,
        volume: Expr::Int(0),
        is_data_src: None,
    };
    let (mut ins, mut outs) = (0, 0);
    let mut added = Vec::new();
    for (k, e) in st.edges.iter_mut().enumerate() {
        if e.dst == id {
            ins += 1;
            let conn = format!("__offload_in{k}");
            let inner = DataEdge {
                src: entry,
                src_conn: (!e.memlet.is_empty()).then(|| format!("OUT_{conn}")),
                dst: id,
                dst_conn: e.dst_conn.take(),
                memlet: e.memlet.clone(),
                path: e.path.clone(),
            };
            e.dst = entry;
            e.dst_conn = (!e.memlet.is_empty()).then(|| format!("IN_{conn}"));
            added.push(inner);
        } else if e.src == id {
            outs += 1;
            let conn = format!("__offload_out{k}");
            let inner = DataEdge {
                src: id,
                src_conn: e.src_conn.take(),
                dst: exit,
                dst_conn: (!e.memlet.is_empty()).then(|| format!("IN_{conn}")),
                memlet: e.memlet.clone(),
                path: e.path.clone(),
            };
            e.src = exit;
            e.src_conn = (!e.memlet.is_empty()).then(|| format!("OUT_{conn}"));
            added.push(inner);
        }
    }
    if ins == 0 {
        added.push(DataEdge {
            src: entry,
            src_conn: None,
            dst: id,
            dst_conn: None,
            memlet: empty.clone(),
            path: path.clone(),
        });
    }
    if outs == 0 {
        added.push(DataEdge {
            src: id,
            src_conn: None,
            dst: exit,
            dst_conn: None,
            memlet: empty,
            path,
        });
    }
    st.edges.extend(added);
}
