//! One expression type for everything sdfgc computes with: symbolic shapes,
//! strides, map ranges, memlet subsets, interstate conditions and
//! assignments, and the right-hand sides of tasklet code.

use std::fmt;

use crate::ir::dtype::DType;

/// An expression tree. Symbols, connectors and local tasklet variables are
/// all `Sym`; the writer decides what a name refers to.
#[derive(Clone, Debug, PartialEq)]
pub enum Expr {
    /// Integer literal.
    Int(i64),
    /// Floating-point literal (printed back with a round-trip exact form).
    Float(f64),
    /// `True` / `False`.
    Bool(bool),
    /// A name: symbol, connector, local variable, or data container.
    Sym(String),
    /// Unary operation.
    Unary(UnaryOp, Box<Expr>),
    /// Binary operation (arithmetic, bitwise, logical, comparison).
    Binary(BinaryOp, Box<Expr>, Box<Expr>),
    /// A call of a known function.
    Call(Func, Vec<Expr>),
    /// `a if cond else b`, stored as (cond, a, b).
    Ternary(Box<Expr>, Box<Expr>, Box<Expr>),
    /// `name[i, j, ...]`: indexing a connector or array.
    Index(String, Vec<Expr>),
    /// `value.field`: a field of a struct held by value (tasklet code).
    Field(Box<Expr>, String),
    /// `T(a=x, b=y)`: a value of the struct type `T` built from its
    /// fields, as named (tasklet code and write-conflict lambdas).
    Record(String, Vec<(String, Expr)>),
}

/// Unary operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum UnaryOp {
    /// `-x`
    Neg,
    /// `not x`
    Not,
    /// `~x`
    BitNot,
}

/// Binary operators. `Div` is true division (Python `/`), `FloorDiv` is
/// Python `//`, `Mod` is Python `%` / sympy `Mod`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BinaryOp {
    Add,
    Sub,
    Mul,
    Div,
    FloorDiv,
    Mod,
    Pow,
    BitAnd,
    BitOr,
    BitXor,
    Shl,
    Shr,
    And,
    Or,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

impl BinaryOp {
    /// Logical operators and comparisons: their result is a `bool`.
    pub fn yields_bool(self) -> bool {
        matches!(
            self,
            BinaryOp::And
                | BinaryOp::Or
                | BinaryOp::Eq
                | BinaryOp::Ne
                | BinaryOp::Lt
                | BinaryOp::Le
                | BinaryOp::Gt
                | BinaryOp::Ge
        )
    }
}

