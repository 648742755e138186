//! Which parameter of a `GPU_Device` map walks `threadIdx.x`: the one that
//! makes consecutive threads touch consecutive elements.
//!
//! DaCe binds the last parameter to `x`. When the map's accesses put another
//! parameter in the stride-1 dimension of the arrays (a map over `(j, i)`
//! reading `A[i, j]` of a row-major `A`), every warp then reads a strided
//! column. The map is parallel, so the order in which its points are given
//! to threads does not change what it computes; sdfgc binds `x` to the
//! parameter that indexes the stride-1 dimension of the most accesses.

use crate::ir::{Expr, NodeId, Sdfg, State};

/// Per parameter of the map `entry` of `st` (in `sdfg`): accesses in whose
/// stride-1 dimension it appears, minus accesses it walks along another
/// dimension only. Accesses inside the map's scope (memlets of its entry,
/// exit and inner nodes) on containers with a stride-1 dimension count.
pub fn access_scores(sdfg: &Sdfg, st: &State, entry: NodeId, params: &[String]) -> Vec<i64> {
    let inside = |mut n: NodeId| {
        while let Some(s) = st.nodes[n.index()].scope {
            if s == entry {
                return true;
            }
            n = s;
        }
        false
    };
    let mut score = vec![0i64; params.len()];
    for e in &st.edges {
        if !(inside(e.src) || inside(e.dst)) {
            continue;
        }
        let (Some(data), Some(subset)) = (&e.memlet.data, &e.memlet.subset) else {
            continue;
        };
        let Some(desc) = sdfg.arrays.get(data) else {
            continue;
        };
        if subset.len() != desc.strides.len() {
            continue;
        }
        let Some(unit) = desc.strides.iter().position(|s| *s == Expr::Int(1)) else {
            continue;
        };
        for (k, p) in params.iter().enumerate() {
            let uses = |d: usize| subset[d].start.mentions(p) || subset[d].end.mentions(p);
            if uses(unit) {
                score[k] += 1;
            } else if (0..subset.len()).any(uses) {
                score[k] -= 1;
            }
        }
    }
    score
}

/// The index of the parameter to bind to `threadIdx.x`: the best score of
/// [`access_scores`], ties going to the later parameter (DaCe's choice, the
/// last, unless another scores higher).
pub fn thread_x_param(sdfg: &Sdfg, st: &State, entry: NodeId, params: &[String]) -> usize {
    let score = access_scores(sdfg, st, entry, params);
    let mut best = params.len() - 1;
    for k in (0..params.len()).rev() {
        if score[k] > score[best] {
            best = k;
        }
    }
    best
}

/// The parameters in thread order: the `threadIdx.x` parameter last, the
/// others in their order (the writer binds the last to `x`, the one before
/// to `y`, the rest to `z`).
pub fn thread_order(sdfg: &Sdfg, st: &State, entry: NodeId, params: &[String]) -> Vec<usize> {
    let x = thread_x_param(sdfg, st, entry, params);
    let mut order: Vec<usize> = (0..params.len()).filter(|&k| k != x).collect();
    order.push(x);
    order
}
