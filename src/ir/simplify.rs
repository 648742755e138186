//! Algebraic cleanup, substitution and evaluation of [`Expr`] trees.
//!
//! Symbolic values (shapes, strides, ranges, indices) are integers, so
//! `simplify` may reorder and cancel terms of sums; float literals are only
//! folded where the result is exactly what the target would compute.

use crate::ir::dtype::DType;
use crate::ir::expr::{BinaryOp, Expr, Func, UnaryOp};

/// Returns a simplified copy of `e`: integer constant folding (Python floor
/// semantics for `//`, `%`, `int_floor`, `int_ceil`), identities (`x + 0`,
/// `x * 1`, `x * 0`, `x ** 1`, `x ** 0`, `-(-x)`), and flattening of sums into
/// non-constant terms (first-appearance order, equal terms merged or
/// cancelled) plus one trailing integer constant (`(N - 1) + 1` → `N`).
pub fn simplify(e: &Expr) -> Expr {
    match e {
        Expr::Int(_) | Expr::Float(_) | Expr::Bool(_) | Expr::Sym(_) => e.clone(),
        Expr::Unary(op, a) => simplify_unary(*op, simplify(a)),
        Expr::Binary(op @ (BinaryOp::Add | BinaryOp::Sub), _, _) => {
            let mut sum = Sum::default();
            if sum.collect(e, 1) {
                sum.build()
            } else {
                let Expr::Binary(_, a, b) = e else {
                    unreachable!()
                };
                fold_binary(*op, simplify(a), simplify(b))
            }
        }
        Expr::Binary(op, a, b) => fold_binary(*op, simplify(a), simplify(b)),
        Expr::Call(f, args) => fold_call(*f, args.iter().map(simplify).collect()),
        Expr::Ternary(c, a, b) => match simplify(c) {
            Expr::Bool(v) => simplify(if v { a } else { b }),
            Expr::Int(v) => simplify(if v != 0 { a } else { b }),
            c => Expr::Ternary(Box::new(c), Box::new(simplify(a)), Box::new(simplify(b))),
        },
        Expr::Index(n, idx) => Expr::Index(n.clone(), idx.iter().map(simplify).collect()),
        Expr::Field(a, f) => Expr::Field(Box::new(simplify(a)), f.clone()),
        Expr::Record(t, fields) => Expr::Record(
            t.clone(),
            fields
                .iter()
                .map(|(f, a)| (f.clone(), simplify(a)))
                .collect(),
        ),
    }
}

/// Replaces every `Sym` for which `f` returns `Some`. The array name of an
/// `Index` node is renamed only when `f` returns `Some(Expr::Sym(new_name))`.
pub fn substitute(e: &Expr, f: &mut dyn FnMut(&str) -> Option<Expr>) -> Expr {
    match e {
        Expr::Int(_) | Expr::Float(_) | Expr::Bool(_) => e.clone(),
        Expr::Sym(n) => f(n).unwrap_or_else(|| e.clone()),
        Expr::Unary(op, a) => Expr::Unary(*op, Box::new(substitute(a, f))),
        Expr::Binary(op, a, b) => Expr::bin(*op, substitute(a, f), substitute(b, f)),
        Expr::Call(func, args) => {
            Expr::Call(*func, args.iter().map(|a| substitute(a, f)).collect())
        }
        Expr::Ternary(c, a, b) => Expr::Ternary(
            Box::new(substitute(c, f)),
            Box::new(substitute(a, f)),
            Box::new(substitute(b, f)),
        ),
        Expr::Index(n, idx) => {
            let name = match f(n) {
                Some(Expr::Sym(new)) => new,
                _ => n.clone(),
            };
            Expr::Index(name, idx.iter().map(|a| substitute(a, f)).collect())
        }
        Expr::Field(a, field) => Expr::Field(Box::new(substitute(a, f)), field.clone()),
        Expr::Record(t, fields) => Expr::Record(
            t.clone(),
            fields
                .iter()
                .map(|(n, a)| (n.clone(), substitute(a, f)))
                .collect(),
        ),
    }
}

