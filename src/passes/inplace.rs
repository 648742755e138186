//! In-place reuse: an element-wise map that is the last reader of a
//! transient `A` and fully writes a transient `B` at exactly the same
//! element may let `B` take `A`'s bytes.
//!
//! The rule is checked against the code the writers emit for a map whose
//! body is one tasklet: every input connector is loaded into a `const`
//! local before the tasklet's code runs and every output is stored after
//! it, so within one iteration the read of `A[i]` happens before the write
//! of `B[i]`. A map qualifies for the pair (`A`, `B`) when
//! - its scope holds exactly one tasklet, directly inside the map;
//! - the tasklet reads `A` through exactly one connector and writes `B`
//!   through exactly one, both single elements seen as values (not declared
//!   pointers, not indexed by the code), neither with write-conflict
//!   resolution nor dynamic;
//! - the map does not write `A` nor read `B`, and its write of `B` covers
//!   all of `B` (so `B` holds nothing of value before the map);
//! - `A` and `B` have the same element size, shape, strides and offsets,
//!   and both memlets have the same index in every dimension, so `A[i]` and
//!   `B[i]` are the same bytes when they share a base address;
//! - every map parameter appears in exactly one dimension of that index as
//!   `param + c` (`c` free of parameters): distinct iterations touch
//!   distinct elements, so no iteration reads an `A` element another one
//!   has already overwritten.
//!
//! Liveness then decides whether the pair may share: only if `A`'s live
//! range ends at the map and `B`'s begins there. Containers that share
//! bytes this way are emitted without `__restrict__`, so the compiler keeps
//! the load before the store.

use std::collections::BTreeSet;

use crate::ir::simplify::{free_symbols, simplify};
use crate::ir::*;
use crate::passes::liveness::full_write;

/// An in-place candidate in one state: map entry, read container, written container.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Candidate {
    /// The map entry.
    pub map: NodeId,
    /// The container read (its last reader may be this map).
    pub read: String,
    /// The container fully written at the same elements.
    pub written: String,
}

/// Every in-place candidate among the top-level maps of a state.
pub fn candidates(sdfg: &Sdfg, st: &State) -> Vec<Candidate> {
    let index = StateIndex::new(st);
    let mut out = Vec::new();
    for (i, n) in st.nodes.iter().enumerate() {
        if let NodeKind::MapEntry(m) = &n.kind
            && n.scope.is_none()
            && let Some(c) = map_candidate(sdfg, st, &index, NodeId(i as u32), m)
        {
            out.push(c);
        }
    }
    out
}

/// Per-node adjacency of one state, built once so that checking every map
/// stays linear in the size of the state.
struct StateIndex {
    /// Nodes whose innermost scope is the node (by node index).
    children: Vec<Vec<usize>>,
    /// Edges ending at the node.
    ins: Vec<Vec<usize>>,
    /// Edges leaving the node.
    outs: Vec<Vec<usize>>,
}

impl StateIndex {
    fn new(st: &State) -> Self {
        let n = st.nodes.len();
        let mut idx = StateIndex {
            children: vec![Vec::new(); n],
            ins: vec![Vec::new(); n],
            outs: vec![Vec::new(); n],
        };
        for (j, node) in st.nodes.iter().enumerate() {
            if let Some(s) = node.scope
                && s.index() < n
            {
                idx.children[s.index()].push(j);
            }
        }
        for (k, e) in st.edges.iter().enumerate() {
            if e.src.index() < n && e.dst.index() < n {
                idx.outs[e.src.index()].push(k);
                idx.ins[e.dst.index()].push(k);
            }
        }
        idx
    }

    /// The only node inside the scope of `entry` (at any depth), if there is exactly one.
    fn single_inner(&self, entry: NodeId) -> Option<usize> {
        match self.children.get(entry.index())?.as_slice() {
            [only] if self.children[*only].is_empty() => Some(*only),
            _ => None,
        }
    }
}

