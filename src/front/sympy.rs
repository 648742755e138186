//! Sympy's meaning of a symbolic expression, made explicit for C.
//!
//! In DaCe's symbolic expressions (shapes, map ranges, memlet subsets) `/`
//! is sympy's exact division: `ceiling(N/2)` is the ceiling of a rational
//! number. Printed as C, `ceil(N / 2)` would round `N / 2` toward zero first
//! and lose the ceiling. DaCe's printer turns `ceiling(a/b)` into
//! `int_ceil(a, b)` and `floor(a/b)` into an integer division; here every
//! `ceiling`/`floor` whose argument is a sum of terms divided by integer
//! constants (`N/2 - 1/2`, `(N + 3)/4`) becomes one exact integer ceiling or
//! floor division of the combined numerator by the common denominator, and
//! `ceiling(a/b)` with a symbolic `b` becomes `int_ceil(a, b)`.
//! `sdfgc_int_ceil`/`sdfgc_floordiv` divide exactly for floating operands
//! too, so the rewrite holds whatever the symbols' types.
//!
//! A rational coefficient (`1/4*N`, as DaCe 2.x writes sympy's `N/4`) is a
//! fraction, never C's `1 / 4 == 0`: it becomes `(1*N) / 4`, the integer
//! division DaCe's C code performs for `N/4`.

use crate::ir::{BinaryOp, Expr, Func, UnaryOp};

/// The expression with every `ceiling`/`floor` of a fraction lowered to
/// integer ceiling/floor division.
pub fn lower(e: Expr) -> Expr {
    match e {
        Expr::Call(f @ (Func::Ceil | Func::Floor), args) if args.len() == 1 => {
            let arg = lower(args.into_iter().next().unwrap_or(Expr::Int(0)));
            let int_div = if f == Func::Ceil {
                Func::IntCeil
            } else {
                Func::IntFloor
            };
            if let Some((num, den)) = fraction(&arg)
                && den > 1
            {
                return Expr::Call(int_div, vec![num, Expr::Int(den)]);
            }
            if let Expr::Binary(BinaryOp::Div, a, b) = arg {
                return Expr::Call(int_div, vec![*a, *b]);
            }
            Expr::Call(f, vec![arg])
        }
        Expr::Unary(op, a) => Expr::Unary(op, Box::new(lower(*a))),
        Expr::Binary(BinaryOp::Mul, a, b) => {
            let (a, b) = (lower(*a), lower(*b));
            match (rational(&a), rational(&b)) {
                (Some((p, q)), _) => Expr::bin(BinaryOp::Div, Expr::bin(BinaryOp::Mul, p, b), q),
                (None, Some((p, q))) => Expr::bin(BinaryOp::Div, Expr::bin(BinaryOp::Mul, a, p), q),
                (None, None) => Expr::bin(BinaryOp::Mul, a, b),
            }
        }
        Expr::Binary(op, a, b) => Expr::Binary(op, Box::new(lower(*a)), Box::new(lower(*b))),
        Expr::Call(f, args) => Expr::Call(f, args.into_iter().map(lower).collect()),
        Expr::Ternary(c, a, b) => Expr::Ternary(
            Box::new(lower(*c)),
            Box::new(lower(*a)),
            Box::new(lower(*b)),
        ),
        Expr::Index(n, idx) => Expr::Index(n, idx.into_iter().map(lower).collect()),
        leaf => leaf,
    }
}