/// Evaluates `e` with Python integer semantics (`//`, `%`, `int_floor` round
/// toward negative infinity; `/` only when exact; comparisons and booleans are
/// 0/1; `and`/`or` return an operand like Python). Returns `None` when a symbol
/// is unknown to `env`, a float or unsupported function appears, or the
/// arithmetic overflows or divides by zero.
pub fn eval_int(e: &Expr, env: &mut dyn FnMut(&str) -> Option<i64>) -> Option<i64> {
    match e {
        Expr::Int(v) => Some(*v),
        Expr::Bool(v) => Some(*v as i64),
        Expr::Float(_) | Expr::Index(..) | Expr::Field(..) | Expr::Record(..) => None,
        Expr::Sym(n) => env(n),
        Expr::Unary(op, a) => {
            let a = eval_int(a, env)?;
            match op {
                UnaryOp::Neg => a.checked_neg(),
                UnaryOp::Not => Some((a == 0) as i64),
                UnaryOp::BitNot => Some(!a),
            }
        }
        Expr::Binary(BinaryOp::And, a, b) => {
            let a = eval_int(a, env)?;
            if a == 0 { Some(a) } else { eval_int(b, env) }
        }
        Expr::Binary(BinaryOp::Or, a, b) => {
            let a = eval_int(a, env)?;
            if a != 0 { Some(a) } else { eval_int(b, env) }
        }
        Expr::Binary(op, a, b) => int_binary(*op, eval_int(a, env)?, eval_int(b, env)?),
        Expr::Ternary(c, a, b) => {
            if eval_int(c, env)? != 0 {
                eval_int(a, env)
            } else {
                eval_int(b, env)
            }
        }
        Expr::Call(f, args) => {
            let mut v = Vec::with_capacity(args.len());
            for a in args {
                v.push(eval_int(a, env)?);
            }
            int_call(*f, &v)
        }
    }
}

/// The distinct symbol names of `e` (including indexed array names), in
/// first-appearance order.
pub fn free_symbols(e: &Expr) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    e.visit_names(&mut |n| {
        if !out.iter().any(|o| o == n) {
            out.push(n.to_string());
        }
    });
    out
}

/// Python floor division; `None` on division by zero or overflow.
fn floor_div(a: i64, b: i64) -> Option<i64> {
    let q = a.checked_div(b)?;
    if a % b != 0 && ((a < 0) != (b < 0)) {
        q.checked_sub(1)
    } else {
        Some(q)
    }
}

/// Python modulo (sign of the divisor); `None` on division by zero.
fn py_mod(a: i64, b: i64) -> Option<i64> {
    if b == 0 {
        return None;
    }
    let r = a.wrapping_rem(b);
    Some(if r != 0 && ((r < 0) != (b < 0)) {
        r + b
    } else {
        r
    })
}

/// Ceiling division; `None` on division by zero or overflow.
fn ceil_div(a: i64, b: i64) -> Option<i64> {
    let q = a.checked_div(b)?;
    if a % b != 0 && ((a < 0) == (b < 0)) {
        q.checked_add(1)
    } else {
        Some(q)
    }
}