/// Functions that may appear in symbolic expressions or tasklet code.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Func {
    /// `Min(a, b, ...)` / `min(a, b)`
    Min,
    /// `Max(a, b, ...)` / `max(a, b)`
    Max,
    /// `Abs(x)` / `abs(x)`
    Abs,
    /// `floor(x)` (sympy / math)
    Floor,
    /// `ceiling(x)` (sympy) / `math.ceil(x)`
    Ceil,
    /// `int_floor(a, b)`: integer floor division
    IntFloor,
    /// `int_ceil(a, b)`: integer ceiling division
    IntCeil,
    /// sdfgc's own, never parsed: `pad_stride(n, bytes, from)`, the row
    /// stride (in elements) of a padded transient whose rows hold `n`
    /// elements of `bytes` each: `n` for rows under `from` bytes, else an odd
    /// number of 64-byte lines (see [`crate::passes::padding`]).
    PadStride,
    Sqrt,
    Exp,
    Log,
    Log10,
    Log2,
    Pow,
    Sin,
    Cos,
    Tan,
    Asin,
    Acos,
    Atan,
    Atan2,
    Sinh,
    Cosh,
    Tanh,
    /// `isnan(x)`
    IsNan,
    /// `isinf(x)`
    IsInf,
    /// `isfinite(x)`
    IsFinite,
    /// `signbit(x)`
    SignBit,
    /// DaCe's `ifloor(x)`: `int` floor of a floating value, identity on integers.
    IFloor,
    /// DaCe's `sign(x)`: -1, 0 or 1 in the type of `x`.
    Sign,
    /// DaCe 2's `sign_numpy_2(x)`: `sign` of a real `x`; of a complex `x`,
    /// `x / |x|` where both parts are nonzero, else 0.
    SignNumpy2,
    /// `math.pow(a, b)` in tasklet code, DaCe's `dace::math::pow`: for two
    /// `int` (or two `unsigned int`) values repeated multiplication in that
    /// type (0 for a negative exponent), else `std::pow`.
    DaceMathPow,
    /// `math.pow(a, b)` in tasklet code of an SDFG saved by DaCe 2, whose
    /// `dace::math::pow` multiplies for an integral `b` (in `double` for an
    /// integral `a` and a signed `b`, else in the type of `a`; the
    /// reciprocal for a negative `b`), else `std::pow`.
    DaceMathPow2,
    /// A float16 value rounded to half (DaCe's `T(...)` of a half); a
    /// vector of halves unchanged (`sdfgc_half_round`, the half preludes).
    HalfRound,
    /// DaCe's `reciprocal(x)`: `1 / x` in the type of `x`.
    Reciprocal,
    Cbrt,
    Tgamma,
    Lgamma,
    Erf,
    Erfc,
    Expm1,
    Log1p,
    Exp2,
    Asinh,
    Acosh,
    Atanh,
    /// `trunc(x)` (C: a floating value)
    Trunc,
    /// `round(x)`: C's `round` (halfway cases away from zero), as DaCe emits it.
    Round,
    Hypot,
    Fmin,
    Fmax,
    /// C's `remainder(a, b)` (IEEE remainder)
    Remainder,
    /// `copysign(a, b)`
    CopySign,
    /// `fmod(a, b)`
    Fmod,
    /// C's `a % b` (truncating), as DaCe emits for Python `%` in tasklets; never parsed.
    CMod,
    /// A cast to a scalar type: `dace.float32(x)`, `int(x)`, `float(x)`, `double(x)`.
    Cast(DType),
    /// DaCe's `decltype(name)(x)` in Python tasklets: `x` cast to the type of
    /// the variable `name` (args: `[Sym(name), x]`); with another expression
    /// than a name first, to that expression's type (`math.exp(x)`, DaCe's
    /// `dace::math::exp`, is `[x, exp(x)]`).
    CastLike,
    /// `real(x)` / `x.real`: the real part (the value itself for real types).
    Real,
    /// `imag(x)` / `x.imag`: the imaginary part (zero for real types).
    Imag,
    /// `conj(x)` / `x.conjugate()`: the complex conjugate (the value itself for real types).
    Conj,
    /// `complex(re, im)`, and a Python imaginary literal `2j` as `complex(0.0, 2.0)`: a `complex128`.
    Complex,
    /// DaCe's `py_floor(a, b)` (`np.floor_divide`): Python's floor division
    /// (integers rounded toward negative infinity, `floor(a / b)` otherwise).
    PyFloor,
    /// DaCe's `py_mod(a, b)` (`np.mod`, `np.remainder`): Python's `%` (the
    /// result has the sign of `b`).
    PyMod,
    /// DaCe's `np_float_pow(a, b)` (`np.float_power`): `pow` in double precision.
    FloatPow,
    /// DaCe's `heaviside(a, b)`: 0 for `a < 0`, 1 for `a > 0`, `b` otherwise
    /// (`heaviside(a)`: 1 for `a > 0`, 0 otherwise).
    Heaviside,
    /// `gcd(a, b)` of integers (non-negative).
    Gcd,
    /// `lcm(a, b)` of integers (non-negative).
    Lcm,
    /// DaCe's `deg2rad(a)`: `a * pi / 180` in the type of `a`.
    Deg2Rad,
    /// DaCe's `rad2deg(a)`: `a * 180 / pi` in the type of `a`.
    Rad2Deg,
    /// C's `nextafter(a, b)`.
    NextAfter,
    /// C's `ldexp(a, e)`: `a * 2**e`.
    Ldexp,
    /// DaCe's `py_divmod(a, b, q, r)` (statement): Python's `q, r = divmod(a, b)`.
    DivMod,
    /// DaCe's `np_modf(a, i, f)` (statement): `f, i = np.modf(a)`.
    Modf,
    /// DaCe's `np_frexp(a, m, e)` (statement): `m, e = np.frexp(a)`.
    Frexp,
    /// DaCe's `Mod_float(a, b)` (Fortran `MOD` of reals): `a - int(a / b) * b`.
    ModFloat,
    /// DaCe's `Modulo(a, b)` (Fortran `MODULO` of integers): `a - floor(float(a) / b) * b`.
    Modulo,
    /// DaCe's `Modulo_float(a, b)` (Fortran `MODULO` of reals): `a - floor(a / b) * b`.
    ModuloFloat,
    /// DaCe's one-argument `frexp(a)` (Fortran `EXPONENT`): the binary exponent, an `int`.
    Exponent,
    /// DaCe's `iround(a)` (Fortran `NINT`): `int(round(a))`.
    IRound,
    /// `x is None` (DaCe prints `x == nullptr`): whether the array `x` was passed as `None`.
    IsNone,
    /// OpenMP's `omp_get_thread_num()` (C code DaCe passes through): the
    /// calling thread's number in its team (0 outside a parallel region or
    /// without OpenMP).
    ThreadNum,
    /// OpenMP's `omp_get_max_threads()`: the team size a parallel region may use (1 without OpenMP).
    MaxThreads,
}

