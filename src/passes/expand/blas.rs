//! BLAS nodes (`dace.libraries.blas.nodes`): MatMul (specialised by the
//! operands' non-unit dimensions as DaCe's `SpecializeMatMul` does), Dot,
//! Gemv, Gemm, Ger, Axpy, BatchedMatMul. Semantics of DaCe's pure expansions; strides and
//! offsets come from the memlets' subsets and the containers.

use crate::diag::Result;
use crate::ir::*;

use super::build::{ACC, Builder, Contraction, Fold, Read, beta_wcr, is_zero, scaled, sum_wcr};

fn read(conn: &str, op: usize, at: Subset) -> Read {
    Read {
        conn: conn.to_string(),
        op,
        at,
    }
}

fn mul(a: &str, b: &str) -> Expr {
    Expr::bin(BinaryOp::Mul, Expr::sym(a), Expr::sym(b))
}

/// None for the fold's value itself.
fn trivial(e: Expr) -> Option<Expr> {
    (e != Expr::sym(ACC)).then_some(e)
}

/// How `beta` applies to the output: through an input operand (`_cin`,
/// `_y`) read at `at`, or by reading the previous output (a write-conflict
/// resolution `old * beta + new`). Sets the contraction's finish.
fn apply_beta(
    c: &mut Contraction,
    alpha: &Expr,
    beta: Option<&Expr>,
    input: Option<(usize, Subset)>,
) -> Result<()> {
    let acc = scaled(alpha, Expr::sym(ACC));
    match beta {
        Some(beta) if !is_zero(beta) => match input {
            Some((op, at)) => {
                c.finish_reads.push(read("__cin", op, at));
                c.finish = Some(Expr::bin(
                    BinaryOp::Add,
                    acc,
                    scaled(beta, Expr::sym("__cin")),
                ));
            }
            None => {
                c.finish = trivial(acc);
                c.out_wcr = Some(beta_wcr(beta));
            }
        },
        _ => c.finish = trivial(acc),
    }
    Ok(())
}

/// `MatMul`: Gemm, Gemv (either side) or Dot by the operands' ranks.
pub(super) fn matmul(b: &mut Builder, alpha: &Expr, beta: &Expr) -> Result<()> {
    let a = b.input("_a")?;
    let x = b.input("_b")?;
    let c = b.output("_c")?;
    let cin = b.input_opt("_cin")?;
    // SpecializeMatMul: an output memlet that accumulates replaces beta.
    let beta = b.op(c).wcr.is_none().then(|| beta.clone());
    match (b.op(a).nonunit.len(), b.op(x).nonunit.len()) {
        (2, 2) => gemm_core(b, a, x, c, cin, alpha, beta.as_ref(), false, false),
        (2, 1) => gemv_core(b, a, x, c, cin, alpha, beta.as_ref(), false),
        (1, 2) => gemv_core(b, x, a, c, cin, alpha, beta.as_ref(), true),
        (1, 1) => dot_core(b, a, x, c, alpha),
        // SpecializeMatMul: a BatchedMatMul (alpha and beta go with it).
        (ra, rb) if ra >= 2 && rb >= 2 => {
            if cin.is_some() {
                return Err(b.unsupported("a batched matrix multiplication with an input '_cin'"));
            }
            let beta = beta.unwrap_or(Expr::Int(0));
            batched_core(b, a, x, c, alpha, &beta)
        }
        (ra, rb) => Err(b.unsupported(format_args!("MatMul of {ra}-D by {rb}-D operands"))),
    }
}

/// `Dot`: `_result = sum(_x * _y)`.
pub(super) fn dot(b: &mut Builder) -> Result<()> {
    let x = b.input("_x")?;
    let y = b.input("_y")?;
    let r = b.output("_result")?;
    dot_core(b, x, y, r, &Expr::Int(1))
}