/// Integer semantics of a binary operator (not `and`/`or`).
fn int_binary(op: BinaryOp, a: i64, b: i64) -> Option<i64> {
    Some(match op {
        BinaryOp::Add => a.checked_add(b)?,
        BinaryOp::Sub => a.checked_sub(b)?,
        BinaryOp::Mul => a.checked_mul(b)?,
        BinaryOp::Div => {
            if b == 0 || a.checked_rem(b)? != 0 {
                return None;
            }
            a.checked_div(b)?
        }
        BinaryOp::FloorDiv => floor_div(a, b)?,
        BinaryOp::Mod => py_mod(a, b)?,
        BinaryOp::Pow => a.checked_pow(u32::try_from(b).ok()?)?,
        BinaryOp::BitAnd => a & b,
        BinaryOp::BitOr => a | b,
        BinaryOp::BitXor => a ^ b,
        BinaryOp::Shl => {
            let s = u32::try_from(b).ok().filter(|s| *s < 64)?;
            let r = a << s;
            if r >> s != a {
                return None;
            }
            r
        }
        BinaryOp::Shr => a >> u32::try_from(b).ok()?.min(63),
        BinaryOp::Eq => (a == b) as i64,
        BinaryOp::Ne => (a != b) as i64,
        BinaryOp::Lt => (a < b) as i64,
        BinaryOp::Le => (a <= b) as i64,
        BinaryOp::Gt => (a > b) as i64,
        BinaryOp::Ge => (a >= b) as i64,
        BinaryOp::And => {
            if a == 0 {
                a
            } else {
                b
            }
        }
        BinaryOp::Or => {
            if a != 0 {
                a
            } else {
                b
            }
        }
    })
}

/// `sdfgc_pad_stride(n, bytes, from)` of the generated code (the prelude's
/// helper): `n` for rows under `from` bytes, else an odd number of 64-byte lines.
pub fn pad_stride(n: i64, bytes: i64, from: i64) -> Option<i64> {
    let row = n.checked_mul(bytes)?;
    if row < from || bytes <= 0 || 64 % bytes != 0 {
        return Some(n);
    }
    Some((((row.checked_add(63)?) / 64) | 1) * (64 / bytes))
}

/// Integer semantics of a function call.
fn int_call(f: Func, v: &[i64]) -> Option<i64> {
    match (f, v) {
        (Func::Min, [_, ..]) => v.iter().copied().min(),
        (Func::Max, [_, ..]) => v.iter().copied().max(),
        (Func::Abs, [a]) => a.checked_abs(),
        (Func::Floor | Func::Ceil, [a]) => Some(*a),
        (Func::IntFloor, [a, b]) => floor_div(*a, *b),
        (Func::IntCeil, [a, b]) => ceil_div(*a, *b),
        (Func::PadStride, [n, bytes, from]) => pad_stride(*n, *bytes, *from),
        (Func::Pow, [a, b]) => int_binary(BinaryOp::Pow, *a, *b),
        (Func::Cast(DType::Bool), [a]) => Some((*a != 0) as i64),
        (Func::Cast(t), [a]) if t.is_integer() => {
            let fits = match t {
                DType::Int8 => i8::try_from(*a).is_ok(),
                DType::Int16 => i16::try_from(*a).is_ok(),
                DType::Int32 => i32::try_from(*a).is_ok(),
                DType::UInt8 => u8::try_from(*a).is_ok(),
                DType::UInt16 => u16::try_from(*a).is_ok(),
                DType::UInt32 => u32::try_from(*a).is_ok(),
                DType::UInt64 => *a >= 0,
                _ => true,
            };
            fits.then_some(*a)
        }
        _ => None,
    }
}

fn simplify_unary(op: UnaryOp, a: Expr) -> Expr {
    match (op, a) {
        (UnaryOp::Neg, Expr::Int(v)) if v != i64::MIN => Expr::Int(-v),
        (UnaryOp::Neg, Expr::Float(v)) => Expr::Float(-v),
        (UnaryOp::Neg, Expr::Unary(UnaryOp::Neg, x)) => *x,
        (UnaryOp::Not, Expr::Bool(v)) => Expr::Bool(!v),
        (UnaryOp::Not, Expr::Binary(BinaryOp::Eq, x, y)) => Expr::Binary(BinaryOp::Ne, x, y),
        (UnaryOp::Not, Expr::Binary(BinaryOp::Ne, x, y)) => Expr::Binary(BinaryOp::Eq, x, y),
        (UnaryOp::BitNot, Expr::Int(v)) => Expr::Int(!v),
        (op, a) => Expr::Unary(op, Box::new(a)),
    }
}

