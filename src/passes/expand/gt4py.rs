//! gt4py's own library nodes
//! (`gt4py.next.program_processors.runners.dace.library_nodes`):
//! ReduceWithSkipValues, the reduction over the neighbors of one mesh
//! element where a neighbor-table entry of -1 marks a missing neighbor.

use crate::diag::Result;
use crate::ir::simplify::simplify;
use crate::ir::*;

use super::build::{Builder, Contraction, Fold, Read, identity_value};

/// gt4py's `_DEFAULT_SKIP_VALUE`: the neighbor-table entry of a missing neighbor.
const SKIP_VALUE: i64 = -1;

/// `ReduceWithSkipValues`, as gt4py's pure expansion: the output element
/// starts at `init`; for every `k < max_neighbors` (the mask container's
/// second extent, a constant) it combines with `wcr` the input's `k`-th
/// element along its dimension of that extent, or `identity` where the
/// mask's `k`-th element (along its second dimension) is the skip value.
/// `init` and `identity` are values of the input's type.
pub(super) fn reduce_with_skip_values(
    b: &mut Builder,
    wcr: &Wcr,
    identity: &Expr,
    init: &Expr,
    [input_conn, mask_conn, output_conn]: [&String; 3],
) -> Result<()> {
    let i = b.input(input_conn)?;
    let m = b.input(mask_conn)?;
    let o = b.output(output_conn)?;
    let (inp, mask, out) = (b.op(i).clone(), b.op(m).clone(), b.op(o).clone());
    if mask.desc.shape.len() != 2 || mask.sub.len() != 2 {
        return Err(b.invalid(format_args!("mask '{}' must be a 2-D array", mask.data)));
    }
    let Expr::Int(n) = simplify(&mask.desc.shape[1]) else {
        return Err(b.unsupported(format_args!(
            "mask '{}' whose neighbor extent is not a constant",
            mask.data
        )));
    };
    let is_n = |r: &RangeDim| simplify(&r.extent()) == Expr::Int(n);
    let along: Vec<usize> = (0..inp.sub.len()).filter(|&d| is_n(&inp.sub[d])).collect();
    let [local] = along[..] else {
        return Err(b.invalid(format_args!(
            "input memlet must span {n} elements along exactly one dimension"
        )));
    };
    if !is_n(&mask.sub[1]) || simplify(&mask.sub[0].extent()) != Expr::Int(1) {
        return Err(b.invalid(format_args!(
            "mask memlet must span {n} elements of one row"
        )));
    }
    let elements = inp
        .sub
        .iter()
        .enumerate()
        .filter(|&(d, _)| d != local)
        .all(|(_, r)| simplify(&r.extent()) == Expr::Int(1));
    let one = |s: &Subset| s.iter().all(|r| simplify(&r.extent()) == Expr::Int(1));
    if !elements || !one(&out.sub) {
        return Err(b.invalid("input must be one row of neighbors and output one element"));
    }
    let t = inp.desc.dtype;
    let typed = |e: &Expr| Expr::Call(Func::Cast(t), vec![identity_value(e, t)]);
    let k = b.inner_var(0);
    let body = Expr::Ternary(
        Box::new(Expr::bin(
            BinaryOp::Ne,
            Expr::sym("__mask"),
            Expr::Int(SKIP_VALUE),
        )),
        Box::new(Expr::sym("__inp")),
        Box::new(typed(identity)),
    );
    let c = Contraction {
        outer: vec![],
        inner: vec![Expr::Int(n)],
        reads: vec![
            Read {
                conn: "__inp".to_string(),
                op: i,
                at: inp.at(&[(local, k.clone())]),
            },
            Read {
                conn: "__mask".to_string(),
                op: m,
                at: mask.at(&[(1, k)]),
            },
        ],
        body,
        fold: Some(Fold {
            wcr: wcr.clone(),
            identity: Some(typed(init)),
        }),
        finish_reads: vec![],
        finish: None,
        out: o,
        out_at: out.at(&[]),
        out_wcr: None,
    };
    b.emit(c)
}