fn dot_core(b: &mut Builder, x: usize, y: usize, r: usize, alpha: &Expr) -> Result<()> {
    b.require_dims(x, &[1], "Dot input")?;
    b.require_dims(y, &[1], "Dot input")?;
    b.require_dims(r, &[0], "Dot result")?;
    let k = b.inner_var(0);
    let c = Contraction {
        outer: vec![],
        inner: vec![b.op(x).extent(0)],
        reads: vec![
            read("__x", x, b.op(x).at_nonunit(std::slice::from_ref(&k))),
            read("__y", y, b.op(y).at_nonunit(&[k])),
        ],
        body: scaled(alpha, mul("__x", "__y")),
        fold: Some(Fold {
            wcr: sum_wcr(),
            identity: Some(Expr::Int(0)),
        }),
        finish_reads: vec![],
        finish: None,
        out: r,
        out_at: b.op(r).at(&[]),
        out_wcr: None,
    };
    b.emit(c)
}

/// `Gemv`: `_y = alpha * op(_A) @ _x + beta * _y`.
pub(super) fn gemv(b: &mut Builder, alpha: &Expr, beta: &Expr, trans: bool) -> Result<()> {
    let a = b.input("_A")?;
    let x = b.input("_x")?;
    let y_in = b.input_opt("_y")?;
    let y = b.output("_y")?;
    gemv_core(b, a, x, y, y_in, alpha, Some(beta), trans)
}

#[allow(clippy::too_many_arguments)]
fn gemv_core(
    b: &mut Builder,
    a: usize,
    x: usize,
    y: usize,
    y_in: Option<usize>,
    alpha: &Expr,
    beta: Option<&Expr>,
    trans: bool,
) -> Result<()> {
    b.require_dims(a, &[2], "matrix")?;
    b.require_dims(x, &[1], "vector")?;
    b.require_dims(y, &[1], "result vector")?;
    let (row, col) = {
        let n = &b.op(a).nonunit;
        if trans { (n[1], n[0]) } else { (n[0], n[1]) }
    };
    let (i, k) = (b.outer_var(0), b.inner_var(0));
    let mut c = Contraction {
        outer: vec![b.op(a).sub[row].extent()],
        inner: vec![b.op(a).sub[col].extent()],
        reads: vec![
            read("__A", a, b.op(a).at(&[(row, i.clone()), (col, k.clone())])),
            read("__x", x, b.op(x).at_nonunit(&[k])),
        ],
        body: mul("__A", "__x"),
        fold: Some(Fold {
            wcr: sum_wcr(),
            identity: Some(Expr::Int(0)),
        }),
        finish_reads: vec![],
        finish: None,
        out: y,
        out_at: b.op(y).at_nonunit(std::slice::from_ref(&i)),
        out_wcr: None,
    };
    let input = match y_in {
        Some(v) => {
            b.require_dims(v, &[1], "input vector")?;
            Some((v, b.op(v).at_nonunit(&[i])))
        }
        None => None,
    };
    apply_beta(&mut c, alpha, beta, input)?;
    b.emit(c)
}

/// `Gemm`: `_c = alpha * op(_a) @ op(_b) + beta * _cin`.
pub(super) fn gemm(
    b: &mut Builder,
    alpha: &Expr,
    beta: &Expr,
    trans_a: bool,
    trans_b: bool,
) -> Result<()> {
    let a = b.input("_a")?;
    let x = b.input("_b")?;
    let cin = b.input_opt("_cin")?;
    let c = b.output("_c")?;
    gemm_core(b, a, x, c, cin, alpha, Some(beta), trans_a, trans_b)
}