impl Func {
    /// DaCe's functions that store into their last arguments and return
    /// nothing: only a whole expression statement may call them.
    pub fn is_statement(self) -> bool {
        matches!(self, Func::DivMod | Func::Modf | Func::Frexp)
    }
}

/// An argument of a callback call.
#[derive(Clone, Debug, PartialEq)]
pub enum CbArg {
    /// A connector, symbol or number.
    Value(Expr),
    /// A string literal (decoded): a `dace.string` argument.
    Str(String),
    /// `None`.
    Null,
}

/// A statement of tasklet code, interstate assignments or loop statements.
#[derive(Clone, Debug, PartialEq)]
pub enum Stmt {
    /// `target = value` or `target op= value` (`op` is `Some` for augmented assignment).
    Assign {
        /// What is assigned.
        target: Target,
        /// Operator of an augmented assignment (`+=` → `Some(Add)`).
        op: Option<BinaryOp>,
        /// The assigned value.
        value: Expr,
    },
    /// A bare expression statement (e.g. a call for its side effect).
    Expr(Expr),
    /// `if cond: then else: otherwise` (tasklet code only); an `elif` is an
    /// `If` alone in `otherwise`.
    If {
        /// The condition.
        cond: Expr,
        /// Statements run when the condition holds.
        then: Vec<Stmt>,
        /// Statements run otherwise (empty without `else`).
        otherwise: Vec<Stmt>,
    },
    /// `for var in range(start, stop, step): body` (tasklet code only).
    For {
        /// The loop variable.
        var: String,
        /// First value.
        start: Expr,
        /// Bound (excluded).
        stop: Expr,
        /// Increment (never the literal 0).
        step: Expr,
        /// The loop body.
        body: Vec<Stmt>,
    },
    /// A call of a callback (DaCe's `callback` symbol `func`): `func(args)`,
    /// or `result = func(args)` for a function that returns one scalar.
    Callback {
        /// The callback symbol.
        func: String,
        /// The arguments in order.
        args: Vec<CbArg>,
        /// The output connector assigned the return value.
        result: Option<String>,
    },
    /// `name = target = value` in tasklet code, as DaCe's C++ runs it: the
    /// write `target = value` to an output connector, then `name` is set to
    /// the write's result (the value stored, or for an output with
    /// write-conflict resolution the value it held before, as DaCe's
    /// `reduce` returns it).
    Chain {
        /// The name given the write's result.
        name: String,
        /// The output written (an element of an array connector).
        target: Target,
        /// The value written.
        value: Expr,
    },
    /// `printf("format", args...)` in tasklet code (DaCe prints the call
    /// unchanged into C++); `format` is the string's value.
    Printf {
        /// The format string (decoded).
        format: String,
        /// The values printed.
        args: Vec<Expr>,
    },
}

impl Stmt {
    /// The expressions this statement evaluates itself (not those of nested
    /// statements): the value and target indices of an assignment, a
    /// condition, a loop's bounds.
    pub fn own_exprs(&self) -> Vec<&Expr> {
        match self {
            Stmt::Assign { target, value, .. } | Stmt::Chain { target, value, .. } => {
                let mut v = vec![value];
                if let Target::Index(_, idx) = target {
                    v.extend(idx.iter());
                }
                v
            }
            Stmt::Expr(e) => vec![e],
            Stmt::If { cond, .. } => vec![cond],
            Stmt::For {
                start, stop, step, ..
            } => vec![start, stop, step],
            Stmt::Printf { args, .. } => args.iter().collect(),
            Stmt::Callback { args, .. } => args
                .iter()
                .filter_map(|a| match a {
                    CbArg::Value(e) => Some(e),
                    _ => None,
                })
                .collect(),
        }
    }

    /// The statements nested directly in this one.
    pub fn children(&self) -> impl Iterator<Item = &Stmt> {
        let (a, b): (&[Stmt], &[Stmt]) = match self {
            Stmt::If {
                then, otherwise, ..
            } => (then, otherwise),
            Stmt::For { body, .. } => (body, &[]),
            _ => (&[], &[]),
        };
        a.iter().chain(b.iter())
    }
}