/// `e` as `numerator / denominator` with a positive integer denominator,
/// where `e` is built from terms by `+`, `-`, `*` and division by nonzero
/// integer constants; `None` for anything else (floating literals included).
fn fraction(e: &Expr) -> Option<(Expr, i64)> {
    match e {
        Expr::Int(_) | Expr::Sym(_) | Expr::Index(..) => Some((e.clone(), 1)),
        Expr::Call(Func::IntFloor | Func::IntCeil | Func::Min | Func::Max | Func::Abs, _) => {
            Some((e.clone(), 1))
        }
        Expr::Unary(UnaryOp::Neg, a) => {
            let (n, d) = fraction(a)?;
            Some((Expr::Unary(UnaryOp::Neg, Box::new(n)), d))
        }
        Expr::Binary(op @ (BinaryOp::Add | BinaryOp::Sub), a, b) => {
            let (na, da) = fraction(a)?;
            let (nb, db) = fraction(b)?;
            let d = lcm(da, db)?;
            Some((Expr::bin(*op, scale(na, d / da), scale(nb, d / db)), d))
        }
        Expr::Binary(BinaryOp::Mul, a, b) => {
            let (na, da) = fraction(a)?;
            let (nb, db) = fraction(b)?;
            Some((Expr::bin(BinaryOp::Mul, na, nb), da.checked_mul(db)?))
        }
        Expr::Binary(BinaryOp::Div, a, b) => match **b {
            Expr::Int(k) if k != 0 => {
                let (n, d) = fraction(a)?;
                let n = if k < 0 {
                    Expr::Unary(UnaryOp::Neg, Box::new(n))
                } else {
                    n
                };
                Some((n, d.checked_mul(k.checked_abs()?)?))
            }
            _ => None,
        },
        _ => None,
    }
}

/// A rational constant `p/q` (integer literals, `p` possibly negated, `q`
/// not 0): sympy's `Rational`, which C would truncate.
fn rational(e: &Expr) -> Option<(Expr, Expr)> {
    let Expr::Binary(BinaryOp::Div, p, q) = e else {
        return None;
    };
    let int = |x: &Expr| match x {
        Expr::Int(_) => true,
        Expr::Unary(UnaryOp::Neg, a) => matches!(**a, Expr::Int(_)),
        _ => false,
    };
    (int(p) && matches!(**q, Expr::Int(k) if k != 0)).then(|| ((**p).clone(), (**q).clone()))
}

/// `e * k` (just `e` for `k == 1`).
fn scale(e: Expr, k: i64) -> Expr {
    if k == 1 {
        e
    } else {
        Expr::bin(BinaryOp::Mul, Expr::Int(k), e)
    }
}

/// Least common multiple of two positive integers; `None` on overflow.
fn lcm(a: i64, b: i64) -> Option<i64> {
    let (mut x, mut y) = (a, b);
    while y != 0 {
        (x, y) = (y, x % y);
    }
    (a / x).checked_mul(b)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::front::python::parse_expr;

    fn lowered(s: &str) -> String {
        crate::ir::cexpr::to_cpp(&lower(parse_expr(s).expect("parses")))
    }

    #[test]
    fn ceiling_and_floor_of_fractions_become_integer_divisions() {
        assert_eq!(lowered("ceiling(N/2)"), "sdfgc_int_ceil(N, 2)");
        assert_eq!(lowered("floor(N/4)"), "sdfgc_floordiv(N, 4)");
        assert_eq!(lowered("ceiling(N/2 - 1/2)"), "sdfgc_int_ceil(N - 1, 2)");
        assert_eq!(
            lowered("ceiling((N + 3)/4) - 1"),
            "sdfgc_int_ceil(N + 3, 4) - 1"
        );
        assert_eq!(lowered("ceiling(N/M)"), "sdfgc_int_ceil(N, M)");
        assert_eq!(
            lowered("2*ceiling(N/2) - 2"),
            "2 * sdfgc_int_ceil(N, 2) - 2"
        );
    }

    #[test]
    fn rational_coefficients_divide_after_multiplying() {
        assert_eq!(lowered("1/4*N"), "1 * N / 4");
        assert_eq!(lowered("N*3/4"), "N * 3 / 4");
        assert_eq!(lowered("-1/2*N + M"), "-1 * N / 2 + M");
        assert_eq!(lowered("N/4"), "N / 4");
    }

    #[test]
    fn other_calls_are_kept() {
        assert_eq!(lowered("ceiling(x)"), "ceil(x)");
        assert_eq!(lowered("floor(0.5*x)"), "floor(0.5 * x)");
        assert_eq!(lowered("Min(N, M/2)"), "sdfgc_min(N, M / 2)");
    }
}
