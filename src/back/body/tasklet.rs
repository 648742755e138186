//! Writes tasklets: connector declarations from memlets, the translated
//! Python code (with DaCe's semantics for integer `//`, `%` and `/`), and the
//! write-back of outputs, with write-conflict resolution.

use std::collections::{BTreeMap, BTreeSet};

use crate::back::body::dataflow::StateCtx;
use crate::back::body::function::{Access, FnWriter};
use crate::back::body::vector;
use crate::diag::{Error, Result};
use crate::ir::cexpr::{self, CExprPrinter};
use crate::ir::simplify::{free_symbols, simplify, substitute};
use crate::ir::*;

/// A tasklet connector as the generated code sees it.
#[derive(Clone, Debug)]
struct Conn {
    /// C++ variable name.
    var: String,
    /// Element type.
    dtype: DType,
    /// Pointer to the first element of the memlet's subset (indexed by the code).
    pointer: Option<PointerInfo>,
    /// An output into a stream: each assignment of the code pushes into it.
    push: Option<String>,
}

impl Conn {
    /// A connector held in a variable of its element type.
    fn value(var: String, dtype: DType) -> Conn {
        Conn {
            var,
            dtype,
            pointer: None,
            push: None,
        }
    }
}

#[derive(Clone, Debug)]
struct PointerInfo {
    /// Strides of the dimensions the code indexes.
    strides: Vec<Expr>,
    /// An output with write-conflict resolution: each `conn[i] = v` of the
    /// code resolves `v` into the element (atomically where threads may meet).
    wcr: Option<PointerWcr>,
}

/// The write-conflict resolution of an array output connector.
#[derive(Clone, Debug)]
struct PointerWcr {
    wcr: Wcr,
    /// The container's element type.
    dtype: DType,
    atomic: bool,
}

/// Names and types visible to tasklet code.
pub(crate) struct Scope<'a> {
    conns: &'a BTreeMap<String, Conn>,
    locals: &'a BTreeMap<String, DType>,
    sdfg: &'a Sdfg,
    /// Tasklet code (DaCe prints `/` unchanged: C division of integers)
    /// rather than an interstate expression.
    tasklet: bool,
}

/// Local variables of tasklet code, declared as DaCe's C++ declares them:
/// on first assignment (`auto x = ...`, here with the type that `auto`
/// deduces), scoped to the C++ block (`if`/`for` body) they are declared in.
#[derive(Default)]
struct Locals {
    /// Visible locals and their types.
    types: BTreeMap<String, DType>,
    /// Names declared in each open block (the code itself is block 0).
    blocks: Vec<Vec<String>>,
    /// Locals whose block has closed (not visible in DaCe's C++).
    gone: BTreeSet<String>,
    /// Names the code mentions only as whole assignment targets (`out = a`):
    /// for an array connector, a rebinding of the name and nothing more.
    only_rebound: BTreeSet<String>,
}

impl Locals {
    fn declare(&mut self, n: &str, t: DType) {
        self.types.insert(n.to_string(), t);
        self.gone.remove(n);
        if let Some(b) = self.blocks.last_mut() {
            b.push(n.to_string());
        }
    }

    fn close_block(&mut self) {
        for n in self.blocks.pop().unwrap_or_default() {
            self.types.remove(&n);
            self.gone.insert(n);
        }
    }
}

impl Scope<'_> {
    /// The struct type named `n` among the types of the names in scope
    /// (connectors, locals, the SDFG's containers).
    fn record_named(&self, n: &str) -> Option<Record> {
        let types = self.conns.values().map(|c| c.dtype);
        let types = types.chain(self.locals.values().copied());
        let types = types.chain(self.sdfg.arrays.values().map(|d| d.dtype));
        types.into_iter().find_map(|t| match t {
            DType::Record(r) if r.name() == n => Some(r),
            _ => None,
        })
    }

    /// Why struct fields or values in `e` cannot be written, if they cannot.
    fn record_error(&self, e: &Expr) -> Option<String> {
        crate::ir::record::record_error(e, &|n| Some(self.type_of_name(n)), &|n| {
            self.record_named(n)
        })
    }

    fn type_of_name(&self, n: &str) -> DType {
        if let Some(c) = self.conns.get(n) {
            return c.dtype;
        }
        if let Some(t) = self.locals.get(n) {
            return *t;
        }
        if let Some(t) = self.sdfg.symbol_type(n) {
            return t;
        }
        if let Some(d) = self.sdfg.arrays.get(n) {
            return d.dtype;
        }
        if let Some(c) = self.sdfg.constants.get(n) {
            return c.dtype;
        }
        DType::Int64
    }
}

/// The type of a Python expression (C-like promotion, Python true division).
fn infer(e: &Expr, s: &Scope) -> DType {
    match e {
        Expr::Int(v) => {
            if i32::try_from(*v).is_ok() {
                DType::Int32
            } else {
                DType::Int64
            }
        }
        Expr::Float(_) => DType::Float64,
        Expr::Bool(_) => DType::Bool,
        Expr::Sym(n) => s.type_of_name(n),
        Expr::Index(n, _) => s.type_of_name(n),
        Expr::Unary(UnaryOp::Not, _) => DType::Bool,
        Expr::Unary(_, a) => DType::promote(infer(a, s), DType::Int32),
        Expr::Binary(op, a, b) => {
            let (ta, tb) = (infer(a, s), infer(b, s));
            match op {
                // Printed as C++ `&&` / `||` and comparisons, which yield `bool`.
                _ if op.yields_bool() => DType::Bool,
                BinaryOp::Div if !ta.is_float() && !tb.is_float() && !s.tasklet => DType::Float64,
                // A Python number next to a complex value takes its type (numpy's weak scalars).
                _ if ta.is_complex() && is_literal(b) => ta,
                _ if tb.is_complex() && is_literal(a) => tb,
                _ if ta.is_complex() || tb.is_complex() => DType::promote(ta, tb),
                // DaCe's `dace::math::ifloor(a / b)`: `int` for floating operands.
                BinaryOp::FloorDiv if ta.is_float() || tb.is_float() => DType::Int32,
                _ => DType::promote(ta, tb),
            }
        }
        Expr::Call(f, args) => {
            let t0 = args.first().map(|a| infer(a, s)).unwrap_or(DType::Float64);
            match f {
                Func::Cast(t) => *t,
                Func::CastLike => match args.first() {
                    Some(Expr::Sym(n)) => s.type_of_name(n),
                    Some(e) => infer(e, s),
                    None => DType::Float64,
                },
                Func::Complex => DType::Complex128,
                Func::Real | Func::Imag | Func::Abs => t0.real_part(),
                Func::Conj => t0,
                Func::DaceMathPow => match dace_int_pow(args, s) {
                    Some(t) => t,
                    None => infer(&Expr::Call(Func::Pow, args.clone()), s),
                },
                Func::HalfRound => DType::Float16,
                Func::DaceMathPow2 => match dace2_pow_type(args, s) {
                    Some(t) => t,
                    None => infer(&Expr::Call(Func::Pow, args.clone()), s),
                },
                Func::Pow if t0.is_complex() => {
                    let t1 = args.get(1).map(|a| infer(a, s)).unwrap_or(t0);
                    DType::promote(t0, t1)
                }
                Func::Pow
                    if args
                        .get(1)
                        .is_some_and(|a| infer(a, s).is_complex() && !is_literal(&args[0])) =>
                {
                    DType::promote(t0, infer(&args[1], s))
                }
                Func::IsNan | Func::IsInf | Func::IsFinite | Func::SignBit | Func::IsNone => {
                    DType::Bool
                }
                Func::FloatPow => {
                    if args.iter().any(|a| infer(a, s).is_complex()) {
                        DType::Complex128
                    } else {
                        DType::Float64
                    }
                }
                Func::ThreadNum | Func::MaxThreads => DType::Int32,
                // Statements (`py_divmod`, ...): no value.
                Func::DivMod | Func::Modf | Func::Frexp => DType::Int32,
                Func::Deg2Rad | Func::Rad2Deg | Func::Heaviside if args.len() == 1 => t0,
                Func::Exponent | Func::IRound => DType::Int32,
                Func::PyFloor
                | Func::PyMod
                | Func::Heaviside
                | Func::Gcd
                | Func::Lcm
                | Func::ModFloat
                | Func::Modulo
                | Func::ModuloFloat => {
                    DType::promote(t0, args.get(1).map(|a| infer(a, s)).unwrap_or(t0))
                }
                // `nextafter(x, inf)`: `inf` is a double, so C++ calls the
                // double overload (DaCe's library computes so).
                Func::NextAfter => {
                    DType::promote(t0, args.get(1).map(|a| infer(a, s)).unwrap_or(t0))
                }
                Func::Ldexp if t0 == DType::Float32 => DType::Float32,
                Func::Ldexp => DType::Float64,
                _ if t0.is_complex() => t0,
                Func::IFloor if t0.is_float() => DType::Int32,
                Func::IFloor | Func::Sign | Func::SignNumpy2 | Func::Reciprocal => t0,
                Func::Min
                | Func::Max
                | Func::IntFloor
                | Func::IntCeil
                | Func::CMod
                | Func::Fmod
                | Func::CopySign
                | Func::Atan2
                | Func::Hypot
                | Func::Fmin
                | Func::Fmax
                | Func::Remainder
                | Func::Pow => {
                    let t1 = args.get(1).map(|a| infer(a, s)).unwrap_or(t0);
                    let t = DType::promote(t0, t1);
                    match f {
                        Func::Min | Func::Max | Func::IntFloor | Func::IntCeil | Func::CMod => t,
                        _ if t == DType::Float32 => DType::Float32,
                        _ => DType::Float64,
                    }
                }
                _ => {
                    if t0 == DType::Float32 {
                        DType::Float32
                    } else {
                        DType::Float64
                    }
                }
            }
        }
        Expr::Ternary(_, a, b) => DType::promote(infer(a, s), infer(b, s)),
        Expr::Field(a, f) => match infer(a, s) {
            DType::Record(r) => r.field(f).unwrap_or(DType::Float64),
            _ => DType::Float64,
        },
        Expr::Record(t, _) => s.record_named(t).map_or(DType::Float64, DType::Record),
    }
}

/// Calls `f` on every call in `e`, with its function and arguments.
pub(crate) fn visit_calls(e: &Expr, f: &mut dyn FnMut(Func, &[Expr])) {
    match e {
        Expr::Call(func, args) => {
            f(*func, args);
            args.iter().for_each(|a| visit_calls(a, f));
        }
        Expr::Unary(_, a) => visit_calls(a, f),
        Expr::Binary(_, a, b) => {
            visit_calls(a, f);
            visit_calls(b, f);
        }
        Expr::Ternary(c, a, b) => {
            visit_calls(c, f);
            visit_calls(a, f);
            visit_calls(b, f);
        }
        Expr::Index(_, idx) => idx.iter().for_each(|i| visit_calls(i, f)),
        Expr::Field(a, _) => visit_calls(a, f),
        Expr::Record(_, fields) => fields.iter().for_each(|(_, a)| visit_calls(a, f)),
        Expr::Int(_) | Expr::Float(_) | Expr::Bool(_) | Expr::Sym(_) => {}
    }
}

/// Name prefix that asks the printers for a container's pointer rather
/// than its value (not a Python identifier).
const POINTER_OF: &str = "\u{1}pointer:";

/// `x is None` ([`Func::IsNone`]) with its operand `x`, a name, spelled
/// [`POINTER_OF`]`x`: DaCe compares the array's pointer with `nullptr`.
fn pointer_tests(e: &Expr) -> Expr {
    let rec = pointer_tests;
    match e {
        Expr::Call(Func::IsNone, args) => Expr::Call(
            Func::IsNone,
            args.iter()
                .map(|a| match a {
                    Expr::Sym(n) => Expr::Sym(format!("{POINTER_OF}{n}")),
                    other => rec(other),
                })
                .collect(),
        ),
        Expr::Call(f, args) => Expr::Call(*f, args.iter().map(rec).collect()),
        Expr::Unary(op, a) => Expr::Unary(*op, Box::new(rec(a))),
        Expr::Binary(op, a, b) => Expr::bin(*op, rec(a), rec(b)),
        Expr::Ternary(c, a, b) => {
            Expr::Ternary(Box::new(rec(c)), Box::new(rec(a)), Box::new(rec(b)))
        }
        Expr::Index(n, idx) => Expr::Index(n.clone(), idx.iter().map(rec).collect()),
        Expr::Field(a, f) => Expr::Field(Box::new(rec(a)), f.clone()),
        Expr::Record(t, fields) => Expr::Record(
            t.clone(),
            fields.iter().map(|(f, a)| (f.clone(), rec(a))).collect(),
        ),
        Expr::Int(_) | Expr::Float(_) | Expr::Bool(_) | Expr::Sym(_) => e.clone(),
    }
}

/// The variable that holds output `conn` of tasklet `node` for the
/// tasklets its edges without data lead to.
fn link_name(node: NodeId, conn: &str) -> String {
    format!("__link_{}_{conn}", node.0)
}

/// A C++ string literal of `s` (its UTF-8 bytes; control characters, `"`
/// and `\` escaped, octal escapes of three digits so that no digit after
/// one joins it).
pub(crate) fn c_string(s: &str) -> String {
    let mut out = String::from("\"");
    for b in s.bytes() {
        match b {
            b'"' => out.push_str("\\\""),
            b'\\' => out.push_str("\\\\"),
            b'\n' => out.push_str("\\n"),
            b'\t' => out.push_str("\\t"),
            b'\r' => out.push_str("\\r"),
            // `??x` would be a trigraph in old C++ modes.
            b'?' => out.push_str("\\?"),
            0x20..=0x7e => out.push(b as char),
            _ => out.push_str(&format!("\\{b:03o}")),
        }
    }
    out.push('"');
    out
}