fn map_candidate(
    sdfg: &Sdfg,
    st: &State,
    index: &StateIndex,
    entry: NodeId,
    m: &MapEntry,
) -> Option<Candidate> {
    // The scope: exactly one tasklet, directly inside the map.
    let t_idx = index.single_inner(entry)?;
    let tnode = &st.nodes[t_idx];
    let NodeKind::Tasklet(t) = &tnode.kind else {
        return None;
    };
    let exit = m.exit;
    let ins: Vec<&DataEdge> = index.ins[t_idx].iter().map(|&k| &st.edges[k]).collect();
    let outs: Vec<&DataEdge> = index.outs[t_idx].iter().map(|&k| &st.edges[k]).collect();
    if ins.iter().any(|e| e.src != entry) || outs.iter().any(|e| e.dst != exit) {
        return None;
    }
    let transient = |d: &str| sdfg.arrays.get(d).is_some_and(|x| x.transient);
    // Outputs: one transient written in place of an input.
    for w in &outs {
        let Some(b) = w.memlet.data.as_deref() else {
            continue;
        };
        if !transient(b)
            || outs
                .iter()
                .filter(|e| e.memlet.data.as_deref() == Some(b))
                .count()
                != 1
        {
            continue;
        }
        if !value_access(t, &w.memlet, w.src_conn.as_deref(), false) {
            continue;
        }
        // The map's write of B covers all of B; the map reads no B.
        let full = index
            .outs
            .get(exit.index())
            .map(|ks| ks.iter().map(|&k| &st.edges[k]))
            .into_iter()
            .flatten()
            .filter(|e| e.memlet.data.as_deref() == Some(b))
            .collect::<Vec<_>>();
        if full.len() != 1 || !full_write(sdfg, b, &full[0].memlet) {
            continue;
        }
        if ins.iter().any(|e| e.memlet.data.as_deref() == Some(b)) {
            continue;
        }
        for r in &ins {
            let Some(a) = r.memlet.data.as_deref() else {
                continue;
            };
            if a == b
                || !transient(a)
                || ins
                    .iter()
                    .filter(|e| e.memlet.data.as_deref() == Some(a))
                    .count()
                    != 1
                || outs.iter().any(|e| e.memlet.data.as_deref() == Some(a))
                || !value_access(t, &r.memlet, r.dst_conn.as_deref(), true)
            {
                continue;
            }
            if same_addressing(sdfg, a, b)
                && same_index(&r.memlet, &w.memlet)
                && injective(&m.params, w.memlet.subset.as_deref().unwrap_or(&[]))
            {
                return Some(Candidate {
                    map: entry,
                    read: a.to_string(),
                    written: b.to_string(),
                });
            }
        }
    }
    None
}

/// A single element, bound to a value connector that the code does not index.
fn value_access(t: &Tasklet, m: &Memlet, conn: Option<&str>, input: bool) -> bool {
    let Some(c) = conn else { return false };
    let declared = if input {
        t.inputs.get(c)
    } else {
        t.outputs.get(c)
    };
    let Some(sub) = &m.subset else { return false };
    m.wcr.is_none()
        && !m.dynamic
        && !matches!(declared, Some(ConnType::Pointer(_)) | None)
        && !indexed(&t.stmts, c)
        && sub.iter().all(|r| {
            simplify(&Expr::bin(BinaryOp::Sub, r.end.clone(), r.start.clone())) == Expr::Int(0)
        })
}

/// True if the tasklet code indexes `conn` (`conn[i]`).
fn indexed(stmts: &[Stmt], conn: &str) -> bool {
    let mut hit = false;
    for s in all_stmts(stmts) {
        if let Stmt::Assign {
            target: Target::Index(n, _),
            ..
        }
        | Stmt::Chain {
            target: Target::Index(n, _),
            ..
        } = s
            && n == conn
        {
            hit = true;
        }
        for e in s.own_exprs() {
            e.visit_index(&mut |n, _| hit |= n == conn);
        }
    }
    hit
}

/// Same element size, shape, strides and offsets.
fn same_addressing(sdfg: &Sdfg, a: &str, b: &str) -> bool {
    let (Some(x), Some(y)) = (sdfg.arrays.get(a), sdfg.arrays.get(b)) else {
        return false;
    };
    let eq = |p: &[Expr], q: &[Expr]| {
        p.len() == q.len() && p.iter().zip(q).all(|(u, v)| simplify(u) == simplify(v))
    };
    x.kind == DataKind::Array
        && y.kind == DataKind::Array
        && x.dtype.size() == y.dtype.size()
        && eq(&x.shape, &y.shape)
        && eq(&x.strides, &y.strides)
        && eq(&x.offset, &y.offset)
        && simplify(&x.start_offset) == simplify(&y.start_offset)
}

/// Both memlets index the same element.
fn same_index(r: &Memlet, w: &Memlet) -> bool {
    match (&r.subset, &w.subset) {
        (Some(p), Some(q)) => {
            p.len() == q.len()
                && p.iter()
                    .zip(q)
                    .all(|(u, v)| simplify(&u.start) == simplify(&v.start))
        }
        _ => false,
    }
}

