//! Copies between host and device: twins filled at program start and
//! written back at the end (and before every return); host copies of device
//! data refreshed after every state that writes it, where the host reads it.

use std::collections::BTreeSet;

use crate::diag::Result;
use crate::ir::*;

use super::OffloadStats;
use super::data::Plan;

/// The whole extent of a container.
fn full(d: &DataDesc) -> Subset {
    let ends: Vec<Expr> = d
        .shape
        .iter()
        .map(|n| Expr::bin(BinaryOp::Sub, n.clone(), Expr::Int(1)))
        .collect();
    from_zero(d, &ends)
}

/// Indices 0..=end per dimension of a container, in its memlets' indexing:
/// shifted by its offset (an element `i` is at `i + offset`; Fortran's
/// arrays have offset -1, their memlets count from 1).
fn from_zero(d: &DataDesc, ends: &[Expr]) -> Subset {
    use crate::ir::simplify::simplify;
    ends.iter()
        .enumerate()
        .map(|(k, e)| {
            let off = d.offset.get(k).cloned().unwrap_or(Expr::Int(0));
            RangeDim {
                start: simplify(&Expr::bin(BinaryOp::Sub, Expr::Int(0), off.clone())),
                end: simplify(&Expr::bin(BinaryOp::Sub, e.clone(), off)),
                step: Expr::Int(1),
                tile: Expr::Int(1),
            }
        })
        .collect()
}

/// Bytes of a container.
pub(super) fn bytes(d: &DataDesc) -> Expr {
    crate::ir::simplify::simplify(&Expr::bin(
        BinaryOp::Mul,
        d.total_size.clone(),
        Expr::Int(d.dtype.size() as i64),
    ))
}

/// A state that copies each `(source, destination)` pair whole (or, for a
/// twin with an extent in `plan`, indices 0..=end per dimension).
fn copy_state(
    arrays: &NameMap<DataDesc>,
    pairs: &[(String, String)],
    path: &str,
    plan: &Plan,
) -> State {
    let mut st = State::default();
    for (src, dst) in pairs {
        let s = NodeId(st.nodes.len() as u32);
        let t = NodeId(s.0 + 1);
        for name in [src, dst] {
            st.nodes.push(Node {
                label: name.clone(),
                scope: None,
                kind: NodeKind::Access(AccessNode {
                    data: name.clone(),
                    setzero: false,
                    instrument: None,
                }),
                path: path.to_string(),
            });
        }
        let sd = &arrays[src.as_str()];
        let dd = &arrays[dst.as_str()];
        let sub = |d: &DataDesc| match plan.extent.get(src).or_else(|| plan.extent.get(dst)) {
            Some(ends) => from_zero(d, ends),
            None => full(d),
        };
        st.edges.push(DataEdge {
            src: s,
            src_conn: None,
            dst: t,
            dst_conn: None,
            memlet: Memlet {
                data: Some(src.clone()),
                subset: Some(sub(sd)),
                other_subset: Some(sub(dd)),
                wcr: None,
                dynamic: false,
                volume: sd.total_size.clone(),
                is_data_src: Some(true),
            },
            path: path.to_string(),
        });
    }
    st
}

fn block(label: &str, path: String, kind: BlockKind) -> Block {
    Block {
        label: label.to_string(),
        kind,
        path,
    }
}

/// Makes `b` the new start of the region, followed by the old start.
fn prepend(r: &mut Region, b: Block) {
    let id = BlockId(r.blocks.len() as u32);
    let path = b.path.clone();
    r.blocks.push(b);
    if let Some(old) = r.start {
        r.edges.push(InterstateEdge {
            src: id,
            dst: old,
            condition: Expr::Bool(true),
            assignments: Vec::new(),
            path,
        });
    }
    r.start = Some(id);
}