/// A Python number literal (`2`, `-1.5`, `1j`, `complex(0.0, 2.0)` of literals).
fn is_literal(e: &Expr) -> bool {
    match e {
        Expr::Int(_) | Expr::Float(_) => true,
        Expr::Unary(UnaryOp::Neg, a) => is_literal(a),
        Expr::Call(Func::Complex, args) => args.iter().all(is_literal),
        _ => false,
    }
}

/// `e` converted to `t` where its type `from` differs (complex arithmetic in
/// C++ wants both operands of one complex type).
fn cast_to(e: Expr, from: DType, t: DType) -> Expr {
    if from == t {
        e
    } else if from.is_complex() && !t.is_complex() {
        Expr::Call(Func::Cast(t), vec![Expr::Call(Func::Real, vec![e])])
    } else {
        Expr::Call(Func::Cast(t), vec![e])
    }
}

/// Rewrites Python operators into the forms whose C++ printing has DaCe's
/// semantics: integer `//` and `%` are C's truncating `/` and `%` (DaCe's
/// frontend already rewrote `a % b` into `(a + b) % b` where it wanted to),
/// integer `/` is true division.
fn lower(e: &Expr, s: &Scope) -> Expr {
    let rec = |x: &Expr| lower(x, s);
    match e {
        Expr::Binary(op, a, b) => {
            let (ta, tb) = (infer(a, s), infer(b, s));
            let ints = !ta.is_float() && !tb.is_float();
            let (la, lb) = (rec(a), rec(b));
            if ta.is_complex() || tb.is_complex() {
                return lower_complex(*op, e, (la, ta), (lb, tb), s);
            }
            match op {
                BinaryOp::FloorDiv if ints => Expr::bin(BinaryOp::Div, la, lb),
                // `dace::math::ifloor(a / b)`: `(int)floor(a / b)`.
                BinaryOp::FloorDiv => Expr::Call(
                    Func::Cast(DType::Int32),
                    vec![Expr::Call(
                        Func::Floor,
                        vec![Expr::bin(BinaryOp::Div, la, lb)],
                    )],
                ),
                BinaryOp::Mod if ints => Expr::Call(Func::CMod, vec![la, lb]),
                BinaryOp::Div if ints && s.tasklet => Expr::bin(BinaryOp::Div, la, lb),
                BinaryOp::Div if ints => Expr::bin(
                    BinaryOp::Div,
                    Expr::Call(Func::Cast(DType::Float64), vec![la]),
                    lb,
                ),
                BinaryOp::Pow if ints => match lb {
                    Expr::Int(k) if k >= 0 => Expr::bin(BinaryOp::Pow, la, Expr::Int(k)),
                    _ => Expr::Call(
                        Func::Cast(DType::Int64),
                        vec![Expr::Call(Func::Pow, vec![la, lb])],
                    ),
                },
                _ => Expr::bin(*op, la, lb),
            }
        }
        Expr::Unary(op, a) => Expr::Unary(*op, Box::new(rec(a))),
        // DaCe's `int_floor(a, b)` is `T(a / b)` and `int_ceil(a, b)` is
        // `T((a + b - 1) / b)` with `T` the type of `a` (dace/math.h): with a
        // floating-point operand (DaCe 2 stores `float(n) / 4` as
        // `int_floor(float(n), 4)`) that is a division, not a floor.
        Expr::Call(f @ (Func::IntFloor | Func::IntCeil), args)
            if args.len() == 2 && args.iter().any(|a| infer(a, s).is_float()) =>
        {
            let (la, lb) = (rec(&args[0]), rec(&args[1]));
            let num = match f {
                Func::IntCeil => Expr::bin(
                    BinaryOp::Sub,
                    Expr::bin(BinaryOp::Add, la, lb.clone()),
                    Expr::Int(1),
                ),
                _ => la,
            };
            Expr::Call(
                Func::Cast(infer(&args[0], s)),
                vec![Expr::bin(BinaryOp::Div, num, lb)],
            )
        }
        // DaCe's `dace::math::f(x)` (`math.exp(x)` and the like, see the
        // parser): `T(f(x))` for x of type T, a cast only where it changes
        // the value (an integer, bool or float16 argument).
        // `dace::math::pow`: its integer overloads for two `int` or two
        // `unsigned int` values, else `std::pow`.
        Expr::Call(Func::DaceMathPow2, args) => {
            let lowered: Vec<Expr> = args.iter().map(rec).collect();
            match (dace2_pow_type(args, s), lowered.as_slice()) {
                (Some(r), [a, b]) => {
                    let a = if infer(&args[0], s) == r {
                        a.clone()
                    } else {
                        Expr::Call(Func::Cast(r), vec![a.clone()])
                    };
                    Expr::Call(Func::DaceMathPow2, vec![a, b.clone()])
                }
                _ => Expr::Call(Func::Pow, lowered),
            }
        }
        Expr::Call(Func::DaceMathPow, args) => {
            let lowered = args.iter().map(rec).collect();
            match dace_int_pow(args, s) {
                Some(_) => Expr::Call(Func::DaceMathPow, lowered),
                None => Expr::Call(Func::Pow, lowered),
            }
        }
        Expr::Call(Func::CastLike, args) if dace_math_call(args) => {
            let t = infer(&args[0], s);
            let value = rec(&args[1]);
            // DaCe 2's `T f(const T& a, const T& b)`: only for arguments of
            // one type (else another overload: `<cmath>`'s).
            if let Expr::Call(_, a) = &args[1]
                && let [_, y] = a.as_slice()
                && infer(y, s) != t
            {
                return value;
            }
            // float16: DaCe's `T(std::f(x))` rounds to half (a vector of
            // halves stays a vector).
            if t == DType::Float16 {
                Expr::Call(Func::HalfRound, vec![value])
            } else if t.is_float() || t.is_complex() {
                value
            } else {
                Expr::Call(Func::Cast(t), vec![value])
            }
        }
        // `dace::math::ifloor(x)`: identity on integers, `(int)floor(x)` otherwise.
        Expr::Call(Func::IFloor, args) if args.len() == 1 => {
            let a = rec(&args[0]);
            if infer(&args[0], s).is_float() {
                Expr::Call(
                    Func::Cast(DType::Int32),
                    vec![Expr::Call(Func::Floor, vec![a])],
                )
            } else {
                a
            }
        }
        // `abs` of an unsigned integer or a bool is the value itself (C++'s
        // `abs` has no unsigned overload: the call would be ambiguous).
        Expr::Call(Func::Abs, args)
            if args.len() == 1 && matches!(infer(&args[0], s).int_range(), Some((0, _)))
                || args.len() == 1 && infer(&args[0], s) == DType::Bool =>
        {
            rec(&args[0])
        }
        Expr::Call(Func::Cast(t), args) if !t.is_complex() && args.len() == 1 => {
            // `float(z)` of a complex value: its real part (numpy's conversion).
            let a = rec(&args[0]);
            let a = if infer(&args[0], s).is_complex() {
                Expr::Call(Func::Real, vec![a])
            } else {
                a
            };
            Expr::Call(Func::Cast(*t), vec![a])
        }
        Expr::Call(Func::Pow, args) if args.len() == 2 => {
            let (ta, tb) = (infer(&args[0], s), infer(&args[1], s));
            let (la, lb) = (rec(&args[0]), rec(&args[1]));
            if ta.is_complex() || tb.is_complex() {
                lower_complex(BinaryOp::Pow, e, (la, ta), (lb, tb), s)
            } else {
                Expr::Call(Func::Pow, vec![la, lb])
            }
        }
        // DaCe's `np_float_pow`: both operands in double (complex) precision.
        Expr::Call(Func::FloatPow, args) if args.len() == 2 => {
            let t = infer(e, s);
            let (ta, tb) = (infer(&args[0], s), infer(&args[1], s));
            let (la, lb) = (rec(&args[0]), rec(&args[1]));
            if t.is_complex() {
                Expr::bin(BinaryOp::Pow, cast_to(la, ta, t), cast_to(lb, tb, t))
            } else {
                Expr::Call(Func::FloatPow, vec![la, lb])
            }
        }
        // `<cmath>`'s floating functions of integers (or bools) compute in
        // double (its templates convert the argument): the conversion is
        // written out, since CUDA's device code cannot call those
        // (host-only) templates and HIP's overloads make them ambiguous.
        Expr::Call(f, args)
            if CMATH_FLOATING.contains(f)
                && args.iter().all(|a| {
                    let t = infer(a, s);
                    t == DType::Bool || t.int_range().is_some()
                }) =>
        {
            let cast = |a: &Expr| Expr::Call(Func::Cast(DType::Float64), vec![rec(a)]);
            Expr::Call(*f, args.iter().map(cast).collect())
        }
        // Two arguments of different real types: `<cmath>`'s promoting
        // template, written out (the same reasons).
        Expr::Call(f, args)
            if CMATH_BINARY.contains(f)
                && let [a, b] = args.as_slice()
                && let (ta, tb) = (infer(a, s), infer(b, s))
                && ta != tb
                && [ta, tb]
                    .iter()
                    .all(|t| t.is_float() && *t != DType::Float16) =>
        {
            let t = DType::promote(ta, tb);
            Expr::Call(*f, vec![cast_to(rec(a), ta, t), cast_to(rec(b), tb, t)])
        }
        Expr::Call(f, args) => Expr::Call(*f, args.iter().map(rec).collect()),
        Expr::Ternary(c, a, b) => {
            let (ta, tb) = (infer(a, s), infer(b, s));
            let (la, lb) = (rec(a), rec(b));
            let (la, lb) = if ta.is_complex() || tb.is_complex() {
                let t = infer(e, s);
                (cast_to(la, ta, t), cast_to(lb, tb, t))
            } else {
                (la, lb)
            };
            Expr::Ternary(Box::new(rec(c)), Box::new(la), Box::new(lb))
        }
        Expr::Index(n, idx) => Expr::Index(n.clone(), idx.iter().map(rec).collect()),
        Expr::Field(a, f) => Expr::Field(Box::new(rec(a)), f.clone()),
        // Every field in declaration order (C++ aggregate initialization),
        // converted to its type; a field not named is zero.
        Expr::Record(t, fields) => match s.record_named(t) {
            Some(r) => Expr::Record(
                t.clone(),
                r.fields()
                    .iter()
                    .map(|(f, ft)| {
                        let v = match fields.iter().find(|(g, _)| g == f) {
                            Some((_, v)) => cast_to(rec(v), infer(v, s), *ft),
                            None => Expr::Call(Func::Cast(*ft), vec![Expr::Int(0)]),
                        };
                        (f.clone(), v)
                    })
                    .collect(),
            ),
            None => e.clone(),
        },
        other => other.clone(),
    }
}

/// A binary operation with a complex operand: both operands converted to
/// the result's complex type (C++ has no mixed `std::complex` arithmetic), an
/// integral literal exponent kept (it prints as repeated multiplication).
fn lower_complex(
    op: BinaryOp,
    e: &Expr,
    (la, ta): (Expr, DType),
    (lb, tb): (Expr, DType),
    s: &Scope,
) -> Expr {
    match op {
        // A real operand stays real (`std::complex<T> * T` is two products,
        // as in DaCe's code, where a complex one is four and a NaN check).
        BinaryOp::Add | BinaryOp::Sub | BinaryOp::Mul | BinaryOp::Div => {
            let t = infer(e, s);
            let side = |x: Expr, tx: DType| {
                let to = if tx.is_complex() { t } else { t.real_part() };
                cast_to(x, tx, to)
            };
            Expr::bin(op, side(la, ta), side(lb, tb))
        }
        BinaryOp::Eq | BinaryOp::Ne => {
            let t = DType::promote(ta, tb);
            Expr::bin(op, cast_to(la, ta, t), cast_to(lb, tb, t))
        }
        BinaryOp::Pow => {
            let t = infer(e, s);
            let lb = match crate::ir::cexpr::integral_exponent(&lb) {
                Some(k) => Expr::Int(k),
                None => cast_to(lb, tb, t),
            };
            Expr::bin(op, cast_to(la, ta, t), lb)
        }
        // Python refuses the others on complex numbers; so does C++.
        _ => Expr::bin(op, la, lb),
    }
}