/// Every map parameter appears in exactly one dimension, as `param + c`.
fn injective(params: &[String], sub: &[RangeDim]) -> bool {
    let mut used = BTreeSet::new();
    for r in sub {
        let syms = free_symbols(&r.start);
        let mine: Vec<&String> = params.iter().filter(|p| syms.contains(*p)).collect();
        match mine.as_slice() {
            [] => {}
            [p] => {
                let rest = simplify(&Expr::bin(
                    BinaryOp::Sub,
                    r.start.clone(),
                    Expr::Sym((*p).clone()),
                ));
                if free_symbols(&rest).contains(*p) || !used.insert((*p).clone()) {
                    return false;
                }
            }
            _ => return false,
        }
    }
    used.len() == params.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(rel: &str) -> Sdfg {
        let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(rel);
        crate::front::load_file(&p).unwrap()
    }

    fn state_with(sdfg: &Sdfg, data: &str) -> State {
        fn find(r: &Region, data: &str) -> Option<State> {
            r.blocks.iter().find_map(|b| match &b.kind {
                BlockKind::State(st) => st
                    .nodes
                    .iter()
                    .any(|n| matches!(&n.kind, NodeKind::Access(a) if a.data == data))
                    .then(|| st.clone()),
                BlockKind::Region(inner) => find(inner, data),
                BlockKind::Conditional(brs) => brs.iter().find_map(|(_, b)| find(b, data)),
                _ => None,
            })
        }
        find(&sdfg.body, data).unwrap()
    }

    fn pairs(sdfg: &Sdfg, st: &State) -> Vec<(String, String)> {
        candidates(sdfg, st)
            .into_iter()
            .map(|c| (c.read, c.written))
            .collect()
    }

    #[test]
    fn element_wise_chain_is_in_place() {
        let sdfg = load("fixtures/corpus/seed_external_2d/program.sdfg");
        let st = state_with(&sdfg, "t0");
        assert_eq!(
            pairs(&sdfg, &st),
            vec![("t0".into(), "t1".into()), ("t1".into(), "t2".into())]
        );
    }

    #[test]
    fn shifted_read_is_not_in_place() {
        // t1[i, j] = t0[i, j + 1] + c[i, j]: iteration (i, j) would read an
        // element iteration (i, j + 1) overwrites.
        let sdfg = load("fixtures/corpus/seed_external_2d/program.sdfg");
        let mut st = state_with(&sdfg, "t0");
        for e in st.edges.iter_mut() {
            if e.memlet.data.as_deref() == Some("t0")
                && matches!(st.nodes[e.dst.index()].kind, NodeKind::Tasklet(_))
            {
                let sub = e.memlet.subset.as_mut().unwrap();
                let j = sub.last_mut().unwrap();
                j.start = Expr::bin(BinaryOp::Add, j.start.clone(), Expr::Int(1));
                j.end = j.start.clone();
            }
        }
        assert_eq!(pairs(&sdfg, &st), vec![("t1".into(), "t2".into())]);
    }

    #[test]
    fn dynamic_or_wcr_write_is_not_in_place() {
        let sdfg = load("fixtures/corpus/seed_external_2d/program.sdfg");
        let mut st = state_with(&sdfg, "t0");
        for e in st.edges.iter_mut() {
            if e.memlet.data.as_deref() == Some("t1")
                && matches!(st.nodes[e.src.index()].kind, NodeKind::Tasklet(_))
            {
                e.memlet.dynamic = true;
            }
        }
        assert_eq!(pairs(&sdfg, &st), vec![("t1".into(), "t2".into())]);
    }

    #[test]
    fn index_must_cover_every_map_parameter() {
        let p = vec!["i".to_string(), "j".to_string()];
        let dim = |e: Expr| RangeDim {
            start: e.clone(),
            end: e,
            step: Expr::Int(1),
            tile: Expr::Int(1),
        };
        let i = Expr::Sym("i".into());
        let j = Expr::Sym("j".into());
        assert!(injective(&p, &[dim(i.clone()), dim(j.clone())]));
        assert!(injective(
            &p,
            &[
                dim(Expr::bin(BinaryOp::Add, i.clone(), Expr::Int(2))),
                dim(j.clone())
            ]
        ));
        // One element per row: every j writes the same element.
        assert!(!injective(&p, &[dim(i.clone())]));
        // The same parameter twice.
        assert!(!injective(&p, &[dim(i.clone()), dim(i.clone())]));
        // Two parameters in one dimension.
        assert!(!injective(
            &p,
            &[dim(Expr::bin(BinaryOp::Add, i.clone(), j.clone())), dim(j)]
        ));
        // A scaled parameter.
        assert!(!injective(
            &p[..1],
            &[dim(Expr::bin(BinaryOp::Mul, Expr::Int(2), i))]
        ));
    }
}