#[allow(clippy::too_many_arguments)]
fn gemm_core(
    b: &mut Builder,
    a: usize,
    x: usize,
    out: usize,
    cin: Option<usize>,
    alpha: &Expr,
    beta: Option<&Expr>,
    trans_a: bool,
    trans_b: bool,
) -> Result<()> {
    b.require_dims(a, &[2], "matrix")?;
    b.require_dims(x, &[2], "matrix")?;
    b.require_dims(out, &[2], "result matrix")?;
    let (am, ak) = {
        let n = &b.op(a).nonunit;
        if trans_a { (n[1], n[0]) } else { (n[0], n[1]) }
    };
    let (bk, bn) = {
        let n = &b.op(x).nonunit;
        if trans_b { (n[1], n[0]) } else { (n[0], n[1]) }
    };
    let (i, j, k) = (b.outer_var(0), b.outer_var(1), b.inner_var(0));
    let mut c = Contraction {
        outer: vec![b.op(a).sub[am].extent(), b.op(x).sub[bn].extent()],
        inner: vec![b.op(a).sub[ak].extent()],
        reads: vec![
            read("__a", a, b.op(a).at(&[(am, i.clone()), (ak, k.clone())])),
            read("__b", x, b.op(x).at(&[(bk, k), (bn, j.clone())])),
        ],
        body: mul("__a", "__b"),
        fold: Some(Fold {
            wcr: sum_wcr(),
            identity: Some(Expr::Int(0)),
        }),
        finish_reads: vec![],
        finish: None,
        out,
        out_at: b.op(out).at_nonunit(&[i.clone(), j.clone()]),
        out_wcr: None,
    };
    let input = match cin {
        Some(v) => {
            b.require_dims(v, &[2], "input matrix")?;
            Some((v, b.op(v).at_nonunit(&[i, j])))
        }
        None => None,
    };
    apply_beta(&mut c, alpha, beta, input)?;
    b.emit(c)
}

/// `Ger`: `_res = alpha * outer(_x, _y) + _A`.
pub(super) fn ger(b: &mut Builder, alpha: &Expr) -> Result<()> {
    let a = b.input("_A")?;
    let x = b.input("_x")?;
    let y = b.input("_y")?;
    let res = b.output("_res")?;
    b.require_dims(a, &[2], "matrix")?;
    b.require_dims(x, &[1], "vector")?;
    b.require_dims(y, &[1], "vector")?;
    b.require_dims(res, &[2], "result matrix")?;
    let (i, j) = (b.outer_var(0), b.outer_var(1));
    let c = Contraction {
        outer: vec![b.op(x).extent(0), b.op(y).extent(0)],
        inner: vec![],
        reads: vec![
            read("__A", a, b.op(a).at_nonunit(&[i.clone(), j.clone()])),
            read("__x", x, b.op(x).at_nonunit(std::slice::from_ref(&i))),
            read("__y", y, b.op(y).at_nonunit(std::slice::from_ref(&j))),
        ],
        body: Expr::bin(
            BinaryOp::Add,
            scaled(alpha, mul("__x", "__y")),
            Expr::sym("__A"),
        ),
        fold: None,
        finish_reads: vec![],
        finish: None,
        out: res,
        out_at: b.op(res).at_nonunit(&[i, j]),
        out_wcr: None,
    };
    b.emit(c)
}

/// `Axpy`: `_res = a * _x + _y`.
pub(super) fn axpy(b: &mut Builder, a: &Expr) -> Result<()> {
    let x = b.input("_x")?;
    let y = b.input("_y")?;
    let res = b.output("_res")?;
    for (op, what) in [(x, "vector"), (y, "vector"), (res, "result vector")] {
        b.require_dims(op, &[1], what)?;
    }
    let i = b.outer_var(0);
    let c = Contraction {
        outer: vec![b.op(x).extent(0)],
        inner: vec![],
        reads: vec![
            read("__x", x, b.op(x).at_nonunit(std::slice::from_ref(&i))),
            read("__y", y, b.op(y).at_nonunit(std::slice::from_ref(&i))),
        ],
        body: Expr::bin(BinaryOp::Add, scaled(a, Expr::sym("__x")), Expr::sym("__y")),
        fold: None,
        finish_reads: vec![],
        finish: None,
        out: res,
        out_at: b.op(res).at_nonunit(&[i]),
        out_wcr: None,
    };
    b.emit(c)
}