impl<'a> FnWriter<'a> {
    /// Writes one tasklet.
    pub(crate) fn tasklet(&mut self, ctx: &StateCtx, id: NodeId, t: &Tasklet) -> Result<()> {
        if let [Stmt::Callback { func, args, result }] = t.stmts.as_slice() {
            return self.callback_tasklet(ctx, id, func, args, result.as_deref());
        }
        let st = ctx.st;
        let node = &st.nodes[id.index()];
        let indexed = indexed_names(&t.stmts);
        let assigned: BTreeSet<&str> = all_stmts(&t.stmts)
            .into_iter()
            .filter_map(|s| match s {
                Stmt::Assign {
                    target: Target::Name(n),
                    ..
                }
                | Stmt::Chain { name: n, .. } => Some(n.as_str()),
                _ => None,
            })
            .collect();
        let sdfg = self.sdfg;
        let reserved = |c: &str| sdfg.arrays.contains_key(c) || sdfg.symbols.contains_key(c);
        let var_of = |c: &str| {
            if reserved(c) {
                format!("__conn_{c}")
            } else {
                c.to_string()
            }
        };
        let mut conns: BTreeMap<String, Conn> = BTreeMap::new();
        // Where the variables of this tasklet's values for other tasklets
        // are declared: before its block, in the scope both tasklets share.
        let link_mark = self.out.mark();
        self.out.line(format!("// tasklet {}", node.label));
        self.out.open("");
        // Pointer connectors of one element, which the code reads and
        // assigns by name (see `one_element_pointer`).
        let mut one_element: BTreeSet<String> = BTreeSet::new();
        // Inputs.
        for &ei in &ctx.adj.ins[id.index()] {
            let e = &st.edges[ei];
            if let (Some(c), None, Some(sc), NodeKind::Tasklet(_)) = (
                &e.dst_conn,
                &e.memlet.data,
                &e.src_conn,
                &st.nodes[e.src.index()].kind,
            ) {
                // A value from another tasklet (DaCe's code->code edge).
                let link = link_name(e.src, sc);
                let Some(&from) = self.links.get(&link) else {
                    return Err(Error::unsupported(
                        &e.path,
                        format!(
                            "tasklet '{}': input '{c}' from a tasklet written after it",
                            node.label
                        ),
                    ));
                };
                let dtype = match t.inputs.get(c) {
                    Some(ConnType::Scalar(ct)) => *ct,
                    _ => from,
                };
                let var = var_of(c);
                let cv = if assigned.contains(c.as_str()) {
                    ""
                } else {
                    "const "
                };
                let value = convert(&link, from, dtype);
                self.out
                    .line(format!("{cv}{} {var} = {value};", dtype.ctype()));
                conns.insert(c.clone(), Conn::value(var, dtype));
                continue;
            }
            let (Some(c), Some(data)) = (&e.dst_conn, &e.memlet.data) else {
                continue;
            };
            let d = self.data_desc(data, &e.path)?;
            let sub: &[RangeDim] = e.memlet.subset.as_deref().unwrap_or_default();
            if let Some(&ConnType::Vector(vt, vn)) = t.inputs.get(c) {
                let at = self.vector_at(e, d, sub, (vt, vn), c, &indexed, &node.label)?;
                let var = var_of(c);
                let cv = if assigned.contains(c.as_str()) {
                    ""
                } else {
                    "const "
                };
                let gpu = self.gpu.is_some() || self.in_kernel;
                self.out.line(format!(
                    "{cv}{} {var} = {};",
                    vector::ctype(vt, vn, gpu),
                    vector::load(vt, vn, &at, gpu)
                ));
                conns.insert(c.clone(), Conn::value(var, vt));
                continue;
            }
            let stream = d.kind == DataKind::Stream;
            // A chunk of a consume scope: a pointer to its elements (DaCe's
            // `const T *` lambda parameter).
            if stream && let Some((elems, true)) = self.consumed_element(ctx, ei) {
                if !matches!(t.inputs.get(c), Some(ConnType::Pointer(_))) {
                    return Err(Error::unsupported(
                        &e.path,
                        format!(
                            "tasklet '{}': connector '{c}' takes a consume chunk of several elements \
                             but is not a pointer",
                            node.label
                        ),
                    ));
                }
                let var = var_of(c);
                self.out
                    .line(format!("const {} * {var} = {elems};", d.dtype.ctype()));
                conns.insert(
                    c.clone(),
                    Conn {
                        var,
                        dtype: d.dtype,
                        pointer: Some(PointerInfo {
                            strides: vec![Expr::Int(1)],
                            wcr: None,
                        }),
                        push: None,
                    },
                );
                continue;
            }
            let (dtype, is_ptr) = if stream {
                match t.inputs.get(c) {
                    Some(ConnType::Scalar(ct)) => (*ct, false),
                    Some(ConnType::Pointer(_)) => {
                        return Err(Error::unsupported(
                            &e.path,
                            format!(
                                "tasklet '{}': pointer connector '{c}' on a stream",
                                node.label
                            ),
                        ));
                    }
                    _ => (d.dtype, false),
                }
            } else {
                connector_kind(t.inputs.get(c), d, sub, indexed.contains(c.as_str()))
            };
            let var = var_of(c);
            if is_ptr && one_element_pointer(t.inputs.get(c), sub, &indexed, c) {
                one_element.insert(c.clone());
            }
            if is_ptr {
                let ptr = self.subset_pointer(data, d, sub);
                let strides = pointer_strides(d, sub, &t.stmts, c);
                if crate::back::gpu::libs::lib_of(t).is_some() {
                    // DaCe's: a library takes its inputs as `void *` (cuFFT, cuSPARSE).
                    let ct = d.dtype.ctype();
                    self.out
                        .line(format!("{ct} * {var} = const_cast<{ct} *>({ptr});"));
                } else {
                    self.out
                        .line(format!("const {} * {var} = {ptr};", d.dtype.ctype()));
                }
                conns.insert(
                    c.clone(),
                    Conn {
                        var,
                        dtype,
                        pointer: Some(PointerInfo { strides, wcr: None }),
                        push: None,
                    },
                );
            } else {
                let starts: Vec<Expr> = sub.iter().map(|r| r.start.clone()).collect();
                let element = if !stream {
                    self.element(data, d, &starts)
                } else if let Some((v, _)) = self.consumed_element(ctx, ei) {
                    v
                } else if e.memlet.dynamic {
                    // DaCe pops at every read of the name: not compiled.
                    return Err(Error::unsupported(
                        &e.path,
                        format!(
                            "tasklet '{}': input '{c}' reads stream '{data}' through a dynamic memlet",
                            node.label
                        ),
                    ));
                } else {
                    format!("{data}.pop()")
                };
                let value = convert(&element, d.dtype, dtype);
                // DaCe declares input values as copies the code may assign.
                let cv = if assigned.contains(c.as_str()) {
                    ""
                } else {
                    "const "
                };
                // Code that never names the connector (DaCe's reduce identity
                // `o = b` of inputs `a`, `b`) keeps the read, without a warning.
                let used = match t.code.language {
                    Language::Python => reads_name(&t.stmts, c),
                    Language::Cpp => crate::back::cpp::uses_identifier(&t.code.code, c),
                };
                let cv = if used {
                    cv.to_string()
                } else {
                    format!("[[maybe_unused]] {cv}")
                };
                // An element the code reads only under a condition is bound
                // by reference, as DaCe binds it: it is read only when the
                // condition holds (it may lie past the data's end otherwise).
                // Only an element that may lie outside the data needs it: a
                // reference read behind `and`, `or` or `?:` keeps GCC from
                // computing both operands without a branch.
                let by_ref = !stream
                    && cv == "const "
                    && dtype == d.dtype
                    && t.code.language == Language::Python
                    && read_only_conditionally(&t.stmts, c)
                    && !element_in_bounds(st, id, d, &starts);
                let amp = if by_ref { " &" } else { " " };
                self.out
                    .line(format!("{cv}{}{amp}{var} = {value};", dtype.ctype()));
                conns.insert(c.clone(), Conn::value(var, dtype));
            }
        }
        // Outputs.
        let mut writebacks = Vec::new();
        let mut declared_outs = BTreeSet::new();
        // Outputs that other tasklets read (edges without data).
        let mut links = BTreeSet::new();
        for &ei in &ctx.adj.outs[id.index()] {
            let e = &st.edges[ei];
            if let (Some(c), None) = (&e.src_conn, &e.memlet.data)
                && e.dst_conn.is_some()
            {
                if !matches!(st.nodes[e.dst.index()].kind, NodeKind::Tasklet(_)) {
                    return Err(Error::unsupported(
                        &e.path,
                        format!(
                            "tasklet '{}': output '{c}' into '{}' by a memlet without data \
                             (only a tasklet may take a tasklet's value directly)",
                            node.label,
                            st.nodes[e.dst.index()].label
                        ),
                    ));
                }
                if let Some(&ConnType::Scalar(ct)) = t.outputs.get(c)
                    && !conns.contains_key(c)
                {
                    let var = var_of(c);
                    self.out.line(format!("{} {var};", ct.ctype()));
                    conns.insert(c.clone(), Conn::value(var, ct));
                }
                links.insert(c.clone());
                continue;
            }
            let (Some(c), Some(data)) = (&e.src_conn, &e.memlet.data) else {
                continue;
            };
            let d = self.data_desc(data, &e.path)?;
            let sub: &[RangeDim] = e.memlet.subset.as_deref().unwrap_or_default();
            // DaCe gives each thread its own copy of a CPU_ThreadLocal
            // container; sdfgc one array, the same where each iteration
            // writes its own elements, a race where iterations share some.
            if d.storage == Storage::CpuThreadLocal
                && self.in_parallel
                && !self.is_private(data)
                && self.wcr_conflicts(data, sub)
            {
                return Err(Error::unsupported(
                    &e.path,
                    format!(
                        "tasklet '{}': parallel iterations may write the same elements of the \
                         CPU_ThreadLocal container '{data}' (DaCe gives each thread a copy; \
                         sdfgc holds one array)",
                        node.label
                    ),
                ));
            }
            if d.kind == DataKind::Stream {
                // Each assignment of the code pushes (DaCe's `DaCeKeywordRemover`);
                // C++ code calls the stream's `push` itself.
                if e.memlet.wcr.is_some() || t.inputs.contains_key(c) {
                    return Err(Error::unsupported(
                        &e.path,
                        format!(
                            "tasklet '{}': output '{c}' into stream '{data}' with write-conflict \
                             resolution or of the same name as an input",
                            node.label
                        ),
                    ));
                }
                if declared_outs.insert(c.clone()) {
                    let var = var_of(c);
                    match t.code.language {
                        Language::Python => {
                            conns.insert(
                                c.clone(),
                                Conn {
                                    var,
                                    dtype: d.dtype,
                                    pointer: None,
                                    push: Some(data.clone()),
                                },
                            );
                        }
                        Language::Cpp => self.out.line(format!("auto &{var} = {data};")),
                    }
                }
                continue;
            }
            if crate::passes::reference::is_set(self.sdfg, st, e) {
                // The code computes a pointer; the reference takes it after
                // the code (DaCe's `double* o; ... ref = o;`).
                let r = match &st.nodes[e.dst.index()].kind {
                    NodeKind::Access(a) => a.data.clone(),
                    _ => data.clone(),
                };
                let var = var_of(c);
                if declared_outs.insert(c.clone()) && !conns.contains_key(c) {
                    self.out
                        .line(format!("const {} * {var} = nullptr;", d.dtype.ctype()));
                    conns.insert(c.clone(), Conn::value(var.clone(), d.dtype));
                }
                let var = conns[c].var.clone();
                writebacks.push(format!("{r} = const_cast<{} *>({var});", d.dtype.ctype()));
                continue;
            }
            if let Some(&ConnType::Vector(vt, vn)) = t.outputs.get(c) {
                let at = self.vector_at(e, d, sub, (vt, vn), c, &indexed, &node.label)?;
                if e.memlet.dynamic {
                    return Err(Error::unsupported(
                        &e.path,
                        format!(
                            "tasklet '{}': vector output '{c}' with a dynamic memlet",
                            node.label
                        ),
                    ));
                }
                let var = var_of(c);
                let gpu = self.gpu.is_some() || self.in_kernel;
                if declared_outs.insert(c.clone()) && !conns.contains_key(c) {
                    self.out
                        .line(format!("{} {var};", vector::ctype(vt, vn, gpu)));
                    conns.insert(c.clone(), Conn::value(var.clone(), vt));
                }
                let var = conns[c].var.clone();
                match &e.memlet.wcr {
                    None => writebacks.push(vector::store(vt, vn, &at, &var, gpu)),
                    Some(w) => {
                        let starts: Vec<Expr> = sub.iter().map(|r| r.start.clone()).collect();
                        let atomic = self.in_parallel
                            && !self.is_private(data)
                            && self.wcr_conflicts(data, sub);
                        if crate::ir::single_element(sub) {
                            // Into one element: the vector's elements combined
                            // first, then the element (DaCe's `vreduce_atomic`).
                            let h = format!("{var}_h");
                            writebacks.push(format!("{} {h} = {var}[0];", vt.ctype()));
                            for k in 1..vn {
                                writebacks.push(self.wcr_update(
                                    w,
                                    &h,
                                    &format!("{var}[{k}]"),
                                    vt,
                                    false,
                                ));
                            }
                            let target = self.element(data, d, &starts);
                            writebacks.push(match self.reduction_var(data, &starts) {
                                Some(red) => self.wcr_update(w, &red, &h, vt, false),
                                None => self.wcr_update(w, &target, &h, vt, atomic),
                            });
                        } else {
                            // Into as many consecutive elements: each its own.
                            for k in 0..vn {
                                writebacks.push(self.wcr_update(
                                    w,
                                    &format!("({at})[{k}]"),
                                    &format!("{var}[{k}]"),
                                    vt,
                                    atomic,
                                ));
                            }
                        }
                    }
                }
                continue;
            }
            let (dtype, is_ptr) =
                connector_kind(t.outputs.get(c), d, sub, indexed.contains(c.as_str()));
            // A dynamic output with write-conflict resolution (a write under a
            // condition) is resolved where the code assigns it, as DaCe does: a
            // write-back after the code would resolve a value never assigned.
            let starts: Vec<Expr> = sub.iter().map(|r| r.start.clone()).collect();
            let resolve_in_place = !is_ptr
                && e.memlet.dynamic
                && e.memlet.wcr.is_some()
                && t.code.language == Language::Python
                && !indexed.contains(c.as_str())
                && !reads_name(&t.stmts, c)
                && self.reduction_var(data, &starts).is_none();
            let var = var_of(c);
            if is_ptr || resolve_in_place {
                if e.memlet.wcr.is_some() && t.code.language != Language::Python {
                    return Err(Error::unsupported(
                        &e.path,
                        format!(
                            "tasklet '{}': array output '{c}' with write-conflict resolution \
                             in C++ code",
                            node.label
                        ),
                    ));
                }
                // A dynamic memlet (a write under a condition) assigned by
                // name writes its subset's first element, whatever its size
                // (DaCe's `DaCeKeywordRemover.visit_Assign`).
                if resolve_in_place
                    || one_element_pointer(t.outputs.get(c), sub, &indexed, c)
                    || (e.memlet.dynamic && e.memlet.wcr.is_none() && !indexed.contains(c.as_str()))
                {
                    one_element.insert(c.clone());
                }
                if declared_outs.insert(c.clone()) {
                    let ptr = self.subset_pointer(data, d, sub);
                    let strides = pointer_strides(d, sub, &t.stmts, c);
                    let wcr = e.memlet.wcr.as_ref().map(|w| PointerWcr {
                        wcr: w.clone(),
                        dtype: d.dtype,
                        atomic: self.in_parallel
                            && !self.is_private(data)
                            && self.wcr_conflicts(data, sub),
                    });
                    // A library's output its call writes through another
                    // connector (DaCe's Potrf: `_xout` is `_xin`'s memory).
                    let unused = crate::back::gpu::libs::lib_of(t).is_some()
                        && !crate::back::cpp::uses_identifier(&t.code.code, c);
                    self.out.line(format!(
                        "{}{} * {var} = {ptr};",
                        if unused { "[[maybe_unused]] " } else { "" },
                        d.dtype.ctype()
                    ));
                    conns.insert(
                        c.clone(),
                        Conn {
                            var,
                            dtype,
                            pointer: Some(PointerInfo { strides, wcr }),
                            push: None,
                        },
                    );
                }
                continue;
            }
            let target = self.element(data, d, &starts);
            if e.memlet.dynamic && e.memlet.wcr.is_none() && !conns.contains_key(c) {
                // May or may not be written: bind by reference.
                if declared_outs.insert(c.clone()) {
                    self.out
                        .line(format!("{} &{var} = {target};", d.dtype.ctype()));
                    conns.insert(c.clone(), Conn::value(var, d.dtype));
                }
                continue;
            }
            if declared_outs.insert(c.clone()) && !conns.contains_key(c) {
                self.out.line(format!("{} {var};", dtype.ctype()));
                conns.insert(c.clone(), Conn::value(var.clone(), dtype));
            }
            let var = conns[c].var.clone();
            let var = convert(&var, conns[c].dtype, d.dtype);
            let stmt = match &e.memlet.wcr {
                None => format!("{target} = {var};"),
                Some(w) => match self.reduction_var(data, &starts) {
                    // Each thread's own total (see `reduction`).
                    Some(red) => self.wcr_update(w, &red, &var, d.dtype, false),
                    None => {
                        let atomic = self.in_parallel
                            && !self.is_private(data)
                            && self.wcr_conflicts(data, sub);
                        self.wcr_update(w, &target, &var, d.dtype, atomic)
                    }
                },
            };
            writebacks.push(stmt);
        }
        // Code.
        let mut locals = Locals {
            blocks: vec![Vec::new()],
            only_rebound: only_rebound(&t.stmts),
            ..Default::default()
        };
        match t.code.language {
            Language::Python => {
                if one_element.is_empty() {
                    self.python_block(&t.stmts, &conns, &mut locals, node)?;
                } else {
                    let stmts = first_element_of(&t.stmts, &one_element);
                    self.python_block(&stmts, &conns, &mut locals, node)?;
                }
            }
            Language::Cpp => {
                let code = crate::back::gpu::libs::unprovided(t);
                if let Some(name) = dace_runtime_name(&code, self.in_kernel) {
                    return Err(Error::unsupported(
                        &node.path,
                        format!(
                            "C++ tasklet '{}' uses DaCe's runtime library ('{name}'), which sdfgc does not provide",
                            node.label
                        ),
                    ));
                }
                if self.gpu.is_some() && !self.in_kernel {
                    // DaCe's GPU context: the state's streams.
                    self.out.line(
                        t.code
                            .code
                            .trim_end()
                            .replace("__state->gpu_context->streams", "__state->gpu_streams"),
                    );
                } else {
                    self.out.line(t.code.code.trim_end());
                }
            }
        }
        for w in writebacks {
            self.out.line(w);
        }
        let mut link_decls = Vec::new();
        for c in links {
            let (var, dtype) = match (conns.get(&c), locals.types.get(&c)) {
                (Some(x), _) => (x.var.clone(), x.dtype),
                (None, Some(&t)) => (c.clone(), t),
                (None, None) => {
                    return Err(Error::unsupported(
                        &node.path,
                        format!(
                            "tasklet '{}': output '{c}' for another tasklet has no type and the \
                             code does not assign it at its top level",
                            node.label
                        ),
                    ));
                }
            };
            let link = link_name(id, &c);
            self.out.line(format!("{link} = {var};"));
            link_decls.push(format!("{} {link};", dtype.ctype()));
            self.links.insert(link, dtype);
        }
        // Each goes in at the mark: the last first, for the connectors' order.
        for d in link_decls.iter().rev() {
            self.out.insert_line(link_mark, d);
        }
        self.out.close();
        Ok(())
    }