/// Folds a binary node whose operands are already simplified.
fn fold_binary(op: BinaryOp, a: Expr, b: Expr) -> Expr {
    use BinaryOp::*;
    use Expr::{Bool, Float, Int};
    match (op, &a, &b) {
        (And, Bool(x), _) => return if *x { b } else { a },
        (Or, Bool(x), _) => return if *x { a } else { b },
        (And | Or, _, _) => return Expr::bin(op, a, b),
        (Pow, _, Int(1)) => return a,
        (Pow, _, Int(0)) => return Int(1),
        (Mul, Int(0), Float(_)) | (Mul, Float(_), Int(0)) => {}
        (Mul, Int(0), _) | (Mul, _, Int(0)) => return Int(0),
        (Mul, Int(1), _) => return b,
        (Mul, _, Int(1)) => return a,
        (Add | Sub, _, Int(0)) => return a,
        (Add, Int(0), _) => return b,
        (Sub, _, Float(v)) if *v < 0.0 => return Expr::bin(Add, a, Float(-v)),
        (Sub, _, Expr::Unary(UnaryOp::Neg, x)) => return Expr::bin(Add, a, (**x).clone()),
        _ => {}
    }
    if let (Int(x), Int(y)) = (&a, &b)
        && op != Div
        && let Some(v) = int_binary(op, *x, *y)
    {
        return if matches!(op, Eq | Ne | Lt | Le | Gt | Ge) {
            Bool(v != 0)
        } else {
            Int(v)
        };
    }
    let num = |e: &Expr| match e {
        Float(v) => Some(*v),
        Int(v) => Some(*v as f64),
        _ => None,
    };
    let any_float = matches!(a, Float(_)) || matches!(b, Float(_));
    if let (true, Some(x), Some(y)) = (any_float, num(&a), num(&b)) {
        match op {
            Add => return Float(x + y),
            Sub => return Float(x - y),
            Mul => return Float(x * y),
            Div if y != 0.0 => return Float(x / y),
            _ => {}
        }
    }
    Expr::bin(op, a, b)
}

/// Folds a call whose arguments are already simplified.
fn fold_call(f: Func, args: Vec<Expr>) -> Expr {
    if let Some(ints) = args.iter().map(Expr::as_int).collect::<Option<Vec<i64>>>() {
        let foldable = matches!(
            f,
            Func::Min | Func::Max | Func::Abs | Func::IntFloor | Func::IntCeil | Func::PadStride
        ) || matches!(f, Func::Cast(t) if t.is_integer());
        if foldable && let Some(v) = int_call(f, &ints) {
            return Expr::Int(v);
        }
    }
    if matches!(f, Func::Min | Func::Max) && args.len() == 2 && args[0] == args[1] {
        return args.into_iter().next().expect("two args");
    }
    Expr::Call(f, args)
}

/// A flattened sum: coefficients per distinct term plus an integer constant.
#[derive(Default)]
struct Sum {
    terms: Vec<(Expr, i64)>,
    constant: i64,
}

