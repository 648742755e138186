//! Standard-library nodes (`dace.libraries.standard.nodes`): Reduce (any
//! axes, any write-conflict lambda, with or without identity), Transpose
//! (matrices) and TensorTranspose (any permutation).

use crate::diag::Result;
use crate::ir::*;

use super::build::{Builder, Contraction, Fold, Read, beta_wcr, is_zero, scaled};

/// `Reduce`: the reduced axes fold with `wcr`, starting from `identity`
/// (without identity every value combines into the previous output, as
/// DaCe's pure expansion does). Axes over unit dimensions reduce nothing;
/// reducing nothing is a copy.
pub(super) fn reduce(
    b: &mut Builder,
    axes: Option<&[i64]>,
    wcr: &Wcr,
    identity: Option<&Expr>,
) -> Result<()> {
    let i = b.any_input()?;
    let o = b.any_output()?;
    let inp = b.op(i).clone();
    let out = b.op(o).clone();
    let rank = inp.sub.len();
    let axes: Vec<usize> = match axes {
        None => (0..rank).collect(),
        Some(list) => list
            .iter()
            .map(|&x| {
                let y = if x < 0 { x + rank as i64 } else { x };
                usize::try_from(y)
                    .ok()
                    .filter(|&y| y < rank)
                    .ok_or_else(|| b.invalid(format_args!("Reduce axis {x} out of range")))
            })
            .collect::<Result<_>>()?,
    };
    let reduced: Vec<usize> = inp
        .nonunit
        .iter()
        .copied()
        .filter(|d| axes.contains(d))
        .collect();
    let kept: Vec<usize> = inp
        .nonunit
        .iter()
        .copied()
        .filter(|d| !axes.contains(d))
        .collect();
    // Where the kept dimensions land in the output.
    let out_dims = if out.nonunit.len() == kept.len() {
        out.nonunit.clone()
    } else if out.sub.len() == rank {
        kept.clone()
    } else {
        return Err(b.unsupported("Reduce: cannot match the output shape to the kept axes"));
    };
    let ovars: Vec<Expr> = (0..kept.len()).map(|k| b.outer_var(k)).collect();
    let rvars: Vec<Expr> = (0..reduced.len()).map(|k| b.inner_var(k)).collect();
    let mut in_dims: Vec<(usize, Expr)> = kept.iter().copied().zip(ovars.clone()).collect();
    in_dims.extend(reduced.iter().copied().zip(rvars));
    let c = Contraction {
        outer: kept.iter().map(|&d| inp.sub[d].extent()).collect(),
        inner: reduced.iter().map(|&d| inp.sub[d].extent()).collect(),
        reads: vec![Read {
            conn: "__in".to_string(),
            op: i,
            at: inp.at(&in_dims),
        }],
        body: Expr::sym("__in"),
        fold: (!reduced.is_empty()).then(|| Fold {
            wcr: wcr.clone(),
            identity: identity.cloned(),
        }),
        finish_reads: vec![],
        finish: None,
        out: o,
        out_at: out.at(&out_dims.iter().copied().zip(ovars).collect::<Vec<_>>()),
        out_wcr: None,
    };
    b.emit(c)
}

/// `Transpose`: `_out[j, i] = _inp[i, j]` over the two non-unit dimensions
/// (a copy when both sides have at most one).
pub(super) fn transpose(b: &mut Builder) -> Result<()> {
    let i = b.any_input()?;
    let o = b.any_output()?;
    let (ni, no) = (b.op(i).nonunit.len(), b.op(o).nonunit.len());
    let vars: Vec<Expr> = (0..ni.min(2)).map(|k| b.outer_var(k)).collect();
    let out_idx: Vec<Expr> = match (ni, no) {
        (2, 2) => vec![vars[1].clone(), vars[0].clone()],
        (n, m) if n == m && n <= 1 => vars.clone(),
        _ => {
            return Err(b.unsupported(format_args!(
                "Transpose of a {ni}-D input into a {no}-D output (only matrices)"
            )));
        }
    };
    let c = Contraction {
        outer: (0..vars.len()).map(|k| b.op(i).extent(k)).collect(),
        inner: vec![],
        reads: vec![Read {
            conn: "__inp".to_string(),
            op: i,
            at: b.op(i).at_nonunit(&vars),
        }],
        body: Expr::sym("__inp"),
        fold: None,
        finish_reads: vec![],
        finish: None,
        out: o,
        out_at: b.op(o).at_nonunit(&out_idx),
        out_wcr: None,
    };
    b.emit(c)
}

/// `TensorTranspose`: output mode `k` is input mode `axes[k]`;
/// `out = alpha * in + beta * out`.
pub(super) fn tensor_transpose(
    b: &mut Builder,
    axes: &[i64],
    alpha: &Expr,
    beta: &Expr,
) -> Result<()> {
    let i = b.input("_inp_tensor")?;
    let o = b.output("_out_tensor")?;
    let rank = b.op(i).sub.len();
    let mut seen = vec![false; rank];
    let perm: Option<Vec<usize>> = axes
        .iter()
        .map(|&a| {
            let a = usize::try_from(a).ok().filter(|&a| a < rank)?;
            (!std::mem::replace(&mut seen[a], true)).then_some(a)
        })
        .collect();
    let perm = match perm {
        Some(p) if p.len() == rank && b.op(o).sub.len() == rank => p,
        _ => {
            return Err(b.invalid(format_args!(
                "TensorTranspose axes {axes:?} are not a permutation of the {rank} input modes"
            )));
        }
    };
    let vars: Vec<Expr> = (0..rank).map(|k| b.outer_var(k)).collect();
    let in_dims: Vec<(usize, Expr)> = vars.iter().cloned().enumerate().collect();
    let out_dims: Vec<(usize, Expr)> = perm
        .iter()
        .enumerate()
        .map(|(k, &a)| (k, vars[a].clone()))
        .collect();
    let c = Contraction {
        outer: b.op(i).sub.iter().map(RangeDim::extent).collect(),
        inner: vec![],
        reads: vec![Read {
            conn: "__inp".to_string(),
            op: i,
            at: b.op(i).at(&in_dims),
        }],
        body: scaled(alpha, Expr::sym("__inp")),
        fold: None,
        finish_reads: vec![],
        finish: None,
        out: o,
        out_at: b.op(o).at(&out_dims),
        out_wcr: if is_zero(beta) {
            None
        } else {
            Some(beta_wcr(beta))
        },
    };
    b.emit(c)
}