    /// The address a vector connector reads or writes from: its memlet's
    /// first element, as DaCe's `*(dace::vec<T, N> *)(&A[i])`. Refused for
    /// float16 on CPU targets (no GCC vector of DaCe's struct), on scalars
    /// and streams, in another element type, and where the code indexes the
    /// connector.
    #[allow(clippy::too_many_arguments)]
    fn vector_at(
        &self,
        e: &DataEdge,
        d: &DataDesc,
        sub: &[RangeDim],
        (vt, _): (DType, u32),
        c: &str,
        indexed: &BTreeSet<&str>,
        label: &str,
    ) -> Result<String> {
        let refuse = |why: &str| {
            Err(Error::unsupported(
                &e.path,
                format!("tasklet '{label}': vector connector '{c}' ({why})"),
            ))
        };
        if vt == DType::Float16 && self.gpu.is_none() && !self.in_kernel {
            return refuse("a vector of float16 on CPU targets");
        }
        if !matches!(d.kind, DataKind::Array | DataKind::View) {
            return refuse("on a scalar or stream");
        }
        if d.dtype != vt {
            return refuse(&format!(
                "of {} on data of {}",
                vt.dace_name(),
                d.dtype.dace_name()
            ));
        }
        if indexed.contains(c) {
            return refuse("indexed by the code");
        }
        let Some(data) = &e.memlet.data else {
            return refuse("on an empty memlet");
        };
        let starts: Vec<Expr> = sub.iter().map(|r| r.start.clone()).collect();
        Ok(format!("&{}", self.element(data, d, &starts)))
    }