impl Sum {
    /// Adds `sign * e`; returns false when the sum cannot be flattened
    /// (a float literal or coefficient overflow).
    fn collect(&mut self, e: &Expr, sign: i64) -> bool {
        match e {
            Expr::Binary(BinaryOp::Add, a, b) => self.collect(a, sign) && self.collect(b, sign),
            Expr::Binary(BinaryOp::Sub, a, b) => self.collect(a, sign) && self.collect(b, -sign),
            Expr::Unary(UnaryOp::Neg, a) => self.collect(a, -sign),
            _ => match simplify(e) {
                Expr::Int(v) => match v
                    .checked_mul(sign)
                    .and_then(|v| self.constant.checked_add(v))
                {
                    Some(c) => {
                        self.constant = c;
                        true
                    }
                    None => false,
                },
                Expr::Float(_) => false,
                s @ (Expr::Binary(BinaryOp::Add | BinaryOp::Sub, ..)
                | Expr::Unary(UnaryOp::Neg, _)) => {
                    // Simplification exposed a new sum (e.g. `x * 1`); it is flat now.
                    self.collect(&s, sign)
                }
                s => {
                    let (term, coeff) = match s {
                        Expr::Binary(BinaryOp::Mul, a, b) => match (*a, *b) {
                            (Expr::Int(c), t) | (t, Expr::Int(c)) => (t, c),
                            (a, b) => (Expr::bin(BinaryOp::Mul, a, b), 1),
                        },
                        s => (s, 1),
                    };
                    let Some(coeff) = coeff.checked_mul(sign) else {
                        return false;
                    };
                    match self.terms.iter_mut().find(|(t, _)| *t == term) {
                        Some((_, c)) => match c.checked_add(coeff) {
                            Some(v) => *c = v,
                            None => return false,
                        },
                        None => self.terms.push((term, coeff)),
                    }
                    true
                }
            },
        }
    }

    fn build(self) -> Expr {
        let scaled = |t: Expr, c: i64| {
            if c == 1 {
                t
            } else {
                Expr::bin(BinaryOp::Mul, Expr::Int(c), t)
            }
        };
        let mut acc: Option<Expr> = None;
        for (t, c) in self.terms {
            if c == 0 {
                continue;
            }
            acc = Some(match (acc, c) {
                (None, -1) => Expr::Unary(UnaryOp::Neg, Box::new(t)),
                (None, c) => scaled(t, c),
                (Some(a), c) if c < 0 && c != i64::MIN => {
                    Expr::bin(BinaryOp::Sub, a, scaled(t, -c))
                }
                (Some(a), c) if c < 0 => Expr::bin(BinaryOp::Add, a, scaled(t, c)),
                (Some(a), c) => Expr::bin(BinaryOp::Add, a, scaled(t, c)),
            });
        }
        match (acc, self.constant) {
            (None, k) => Expr::Int(k),
            (Some(a), 0) => a,
            (Some(a), k) if k < 0 && k != i64::MIN => Expr::bin(BinaryOp::Sub, a, Expr::Int(-k)),
            (Some(a), k) => Expr::bin(BinaryOp::Add, a, Expr::Int(k)),
        }
    }
}

/// True if `a` and `b` are equal as integer functions of their symbols:
/// structurally after simplification, or numerically at several assignments
/// of distinct values to the symbols (used for checks such as "is this
/// stride the product of those extents", where `N**2` and `N*N` must match).
/// Piecewise expressions (`Min`, `Max`, `Abs`, conditionals) must match
/// structurally: the samples are large positive values, where `Max(1, K)`
/// and `K` agree although they differ at `K = 0`.
pub fn probably_equal(a: &Expr, b: &Expr) -> bool {
    let diff = simplify(&Expr::bin(BinaryOp::Sub, a.clone(), b.clone()));
    if diff == Expr::Int(0) {
        return true;
    }
    if piecewise(a) || piecewise(b) {
        return false;
    }
    let mut names = free_symbols(a);
    names.extend(free_symbols(b));
    names.sort();
    names.dedup();
    const SAMPLES: [[i64; 3]; 4] = [[7, 11, 13], [17, 19, 23], [29, 31, 37], [41, 43, 1009]];
    SAMPLES.iter().enumerate().all(|(k, row)| {
        let mut env = |n: &str| {
            names
                .iter()
                .position(|x| x == n)
                .map(|i| row[(i + k) % 3] + 2 * i as i64)
        };
        match (eval_int(a, &mut env), eval_int(b, &mut env)) {
            (Some(x), Some(y)) => x == y,
            _ => false,
        }
    })
}