/// True if MatMul node `id` multiplies batches of matrices (an operand with
/// three or more non-unit dimensions): DaCe's `SpecializeMatMul` makes it a
/// `BatchedMatMul`, which has no BLAS call here.
pub(super) fn is_batched_matmul(st: &State, arrays: &NameMap<DataDesc>, id: NodeId) -> bool {
    st.edges.iter().any(|e| {
        e.dst == id
            && matches!(e.dst_conn.as_deref(), Some("_a" | "_b"))
            && e.memlet.data.as_ref().is_some_and(|d| {
                let extents: Vec<Expr> = match (&e.memlet.subset, arrays.get(d)) {
                    (Some(s), _) => s.iter().map(RangeDim::extent).collect(),
                    (None, Some(desc)) => desc.shape.clone(),
                    (None, None) => Vec::new(),
                };
                extents.iter().filter(|x| **x != Expr::Int(1)).count() >= 3
            })
    })
}

/// `BatchedMatMul`: `_c[b..] = _a[b..] @ _b[b..]` over the output's leading
/// (batch) dimensions; an operand with only two non-unit dimensions is the
/// same matrix for every batch (DaCe's pure expansion, which initialises
/// the output to zero and ignores `alpha` and `beta`: other values are
/// refused rather than given another meaning).
pub(super) fn batched_matmul(b: &mut Builder, alpha: &Expr, beta: &Expr) -> Result<()> {
    let a = b.input("_a")?;
    let x = b.input("_b")?;
    let c = b.output("_c")?;
    if b.input_opt("_cin")?.is_some() {
        return Err(b.unsupported("a batched matrix multiplication with an input '_cin'"));
    }
    batched_core(b, a, x, c, alpha, beta)
}

fn batched_core(
    b: &mut Builder,
    a: usize,
    x: usize,
    c: usize,
    alpha: &Expr,
    beta: &Expr,
) -> Result<()> {
    if !super::build::is_one(alpha) || !is_zero(beta) {
        return Err(b.unsupported(
            "a batched matrix multiplication with alpha other than 1 or beta other than 0 (DaCe's pure expansion ignores them)",
        ));
    }
    if b.op(c).wcr.is_some() {
        return Err(b.unsupported(
            "a batched matrix multiplication whose output memlet has a write-conflict resolution",
        ));
    }
    let (ra, rb, rc) = (
        b.op(a).nonunit.len(),
        b.op(x).nonunit.len(),
        b.op(c).nonunit.len(),
    );
    let nb = rc.saturating_sub(2);
    let fits = |r: usize| r == 2 || r == nb + 2;
    if rc < 3 || ra < 2 || rb < 2 || !fits(ra) || !fits(rb) || ra.max(rb) != rc {
        return Err(b.unsupported(format_args!(
            "batched MatMul of {ra}-D by {rb}-D operands into a {rc}-D output (each operand needs the output's batch dimensions or none)"
        )));
    }
    let batch: Vec<Expr> = (0..nb).map(|k| b.outer_var(k)).collect();
    let (i, j, k) = (b.outer_var(nb), b.outer_var(nb + 1), b.inner_var(0));
    let index = |r: usize, row: &Expr, col: &Expr| -> Vec<Expr> {
        let mut v = if r == 2 { Vec::new() } else { batch.clone() };
        v.extend([row.clone(), col.clone()]);
        v
    };
    let mut outer: Vec<Expr> = (0..nb).map(|d| b.op(c).extent(d)).collect();
    outer.extend([b.op(a).extent(ra - 2), b.op(x).extent(rb - 1)]);
    let mut out_idx = batch.clone();
    out_idx.extend([i.clone(), j.clone()]);
    let con = Contraction {
        outer,
        inner: vec![b.op(a).extent(ra - 1)],
        reads: vec![
            read("__a", a, b.op(a).at_nonunit(&index(ra, &i, &k))),
            read("__b", x, b.op(x).at_nonunit(&index(rb, &k, &j))),
        ],
        body: mul("__a", "__b"),
        fold: Some(Fold {
            wcr: sum_wcr(),
            identity: Some(Expr::Int(0)),
        }),
        finish_reads: vec![],
        finish: None,
        out: c,
        out_at: b.op(c).at_nonunit(&out_idx),
        out_wcr: None,
    };
    b.emit(con)
}