    pub(crate) fn data_desc(&self, data: &str, path: &str) -> Result<&'a DataDesc> {
        let sdfg: &'a Sdfg = self.sdfg;
        sdfg.arrays
            .get(data)
            .ok_or_else(|| Error::invalid(path, format!("unknown data '{data}'")))
    }

    /// `&data[start of subset]`.
    pub(crate) fn subset_pointer(&self, data: &str, d: &DataDesc, sub: &[RangeDim]) -> String {
        match self.access.get(data) {
            Some(Access::Value(v)) => format!("&{v}"),
            _ => {
                let starts: Vec<Expr> = if sub.len() == d.rank() {
                    sub.iter().map(|r| r.start.clone()).collect()
                } else {
                    vec![Expr::Int(0); d.rank()]
                };
                format!("&{}", self.element(data, d, &starts))
            }
        }
    }

    /// Writes a block of tasklet statements; locals declared in it are
    /// scoped to it, as in DaCe's C++.
    fn python_block(
        &mut self,
        stmts: &[Stmt],
        conns: &BTreeMap<String, Conn>,
        locals: &mut Locals,
        node: &Node,
    ) -> Result<()> {
        for s in stmts {
            self.python_stmt(s, conns, locals, node)?;
        }
        Ok(())
    }

    /// Writes `{ stmts }` as a nested C++ block (the caller opened it).
    fn python_nested(
        &mut self,
        stmts: &[Stmt],
        conns: &BTreeMap<String, Conn>,
        locals: &mut Locals,
        node: &Node,
    ) -> Result<()> {
        locals.blocks.push(Vec::new());
        let r = self.python_block(stmts, conns, locals, node);
        locals.close_block();
        r
    }

    fn python_stmt(
        &mut self,
        s: &Stmt,
        conns: &BTreeMap<String, Conn>,
        locals: &mut Locals,
        node: &Node,
    ) -> Result<()> {
        let refuse = |what: String| {
            Err(Error::unsupported(
                &node.path,
                format!("tasklet '{}': {what}", node.label),
            ))
        };
        // A local whose block has closed does not exist in DaCe's C++.
        for e in s.own_exprs() {
            let mut dead = None;
            e.visit_names(&mut |n| {
                if dead.is_none() && locals.gone.contains(n) && !locals.types.contains_key(n) {
                    dead = Some(n.to_string());
                }
            });
            if let Some(n) = dead {
                return refuse(format!(
                    "local variable '{n}' is used outside the 'if'/'for' block that assigns it \
                     (DaCe declares it inside that C++ block)"
                ));
            }
        }
        // A stream output is only pushed to (each assignment pushes).
        for e in s.own_exprs() {
            let mut read = None;
            e.visit_names(&mut |n| {
                if read.is_none() && conns.get(n).is_some_and(|c| c.push.is_some()) {
                    read = Some(n.to_string());
                }
            });
            if let Some(n) = read {
                return refuse(format!(
                    "reads '{n}', an output into a stream (its assignments push; it has no value)"
                ));
            }
        }
        let scope = Scope {
            conns,
            locals: &locals.types,
            sdfg: self.sdfg,
            tasklet: true,
        };
        // `x is None` compares a pointer with `nullptr` in DaCe's C++: `x`
        // must be an array connector (a value does not compile there).
        // OpenMP's queries exist in host code only.
        let mut not_pointer = None;
        let mut omp = None;
        for e in s.own_exprs() {
            visit_calls(e, &mut |f, args| match f {
                Func::IsNone if not_pointer.is_none() => {
                    let ok = matches!(args.first(), Some(Expr::Sym(n))
                        if conns.get(n).is_some_and(|c| c.pointer.is_some()));
                    if !ok {
                        not_pointer = Some(args.first().map(cexpr::to_cpp).unwrap_or_default());
                    }
                }
                Func::ThreadNum => omp = Some("omp_get_thread_num"),
                Func::MaxThreads => omp = Some("omp_get_max_threads"),
                _ => {}
            });
        }
        if let Some(name) = omp.filter(|_| self.in_kernel) {
            return refuse(format!("OpenMP's '{name}()' in GPU code"));
        }
        if let Some(x) = not_pointer {
            return refuse(format!(
                "'{x} is None' of something other than an array connector (DaCe compares \
                 it with nullptr, which only a pointer compares with)"
            ));
        }
        if let Some(why) = s.own_exprs().iter().find_map(|e| scope.record_error(e)) {
            return refuse(why);
        }
        match s {
            // A callback called inside an expression (hoisted by the
            // parser into a fresh local): a scalar function of values,
            // called where DaCe's C++ calls it (src/valid checked its type).
            Stmt::Callback {
                func,
                args,
                result: Some(r),
            } if r.starts_with("__sdfgc_cb") && !self.in_kernel => {
                let cb = self.sdfg.callbacks.get(func).ok_or_else(|| {
                    Error::invalid(&node.path, format!("'{func}' is not a callback"))
                })?;
                let &[CbValue::Scalar(t)] = cb.returns.as_slice() else {
                    return refuse(format!("'{func}' does not return one scalar"));
                };
                let mut printed = Vec::new();
                for a in args {
                    printed.push(match a {
                        CbArg::Str(s) => format!("const_cast<char *>({})", c_string(s)),
                        CbArg::Null => "nullptr".to_string(),
                        CbArg::Value(e) => self.tasklet_expr(e, &scope),
                    });
                }
                locals.declare(r, t);
                self.out.line(format!(
                    "{} {r} = {func}({});",
                    t.ctype(),
                    printed.join(", ")
                ));
            }
            Stmt::Callback { func, .. } => {
                return refuse(format!(
                    "a call of the callback '{func}' among other statements (DaCe's frontend \
                     writes a callback tasklet as the call alone)"
                ));
            }
            Stmt::Assign { target, op, value } => {
                // A symbol variable of this function, which the code changes (DaCe's C++).
                let symbol = match target {
                    Target::Name(n) if !conns.contains_key(n) && !locals.types.contains_key(n) => {
                        match self.symbol_target(n, node) {
                            // A plain assignment declares a local of that name instead.
                            Some(Err(why)) if op.is_some() => return refuse(why),
                            Some(Ok(t)) => Some(t),
                            _ => None,
                        }
                    }
                    _ => None,
                };
                let value = match op {
                    None => value.clone(),
                    Some(op) => {
                        if let Target::Name(n) = target
                            && !conns.contains_key(n)
                            && !locals.types.contains_key(n)
                            && symbol.is_none()
                        {
                            return refuse(format!(
                                "augmented assignment to '{n}' before it has a value"
                            ));
                        }
                        let lhs = match target {
                            Target::Name(n) => Expr::Sym(n.clone()),
                            Target::Index(n, i) => Expr::Index(n.clone(), i.clone()),
                            Target::Field(n, f) => {
                                Expr::Field(Box::new(Expr::Sym(n.clone())), f.clone())
                            }
                        };
                        Expr::bin(*op, lhs, value.clone())
                    }
                };
                let mut t = infer(&value, &scope);
                let target_t = match target {
                    Target::Name(_) if symbol.is_some() => symbol.unwrap_or(t),
                    Target::Name(n) if !conns.contains_key(n) && !locals.types.contains_key(n) => t,
                    Target::Name(n) | Target::Index(n, _) => scope.type_of_name(n),
                    Target::Field(n, f) => {
                        let field = Expr::Field(Box::new(Expr::Sym(n.clone())), f.clone());
                        if let Some(why) = scope.record_error(&field) {
                            return refuse(why);
                        }
                        infer(&field, &scope)
                    }
                };
                let value = if t.is_complex() && !target_t.is_complex() {
                    // A complex value stored into a real one keeps its real part (numpy).
                    t = t.real_part();
                    Expr::Call(Func::Real, vec![value])
                } else {
                    value
                };
                let rhs = self.tasklet_expr(&value, &scope);
                let line = match target {
                    Target::Name(n) => {
                        if let Some(c) = conns.get(n) {
                            if let Some(s) = &c.push {
                                if op.is_some() {
                                    return refuse(format!(
                                        "augmented assignment to the stream output '{n}'"
                                    ));
                                }
                                format!("{s}.push({rhs});")
                            } else if c.pointer.is_some() {
                                if op.is_some() || !locals.only_rebound.contains(n) {
                                    return refuse(format!(
                                        "assigns the array connector '{n}' as a whole, and \
                                         uses it otherwise (DaCe's C++ rebinds the pointer)"
                                    ));
                                }
                                // Python rebinds the name, DaCe's C++ the
                                // pointer: nothing is written to the data.
                                format!(
                                    "// '{n} = {}' rebinds the name only (Python, DaCe's C++): nothing is written\n(void){};\n(void)({rhs});",
                                    cexpr::to_cpp(&value),
                                    c.var
                                )
                            } else {
                                format!("{} = {rhs};", c.var)
                            }
                        } else if locals.types.contains_key(n) || symbol.is_some() {
                            format!("{n} = {rhs};")
                        } else {
                            locals.declare(n, t);
                            format!("{} {n} = {rhs};", t.ctype())
                        }
                    }
                    Target::Field(n, f) => {
                        match conns.get(n) {
                            Some(c) if c.push.is_some() || c.pointer.is_some() => {
                                return refuse(format!(
                                    "assigns field '{f}' of the array or stream connector '{n}'"
                                ));
                            }
                            None if !locals.types.contains_key(n) => {
                                return refuse(format!(
                                    "assigns field '{f}' of '{n}' before '{n}' has a value"
                                ));
                            }
                            _ => {}
                        }
                        let field = Expr::Field(Box::new(Expr::Sym(n.clone())), f.clone());
                        let lhs = self.tasklet_expr(&field, &scope);
                        format!("{lhs} = {};", convert(&rhs, t, target_t))
                    }
                    Target::Index(n, idx) => {
                        let lhs = self.tasklet_expr(&Expr::Index(n.clone(), idx.clone()), &scope);
                        let wcr = conns
                            .get(n)
                            .and_then(|c| c.pointer.as_ref())
                            .and_then(|p| p.wcr.as_ref());
                        match wcr {
                            Some(_) if op.is_some() => {
                                return refuse(format!(
                                    "augmented assignment to the output '{n}' that has \
                                     write-conflict resolution"
                                ));
                            }
                            Some(w) => self.wcr_update(&w.wcr, &lhs, &rhs, w.dtype, w.atomic),
                            None => format!("{lhs} = {rhs};"),
                        }
                    }
                };
                self.out.line(line);
            }
            Stmt::Expr(e) => {
                if let Expr::Call(f, args) = e
                    && f.is_statement()
                {
                    // `py_divmod(a, b, q, r)` and kin store into their last
                    // arguments (C++ references): each must be a value the
                    // tasklet can assign.
                    let (name, ins) = match f {
                        Func::DivMod => ("py_divmod", 2),
                        Func::Modf => ("np_modf", 1),
                        _ => ("np_frexp", 1),
                    };
                    let mut out_types = Vec::new();
                    for a in &args[ins..] {
                        let t = match a {
                            Expr::Sym(n) => match conns.get(n) {
                                Some(c) if c.pointer.is_none() => Some(c.dtype),
                                Some(_) => None,
                                None => locals.types.get(n).copied(),
                            },
                            _ => None,
                        };
                        match t {
                            Some(t) => out_types.push(t),
                            None => {
                                return refuse(format!(
                                    "'{name}' stores into an argument that is not an output \
                                     connector or local variable of one value"
                                ));
                            }
                        }
                    }
                    // DaCe's templates (dace/math.h) deduce one type `T`:
                    // other combinations do not compile with DaCe either.
                    let t = infer(&args[0], &scope);
                    let want: Vec<DType> = match f {
                        Func::DivMod => vec![t; 3],
                        Func::Modf if !t.is_float() => vec![DType::Float64; 2],
                        Func::Modf => vec![t; 2],
                        _ => vec![t, DType::Int32],
                    };
                    let got: Vec<DType> = match f {
                        Func::DivMod => {
                            let mut v = vec![infer(&args[1], &scope)];
                            v.extend(&out_types);
                            v
                        }
                        _ => out_types.clone(),
                    };
                    let frexp_int = *f == Func::Frexp && !t.is_float();
                    if got != want || frexp_int || t.is_complex() {
                        return refuse(format!(
                            "'{name}' of {} into {} (DaCe's runtime function takes other \
                             types; its generated code does not compile either)",
                            args[..ins]
                                .iter()
                                .map(|a| infer(a, &scope).ctype())
                                .collect::<Vec<_>>()
                                .join(", "),
                            out_types
                                .iter()
                                .map(|t| t.ctype())
                                .collect::<Vec<_>>()
                                .join(", ")
                        ));
                    }
                }
                let line = format!("{};", self.tasklet_expr(e, &scope));
                self.out.line(line);
            }
            Stmt::Chain {
                name,
                target,
                value,
            } => match self.chain(name, target, value, conns, &scope) {
                Ok((line, declared)) => {
                    self.out.line(line);
                    if let Some(t) = declared {
                        locals.declare(name, t);
                    }
                }
                Err(why) => return refuse(why),
            },
            Stmt::Printf { format, args } => {
                let mut parts = vec![c_string(format)];
                parts.extend(args.iter().map(|a| self.tasklet_expr(a, &scope)));
                // Device code has CUDA's and HIP's own printf.
                let f = if self.in_kernel {
                    "printf"
                } else {
                    "sdfgc_printf"
                };
                self.out.line(format!("{f}({});", parts.join(", ")));
            }
            Stmt::If {
                cond,
                then,
                otherwise,
            } => {
                let c = self.tasklet_expr(cond, &scope);
                self.out.open(format!("if ({c})"));
                self.python_nested(then, conns, locals, node)?;
                if otherwise.is_empty() {
                    self.out.close();
                } else {
                    // An `elif` is an `if` nested in the `else` block.
                    self.out.close_with(" else {");
                    self.out.indent_in();
                    self.python_nested(otherwise, conns, locals, node)?;
                    self.out.close();
                }
            }
            Stmt::For {
                var,
                start,
                stop,
                step,
                body,
            } => {
                if conns.contains_key(var) || locals.types.contains_key(var) {
                    return refuse(format!(
                        "'for' loop variable '{var}' is already defined \
                         (DaCe declares the loop variable in the loop)"
                    ));
                }
                // DaCe's `range` holds `int` bounds and yields `int`; bounds
                // are evaluated once, as in Python.
                let [a, b, k] = [start, stop, step].map(|e| {
                    let p = self.tasklet_expr(e, &scope);
                    if infer(e, &scope) == DType::Int32 {
                        p
                    } else {
                        format!("static_cast<int>({p})")
                    }
                });
                let (end, inc) = (format!("{var}__end"), format!("{var}__step"));
                // DaCe's loop variable is a copy of the iterator's value:
                // assigning it in the body does not change the iteration.
                let assigned = all_stmts(body)
                    .iter()
                    .any(|s| matches!(s, Stmt::Assign { target: Target::Name(n), .. } if n == var));
                let it = if assigned {
                    format!("{var}__it")
                } else {
                    var.clone()
                };
                let header = match step {
                    Expr::Int(v) if *v > 0 => {
                        format!("for (int {it} = {a}, {end} = {b}; {it} < {end}; {it} += {k})")
                    }
                    Expr::Int(v) if *v < 0 => {
                        format!("for (int {it} = {a}, {end} = {b}; {it} > {end}; {it} += {k})")
                    }
                    _ => format!(
                        "for (int {it} = {a}, {end} = {b}, {inc} = {k}; \
                         {inc} > 0 ? {it} < {end} : {it} > {end}; {it} += {inc})"
                    ),
                };
                self.out.open(header);
                if assigned {
                    self.out.line(format!("int {var} = {it};"));
                }
                locals.blocks.push(Vec::new());
                locals.declare(var, DType::Int32);
                let r = self.python_block(body, conns, locals, node);
                locals.close_block();
                r?;
                self.out.close();
            }
        }
        Ok(())
    }

    /// Prints tasklet code with connector names and pointer indexing.
    fn tasklet_expr(&self, e: &Expr, scope: &Scope) -> String {
        let lowered = pointer_tests(&lower(e, scope));
        let name = |n: &str| match n.strip_prefix(POINTER_OF) {
            // `x is None` of an array connector: its pointer (checked by the caller).
            Some(n) => match scope.conns.get(n) {
                Some(c) => c.var.clone(),
                None => n.to_string(),
            },
            None => match scope.conns.get(n) {
                Some(c) => c.var.clone(),
                None => match self.access.get(n) {
                    Some(Access::Value(v)) => v.clone(),
                    // A scalar container named without a connector (DaCe's
                    // frontend lets tasklets read a nested SDFG's scalar
                    // argument so): its value, not the pointer it is passed by.
                    Some(Access::Ptr(p))
                        if self
                            .sdfg
                            .arrays
                            .get(n)
                            .is_some_and(|d| d.kind == DataKind::Scalar) =>
                    {
                        format!("{p}[0]")
                    }
                    _ => n.to_string(),
                },
            },
        };
        let index = |n: &str, idx: &[String]| match scope.conns.get(n) {
            Some(Conn {
                var,
                pointer: Some(p),
                ..
            }) => {
                let terms: Vec<String> = idx
                    .iter()
                    .enumerate()
                    .map(|(k, i)| {
                        let stride = p.strides.get(k).cloned().unwrap_or(Expr::Int(1));
                        match simplify(&stride) {
                            Expr::Int(1) => cexpr::wrap(i),
                            s => {
                                format!("{} * {}", cexpr::wrap(i), cexpr::wrap(&cexpr::to_cpp(&s)))
                            }
                        }
                    })
                    .collect();
                format!("{var}[{}]", terms.join(" + "))
            }
            _ => self.element_from_printed(n, idx),
        };
        CExprPrinter {
            name: &name,
            index: &index,
            symbolic: false,
        }
        .print(&lowered)
    }

    /// True if every thread (or call) has its own copy of the container: a
    /// transient declared inside the body of the parallel map (or of a map
    /// below it), or, where the parallelism comes from a caller, any
    /// transient of this function. A transient of a nested SDFG whose own
    /// map is the parallel one is shared by that map's threads.
    pub(crate) fn is_private(&self, data: &str) -> bool {
        if self.private_args.contains(data) {
            return true;
        }
        if self
            .sdfg
            .arrays
            .get(data)
            .is_some_and(|d| d.storage == Storage::GpuShared)
        {
            // One copy per thread block.
            return false;
        }
        match self.p.alloc.get(self.sdfg.id, data) {
            // One copy per thread of the parallel region (CPU).
            Some(t) if t.per_thread => true,
            // One copy per GPU thread.
            Some(t) if t.slice.is_some() => true,
            Some(t) => {
                // Each call of this function runs in one thread of a caller's
                // parallel map (GPU device functions: in one GPU thread).
                let per_call = self.sdfg.id != 0
                    && (self.in_kernel || (self.in_parallel && self.parallel_params.is_none()));
                match (&t.memory, &t.scope) {
                    (crate::passes::Memory::Local, crate::passes::AllocScope::Map(_, m)) => {
                        self.in_kernel
                            || self.parallel_params.is_none()
                            || self.parallel_maps.contains(m)
                    }
                    (crate::passes::Memory::Local, _) => per_call,
                    (crate::passes::Memory::Heap | crate::passes::Memory::Pool, _) => per_call,
                    _ => false,
                }
            }
            None => false,
        }
    }

    /// Prints an interstate expression: data containers read by value
    /// (element 0, or the indexed element), DaCe's integer semantics.
    pub(crate) fn interstate_expr(&self, e: &Expr) -> String {
        let conns = BTreeMap::new();
        let locals = BTreeMap::new();
        let scope = Scope {
            conns: &conns,
            locals: &locals,
            sdfg: self.sdfg,
            tasklet: false,
        };
        let lowered = pointer_tests(&lower(e, &scope));
        let name = |n: &str| match n.strip_prefix(POINTER_OF) {
            // `x is None` of an array (the validator checked it is one): its pointer.
            Some(n) => match self.access.get(n) {
                Some(Access::Value(v)) => format!("&{v}"),
                Some(Access::Ptr(p)) => p.clone(),
                None => n.to_string(),
            },
            None => match self.access.get(n) {
                Some(Access::Value(v)) => v.clone(),
                Some(Access::Ptr(p)) => format!("{p}[0]"),
                None => n.to_string(),
            },
        };
        let index = |n: &str, idx: &[String]| self.element_from_printed(n, idx);
        CExprPrinter {
            name: &name,
            index: &index,
            symbolic: false,
        }
        .print(&simplify(&lowered))
    }

    /// Whether parallel iterations may write the same element (then the
    /// update must be atomic): unless [`Self::distinct_per_iteration`].
    /// A reference pointed anew inside a parallel map may point each
    /// iteration elsewhere: its indices say nothing about distinct elements.
    pub(crate) fn wcr_conflicts(&self, data: &str, sub: &[RangeDim]) -> bool {
        !self.distinct_per_iteration(sub) || self.reference_in_map(data)
    }

    /// True for a reference declared (so also set) inside a map body.
    pub(crate) fn reference_in_map(&self, data: &str) -> bool {
        self.sdfg
            .arrays
            .get(data)
            .is_some_and(|d| d.kind == DataKind::Reference)
            && self
                .p
                .alloc
                .get(self.sdfg.id, data)
                .is_some_and(|t| matches!(t.scope, crate::passes::AllocScope::Map(..)))
    }

    /// Whether the elements of `sub` (in the scope of the enclosing parallel
    /// map) differ between any two iterations of that map: every parameter
    /// `p` of the map is the index of some dimension of extent 1 whose start
    /// is `p` plus (or, stepping `p` by one, moves by a non-zero constant
    /// with) names that are the same in every iteration (the SDFG's symbols
    /// and constants; not map parameters, which may vary inside one
    /// iteration, as a sequential inner map's do).
    pub(crate) fn distinct_per_iteration(&self, sub: &[RangeDim]) -> bool {
        let Some(params) = &self.parallel_params else {
            return false;
        };
        let sdfg = self.sdfg;
        let invariant = |e: &Expr, p: &str| {
            let mut ok = true;
            e.visit_names(&mut |n| {
                ok &= n != p
                    && !params.iter().any(|q| q == n)
                    && (sdfg.symbol_type(n).is_some() || sdfg.constants.contains_key(n));
            });
            ok
        };
        params.iter().all(|p| {
            sub.iter().any(|r| {
                let sub =
                    |a: &Expr, b: &Expr| simplify(&Expr::bin(BinaryOp::Sub, a.clone(), b.clone()));
                if sub(&r.end, &r.start).as_int() != Some(0) {
                    return false;
                }
                let start = simplify(&r.start);
                let mut names = Vec::new();
                start.visit_names(&mut |n| names.push(n.to_string()));
                if !names.iter().any(|n| n == p) {
                    return false;
                }
                if invariant(&sub(&start, &Expr::Sym(p.clone())), p) {
                    return true;
                }
                // `a * p + b`: one step of `p` moves it by the constant `a`,
                // and the rest is the same in every iteration.
                let next = crate::ir::simplify::substitute(&start, &mut |n| {
                    (n == p)
                        .then(|| Expr::bin(BinaryOp::Add, Expr::Sym(p.to_string()), Expr::Int(1)))
                });
                let at0 = crate::ir::simplify::substitute(&start, &mut |n| {
                    (n == p).then_some(Expr::Int(0))
                });
                matches!(sub(&next, &start).as_int(), Some(a) if a != 0)
                    && invariant(&simplify(&at0), p)
            })
        })
    }

    /// An atomic write-conflict resolution in device code.
    fn gpu_atomic(&self, w: &Wcr, target: &str, value: &str, dtype: DType) -> String {
        let ct = dtype.ctype();
        let native_add = matches!(
            dtype,
            DType::Float32 | DType::Float64 | DType::Int32 | DType::UInt32
        );
        let native_minmax = matches!(dtype, DType::Int32 | DType::UInt32);
        match w.kind {
            WcrKind::Sum if dtype.is_complex() => {
                format!("sdfgc_gpu_atomic_add_complex(&{target}, {ct}({value}));")
            }
            WcrKind::Sum if native_add => format!("atomicAdd(&{target}, {ct}({value}));"),
            WcrKind::Sum if matches!(dtype, DType::Int64 | DType::UInt64) => format!(
                "atomicAdd(reinterpret_cast<unsigned long long *>(&{target}), static_cast<unsigned long long>({ct}({value})));"
            ),
            WcrKind::Min if native_minmax => format!("atomicMin(&{target}, {ct}({value}));"),
            WcrKind::Max if native_minmax => format!("atomicMax(&{target}, {ct}({value}));"),
            WcrKind::Replace => format!("{target} = {value};"),
            _ => {
                let body = if dtype.is_complex() {
                    self.typed_wcr_body(w, dtype)
                } else {
                    w.body.clone()
                };
                let f = print_wcr(w, &body, "__old", "__val");
                format!(
                    "sdfgc_gpu_atomic_update(&{target}, {ct}({value}), []({ct} __old, {ct} __val) {{ return {ct}({f}); }});"
                )
            }
        }
    }

    /// A write-conflict resolution into complex data on the host: an atomic
    /// sum adds the two parts atomically, other atomic updates run in a
    /// critical section (as DaCe's `wcr_custom`); the new value is converted
    /// to the target's type first.
    fn complex_wcr_update(
        &self,
        w: &Wcr,
        target: &str,
        value: &str,
        dtype: DType,
        atomic: bool,
    ) -> String {
        let value = format!("{}({value})", dtype.ctype());
        let update = match w.kind {
            WcrKind::Replace => format!("{target} = {value};"),
            WcrKind::Sum if atomic => {
                return format!("sdfgc_atomic_add_complex(&{target}, {value});");
            }
            WcrKind::Sum => format!("{target} += {value};"),
            WcrKind::Product => format!("{target} *= {value};"),
            _ => {
                let f = print_wcr(w, &self.typed_wcr_body(w, dtype), target, &value);
                format!("{target} = static_cast<{}>({f});", cexpr::cast_type(dtype))
            }
        };
        critical_unless_replace(update, w, atomic)
    }

    /// A write-conflict resolution into a struct held by value: the lambda
    /// (its struct values built in declaration order) assigned whole, in a
    /// critical section where threads may meet (as DaCe's `wcr_custom`
    /// falls back to for types without atomics).
    fn record_wcr_update(
        &self,
        w: &Wcr,
        target: &str,
        value: &str,
        dtype: DType,
        atomic: bool,
    ) -> String {
        let update = if w.kind == WcrKind::Replace {
            format!("{target} = {value};")
        } else {
            let body = self.typed_wcr_body(w, dtype);
            format!(
                "{target} = {};",
                print_wcr(w, &body, target, &cexpr::wrap(value))
            )
        };
        critical_unless_replace(update, w, atomic)
    }

    /// The lambda body of a write-conflict resolution on complex data or
    /// structs, with its operands converted like tasklet code (both
    /// parameters of `dtype`).
    fn typed_wcr_body(&self, w: &Wcr, dtype: DType) -> Expr {
        let locals: BTreeMap<String, DType> = [&w.params.0, &w.params.1]
            .into_iter()
            .map(|p| (p.clone(), dtype))
            .collect();
        let conns = BTreeMap::new();
        let scope = Scope {
            conns: &conns,
            locals: &locals,
            sdfg: self.sdfg,
            tasklet: true,
        };
        lower(&w.body, &scope)
    }

    /// `name = target = value` (see [`Stmt::Chain`]): the write, then
    /// `name` set to its result, and the type `name` is declared with when
    /// it is a new local; `Err` says why it is refused.
    fn chain(
        &self,
        name: &str,
        target: &Target,
        value: &Expr,
        conns: &BTreeMap<String, Conn>,
        scope: &Scope,
    ) -> std::result::Result<(String, Option<DType>), String> {
        let structured = "chained assignment 'a = b = x' whose last target is not an element \
                          of an array output connector (DaCe prints it as the C++ structured \
                          binding 'auto [a, b] = x', which does not compile for a value)";
        let Target::Index(n, idx) = target else {
            return Err(structured.into());
        };
        let Some(p) = conns.get(n).and_then(|c| c.pointer.as_ref()) else {
            return Err(structured.into());
        };
        let dtype = scope.type_of_name(n);
        if infer(value, scope).is_complex() != dtype.is_complex() {
            return Err(format!("chained assignment of a complex value into '{n}'"));
        }
        let lhs = self.tasklet_expr(&Expr::Index(n.clone(), idx.clone()), scope);
        let rhs = self.tasklet_expr(value, scope);
        let (var, declared) = match conns.get(name) {
            Some(c) if c.pointer.is_none() && c.push.is_none() => (c.var.clone(), None),
            Some(_) => {
                return Err(format!(
                    "chained assignment into the array or stream connector '{name}'"
                ));
            }
            None if scope.locals.contains_key(name) => (name.to_string(), None),
            None => (name.to_string(), Some(dtype)),
        };
        let code = match &p.wcr {
            None => format!("{var} = ({lhs} = {rhs});"),
            Some(w) if !w.atomic => {
                let update = self.wcr_update(&w.wcr, &lhs, &rhs, w.dtype, false);
                format!("{var} = {lhs};\n{update}")
            }
            // The value before an atomic update: OpenMP's fetch-and-op.
            Some(w) => {
                let arithmetic = !w.dtype.is_complex()
                    && w.dtype != DType::Bool
                    && !matches!(w.dtype, DType::Record(_));
                let op = match w.wcr.kind {
                    WcrKind::Sum => "+=",
                    WcrKind::Product => "*=",
                    _ => "",
                };
                if op.is_empty() || self.in_kernel || !arithmetic {
                    return Err(format!(
                        "the value before an atomic '{}' update of '{n}' (chained assignment; \
                         only sums and products of numbers in host code fetch it)",
                        w.wcr.text
                    ));
                }
                let ct = w.dtype.ctype();
                format!(
                    "#pragma omp atomic capture\n{{ {var} = {lhs}; {lhs} {op} static_cast<{ct}>({rhs}); }}"
                )
            }
        };
        let line = match declared {
            Some(t) => format!("{} {var};\n{code}", t.ctype()),
            None => code,
        };
        Ok((line, declared))
    }

    /// Whether tasklet code at `node` may assign the symbol `n`, changing
    /// this function's variable as DaCe's C++ does (DaCe's test
    /// `state_transition_test`: `i *= 2` on a loop's symbol). `None` if `n`
    /// is not a symbol this function declares as a local; `Err` says why the
    /// assignment is refused: in a map or kernel (each thread's copy, or a
    /// race, in DaCe's C++) or on a symbol that sizes a container (whose
    /// allocation the change would outdate).
    fn symbol_target(&self, n: &str, node: &Node) -> Option<std::result::Result<DType, String>> {
        let t = *self.local_symbols.get(n)?;
        let sizes = |d: &DataDesc| {
            d.shape
                .iter()
                .chain(&d.strides)
                .chain(&d.offset)
                .any(|e| e.mentions(n))
        };
        let why = if self.in_kernel || self.in_parallel || node.scope.is_some() {
            "inside a map, consume scope or kernel"
        } else if self.sdfg.arrays.values().any(sizes) {
            "that sizes a container"
        } else {
            return Some(Ok(t));
        };
        Some(Err(format!("assigns the interstate symbol '{n}' {why}")))
    }

    /// The update statement of a write-conflict resolution.
    pub(crate) fn wcr_update(
        &self,
        w: &Wcr,
        target: &str,
        value: &str,
        dtype: DType,
        atomic: bool,
    ) -> String {
        if atomic && self.in_kernel {
            return self.gpu_atomic(w, target, value, dtype);
        }
        if dtype.is_complex() {
            return self.complex_wcr_update(w, target, value, dtype, atomic);
        }
        if let DType::Record(_) = dtype {
            return self.record_wcr_update(w, target, value, dtype, atomic);
        }
        let op = match w.kind {
            WcrKind::Sum => Some("+="),
            WcrKind::Product => Some("*="),
            WcrKind::BitAnd => Some("&="),
            WcrKind::BitOr => Some("|="),
            WcrKind::BitXor => Some("^="),
            _ => None,
        };
        if let Some(op) = op {
            if dtype == DType::Bool && matches!(w.kind, WcrKind::Sum) {
                let body = format!("{target} = {target} || {value};");
                return if atomic {
                    format!("#pragma omp critical\n{body}")
                } else {
                    body
                };
            }
            let body = format!("{target} {op} {value};");
            return if atomic {
                format!("#pragma omp atomic\n{body}")
            } else {
                body
            };
        }
        let combine = |old: &str, new: &str| print_wcr(w, &w.body, old, new);
        match (w.kind, atomic) {
            (WcrKind::Replace, _) => format!("{target} = {value};"),
            (WcrKind::Min, true) => {
                format!("sdfgc_atomic_min(&{target}, {}({value}));", dtype.ctype())
            }
            (WcrKind::Max, true) => {
                format!("sdfgc_atomic_max(&{target}, {}({value}));", dtype.ctype())
            }
            (_, true) => {
                let f = combine("__old", "__val");
                format!(
                    "sdfgc_atomic_update(&{target}, {}({value}), [](auto __old, auto __val) {{ return {f}; }});",
                    dtype.ctype()
                )
            }
            (_, false) => format!("{target} = {};", combine(target, &cexpr::wrap(value))),
        }
    }
}

