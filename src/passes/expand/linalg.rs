//! `TensorDot` (`dace.libraries.linalg.nodes.tensordot`): the contraction of
//! `left_axes` of `_left_tensor` with `right_axes` of `_right_tensor`, as
//! DaCe's pure expansion computes it (its TTGT expansion, transposes around
//! a Gemm, gives the same values): the output's modes are the left tensor's
//! free modes then the right's, permuted by `permutation` (output mode `k`
//! is free mode `permutation[k]`), and every element is the sum over the
//! contracted modes, starting from zero.

use crate::diag::Result;
use crate::ir::*;

use super::build::{Builder, Contraction, Fold, Read, sum_wcr};

/// Checks that `axes` are distinct modes below `rank`.
fn modes(b: &Builder, axes: &[i64], rank: usize, what: &str) -> Result<Vec<usize>> {
    let mut out: Vec<usize> = Vec::with_capacity(axes.len());
    for &a in axes {
        match usize::try_from(a).ok().filter(|&a| a < rank) {
            Some(a) if !out.contains(&a) => out.push(a),
            _ => {
                return Err(b.invalid(format_args!(
                    "TensorDot {what} {axes:?} are not distinct modes of a {rank}-mode tensor"
                )));
            }
        }
    }
    Ok(out)
}

/// Expands a `TensorDot` node.
pub(super) fn tensordot(
    b: &mut Builder,
    left_axes: &[i64],
    right_axes: &[i64],
    permutation: Option<&[i64]>,
) -> Result<()> {
    let l = b.input("_left_tensor")?;
    let r = b.input("_right_tensor")?;
    let o = b.output("_out_tensor")?;
    let (lr, rr, or) = (b.op(l).sub.len(), b.op(r).sub.len(), b.op(o).sub.len());
    let la = modes(b, left_axes, lr, "left axes")?;
    let ra = modes(b, right_axes, rr, "right axes")?;
    if la.len() != ra.len() {
        return Err(b.invalid(format_args!(
            "TensorDot contracts {} left modes with {} right modes",
            la.len(),
            ra.len()
        )));
    }
    for (&x, &y) in la.iter().zip(&ra) {
        let (ex, ey) = (b.op(l).sub[x].extent(), b.op(r).sub[y].extent());
        if matches!((&ex, &ey), (Expr::Int(u), Expr::Int(v)) if u != v) {
            return Err(b.invalid(format_args!(
                "TensorDot contracts left mode {x} (extent {ex:?}) with right mode {y} (extent {ey:?})"
            )));
        }
    }
    let free_l: Vec<usize> = (0..lr).filter(|d| !la.contains(d)).collect();
    let free_r: Vec<usize> = (0..rr).filter(|d| !ra.contains(d)).collect();
    let nfree = free_l.len() + free_r.len();
    if or != nfree {
        return Err(b.invalid(format_args!(
            "TensorDot output has {or} modes, the product {nfree}"
        )));
    }
    let perm: Vec<usize> = match permutation {
        Some(p) if !p.is_empty() => {
            let m = modes(b, p, nfree, "permutation")?;
            if m.len() != nfree {
                return Err(b.invalid(format_args!(
                    "TensorDot permutation {p:?} is not a permutation of {nfree} modes"
                )));
            }
            m
        }
        _ => (0..nfree).collect(),
    };
    let outer_vars: Vec<Expr> = (0..nfree).map(|k| b.outer_var(k)).collect();
    let inner_vars: Vec<Expr> = (0..la.len()).map(|k| b.inner_var(k)).collect();
    let mut left_at: Vec<(usize, Expr)> = free_l
        .iter()
        .copied()
        .zip(outer_vars.iter().cloned())
        .collect();
    left_at.extend(la.iter().copied().zip(inner_vars.iter().cloned()));
    let mut right_at: Vec<(usize, Expr)> = free_r
        .iter()
        .copied()
        .zip(outer_vars[free_l.len()..].iter().cloned())
        .collect();
    right_at.extend(ra.iter().copied().zip(inner_vars.iter().cloned()));
    let out_at: Vec<(usize, Expr)> = perm
        .iter()
        .enumerate()
        .map(|(k, &p)| (k, outer_vars[p].clone()))
        .collect();
    let mut outer: Vec<Expr> = free_l.iter().map(|&d| b.op(l).sub[d].extent()).collect();
    outer.extend(free_r.iter().map(|&d| b.op(r).sub[d].extent()));
    let c = Contraction {
        outer,
        inner: la.iter().map(|&d| b.op(l).sub[d].extent()).collect(),
        reads: vec![
            Read {
                conn: "__left".to_string(),
                op: l,
                at: b.op(l).at(&left_at),
            },
            Read {
                conn: "__right".to_string(),
                op: r,
                at: b.op(r).at(&right_at),
            },
        ],
        body: Expr::bin(BinaryOp::Mul, Expr::sym("__left"), Expr::sym("__right")),
        fold: Some(Fold {
            wcr: sum_wcr(),
            identity: Some(Expr::Int(0)),
        }),
        finish_reads: vec![],
        finish: None,
        out: o,
        out_at: b.op(o).at(&out_at),
        out_wcr: None,
    };
    b.emit(c)
}