/// Inserts the copies one host level needs.
pub(super) fn insert(
    sdfg: &mut Sdfg,
    top: bool,
    plan: &Plan,
    stats: &mut OffloadStats,
) -> Result<()> {
    let mut serial = 0usize;
    // Host copies refreshed after every state that writes the device container.
    if !plan.host_reads.is_empty() {
        let arrays = sdfg.arrays.clone();
        after_writes(&mut sdfg.body, &arrays, plan, &mut serial, stats);
    }
    if !plan.fill_on_entry.is_empty() {
        let pairs: Vec<(String, String)> = plan
            .host_reads
            .iter()
            .filter(|(_, h)| plan.fill_on_entry.contains(h))
            .cloned()
            .collect();
        for (d, h) in &pairs {
            stats
                .host_reads
                .push((h.clone(), bytes(&sdfg.arrays[d.as_str()])));
        }
        let path = format!("{}/offload_entry", sdfg.body.path);
        let st = copy_state(&sdfg.arrays, &pairs, &path, plan);
        prepend(
            &mut sdfg.body,
            block("offload_entry", path, BlockKind::State(st)),
        );
    }
    if !top {
        return Ok(());
    }
    let ins: Vec<(String, String)> = plan
        .twins
        .iter()
        .filter(|(_, t)| plan.copy_in.contains(t))
        .cloned()
        .collect();
    let outs: Vec<(String, String)> = plan
        .twins
        .iter()
        .filter(|(_, t)| plan.copy_out.contains(t))
        .map(|(a, t)| (t.clone(), a.clone()))
        .collect();
    for (a, t) in &ins {
        stats
            .copy_in
            .push((a.clone(), bytes(&sdfg.arrays[t.as_str()])));
    }
    for (t, a) in &outs {
        stats
            .copy_out
            .push((a.clone(), bytes(&sdfg.arrays[t.as_str()])));
    }
    if ins.is_empty() && outs.is_empty() {
        return Ok(());
    }
    let body_path = sdfg.body.path.clone();
    let out_path = format!("{body_path}/offload_copy_out");
    // Every return leaves through the copy-out.
    let mut returns = 0;
    if !outs.is_empty() {
        before_returns(
            &mut sdfg.body,
            &sdfg.arrays,
            &outs,
            &out_path,
            plan,
            &mut returns,
        );
    }
    let old = std::mem::replace(
        &mut sdfg.body,
        Region {
            label: "offload".into(),
            kind: RegionKind::Plain,
            blocks: Vec::new(),
            edges: Vec::new(),
            start: None,
            path: format!("{body_path}/offload"),
        },
    );
    let r = &mut sdfg.body;
    let mut chain = Vec::new();
    if !ins.is_empty() {
        let path = format!("{body_path}/offload_copy_in");
        let st = copy_state(&sdfg.arrays, &ins, &path, plan);
        chain.push(block("offload_copy_in", path, BlockKind::State(st)));
    }
    chain.push(block(
        &old.label.clone(),
        old.path.clone(),
        BlockKind::Region(old),
    ));
    if !outs.is_empty() {
        let st = copy_state(&sdfg.arrays, &outs, &out_path, plan);
        chain.push(block("offload_copy_out", out_path, BlockKind::State(st)));
    }
    for (k, b) in chain.into_iter().enumerate() {
        let path = b.path.clone();
        r.blocks.push(b);
        if k > 0 {
            r.edges.push(InterstateEdge {
                src: BlockId(k as u32 - 1),
                dst: BlockId(k as u32),
                condition: Expr::Bool(true),
                assignments: Vec::new(),
                path,
            });
        }
    }
    r.start = Some(BlockId(0));
    Ok(())
}

/// Containers a state writes: those of access nodes with a non-empty edge
/// in, whichever side the memlet names.
fn written(st: &State) -> BTreeSet<String> {
    st.edges
        .iter()
        .filter(|e| !e.memlet.is_empty())
        .filter_map(|e| match &st.nodes[e.dst.index()].kind {
            NodeKind::Access(a) => Some(a.data.clone()),
            _ => None,
        })
        .collect()
}

/// After every state that writes a device container the host reads, a state
/// that copies it to its host copy.
fn after_writes(
    r: &mut Region,
    arrays: &NameMap<DataDesc>,
    plan: &Plan,
    serial: &mut usize,
    stats: &mut OffloadStats,
) {
    let n = r.blocks.len();
    for i in 0..n {
        let pairs: Vec<(String, String)> = match &mut r.blocks[i].kind {
            BlockKind::State(st) => {
                let w = written(st);
                plan.host_reads
                    .iter()
                    .filter(|(d, _)| w.contains(d))
                    .cloned()
                    .collect()
            }
            BlockKind::Region(inner) => {
                after_writes(inner, arrays, plan, serial, stats);
                continue;
            }
            BlockKind::Conditional(brs) => {
                for (_, body) in brs {
                    after_writes(body, arrays, plan, serial, stats);
                }
                continue;
            }
            _ => continue,
        };
        if pairs.is_empty() {
            continue;
        }
        for (d, h) in &pairs {
            stats
                .host_reads
                .push((h.clone(), bytes(&arrays[d.as_str()])));
        }
        *serial += 1;
        let path = format!("{}/offload_to_host_{serial}", r.blocks[i].path);
        let st = copy_state(arrays, &pairs, &path, plan);
        let id = BlockId(r.blocks.len() as u32);
        r.blocks
            .push(block("offload_to_host", path.clone(), BlockKind::State(st)));
        for e in &mut r.edges {
            if e.src == BlockId(i as u32) {
                e.src = id;
            }
        }
        r.edges.push(InterstateEdge {
            src: BlockId(i as u32),
            dst: id,
            condition: Expr::Bool(true),
            assignments: Vec::new(),
            path,
        });
    }
}

/// Every return block becomes the copy-out followed by the return.
fn before_returns(
    r: &mut Region,
    arrays: &NameMap<DataDesc>,
    outs: &[(String, String)],
    path: &str,
    plan: &Plan,
    serial: &mut usize,
) {
    for b in &mut r.blocks {
        match &mut b.kind {
            BlockKind::Return => {
                *serial += 1;
                let p = format!("{path}_{serial}");
                let st = copy_state(arrays, outs, &p, plan);
                b.kind = BlockKind::Region(Region {
                    label: "offload_return".into(),
                    kind: RegionKind::Plain,
                    blocks: vec![
                        block("offload_copy_out", p.clone(), BlockKind::State(st)),
                        block("return", format!("{p}/return"), BlockKind::Return),
                    ],
                    edges: vec![InterstateEdge {
                        src: BlockId(0),
                        dst: BlockId(1),
                        condition: Expr::Bool(true),
                        assignments: Vec::new(),
                        path: p.clone(),
                    }],
                    start: Some(BlockId(0)),
                    path: p,
                });
            }
            BlockKind::Region(inner) => before_returns(inner, arrays, outs, path, plan, serial),
            BlockKind::Conditional(brs) => {
                for (_, body) in brs {
                    before_returns(body, arrays, outs, path, plan, serial);
                }
            }
            _ => {}
        }
    }
}