/// A write-conflict lambda's `body` printed with its first parameter
/// spelled `old` and its second `new`.
fn print_wcr(w: &Wcr, body: &Expr, old: &str, new: &str) -> String {
    let name = |n: &str| {
        if n == w.params.0 {
            old.to_string()
        } else if n == w.params.1 {
            new.to_string()
        } else {
            n.to_string()
        }
    };
    let index = |n: &str, idx: &[String]| format!("{n}[{}]", idx.join("]["));
    CExprPrinter {
        name: &name,
        index: &index,
        symbolic: false,
    }
    .print(body)
}

/// `update` in a critical section where parallel iterations may meet
/// (`atomic`), unless it only replaces the value.
fn critical_unless_replace(update: String, w: &Wcr, atomic: bool) -> String {
    if atomic && w.kind != WcrKind::Replace {
        format!("#pragma omp critical\n{update}")
    } else {
        update
    }
}

/// A printed value of type `from` as a value of type `to`, where C++ would
/// not convert it implicitly: to a narrower complex type (an explicit
/// constructor), or from complex to real (the real part, as numpy).
pub(crate) fn convert(value: &str, from: DType, to: DType) -> String {
    if from == to || !from.is_complex() {
        value.to_string()
    } else if to.is_complex() {
        format!("{}({value})", to.ctype())
    } else {
        format!("static_cast<{}>(sdfgc_real({value}))", cexpr::cast_type(to))
    }
}

