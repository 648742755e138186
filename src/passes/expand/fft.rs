//! `FFT` and `IFFT` (`dace.libraries.fft.nodes`): DaCe's pure expansion, a
//! direct discrete Fourier transform of a one-dimensional input,
//! `_out[k] = sum_n complex(cos(e), -sin(e)) * _inp[n] * factor` with
//! `e = 2 pi k n / N` (`+sin` for IFFT), summed from zero in the output's
//! complex type. DaCe's cuFFT expansion is not used (GPU data is
//! transformed by the same maps, as kernels).

use crate::diag::Result;
use crate::ir::*;

use super::build::{Builder, Contraction, Fold, Read, sum_wcr};

/// `e` with every division a floating-point one (the factor is a sympy
/// expression, `1/N`: Python's true division).
fn true_division(e: &Expr) -> Expr {
    match e {
        Expr::Binary(BinaryOp::Div, a, b) => Expr::bin(
            BinaryOp::Div,
            Expr::Call(Func::Cast(DType::Float64), vec![true_division(a)]),
            true_division(b),
        ),
        Expr::Binary(op, a, b) => Expr::bin(*op, true_division(a), true_division(b)),
        Expr::Unary(op, a) => Expr::Unary(*op, Box::new(true_division(a))),
        Expr::Call(f, args) => Expr::Call(*f, args.iter().map(true_division).collect()),
        Expr::Ternary(c, a, b) => Expr::Ternary(
            Box::new(true_division(c)),
            Box::new(true_division(a)),
            Box::new(true_division(b)),
        ),
        other => other.clone(),
    }
}

/// Expands an `FFT` (`inverse` false) or `IFFT` node.
pub(super) fn dft(b: &mut Builder, inverse: bool, factor: &Expr) -> Result<()> {
    let what = if inverse { "IFFT" } else { "FFT" };
    let i = b.input("_inp")?;
    let o = b.output("_out")?;
    if b.op(i).desc.rank() != 1 {
        return Err(b.unsupported(format_args!(
            "{what} of a {}-dimensional input (DaCe's pure expansion is one-dimensional)",
            b.op(i).desc.rank()
        )));
    }
    b.require_dims(i, &[1], "input")?;
    b.require_dims(o, &[1], "output")?;
    let t = b.op(o).desc.dtype;
    if !t.is_complex() {
        return Err(b.unsupported(format_args!(
            "{what} into '{}' of type {t:?} (a complex type is needed)",
            b.op(o).data
        )));
    }
    if b.op(o).wcr.is_some() {
        return Err(b.unsupported(format_args!(
            "{what} whose output memlet has a write-conflict resolution"
        )));
    }
    let n = b.op(i).extent(0);
    let (k, j) = (b.outer_var(0), b.inner_var(0));
    // DaCe's `2 * math.pi * i * n / N`, evaluated left to right in double.
    let e = Expr::bin(
        BinaryOp::Div,
        Expr::bin(
            BinaryOp::Mul,
            Expr::bin(
                BinaryOp::Mul,
                Expr::Float(2.0 * std::f64::consts::PI),
                k.clone(),
            ),
            j.clone(),
        ),
        n.clone(),
    );
    let sin = Expr::Call(Func::Sin, vec![e.clone()]);
    let twiddle = Expr::Call(
        Func::Complex,
        vec![
            Expr::Call(Func::Cos, vec![e]),
            if inverse {
                sin
            } else {
                Expr::Unary(UnaryOp::Neg, Box::new(sin))
            },
        ],
    );
    let cast = |x: Expr| Expr::Call(Func::Cast(t), vec![x]);
    let factor = true_division(factor);
    let body = Expr::bin(
        BinaryOp::Mul,
        Expr::bin(BinaryOp::Mul, cast(twiddle), cast(Expr::sym("__inp"))),
        cast(factor),
    );
    let c = Contraction {
        outer: vec![b.op(o).extent(0)],
        inner: vec![n],
        reads: vec![Read {
            conn: "__inp".to_string(),
            op: i,
            at: b.op(i).at_nonunit(&[j]),
        }],
        body,
        fold: Some(Fold {
            wcr: sum_wcr(),
            identity: Some(Expr::Int(0)),
        }),
        finish_reads: vec![],
        finish: None,
        out: o,
        out_at: b.op(o).at_nonunit(&[k]),
        out_wcr: None,
    };
    b.emit(c)
}