/// Every statement of `stmts`, nested ones included, in source order.
pub fn all_stmts(stmts: &[Stmt]) -> Vec<&Stmt> {
    let mut out = Vec::new();
    let mut stack: Vec<&Stmt> = stmts.iter().rev().collect();
    while let Some(s) = stack.pop() {
        out.push(s);
        let kids: Vec<&Stmt> = s.children().collect();
        stack.extend(kids.into_iter().rev());
    }
    out
}

/// The left-hand side of an assignment.
#[derive(Clone, Debug, PartialEq)]
pub enum Target {
    /// A plain name.
    Name(String),
    /// `name[i, ...]`
    Index(String, Vec<Expr>),
    /// `name.field`: a field of a struct held by value.
    Field(String, String),
}

/// Special floating-point constants Python code can name (`math.nan`, `math.inf`, `math.pi`, `math.e`)
/// are parsed into `Expr::Float`; `nan`/`inf` printing is the writer's job.
impl Expr {
    /// Shorthand for a symbol.
    pub fn sym(name: impl Into<String>) -> Expr {
        Expr::Sym(name.into())
    }

    /// Shorthand for a binary node.
    pub fn bin(op: BinaryOp, a: Expr, b: Expr) -> Expr {
        Expr::Binary(op, Box::new(a), Box::new(b))
    }

    /// The integer value if this is an integer literal.
    pub fn as_int(&self) -> Option<i64> {
        match self {
            Expr::Int(v) => Some(*v),
            _ => None,
        }
    }

    /// Calls `f` on every indexing `name[...]` in the expression.
    pub fn visit_index(&self, f: &mut dyn FnMut(&str, &[Expr])) {
        match self {
            Expr::Int(_) | Expr::Float(_) | Expr::Bool(_) | Expr::Sym(_) => {}
            Expr::Unary(_, a) => a.visit_index(f),
            Expr::Binary(_, a, b) => {
                a.visit_index(f);
                b.visit_index(f);
            }
            Expr::Call(_, args) => args.iter().for_each(|a| a.visit_index(f)),
            Expr::Ternary(c, a, b) => {
                c.visit_index(f);
                a.visit_index(f);
                b.visit_index(f);
            }
            Expr::Index(n, idx) => {
                f(n, idx);
                idx.iter().for_each(|a| a.visit_index(f));
            }
            Expr::Field(a, _) => a.visit_index(f),
            Expr::Record(_, fields) => fields.iter().for_each(|(_, a)| a.visit_index(f)),
        }
    }

    /// Whether the expression names `name` (as a symbol or an indexed name).
    pub fn mentions(&self, name: &str) -> bool {
        let mut hit = false;
        self.visit_names(&mut |n| hit |= n == name);
        hit
    }

    /// Calls `f` on every symbol name in the expression (including indexed names).
    pub fn visit_names(&self, f: &mut dyn FnMut(&str)) {
        match self {
            Expr::Int(_) | Expr::Float(_) | Expr::Bool(_) => {}
            Expr::Sym(s) => f(s),
            Expr::Unary(_, a) => a.visit_names(f),
            Expr::Binary(_, a, b) => {
                a.visit_names(f);
                b.visit_names(f);
            }
            Expr::Call(_, args) => args.iter().for_each(|a| a.visit_names(f)),
            Expr::Ternary(c, a, b) => {
                c.visit_names(f);
                a.visit_names(f);
                b.visit_names(f);
            }
            Expr::Index(n, idx) => {
                f(n);
                idx.iter().for_each(|a| a.visit_names(f));
            }
            Expr::Field(a, _) => a.visit_names(f),
            Expr::Record(_, fields) => fields.iter().for_each(|(_, a)| a.visit_names(f)),
        }
    }
}

impl fmt::Display for BinaryOp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = match self {
            BinaryOp::Add => "+",
            BinaryOp::Sub => "-",
            BinaryOp::Mul => "*",
            BinaryOp::Div => "/",
            BinaryOp::FloorDiv => "//",
            BinaryOp::Mod => "%",
            BinaryOp::Pow => "**",
            BinaryOp::BitAnd => "&",
            BinaryOp::BitOr => "|",
            BinaryOp::BitXor => "^",
            BinaryOp::Shl => "<<",
            BinaryOp::Shr => ">>",
            BinaryOp::And => "and",
            BinaryOp::Or => "or",
            BinaryOp::Eq => "==",
            BinaryOp::Ne => "!=",
            BinaryOp::Lt => "<",
            BinaryOp::Le => "<=",
            BinaryOp::Gt => ">",
            BinaryOp::Ge => ">=",
        };
        f.write_str(s)
    }
}