/// A connector's element type and whether the code sees it as a pointer
/// (declared so, indexed by the code, or more than one element).
fn connector_kind(
    declared: Option<&ConnType>,
    d: &DataDesc,
    sub: &[RangeDim],
    indexed: bool,
) -> (DType, bool) {
    let declared = declared.copied().unwrap_or(ConnType::Unknown);
    let dtype = match declared {
        ConnType::Scalar(x) | ConnType::Pointer(x) | ConnType::Vector(x, _) => x,
        ConnType::Unknown => d.dtype,
    };
    let is_ptr = matches!(declared, ConnType::Pointer(_)) || indexed || !single_element(sub);
    (dtype, is_ptr)
}

/// A connector declared as a pointer whose memlet moves one element and
/// that the code does not index: DaCe's code generator reads and assigns
/// its name as the element (`__out = n` is `__out[0] = n`, DaCe's
/// `DaCeKeywordRemover.visit_Name`).
fn one_element_pointer(
    declared: Option<&ConnType>,
    sub: &[RangeDim],
    indexed: &BTreeSet<&str>,
    c: &str,
) -> bool {
    matches!(declared, Some(ConnType::Pointer(_))) && single_element(sub) && !indexed.contains(c)
}

/// `stmts` with every use of the names in `conns` (assigned or read) as their element 0.
fn first_element_of(stmts: &[Stmt], conns: &BTreeSet<String>) -> Vec<Stmt> {
    fn expr(e: &Expr, conns: &BTreeSet<String>) -> Expr {
        let rec = |x: &Expr| expr(x, conns);
        match e {
            Expr::Sym(n) if conns.contains(n) => Expr::Index(n.clone(), vec![Expr::Int(0)]),
            Expr::Unary(op, a) => Expr::Unary(*op, Box::new(rec(a))),
            Expr::Binary(op, a, b) => Expr::bin(*op, rec(a), rec(b)),
            Expr::Call(f, args) => Expr::Call(*f, args.iter().map(rec).collect()),
            Expr::Ternary(c, a, b) => {
                Expr::Ternary(Box::new(rec(c)), Box::new(rec(a)), Box::new(rec(b)))
            }
            Expr::Index(n, idx) => Expr::Index(n.clone(), idx.iter().map(rec).collect()),
            Expr::Field(a, f) => Expr::Field(Box::new(rec(a)), f.clone()),
            Expr::Record(t, fields) => Expr::Record(
                t.clone(),
                fields.iter().map(|(f, a)| (f.clone(), rec(a))).collect(),
            ),
            Expr::Int(_) | Expr::Float(_) | Expr::Bool(_) | Expr::Sym(_) => e.clone(),
        }
    }
    let block = |b: &[Stmt]| first_element_of(b, conns);
    let target = |t: &Target| match t {
        Target::Name(n) if conns.contains(n) => Target::Index(n.clone(), vec![Expr::Int(0)]),
        Target::Name(n) => Target::Name(n.clone()),
        Target::Index(n, idx) => {
            Target::Index(n.clone(), idx.iter().map(|i| expr(i, conns)).collect())
        }
        Target::Field(n, f) => Target::Field(n.clone(), f.clone()),
    };
    stmts
        .iter()
        .map(|s| match s {
            Stmt::Assign {
                target: t,
                op,
                value,
            } => Stmt::Assign {
                target: target(t),
                op: *op,
                value: expr(value, conns),
            },
            Stmt::Chain {
                name,
                target: t,
                value,
            } => Stmt::Chain {
                name: name.clone(),
                target: target(t),
                value: expr(value, conns),
            },
            Stmt::Expr(e) => Stmt::Expr(expr(e, conns)),
            Stmt::If {
                cond,
                then,
                otherwise,
            } => Stmt::If {
                cond: expr(cond, conns),
                then: block(then),
                otherwise: block(otherwise),
            },
            Stmt::For {
                var,
                start,
                stop,
                step,
                body,
            } => Stmt::For {
                var: var.clone(),
                start: expr(start, conns),
                stop: expr(stop, conns),
                step: expr(step, conns),
                body: block(body),
            },
            Stmt::Printf { format, args } => Stmt::Printf {
                format: format.clone(),
                args: args.iter().map(|a| expr(a, conns)).collect(),
            },
            Stmt::Callback { .. } => s.clone(),
        })
        .collect()
}

/// Whether tasklet code reads `name` only where a condition has decided to:
/// in an `if` body or loop body, a branch of a conditional expression, or
/// the right operand of `and` / `or`, never where every run evaluates it
/// (and at least once). DaCe binds inputs as references (`const T &x =
/// a[i];`), so such a read happens only when the code gets there; the
/// stencil expansions guard reads past an array's edge that way.
fn read_only_conditionally(stmts: &[Stmt], name: &str) -> bool {
    /// (read anywhere, read where every run evaluates it)
    fn expr(e: &Expr, name: &str, cond: bool, seen: &mut (bool, bool)) {
        if let Expr::Sym(n) | Expr::Index(n, _) = e
            && n == name
        {
            seen.0 = true;
            seen.1 |= !cond;
        }
        let mut rec = |x: &Expr, c: bool| expr(x, name, c, seen);
        match e {
            Expr::Index(_, idx) => idx.iter().for_each(|i| rec(i, cond)),
            Expr::Ternary(c, a, b) => {
                rec(c, cond);
                rec(a, true);
                rec(b, true);
            }
            Expr::Binary(BinaryOp::And | BinaryOp::Or, a, b) => {
                rec(a, cond);
                rec(b, true);
            }
            Expr::Binary(_, a, b) => {
                rec(a, cond);
                rec(b, cond);
            }
            Expr::Unary(_, a) | Expr::Field(a, _) => rec(a, cond),
            Expr::Call(_, args) => args.iter().for_each(|a| rec(a, cond)),
            Expr::Record(_, fields) => fields.iter().for_each(|(_, a)| rec(a, cond)),
            Expr::Int(_) | Expr::Float(_) | Expr::Bool(_) | Expr::Sym(_) => {}
        }
    }
    fn block(stmts: &[Stmt], name: &str, cond: bool, seen: &mut (bool, bool)) {
        for s in stmts {
            if let Stmt::Assign {
                target: Target::Name(n) | Target::Field(n, _),
                op: Some(_),
                ..
            } = s
                && n == name
            {
                seen.0 = true;
                seen.1 |= !cond;
            }
            for e in s.own_exprs() {
                expr(e, name, cond, seen);
            }
            // The bodies of `if` and `for` (which may run no iteration).
            let nested = !matches!(s, Stmt::If { .. } | Stmt::For { .. });
            for c in s.children() {
                block(std::slice::from_ref(c), name, cond || !nested, seen);
            }
        }
    }
    let mut seen = (false, false);
    block(stmts, name, false, &mut seen);
    seen.0 && !seen.1
}

/// Whether element `starts` of `d`, read by the tasklet `id`, lies inside
/// the data in every iteration of the maps around it: each index is an
/// integer constant plus map parameters (each with coefficient 1), and its
/// least and greatest values over the maps' ranges simplify to integers in
/// `0 ..= extent - 1`. False where that cannot be shown (other symbols,
/// offsets, steps of another sign).
fn element_in_bounds(st: &State, id: NodeId, d: &DataDesc, starts: &[Expr]) -> bool {
    if d.kind == DataKind::Scalar {
        return true;
    }
    if starts.len() != d.shape.len() || d.offset.iter().any(|o| !matches!(o, Expr::Int(0))) {
        return false;
    }
    let mut ranges: BTreeMap<&str, &RangeDim> = BTreeMap::new();
    for s in st.enclosing_scopes(id) {
        let NodeKind::MapEntry(m) = &st.nodes[s.index()].kind else {
            return false;
        };
        for (p, r) in m.params.iter().zip(m.range.iter()) {
            ranges.entry(p.as_str()).or_insert(r);
        }
    }
    let at = |e: &Expr, end: bool| {
        simplify(&substitute(e, &mut |n| {
            ranges
                .get(n)
                .map(|r| if end { r.end.clone() } else { r.start.clone() })
        }))
    };
    starts.iter().zip(&d.shape).all(|(i, extent)| {
        // Each parameter once, with coefficient 1, and only upward steps.
        let linear = free_symbols(i).iter().all(|p| {
            ranges.get(p.as_str()).is_some_and(|r| {
                matches!(simplify(&r.step), Expr::Int(k) if k > 0)
                    && free_symbols(&simplify(&Expr::bin(BinaryOp::Sub, i.clone(), Expr::sym(p.as_str()))))
                        .iter()
                        .all(|q| q != p)
            })
        });
        let last = Expr::bin(BinaryOp::Sub, extent.clone(), Expr::Int(1));
        linear
            && matches!(at(i, false), Expr::Int(lo) if lo >= 0)
            && matches!(simplify(&Expr::bin(BinaryOp::Sub, at(i, true), last)), Expr::Int(over) if over <= 0)
    })
}

/// The type DaCe 2's `dace::math::pow(a, b)` multiplies in, where it
/// multiplies (an integral `b`): `double` for an integral `a` and a signed
/// `b`, else the type of `a`. `None`: it calls `std::pow`.
fn dace2_pow_type(args: &[Expr], s: &Scope) -> Option<DType> {
    let [a, b] = args else { return None };
    let (ta, tb) = (infer(a, s), infer(b, s));
    let integral = |t: DType| t.int_range().is_some();
    if !integral(tb) {
        return None;
    }
    let signed = tb.int_range().is_some_and(|(lo, _)| lo < 0);
    Some(if integral(ta) && signed {
        DType::Float64
    } else {
        ta
    })
}

/// The type of `dace::math::pow(a, b)` where its integer overloads take it:
/// two `int` or two `unsigned int` operands.
fn dace_int_pow(args: &[Expr], s: &Scope) -> Option<DType> {
    match args {
        [a, b] => match (infer(a, s), infer(b, s)) {
            (DType::Int32, DType::Int32) => Some(DType::Int32),
            (DType::UInt32, DType::UInt32) => Some(DType::UInt32),
            _ => None,
        },
        _ => None,
    }
}

/// `<cmath>`'s functions of floating-point values that an integer argument
/// reaches through its templates (computed in double).
const CMATH_FLOATING: &[Func] = &[
    Func::Sqrt,
    Func::Exp,
    Func::Log,
    Func::Log10,
    Func::Log2,
    Func::Sin,
    Func::Cos,
    Func::Tan,
    Func::Asin,
    Func::Acos,
    Func::Atan,
    Func::Atan2,
    Func::Sinh,
    Func::Cosh,
    Func::Tanh,
    Func::Cbrt,
    Func::Tgamma,
    Func::Lgamma,
    Func::Erf,
    Func::Erfc,
    Func::Expm1,
    Func::Log1p,
    Func::Exp2,
    Func::Asinh,
    Func::Acosh,
    Func::Atanh,
    Func::Hypot,
    Func::Fmod,
];

/// `<cmath>`'s functions of two floating-point values.
const CMATH_BINARY: &[Func] = &[
    Func::NextAfter,
    Func::Atan2,
    Func::Hypot,
    Func::Fmod,
    Func::CopySign,
    Func::Fmin,
    Func::Fmax,
    Func::Remainder,
];

/// Whether `CastLike` arguments are the parser's `dace::math::f(x)`:
/// `[x, f(x)]` (or any expression first, which `decltype(name)` never is).
fn dace_math_call(args: &[Expr]) -> bool {
    match args {
        [x, Expr::Call(f, a)]
            if *f != Func::CastLike && (1..=2).contains(&a.len()) && a[0] == *x =>
        {
            true
        }
        [x, _] => !matches!(x, Expr::Sym(_)),
        _ => false,
    }
}