/// True if the expression has a `Min`, `Max`, `Abs`, padded stride or
/// conditional in it: functions whose value at a few small samples says
/// nothing of the others (`sdfgc_pad_stride(N, 4, 4096)` is `N` below
/// N = 1024 only).
pub fn piecewise(e: &Expr) -> bool {
    match e {
        Expr::Int(_) | Expr::Float(_) | Expr::Bool(_) | Expr::Sym(_) => false,
        Expr::Ternary(..) => true,
        Expr::Call(f, args) => {
            matches!(f, Func::Min | Func::Max | Func::Abs | Func::PadStride)
                || args.iter().any(piecewise)
        }
        Expr::Unary(_, a) => piecewise(a),
        Expr::Binary(_, a, b) => piecewise(a) || piecewise(b),
        Expr::Index(_, idx) => idx.iter().any(piecewise),
        Expr::Field(a, _) => piecewise(a),
        Expr::Record(_, fields) => fields.iter().any(|(_, a)| piecewise(a)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::front::python::parse_expr;

    /// `Max(1, K) - K` is 0 for every large sample but not at `K = 0`: a
    /// copy judged contiguous on such evidence moved the wrong elements.
    #[test]
    fn piecewise_expressions_are_equal_only_structurally() {
        assert!(!probably_equal(
            &p("Max(0, K - Max(1, K0))"),
            &p("Max(0, K - K0)")
        ));
        assert!(probably_equal(&p("Max(0, K - K0)"), &p("Max(0, K - K0)")));
        assert!(probably_equal(&p("N**2"), &p("N*N")));
        // A padded row equals its extent at every sample (all under 4 KiB)
        // and differs from N = 1024 on: never equal but structurally.
        let padded = Expr::Call(
            Func::PadStride,
            vec![Expr::Sym("N".into()), Expr::Int(4), Expr::Int(4096)],
        );
        assert!(!probably_equal(&padded, &p("N")));
        assert!(probably_equal(&padded, &padded.clone()));
    }

    fn p(s: &str) -> Expr {
        parse_expr(s).unwrap()
    }
    fn simp(s: &str) -> Expr {
        simplify(&p(s))
    }
    fn check(src: &str, want: &str) {
        let got = simp(src);
        assert_eq!(got, p(want), "simplify({src})");
        assert_eq!(simplify(&got), got, "idempotent: {src}");
    }

    #[test]
    fn sums() {
        check("(N - 1) + 1", "N");
        check("N - 3 + 1 - 1 + 1", "N - 2");
        check("i + 1 - 1", "i");
        check("a + b - a", "b");
        check("1 + $__out_IDim_range_0", "__out_IDim_range_0 + 1");
        check("x - (-3)", "x + 3");
        check("x + -3", "x - 3");
        check("-(-x)", "x");
        check("a + a", "2 * a");
        check("2*a - a + 5 - 5", "a");
        check("-a + b", "-a + b");
        check("(-x) + 0", "-x");
        check("N - (M - 1)", "N - M + 1");
        check("3 - 1", "2");
        check("x*1 + 0*y + 2", "x + 2");
        check("2 + 2.5 + x", "4.5 + x");
        assert_eq!(simp("N + 1 - 1"), p("N"));
        // Float literals block reordering.
        assert_eq!(simp("x + 1.0 - 1.0"), p("x + 1.0 - 1.0"));
    }

    #[test]
    fn folding() {
        check("7 // 2", "3");
        check("-7 // 2", "-4");
        check("-7 % 3", "2");
        check("7 % -3", "-2");
        check("int_floor(-7, 2)", "-4");
        check("int_ceil(7, 2)", "4");
        check("int_ceil(-7, 2)", "-3");
        check("Min(3, 4)", "3");
        check("Max(0, 2 - 5)", "0");
        check("Abs(-5)", "5");
        check("2**10", "1024");
        check("x**1", "x");
        check("x**0", "1");
        check("x*0", "0");
        check("1*x", "x");
        check("x // 1", "x // 1");
        check("0 * 2.5", "0.0");
        check("3 < 4", "True");
        check("True and x", "x");
        check("False or x", "x");
        check("not (a != b)", "a == b");
        check("1 if 2 > 1 else 0", "1");
        check("1.5 * 2.0", "3.0");
        check("1.0 / 4.0", "0.25");
        check("Max(N, N)", "N");
        check("a[i + 1 - 1]", "a[i]");
        // No folding of true integer division, of division by zero, or of overflow.
        check("7 / 2", "7 / 2");
        check("7 // 0", "7 // 0");
        check("9223372036854775807 + 1", "9223372036854775807 + 1");
        check("floor(2.5)", "floor(2.5)");
    }

    #[test]
    fn eval() {
        let mut env = |n: &str| match n {
            "N" => Some(10),
            "M" => Some(-3),
            _ => None,
        };
        let mut ev = |s: &str| eval_int(&p(s), &mut env);
        assert_eq!(ev("N // 3"), Some(3));
        assert_eq!(ev("-N // 3"), Some(-4));
        assert_eq!(ev("M % 2"), Some(1));
        assert_eq!(ev("N % -3"), Some(-2));
        assert_eq!(ev("int_ceil(N, 4)"), Some(3));
        assert_eq!(ev("int_floor(M, 2)"), Some(-2));
        assert_eq!(ev("N / 5"), Some(2));
        assert_eq!(ev("N / 3"), None);
        assert_eq!(ev("N ** 2"), Some(100));
        assert_eq!(ev("N ** -1"), None);
        assert_eq!(ev("Min(N, M, 4)"), Some(-3));
        assert_eq!(ev("Max(N, M)"), Some(10));
        assert_eq!(ev("Abs(M)"), Some(3));
        assert_eq!(ev("N > M"), Some(1));
        assert_eq!(ev("1 if N < M else 2"), Some(2));
        assert_eq!(ev("N and 0"), Some(0));
        assert_eq!(ev("0 or N"), Some(10));
        assert_eq!(ev("not N"), Some(0));
        assert_eq!(ev("1 << 62"), Some(1 << 62));
        assert_eq!(ev("1 << 64"), None);
        assert_eq!(ev("3 << 62"), None);
        assert_eq!(ev("-16 >> 2"), Some(-4));
        assert_eq!(ev("N // 0"), None);
        assert_eq!(ev("N % 0"), None);
        assert_eq!(ev("9223372036854775807 + 1"), None);
        assert_eq!(ev("-9223372036854775808 // -1"), None);
        assert_eq!(ev("-9223372036854775808 % -1"), Some(0));
        assert_eq!(ev("2 ** 64"), None);
        assert_eq!(ev("K + 1"), None);
        assert_eq!(ev("N * 1.5"), None);
        assert_eq!(ev("int32(N)"), Some(10));
        assert_eq!(ev("int8(300)"), None);
        assert_eq!(ev("~N"), Some(-11));
    }

    #[test]
    fn substitution_and_symbols() {
        let e = p("a[i, N] + N * M");
        let s = substitute(&e, &mut |n| match n {
            "N" => Some(Expr::Int(4)),
            "a" => Some(Expr::sym("b")),
            "M" => Some(p("K + 1")),
            _ => None,
        });
        assert_eq!(s, p("b[i, 4] + 4 * (K + 1)"));
        // Non-symbol replacements leave Index names alone.
        let s = substitute(&p("a[i]"), &mut |_| Some(Expr::Int(0)));
        assert_eq!(s, Expr::Index("a".into(), vec![Expr::Int(0)]));
        assert_eq!(
            free_symbols(&p("N * a[i, N] + Min(i, M)")),
            vec!["N", "a", "i", "M"]
        );
    }
}