/// Whether tasklet code reads `name` as a value (not only assigns it).
fn reads_name(stmts: &[Stmt], name: &str) -> bool {
    all_stmts(stmts).into_iter().any(|s| {
        matches!(s, Stmt::Assign { target: Target::Name(n), op: Some(_), .. } if n == name)
            || s.own_exprs().iter().any(|e| e.mentions(name))
    })
}

/// Names that tasklet code indexes (`x[i]`).
fn indexed_names(stmts: &[Stmt]) -> BTreeSet<&str> {
    fn visit<'a>(e: &'a Expr, out: &mut BTreeSet<&'a str>) {
        match e {
            Expr::Index(n, idx) => {
                out.insert(n);
                idx.iter().for_each(|i| visit(i, out));
            }
            Expr::Unary(_, a) => visit(a, out),
            Expr::Binary(_, a, b) => {
                visit(a, out);
                visit(b, out);
            }
            Expr::Call(_, args) => args.iter().for_each(|a| visit(a, out)),
            Expr::Ternary(c, a, b) => {
                visit(c, out);
                visit(a, out);
                visit(b, out);
            }
            _ => {}
        }
    }
    let mut out = BTreeSet::new();
    for s in all_stmts(stmts) {
        if let Stmt::Assign {
            target: Target::Index(n, _),
            ..
        }
        | Stmt::Chain {
            target: Target::Index(n, _),
            ..
        } = s
        {
            out.insert(n.as_str());
        }
        for e in s.own_exprs() {
            visit(e, &mut out);
        }
    }
    out
}

/// The names tasklet code mentions only as targets of plain whole
/// assignments (`name = value`, never read, indexed, or assigned otherwise).
fn only_rebound(stmts: &[Stmt]) -> BTreeSet<String> {
    let (mut rebound, mut other) = (BTreeSet::new(), BTreeSet::new());
    for s in all_stmts(stmts) {
        match s {
            Stmt::Assign {
                target: Target::Name(n),
                op: None,
                ..
            } => {
                rebound.insert(n.clone());
            }
            Stmt::Assign {
                target: Target::Name(n) | Target::Index(n, _) | Target::Field(n, _),
                ..
            }
            | Stmt::Chain {
                target: Target::Name(n) | Target::Index(n, _) | Target::Field(n, _),
                ..
            } => {
                other.insert(n.clone());
            }
            _ => {}
        }
        if let Stmt::Chain { name, .. } = s {
            other.insert(name.clone());
        }
        for e in s.own_exprs() {
            e.visit_names(&mut |n| {
                other.insert(n.to_string());
            });
        }
    }
    rebound.difference(&other).cloned().collect()
}

/// Strides of the dimensions a pointer connector's code indexes, as DaCe's
/// `Range.absolute_strides`: each dimension's stride times its step, then
/// one more dimension (the container's stride) for each tiled range, whose
/// index walks inside a tile. All of the subset's dimensions if the code
/// uses that many indices, else those of its non-unit dimensions.
fn pointer_strides(d: &DataDesc, sub: &[RangeDim], stmts: &[Stmt], conn: &str) -> Vec<Expr> {
    let mut arity = None;
    for s in all_stmts(stmts) {
        if let Stmt::Assign {
            target: Target::Index(n, idx),
            ..
        }
        | Stmt::Chain {
            target: Target::Index(n, idx),
            ..
        } = s
            && n == conn
        {
            arity = Some(idx.len());
        }
        for e in s.own_exprs() {
            e.visit_index(&mut |n, idx| {
                if n == conn {
                    arity = Some(idx.len());
                }
            });
        }
    }
    if sub.len() != d.rank() {
        return d.strides.clone();
    }
    let stepped =
        |r: &RangeDim, s: &Expr| simplify(&Expr::bin(BinaryOp::Mul, r.step.clone(), s.clone()));
    let tiles: Vec<Expr> = sub
        .iter()
        .zip(&d.strides)
        .filter(|(r, _)| r.is_tiled())
        .map(|(_, s)| s.clone())
        .collect();
    let all: Vec<Expr> = sub
        .iter()
        .zip(&d.strides)
        .map(|(r, s)| stepped(r, s))
        .collect();
    let nonunit: Vec<Expr> = sub
        .iter()
        .zip(&d.strides)
        .filter(|(r, _)| {
            r.is_tiled()
                || simplify(&Expr::bin(BinaryOp::Sub, r.end.clone(), r.start.clone()))
                    != Expr::Int(0)
        })
        .map(|(r, s)| stepped(r, s))
        .collect();
    let dims = match arity {
        Some(k) if k == all.len() + tiles.len() => all,
        _ if nonunit.is_empty() => all,
        _ => nonunit,
    };
    dims.into_iter().chain(tiles).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::front::python::parse_expr;
    use std::process::Command;

    fn sdfg() -> Sdfg {
        Sdfg {
            id: 0,
            name: "t".into(),
            arg_names: Vec::new(),
            arrays: NameMap::default(),
            symbols: NameMap::default(),
            callbacks: NameMap::default(),
            redistributions: NameMap::default(),
            assigned_types: NameMap::default(),
            constants: NameMap::default(),
            struct_types: Vec::new(),
            global_code: NameMap::default(),
            init_code: NameMap::default(),
            exit_code: NameMap::default(),
            body: Region {
                label: String::new(),
                kind: RegionKind::Plain,
                blocks: Vec::new(),
                edges: Vec::new(),
                start: None,
                path: String::new(),
            },
            path: String::new(),
            dace_version: String::new(),
        }
    }

    fn locals() -> BTreeMap<String, DType> {
        [
            ("x", DType::Complex128),
            ("y", DType::Complex128),
            ("z", DType::Complex64),
            ("d", DType::Float64),
            ("f", DType::Float32),
            ("n", DType::Int32),
        ]
        .into_iter()
        .map(|(n, t)| (n.to_string(), t))
        .collect()
    }

    /// Runs `f` in the scope of tasklet code with [`locals`] and no connectors.
    fn with_locals(f: impl FnOnce(&Scope)) {
        let (s, l, c) = (sdfg(), locals(), BTreeMap::new());
        f(&Scope {
            conns: &c,
            locals: &l,
            sdfg: &s,
            tasklet: true,
        });
    }

    /// (Python, type, expected real part, expected imaginary part) with
    /// x = 1+2j, y = 3-1j, z = 0.5+0.5j (complex64), d = 2.0, f = 0.25f, n = 3.
    const CASES: &[(&str, DType, f64, f64)] = &[
        ("x * conj(y) + 1j * d", DType::Complex128, 1.0, 9.0),
        ("2 * z - z.conjugate()", DType::Complex64, 0.5, 1.5),
        ("z * 2.0 + 1j", DType::Complex64, 1.0, 2.0),
        ("z * d", DType::Complex128, 1.0, 1.0),
        ("z * f", DType::Complex64, 0.125, 0.125),
        ("z + n", DType::Complex64, 3.5, 0.5),
        ("x.real + z.imag * n", DType::Float64, 2.5, 0.0),
        ("real(z) + imag(x)", DType::Float64, 2.5, 0.0),
        ("abs(y - 3)", DType::Float64, 1.0, 0.0),
        (
            "abs(z)",
            DType::Float32,
            std::f64::consts::FRAC_1_SQRT_2,
            0.0,
        ),
        ("exp(1j * 0)", DType::Complex128, 1.0, 0.0),
        ("x ** 2", DType::Complex128, -3.0, 4.0),
        ("pow(z, 3)", DType::Complex64, -0.25, 0.25),
        ("x ** d", DType::Complex128, -3.0, 4.0),
        ("-1j * x", DType::Complex128, 2.0, -1.0),
        ("x / (1 + 1j)", DType::Complex128, 1.5, 0.5),
        ("n / x", DType::Complex128, 0.6, -1.2),
        ("x if n > 2 else z", DType::Complex128, 1.0, 2.0),
        ("float(x)", DType::Float64, 1.0, 0.0),
        ("conj(d)", DType::Float64, 2.0, 0.0),
        ("complex(d, n)", DType::Complex128, 2.0, 3.0),
        ("dace.complex64(x) * z", DType::Complex64, -0.5, 1.5),
        ("sqrt(-4 + 0j)", DType::Complex128, 0.0, 2.0),
    ];

    #[test]
    fn complex_types_follow_numpy() {
        with_locals(|scope| {
            for (src, t, _, _) in CASES {
                let e = parse_expr(src).unwrap();
                assert_eq!(infer(&e, scope), *t, "{src}");
            }
            let e = parse_expr("x == complex(1, 2)").unwrap();
            assert_eq!(infer(&e, scope), DType::Bool);
        });
    }

    /// Every form of complex tasklet arithmetic compiles (g++ -Wall -Werror,
    /// with the complex prelude) and computes numpy's value.
    #[test]
    fn complex_expressions_compile_and_compute_numpy_values() {
        let (s, l, c) = (sdfg(), locals(), BTreeMap::new());
        let scope = Scope {
            conns: &c,
            locals: &l,
            sdfg: &s,
            tasklet: true,
        };
        let name = |n: &str| n.to_string();
        let index = |n: &str, idx: &[String]| format!("{n}[{}]", idx.join("]["));
        let printer = CExprPrinter {
            name: &name,
            index: &index,
            symbolic: false,
        };
        let mut src = format!(
            "#include <cmath>\n#include <cstdint>\n#include <type_traits>\n#include <limits>\n#include <cstdio>\n{}\n{}\n\
             int main() {{\n  int bad = 0;\n  const dace::complex128 x(1.0, 2.0), y(3.0, -1.0);\n  const dace::complex64 z(0.5f, 0.5f);\n  \
             const double d = 2.0;\n  const float f = 0.25f;\n  const int n = 3;\n  (void)y; (void)f;\n",
            cexpr::prelude_all(),
            crate::back::complex::PRELUDE
        );
        for (k, (py, t, re, im)) in CASES.iter().enumerate() {
            let e = lower(&parse_expr(py).unwrap(), &scope);
            let printed = printer.print(&e);
            src.push_str(&format!(
                "  {{\n    const {ct} v = {printed};\n    const double re = static_cast<double>(sdfgc_real(v)), im = static_cast<double>(sdfgc_imag(v));\n    \
                 if (std::fabs(re - ({re:?})) > 1e-6 || std::fabs(im - ({im:?})) > 1e-6) {{ std::printf(\"case {k} ({}): %g %g\\n\", re, im); bad = 1; }}\n  }}\n",
                py.replace('"', "'"),
                ct = t.ctype(),
            ));
        }
        let eq = printer.print(&lower(&parse_expr("x == complex(1, 2)").unwrap(), &scope));
        src.push_str(&format!(
            "  if (!({eq})) {{ std::printf(\"complex ==\\n\"); bad = 1; }}\n  return bad;\n}}\n"
        ));
        let dir = std::env::temp_dir().join(format!("sdfgc-complex-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("complex.cpp");
        let exe = dir.join("complex");
        std::fs::write(&file, &src).unwrap();
        let out = Command::new("g++")
            .args(["-std=c++17", "-Wall", "-Wextra", "-Werror", "-fopenmp"])
            .arg(&file)
            .arg("-o")
            .arg(&exe)
            .output()
            .expect("g++ is required");
        assert!(
            out.status.success(),
            "g++ failed:\n{}\n{src}",
            String::from_utf8_lossy(&out.stderr)
        );
        let run = Command::new(&exe).output().unwrap();
        assert!(
            run.status.success(),
            "wrong values:\n{}\n{src}",
            String::from_utf8_lossy(&run.stdout)
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}

/// The first `dace::...` name in C++ tasklet code that sdfgc's prelude does
/// not define (DaCe's runtime headers: `dace::math::...`); the complex types
/// and `dace::math::pow` are sdfgc's, and in device code so is the warp
/// reduction (`back::gpu::warp`).
fn dace_runtime_name(code: &str, device: bool) -> Option<String> {
    let mut rest = code;
    while let Some(at) = rest.find("dace::") {
        let before = rest[..at].chars().next_back();
        let tail = &rest[at..];
        let len = tail
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == ':'))
            .unwrap_or(tail.len());
        let name = tail[..len].trim_end_matches(':');
        rest = &tail[len.max(6)..];
        if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':') {
            continue; // `mydace::` or `::dace::`-qualified in another namespace
        }
        let warp =
            device && (name == "dace::warpReduce" || name.starts_with("dace::ReductionType"));
        if !warp
            && !matches!(
                name,
                "dace::complex64" | "dace::complex128" | "dace::math::pow"
            )
        {
            return Some(name.to_string());
        }
    }
    None
}

#[cfg(test)]
mod dace_runtime_tests {
    use super::dace_runtime_name;

    #[test]
    fn dace_runtime_names_in_cpp_tasklets_are_found() {
        let code = "__out = dace::warpReduce<dace::ReductionType::Max, double>::reduce(__a);";
        assert_eq!(
            dace_runtime_name(code, false).as_deref(),
            Some("dace::warpReduce")
        );
        assert_eq!(dace_runtime_name(code, true), None);
        assert_eq!(
            dace_runtime_name("dace::complex128 z = a; x = mydace::f(z);", false),
            None
        );
        assert_eq!(
            dace_runtime_name("y = dace::math::pi * x;", true).as_deref(),
            Some("dace::math::pi")
        );
        let gemm = "cublasZgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, (int_ceil(dace::math::pow(R, K - 1), 1)), R, R);";
        assert_eq!(dace_runtime_name(gemm, false), None);
    }
}
