//! C++ printing of [`Expr`]: the writers print with it, and the library
//! expansion spells the tasklet code it builds with it, so it sits with the IR
//! below both.
//!
//! The printer emits the fewest parentheses C++ precedence allows, plus the
//! ones GCC's `-Wparentheses` asks for (mixed bitwise/logical/comparison
//! operators), so printed code compiles cleanly with `-Wall -Werror`. Python
//! semantics that C++ lacks (`//`, `%` on negative numbers, `Min` of mixed
//! types) go through the helpers in [`HELPERS`].

use crate::ir::dtype::DType;
use crate::ir::expr::{BinaryOp, Expr, Func, UnaryOp};

/// The start of every file's prelude: `SDFGC_HD`, valid in host code and in
/// CUDA/HIP device code. Relies on `<cmath>`, `<cstdint>`, `<type_traits>`
/// (and `<limits>` for NaN/infinity literals) being included first.
///
/// In host-only builds it also brings the `std::` overloads of `abs`,
/// `sqrt`, ... into the global namespace: otherwise `abs(0.5)` would call C's
/// `int abs(int)`. CUDA/HIP provide those global overloads themselves.
pub const PRELUDE_BASE: &str = r#"#ifndef SDFGC_HD
#if defined(__CUDACC__) || defined(__HIPCC__)
#define SDFGC_HD __host__ __device__ __forceinline__
#else
#define SDFGC_HD inline
#endif
#endif
#ifndef SDFGC_PRELUDE_INCLUDED
#define SDFGC_PRELUDE_INCLUDED
#if !defined(__CUDACC__) && !defined(__HIPCC__)
using std::abs; using std::floor; using std::ceil; using std::sqrt; using std::exp;
using std::log; using std::log10; using std::log2; using std::pow; using std::sin;
using std::cos; using std::tan; using std::asin; using std::acos; using std::atan;
using std::atan2; using std::sinh; using std::cosh; using std::tanh; using std::isnan;
using std::isinf; using std::copysign; using std::fmod; using std::isfinite;
using std::signbit; using std::cbrt; using std::tgamma; using std::lgamma; using std::erf;
using std::erfc; using std::expm1; using std::log1p; using std::exp2; using std::asinh;
using std::acosh; using std::atanh; using std::trunc; using std::round; using std::hypot;
using std::fmin; using std::fmax; using std::remainder;
#endif
#endif
"#;

/// The helpers of generated expressions (`sdfgc_min`, `sdfgc_floordiv`,
/// ...): each with the names that bring it into a file, after
/// [`PRELUDE_BASE`].
pub const HELPERS: &HelperTable = &[
    (
        &["sdfgc_min(", "sdfgc_max("],
        r#"// min/max as DaCe's runtime computes them: compare-and-select in the
// common type of the arguments, the first argument kept unless the second
// is strictly smaller (larger).
template <typename A, typename B>
SDFGC_HD auto sdfgc_min(A a, B b) -> decltype(a + b) {
  using R = decltype(a + b);
  R x = a, y = b;
  return x < y ? x : y;
}
template <typename A, typename B>
SDFGC_HD auto sdfgc_max(A a, B b) -> decltype(a + b) {
  using R = decltype(a + b);
  R x = a, y = b;
  return x > y ? x : y;
}"#,
    ),
    (
        &["sdfgc_sign("],
        r#"// DaCe's sign(x), in the type of x.
template <typename T>
SDFGC_HD T sdfgc_sign(T x) {
  return T((T(0) < x) - (x < T(0)));
}"#,
    ),
    (
        &["sdfgc_sign_numpy_2("],
        r#"// DaCe 2's sign_numpy_2(x) of a real x: its sign(x).
template <typename T>
SDFGC_HD T sdfgc_sign_numpy_2(T x) {
  return T((T(0) < x) - (x < T(0)));
}"#,
    ),
    (
        &["sdfgc_math_ipow("],
        r#"// DaCe's dace::math::pow of two int (or two unsigned int) values:
// repeated multiplication in that type, 0 for a negative exponent.
template <typename T>
SDFGC_HD T sdfgc_math_ipow(T a, T b) {
  if constexpr (std::is_signed<T>::value) {
    if (b < 0) return 0;
  }
  T r = 1;
  for (T i = 0; i < b; ++i) r *= a;
  return r;
}"#,
    ),
    (
        &["sdfgc_dace2_ipow("],
        r#"// DaCe 2's dace::math::pow(a, b) of an integral b: repeated multiplication
// in the type of a (the caller converts an integral a to double for a signed
// b), the reciprocal for a negative b.
template <typename R, typename U>
SDFGC_HD R sdfgc_dace2_ipow(R a, U b) {
  unsigned int n = static_cast<unsigned int>(b);
  bool negative = false;
  if constexpr (std::is_signed<U>::value) {
    negative = b < 0;
    if (negative) n = 0u - static_cast<unsigned int>(b);
  }
  R r = R(1);
  if constexpr (std::is_same<R, bool>::value) {
    r = n == 0 || a;
  } else {
    for (unsigned int i = 0; i < n; ++i) r *= a;
  }
  return negative ? R(R(1) / r) : r;
}"#,
    ),
    (
        &["sdfgc_reciprocal("],
        r#"// DaCe's reciprocal(x), in the type of x.
template <typename T>
SDFGC_HD T sdfgc_reciprocal(T x) {
  return T(1) / x;
}"#,
    ),
    (
        &["sdfgc_floordiv("],
        r#"// Python a // b (rounds toward negative infinity).
template <typename A, typename B>
SDFGC_HD auto sdfgc_floordiv(A a, B b) -> decltype(a + b) {
  using R = decltype(a + b);
  R x = a, y = b;
  if constexpr (std::is_integral<R>::value) {
    R q = x / y;
    if constexpr (std::is_signed<R>::value) {
      q -= R((x % y != 0) & ((x < 0) != (y < 0)));  // branch-free: hoistable from loops
    }
    return q;
  } else {
    return floor(x / y);
  }
}"#,
    ),
    (
        &["sdfgc_pymod("],
        r#"// Python a % b (the result has the sign of b).
template <typename A, typename B>
SDFGC_HD auto sdfgc_pymod(A a, B b) -> decltype(a + b) {
  using R = decltype(a + b);
  R x = a, y = b;
  if constexpr (std::is_integral<R>::value) {
    R r = x % y;
    if constexpr (std::is_signed<R>::value) {
      r += y * R((r != 0) & ((r < 0) != (y < 0)));
    }
    return r;
  } else {
    return x - floor(x / y) * y;
  }
}"#,
    ),
    (
        &["sdfgc_cmod("],
        r#"// C a % b (truncating); fmod for floating types.
template <typename A, typename B>
SDFGC_HD auto sdfgc_cmod(A a, B b) -> decltype(a + b) {
  using R = decltype(a + b);
  if constexpr (std::is_integral<R>::value) {
    return static_cast<R>(a) % static_cast<R>(b);
  } else {
    return fmod(static_cast<R>(a), static_cast<R>(b));
  }
}"#,
    ),
    (
        &["sdfgc_int_ceil("],
        r#"// Ceiling division.
template <typename A, typename B>
SDFGC_HD auto sdfgc_int_ceil(A a, B b) -> decltype(a + b) {
  using R = decltype(a + b);
  R x = a, y = b;
  if constexpr (std::is_integral<R>::value) {
    R q = x / y;
    if constexpr (std::is_signed<R>::value) {
      q += R((x % y != 0) & ((x < 0) == (y < 0)));
    } else {
      q += R(x % y != 0);
    }
    return q;
  } else {
    return ceil(x / y);
  }
}"#,
    ),
    (
        &["sdfgc_pad_stride("],
        r#"// The row stride of a padded transient: rows of n elements of `bytes`
// each, from `from` bytes on, take an odd number of 64-byte lines, so that a
// walk down a column meets every cache set instead of one. Branch-free on
// `n`: a select here kept GCC from hoisting the stride out of the loops that
// index with it, and from vectorizing them.
SDFGC_HD constexpr int64_t sdfgc_pad_stride(int64_t n, int64_t bytes, int64_t from) {
  return 64 % bytes != 0 ? n
                         : n + static_cast<int64_t>(n * bytes >= from) * (((n * bytes + 63) / 64 | 1) * (64 / bytes) - n);
}"#,
    ),
    (
        &["sdfgc_ipow("],
        r#"// base ** exp for a non-negative integer exp, by repeated multiplication
// (DaCe's dace::math::ipow: exp - 1 products).
template <typename T>
SDFGC_HD auto sdfgc_ipow(T base, int exp) -> decltype(base * base) {
  if (exp == 0) return 1;
  decltype(base * base) r = base;
  for (; exp > 1; --exp) r *= base;
  return r;
}"#,
    ),
    (
        &["sdfgc_mod_float("],
        r#"// DaCe's Mod_float (Fortran MOD of reals): value - int(value / modulus) * modulus.
template <typename A, typename B>
SDFGC_HD auto sdfgc_mod_float(A value, B modulus) -> decltype(value + modulus) {
  using R = decltype(value + modulus);
  return R(value - static_cast<int>(value / modulus) * modulus);
}"#,
    ),
    (
        &["sdfgc_modulo("],
        r#"// DaCe's Modulo (Fortran MODULO of integers), its formula: the quotient in float.
template <typename A, typename B>
SDFGC_HD auto sdfgc_modulo(A value, B modulus) -> decltype(value + modulus) {
  using R = decltype(value + modulus);
  return R(value - floor(static_cast<float>(value) / modulus) * modulus);
}"#,
    ),
    (
        &["sdfgc_modulo_float("],
        r#"// DaCe's Modulo_float (Fortran MODULO of reals): value - floor(value / modulus) * modulus.
template <typename A, typename B>
SDFGC_HD auto sdfgc_modulo_float(A value, B modulus) -> decltype(value + modulus) {
  using R = decltype(value + modulus);
  return R(value - floor(value / modulus) * modulus);
}"#,
    ),
    (
        &["sdfgc_exponent("],
        r#"// DaCe's one-argument frexp (Fortran EXPONENT): the binary exponent.
template <typename T>
SDFGC_HD int sdfgc_exponent(T a) {
  int e = 0;
  frexp(a, &e);
  return e;
}"#,
    ),
    (
        &["sdfgc_iround("],
        r#"// DaCe's iround (Fortran NINT): round to nearest, halves away from zero, as int.
template <typename T>
SDFGC_HD int sdfgc_iround(T a) {
  return static_cast<int>(round(a));
}"#,
    ),
];

/// A table of helpers: each with the names that bring it into a file.
pub type HelperTable = [(&'static [&'static str], &'static str)];

/// The helpers of `table` that a file's text names (`uses`), joined by
/// newlines, between `head` and `tail`; empty when it names none.
pub fn pick_helpers(
    table: &HelperTable,
    uses: &dyn Fn(&str) -> bool,
    head: &str,
    tail: &str,
) -> String {
    let picked: Vec<&str> = table
        .iter()
        .filter(|(names, _)| names.iter().any(|n| uses(n)))
        .map(|(_, text)| *text)
        .collect();
    if picked.is_empty() {
        return String::new();
    }
    format!("{head}{}{tail}", picked.join("\n"))
}

/// The [`HELPERS`] that a file's text names (`uses`), each line ending in
/// a newline; empty when it names none.
pub fn helpers(uses: &dyn Fn(&str) -> bool) -> String {
    pick_helpers(
        HELPERS,
        uses,
        "#ifndef SDFGC_HELPERS_INCLUDED\n#define SDFGC_HELPERS_INCLUDED\n",
        "\n#endif\n",
    )
}

/// The whole prelude: the base and every helper (tests, and programs that
/// may use any).
pub fn prelude_all() -> String {
    format!("{}\n{}", PRELUDE_BASE.trim_end(), helpers(&|_| true))
}

/// `sdfgc_pow`, in files whose symbolic expressions raise to a power.
pub const PRELUDE_POW: &str = r#"#ifndef SDFGC_PRELUDE_POW_INCLUDED
#define SDFGC_PRELUDE_POW_INCLUDED
#include <type_traits>
// base ** exp in symbolic expressions (sizes, ranges, indices): an integer
// power of integers (by squaring; 0 for a negative exp of |base| > 1, as
// integer division would give), else pow.
template <typename B, typename E>
SDFGC_HD auto sdfgc_pow(B base, E exp) {
  if constexpr (std::is_integral<B>::value && std::is_integral<E>::value) {
    if (exp < 0) return decltype(base * base)(base == 1 ? 1 : base == -1 ? (exp % 2 ? -1 : 1) : 0);
    decltype(base * base) r = 1, b = base;
    for (; exp > 0; exp /= 2, b *= b)
      if (exp % 2) r *= b;
    return r;
  } else {
    return pow(base, exp);
  }
}
#endif
"#;

/// DaCe's `dace::math::pow`, `int_ceil` and `int_floor` for C++ tasklets
/// (DaCe's expansions write them in sizes: `int_ceil(dace::math::pow(R, K -
/// 1), 1)`), after [`PRELUDE_POW`]; only in files whose tasklets use one.
pub const PRELUDE_DACE_MATH: &str = r#"#ifndef SDFGC_PRELUDE_DACE_MATH_INCLUDED
#define SDFGC_PRELUDE_DACE_MATH_INCLUDED
namespace dace { namespace math {
template <typename B, typename E>
SDFGC_HD auto pow(B base, E exp) { return sdfgc_pow(base, exp); }
} }  // namespace dace::math
template <typename T, typename U>
SDFGC_HD auto int_ceil(T a, U b) -> decltype(a + b) { return (a + b - 1) / b; }
template <typename T, typename U>
SDFGC_HD auto int_floor(T a, U b) -> decltype(a + b) { return a / b; }
#endif
"#;

/// Names of C++ tasklet code that bring in [`PRELUDE_DACE_MATH`].
pub const DACE_MATH_NAMES: &[&str] = &["dace::math::pow", "int_ceil", "int_floor"];

/// C++ helpers of DaCe's runtime functions behind NumPy ufuncs
/// (`heaviside`, `gcd`, `py_divmod`, ... of `dace/math.h`, same formulas)
/// and of `printf` in tasklets; after [`PRELUDE`], only in files that use
/// one of [`NUMPY_HELPERS`].
pub const PRELUDE_NUMPY: &str = r#"#ifndef SDFGC_PRELUDE_NUMPY_INCLUDED
#define SDFGC_PRELUDE_NUMPY_INCLUDED
#include <cstdarg>
#include <cstdio>
#if !defined(__CUDACC__) && !defined(__HIPCC__)
using std::nextafter; using std::ldexp; using std::modf; using std::frexp;
#endif
// printf of Python tasklets (host code): the format is the tasklet's string,
// the arguments are promoted as printf's (no compile-time format check).
__attribute__((unused)) static inline int sdfgc_printf(const char *format, ...) {
  va_list args;
  va_start(args, format);
  int n = std::vprintf(format, args);
  va_end(args);
  return n;
}
// DaCe's runtime functions behind NumPy ufuncs (dace/math.h), same formulas.
template <typename A, typename B>
SDFGC_HD auto sdfgc_heaviside(A a, B b) -> decltype(a + b) {
  using R = decltype(a + b);
  return (a < 0) ? R(0) : ((a > 0) ? R(1) : R(b));
}
template <typename T>
SDFGC_HD T sdfgc_heaviside(T a) {
  return (a > 0) ? T(1) : T(0);
}
template <typename A, typename B>
SDFGC_HD auto sdfgc_gcd(A a, B b) -> decltype(a + b) {
  using R = decltype(a + b);
  R x = a < 0 ? R(-a) : R(a), y = b < 0 ? R(-b) : R(b);
  while (y != 0) {
    R t = x % y;
    x = y;
    y = t;
  }
  return x;
}
template <typename A, typename B>
SDFGC_HD auto sdfgc_lcm(A a, B b) -> decltype(a + b) {
  using R = decltype(a + b);
  if (a == 0 || b == 0) return R(0);
  R x = a < 0 ? R(-a) : R(a), y = b < 0 ? R(-b) : R(b);
  return (x / sdfgc_gcd(x, y)) * y;
}
template <typename T>
SDFGC_HD T sdfgc_deg2rad(T a) {
  return T(a * 3.14159265358979323846 / T(180));
}
template <typename T>
SDFGC_HD T sdfgc_rad2deg(T a) {
  return T(a * T(180) / 3.14159265358979323846);
}
template <typename T, typename Q, typename R>
SDFGC_HD void sdfgc_py_divmod(T a, T b, Q &q, R &r) {
  if constexpr (std::is_integral<T>::value) {
    T qq = a / b, rr = a % b;
    if constexpr (std::is_signed<T>::value) {
      T corr = T((rr != 0) & ((rr < 0) != (b < 0)));
      qq -= corr;
      rr += corr * b;
    }
    q = Q(qq);
    r = R(rr);
  } else {
    T qq = T(floor(a / b));
    q = Q(qq);
    r = R(a - qq * b);
  }
}
template <typename T, typename I, typename F>
SDFGC_HD void sdfgc_np_modf(T a, I &integral, F &fractional) {
  if constexpr (std::is_integral<T>::value) {
    integral = I(double(a));
    fractional = F(0);
  } else {
    T ip;
    fractional = F(modf(a, &ip));
    integral = I(ip);
  }
}
template <typename T, typename M, typename E>
SDFGC_HD void sdfgc_np_frexp(T a, M &mantissa, E &exponent) {
  int e = 0;
  mantissa = M(frexp(a, &e));
  exponent = E(e);
}
#endif
"#;

/// Names whose use in a file brings in [`PRELUDE_NUMPY`].
pub const NUMPY_HELPERS: &[&str] = &[
    "sdfgc_heaviside(",
    "sdfgc_gcd(",
    "sdfgc_lcm(",
    "sdfgc_deg2rad(",
    "sdfgc_rad2deg(",
    "sdfgc_py_divmod(",
    "sdfgc_np_modf(",
    "sdfgc_np_frexp(",
    "sdfgc_printf(",
    "nextafter(",
    "ldexp(",
];

/// The value of an exponent that DaCe's C++ unparser raises to by
/// multiplication: an integer literal, a float literal of integral value, or
/// a cast of one (`dace.float64(2)`), within `int`'s range.
pub fn integral_exponent(e: &Expr) -> Option<i64> {
    let k = match e {
        Expr::Int(k) => *k,
        Expr::Float(v) if v.fract() == 0.0 && v.abs() <= f64::from(u32::MAX) => *v as i64,
        Expr::Unary(UnaryOp::Neg, a) => -integral_exponent(a)?,
        Expr::Call(Func::Cast(t), args) if args.len() == 1 && !t.is_opaque() => {
            integral_exponent(&args[0])?
        }
        _ => return None,
    };
    (k.unsigned_abs() <= i32::MAX as u64).then_some(k)
}

/// C++ precedence levels (higher binds tighter).
const PRIMARY: u8 = 16;
const UNARY: u8 = 15;
const MUL: u8 = 13;
const ADD: u8 = 12;
const SHIFT: u8 = 11;
const REL: u8 = 9;
const EQUALITY: u8 = 8;
const BIT_AND: u8 = 7;
const BIT_XOR: u8 = 6;
const BIT_OR: u8 = 5;
const LOG_AND: u8 = 4;
const LOG_OR: u8 = 3;

/// Prints expressions as C++; the caller decides how names and indexing are spelled.
pub struct CExprPrinter<'a> {
    /// Maps a `Sym` name to its C++ spelling (e.g. a connector to `__in1`).
    pub name: &'a dyn Fn(&str) -> String,
    /// Prints `name[i, ...]` given the array name (unmapped) and the printed
    /// index expressions. Each index is a complete expression printed at the
    /// lowest precedence: wrap it in parentheses (see [`wrap`]) before using
    /// it as an operand. The result is used as a primary expression.
    pub index: &'a dyn Fn(&str, &[String]) -> String,
    /// Symbolic expressions (sizes, ranges, indices): `a ** b` of integers
    /// is an integer power (`sdfgc_pow`), not `pow`'s double.
    pub symbolic: bool,
}

/// Prints `e` with identity names and indexing as `a[i][j]`.
pub fn to_cpp(e: &Expr) -> String {
    let name = |n: &str| n.to_string();
    let index = |n: &str, idx: &[String]| {
        let mut s = n.to_string();
        for i in idx {
            s.push('[');
            s.push_str(i);
            s.push(']');
        }
        s
    };
    CExprPrinter {
        name: &name,
        index: &index,
        symbolic: true,
    }
    .print(e)
}

/// Wraps a printed expression in parentheses unless it is a plain name or
/// non-negative literal (for composing printed index expressions).
pub fn wrap(s: &str) -> String {
    if !s.is_empty()
        && s.bytes()
            .all(|c| c.is_ascii_alphanumeric() || c == b'_' || c == b'.')
    {
        s.to_string()
    } else {
        format!("({s})")
    }
}

/// A C++ floating-point literal that round-trips `v` and always contains
/// `.` or `e` (`<cmath>`'s `NAN`/`INFINITY` for NaN and infinity: constant
/// expressions that host and device code both accept).
pub fn float_literal(v: f64) -> String {
    if v.is_nan() {
        return "double(NAN)".into();
    }
    if v.is_infinite() {
        let s = if v < 0.0 { "-" } else { "" };
        return format!("{s}double(INFINITY)");
    }
    // Rust's Debug form is the shortest round-trip one and has '.' or 'e'.
    let s = format!("{v:?}");
    match s.split_once('e') {
        Some((m, e)) if !e.starts_with('-') => format!("{m}e+{e}"),
        _ => s,
    }
}

/// An integer literal of type `t` (the value fits `t`): 64-bit values carry
/// a suffix, and the most negative `int64` is written as an expression (its
/// magnitude is no `long long` literal).
pub fn typed_int_literal(v: i128, t: DType) -> String {
    match t {
        DType::Int64 if v == i128::from(i64::MIN) => "(-9223372036854775807LL - 1)".into(),
        DType::Int64 => format!("{v}LL"),
        DType::UInt64 => format!("{v}ULL"),
        DType::UInt32 => format!("{v}U"),
        _ => format!("{v}"),
    }
}

/// The C++ type used in casts (`int8_t` rather than DaCe's plain `char`).
pub fn cast_type(t: DType) -> &'static str {
    match t {
        DType::Int8 => "int8_t",
        t => t.ctype(),
    }
}

impl CExprPrinter<'_> {
    /// Prints `e` as a complete C++ expression.
    pub fn print(&self, e: &Expr) -> String {
        self.prec(e).0
    }

    /// Prints `e` and returns it with its C++ precedence level.
    fn prec(&self, e: &Expr) -> (String, u8) {
        match e {
            Expr::Int(v) => int_literal(*v),
            Expr::Float(v) => {
                let s = float_literal(*v);
                let p = if s.starts_with('-') { UNARY } else { PRIMARY };
                (s, p)
            }
            Expr::Bool(v) => ((if *v { "true" } else { "false" }).into(), PRIMARY),
            Expr::Sym(n) => ((self.name)(n), PRIMARY),
            Expr::Index(n, idx) => {
                let idx: Vec<String> = idx.iter().map(|i| self.print(i)).collect();
                ((self.index)(n, &idx), PRIMARY)
            }
            Expr::Unary(op, a) => {
                let sym = match op {
                    UnaryOp::Neg => "-",
                    UnaryOp::Not => "!",
                    UnaryOp::BitNot => "~",
                };
                let (s, p) = self.prec(a);
                // Parenthesize `-(-1)` so it never reads as `--1`.
                if p < UNARY || (*op == UnaryOp::Neg && s.starts_with('-')) {
                    (format!("{sym}({s})"), UNARY)
                } else {
                    (format!("{sym}{s}"), UNARY)
                }
            }
            Expr::Binary(op, a, b) => self.binary(*op, a, b),
            Expr::Field(a, f) => {
                let (s, p) = self.prec(a);
                if p < PRIMARY || s.starts_with('*') {
                    (format!("({s}).{f}"), PRIMARY)
                } else {
                    (format!("{s}.{f}"), PRIMARY)
                }
            }
            // Aggregate initialization, the fields in the order given (the
            // struct's declaration order, once lowered).
            Expr::Record(t, fields) => {
                let vals: Vec<String> = fields.iter().map(|(_, a)| self.print(a)).collect();
                (format!("{t}{{{}}}", vals.join(", ")), PRIMARY)
            }
            Expr::Call(f, args) => (self.call(*f, args), PRIMARY),
            Expr::Ternary(c, a, b) => (
                format!(
                    "({} ? {} : {})",
                    self.print(c),
                    self.print(a),
                    self.print(b)
                ),
                PRIMARY,
            ),
        }
    }

    fn binary(&self, op: BinaryOp, a: &Expr, b: &Expr) -> (String, u8) {
        use BinaryOp::*;
        let (sym, prec) = match op {
            FloorDiv => return (self.helper("sdfgc_floordiv", &[a, b]), PRIMARY),
            Mod => return (self.helper("sdfgc_pymod", &[a, b]), PRIMARY),
            Pow => return (self.pow(a, b), PRIMARY),
            Mul => ("*", MUL),
            Div => ("/", MUL),
            Add => ("+", ADD),
            Sub => ("-", ADD),
            Shl => ("<<", SHIFT),
            Shr => (">>", SHIFT),
            Lt => ("<", REL),
            Le => ("<=", REL),
            Gt => (">", REL),
            Ge => (">=", REL),
            Eq => ("==", EQUALITY),
            Ne => ("!=", EQUALITY),
            BitAnd => ("&", BIT_AND),
            BitXor => ("^", BIT_XOR),
            BitOr => ("|", BIT_OR),
            And => ("&&", LOG_AND),
            Or => ("||", LOG_OR),
        };
        let l = self.operand(a, op, prec, false);
        let r = self.operand(b, op, prec, true);
        (format!("{l} {sym} {r}"), prec)
    }

    /// An operand of a binary operator, parenthesized when precedence or
    /// clarity (GCC `-Wparentheses`) requires it.
    fn operand(&self, e: &Expr, parent: BinaryOp, prec: u8, right: bool) -> String {
        let (s, p) = self.prec(e);
        let need = p < prec || (right && p == prec) || needs_clarity_parens(parent, e);
        if need { format!("({s})") } else { s }
    }

    fn helper(&self, f: &str, args: &[&Expr]) -> String {
        let args: Vec<String> = args.iter().map(|a| self.print(a)).collect();
        format!("{f}({})", args.join(", "))
    }

    fn pow(&self, base: &Expr, exp: &Expr) -> String {
        // An integral literal exponent multiplies, as DaCe's `dace::math::ipow`
        // (and `reciprocal` of it for a negative one, in tasklet code).
        match integral_exponent(exp) {
            Some(k) if k >= 0 => return format!("sdfgc_ipow({}, {k})", self.print(base)),
            Some(k) if !self.symbolic => {
                return format!("sdfgc_reciprocal(sdfgc_ipow({}, {}))", self.print(base), -k);
            }
            _ => {}
        }
        match exp {
            Expr::Float(v) if *v == 0.5 => self.helper("sqrt", &[base]),
            Expr::Float(_) => self.helper("pow", &[base, exp]),
            _ if self.symbolic && !matches!(base, Expr::Float(_)) => {
                self.helper("sdfgc_pow", &[base, exp])
            }
            _ => self.helper("pow", &[base, exp]),
        }
    }

    fn call(&self, f: Func, args: &[Expr]) -> String {
        let refs: Vec<&Expr> = args.iter().collect();
        let name = match f {
            Func::Min | Func::Max => {
                let name = if f == Func::Min {
                    "sdfgc_min"
                } else {
                    "sdfgc_max"
                };
                let mut it = args.iter().map(|a| self.print(a));
                let first = it.next().unwrap_or_default();
                return it.fold(first, |acc, a| format!("{name}({acc}, {a})"));
            }
            Func::Pow if args.len() == 2 => return self.pow(&args[0], &args[1]),
            Func::Cast(t) => return self.helper(&format!("static_cast<{}>", cast_type(t)), &refs),
            Func::CastLike => {
                let var = args.first().map(|a| self.print(a)).unwrap_or_default();
                let cast = match args.first() {
                    Some(Expr::Sym(_)) => format!("static_cast<decltype({var})>"),
                    _ => format!("static_cast<std::decay_t<decltype({var})>>"),
                };
                return self.helper(&cast, refs.get(1..).unwrap_or_default());
            }
            Func::Complex => return self.helper(DType::Complex128.ctype(), &refs),
            Func::Real => "sdfgc_real",
            Func::Imag => "sdfgc_imag",
            Func::Conj => "sdfgc_conj",
            Func::Abs => "abs",
            Func::Floor => "floor",
            Func::Ceil => "ceil",
            Func::IntFloor => "sdfgc_floordiv",
            Func::IntCeil => "sdfgc_int_ceil",
            Func::PadStride => "sdfgc_pad_stride",
            Func::Sqrt => "sqrt",
            Func::Exp => "exp",
            Func::Log => "log",
            Func::Log10 => "log10",
            Func::Log2 => "log2",
            Func::Pow => "pow",
            Func::Sin => "sin",
            Func::Cos => "cos",
            Func::Tan => "tan",
            Func::Asin => "asin",
            Func::Acos => "acos",
            Func::Atan => "atan",
            Func::Atan2 => "atan2",
            Func::Sinh => "sinh",
            Func::Cosh => "cosh",
            Func::Tanh => "tanh",
            Func::IsNan => "isnan",
            Func::IsInf => "isinf",
            Func::IsFinite => "isfinite",
            Func::SignBit => "signbit",
            // Lowered by the tasklet writer; a plain floor elsewhere.
            Func::IFloor => "floor",
            Func::Sign => "sdfgc_sign",
            Func::SignNumpy2 => "sdfgc_sign_numpy_2",
            Func::DaceMathPow => "sdfgc_math_ipow",
            Func::DaceMathPow2 => "sdfgc_dace2_ipow",
            Func::HalfRound => "sdfgc_half_round",
            Func::Reciprocal => "sdfgc_reciprocal",
            Func::Cbrt => "cbrt",
            Func::Tgamma => "tgamma",
            Func::Lgamma => "lgamma",
            Func::Erf => "erf",
            Func::Erfc => "erfc",
            Func::Expm1 => "expm1",
            Func::Log1p => "log1p",
            Func::Exp2 => "exp2",
            Func::Asinh => "asinh",
            Func::Acosh => "acosh",
            Func::Atanh => "atanh",
            Func::Trunc => "trunc",
            Func::Round => "round",
            Func::Hypot => "hypot",
            Func::Fmin => "fmin",
            Func::Fmax => "fmax",
            Func::Remainder => "remainder",
            Func::CopySign => "copysign",
            Func::Fmod => "fmod",
            Func::CMod => "sdfgc_cmod",
            Func::PyFloor => "sdfgc_floordiv",
            Func::PyMod => "sdfgc_pymod",
            Func::FloatPow => {
                let a: Vec<String> = args
                    .iter()
                    .map(|a| format!("static_cast<double>({})", self.print(a)))
                    .collect();
                return format!("pow({})", a.join(", "));
            }
            Func::Heaviside => "sdfgc_heaviside",
            Func::Gcd => "sdfgc_gcd",
            Func::Lcm => "sdfgc_lcm",
            Func::Deg2Rad => "sdfgc_deg2rad",
            Func::Rad2Deg => "sdfgc_rad2deg",
            Func::NextAfter => "nextafter",
            Func::Ldexp => "ldexp",
            Func::DivMod => "sdfgc_py_divmod",
            Func::ThreadNum => "sdfgc_thread_num",
            Func::MaxThreads => "sdfgc_max_threads",
            Func::Modf => "sdfgc_np_modf",
            Func::Frexp => "sdfgc_np_frexp",
            Func::ModFloat => "sdfgc_mod_float",
            Func::Modulo => "sdfgc_modulo",
            Func::ModuloFloat => "sdfgc_modulo_float",
            Func::Exponent => "sdfgc_exponent",
            Func::IRound => "sdfgc_iround",
            // The writers print the operand as the pointer it is.
            Func::IsNone => {
                let a = args.first().map(|a| self.print(a)).unwrap_or_default();
                return format!("({a} == nullptr)");
            }
        };
        self.helper(name, &refs)
    }
}

fn int_literal(v: i64) -> (String, u8) {
    let s = if v == i64::MIN {
        return ("(-9223372036854775807LL - 1)".into(), PRIMARY);
    } else if i32::try_from(v).is_ok() {
        v.to_string()
    } else {
        format!("{v}LL")
    };
    let p = if v < 0 { UNARY } else { PRIMARY };
    (s, p)
}

fn is_comparison(op: BinaryOp) -> bool {
    use BinaryOp::*;
    matches!(op, Eq | Ne | Lt | Le | Gt | Ge)
}

/// Parentheses C++ does not need but GCC's `-Wparentheses` (and readers) want:
/// `(a && b) || c`, `(a < b) == c`, `a & (b + c)`, `(a + b) << c`, `(!a) == b`.
fn needs_clarity_parens(parent: BinaryOp, child: &Expr) -> bool {
    use BinaryOp::*;
    match child {
        // FloorDiv, Mod and Pow print as calls.
        Expr::Binary(FloorDiv | Mod | Pow, ..) => false,
        Expr::Binary(c, ..) => match parent {
            And | Or => matches!(c, And | Or) && *c != parent,
            _ if is_comparison(parent) => is_comparison(*c) || matches!(c, BitAnd | BitOr | BitXor),
            BitAnd | BitOr | BitXor => *c != parent,
            Shl | Shr => true,
            _ => false,
        },
        Expr::Unary(UnaryOp::Not, _) => is_comparison(parent),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::front::python::parse_expr;
    use crate::ir::simplify::eval_int;
    use std::path::PathBuf;
    use std::process::Command;

    #[test]
    fn typed_integer_literals_are_exact() {
        assert_eq!(
            typed_int_literal(9007199254740993, DType::Int64),
            "9007199254740993LL"
        );
        assert_eq!(
            typed_int_literal(i64::MIN.into(), DType::Int64),
            "(-9223372036854775807LL - 1)"
        );
        assert_eq!(
            typed_int_literal(u64::MAX.into(), DType::UInt64),
            "18446744073709551615ULL"
        );
        assert_eq!(typed_int_literal(4294967295, DType::UInt32), "4294967295U");
        assert_eq!(typed_int_literal(-7, DType::Int32), "-7");
    }

    fn p(s: &str) -> Expr {
        parse_expr(s).unwrap_or_else(|e| panic!("{s}: {e}"))
    }
    fn c(s: &str) -> String {
        to_cpp(&p(s))
    }
    fn neg(e: Expr) -> Expr {
        Expr::Unary(UnaryOp::Neg, Box::new(e))
    }

    #[test]
    fn parentheses() {
        assert_eq!(c("a - (b - c)"), "a - (b - c)");
        assert_eq!(c("a - b - c"), "a - b - c");
        assert_eq!(c("a + (b + c)"), "a + (b + c)");
        assert_eq!(c("(a + b) * c"), "(a + b) * c");
        assert_eq!(c("a + b * c"), "a + b * c");
        assert_eq!(c("a / (b * c)"), "a / (b * c)");
        assert_eq!(c("-(a + b)"), "-(a + b)");
        assert_eq!(to_cpp(&neg(Expr::Int(-1))), "-(-1)");
        assert_eq!(to_cpp(&neg(neg(Expr::sym("x")))), "-(-x)");
        assert_eq!(c("-x**2"), "-sdfgc_ipow(x, 2)");
        assert_eq!(c("x - -1.5"), "x - -1.5");
        assert_eq!(c("a and b or c"), "(a && b) || c");
        assert_eq!(c("a or b and c"), "a || (b && c)");
        assert_eq!(c("a and b and c"), "a && b && c");
        assert_eq!(c("not a == b"), "!(a == b)");
        assert_eq!(c("(not a) == b"), "(!a) == b");
        assert_eq!(c("a < b < c"), "a < b && b < c");
        assert_eq!(c("(a < b) == (c < d)"), "(a < b) == (c < d)");
        assert_eq!(c("a & b == c"), "(a & b) == c");
        assert_eq!(c("a & (b == c)"), "a & (b == c)");
        assert_eq!(c("a | b ^ c & d"), "a | (b ^ (c & d))");
        assert_eq!(c("a | b | c"), "a | b | c");
        assert_eq!(c("a << b + 1"), "a << (b + 1)");
        assert_eq!(c("(a + 1) >> b"), "(a + 1) >> b");
        assert_eq!(c("a + b < c * d"), "a + b < c * d");
        assert_eq!(c("x if a else y"), "(a ? x : y)");
        assert_eq!(c("(x if a else y) + 1"), "(a ? x : y) + 1");
        assert_eq!(c("-a[i + 1, j]"), "-a[i + 1][j]");
        assert_eq!(c("~(a + 1)"), "~(a + 1)");
        assert_eq!(c("not (i < N)"), "!(i < N)");
    }

    #[test]
    fn literals_and_functions() {
        assert_eq!(c("1.0"), "1.0");
        assert_eq!(c("0.33333"), "0.33333");
        assert_eq!(c("1e+300"), "1e+300");
        assert_eq!(c("1e-7"), "1e-7");
        assert_eq!(c("1.7976931348623157e+308"), "1.7976931348623157e+308");
        assert_eq!(c("2."), "2.0");
        assert_eq!(c("math.nan"), "double(NAN)");
        assert_eq!(c("-math.inf"), "-double(INFINITY)");
        assert_eq!(c("3000000000"), "3000000000LL");
        assert_eq!(c("-5"), "-5");
        assert_eq!(to_cpp(&Expr::Int(i64::MIN)), "(-9223372036854775807LL - 1)");
        assert_eq!(c("True"), "true");
        assert_eq!(c("a // b"), "sdfgc_floordiv(a, b)");
        assert_eq!(c("Mod(a, b + 1)"), "sdfgc_pymod(a, b + 1)");
        assert_eq!(c("a ** 3"), "sdfgc_ipow(a, 3)");
        assert_eq!(c("a ** 0.5"), "sqrt(a)");
        assert_eq!(c("a ** b"), "sdfgc_pow(a, b)");
        assert_eq!(c("a ** 1.5"), "pow(a, 1.5)");
        assert_eq!(c("pow(a, 2)"), "sdfgc_ipow(a, 2)");
        assert_eq!(c("Min(a, b, c)"), "sdfgc_min(sdfgc_min(a, b), c)");
        assert_eq!(c("Max(a, b)"), "sdfgc_max(a, b)");
        assert_eq!(c("int_floor(a, b)"), "sdfgc_floordiv(a, b)");
        assert_eq!(c("int_ceil(N, 32)"), "sdfgc_int_ceil(N, 32)");
        assert_eq!(c("ceiling(x)"), "ceil(x)");
        assert_eq!(c("abs(x)"), "abs(x)");
        assert_eq!(c("dace.float32(0.5)"), "static_cast<float>(0.5)");
        assert_eq!(c("int8(a + b)"), "static_cast<int8_t>(a + b)");
        assert_eq!(c("int(x)"), "static_cast<int64_t>(x)");
        assert_eq!(c("atan2(y, x)"), "atan2(y, x)");
        let name = |n: &str| {
            if n == "a" {
                "__in1".to_string()
            } else {
                n.to_string()
            }
        };
        let index = |n: &str, idx: &[String]| {
            format!(
                "{n}[{}]",
                idx.iter()
                    .map(|i| wrap(i))
                    .collect::<Vec<_>>()
                    .join(" * 10 + ")
            )
        };
        let pr = CExprPrinter {
            name: &name,
            index: &index,
            symbolic: false,
        };
        assert_eq!(
            pr.print(&p("a + arr[i + 1, j]")),
            "__in1 + arr[(i + 1) * 10 + j]"
        );
    }

    /// Printed expressions used by the compile tests: parsed sources plus a few
    /// trees the parser would fold away.
    fn corpus() -> Vec<Expr> {
        let srcs = [
            "N - 1",
            "Max(0, N - 1)",
            "int_ceil(N, 32)",
            "Min(i, j)",
            "floor(x)",
            "Mod(i, 2)",
            "1 + N",
            "Max(0, 2 + M - i)",
            "N**2",
            "x ** dace.float64(3)",
            "- 1e+300",
            "dace.float32(0.5)",
            "arr[(i - j) + 5]",
            "mat[(i - 1), ((- j) + N)]",
            "(mat[i, j] if (i != (- 1)) else math.nan)",
            "(abs((x - y)) if (x > y) else (- abs(y)))",
            "(abs(k) if (k > 0) else min(k, (- 7)))",
            "(1 if (b or (not b)) else 0)",
            "(not (i != j))",
            "(dace.int64(N) & 7)",
            "math.pow(x, y)",
            "double(1.7976931348623157e+308)",
            "i < Max(N, M)",
            "b and (x > 3)",
            "N // i",
            "x // y",
            "-N % M",
            "x % y",
            "x ** 0.5",
            "i ** j",
            "N - (M - i)",
            "(N + M) * i",
            "-(N + M)",
            "(i & j) == 0",
            "i & (j == 0)",
            "i << 2 + j",
            "i | j ^ N & M",
            "~i",
            "(i < j) == (j < N)",
            "(not b) == (i < j)",
            "x < y < 2.0",
            "sqrt(x) + exp(x) + log(y) + log10(y) + log2(y)",
            "sin(x) * cos(x) / tan(x)",
            "asin(x) + acos(x) + atan(x) + atan2(x, y)",
            "sinh(x) - cosh(x) + tanh(x)",
            "isnan(x) or isinf(y)",
            "copysign(x, y) + fmod(x, y)",
            "ceiling(x) + ceil(y)",
            "int_floor(N, 3)",
            "int8(i) + uint16(j) + uint32(N) + int16(M) + uint8(i) + bool(i)",
            "math.inf - math.inf",
            "np.nan",
            "3000000000 * 2 + -3000000000",
            "True != False",
            "x if b else y",
            "1 if b else (2 if i > j else 3)",
            "Abs(-x) + fabs(f)",
            "f ** 2 + N ** 3",
            "x - -1.5 + 1e-7 + 0.1 + 1e16 + .5",
            "Min(N, x, f)",
            "Max(i, big)",
            "i >> 1 << 2",
            "N / M",
            "not (x <= y and y >= x or i != N)",
            "cbrt(x) + tgamma(y) + lgamma(y) + erf(x) + erfc(f) + expm1(x) + log1p(y) + exp2(i)",
            "asinh(x) + acosh(y) + atanh(x) + trunc(f) + round(x) + round(k)",
            "isfinite(x) or signbit(f) or isfinite(i)",
            "hypot(x, y) + fmin(x, f) + fmax(i, x) + remainder(x, y)",
            "sign(x) + sign(k) + sign(f) + reciprocal(f) + reciprocal(y)",
            "min(x, y, f) + max(i, j, big)",
            "ifloor(x)",
        ];
        let mut v: Vec<Expr> = srcs.iter().map(|s| p(s)).collect();
        v.push(neg(Expr::Int(-1)));
        v.push(neg(neg(Expr::sym("N"))));
        v.push(Expr::Int(i64::MIN));
        v.push(Expr::bin(
            BinaryOp::Lt,
            Expr::bin(BinaryOp::Lt, Expr::sym("i"), Expr::sym("j")),
            Expr::sym("N"),
        ));
        v.push(Expr::Call(
            Func::Min,
            vec![Expr::sym("i"), Expr::sym("j"), Expr::sym("N")],
        ));
        v
    }

    const DECLS: &str = "int N = 5, M = 7, i = 2, j = 3, k = -4;\n\
        double x = 0.5, y = 1.5;\nfloat f = 2.5f;\nbool b = true;\nint64_t big = 3;\n\
        double arr[100];\ndouble mat[10][10];\n";

    fn headers() -> String {
        format!(
            "#include <cmath>\n#include <cstdint>\n#include <type_traits>\n#include <limits>\n\
             #include <algorithm>\n#include <cstdio>\n{all}\n{all}\n{PRELUDE_POW}\n{DECLS}",
            all = prelude_all()
        )
    }

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("sdfgc-cexpr-{}-{name}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn gxx(args: &[&str]) {
        let out = Command::new("g++")
            .args(args)
            .output()
            .expect("g++ is required for the C++ round-trip tests but could not be run");
        assert!(
            out.status.success(),
            "g++ {args:?} failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    #[test]
    fn printed_corpus_compiles_with_gxx() {
        let mut src = headers();
        src.push_str(
            "static_assert(std::is_same<decltype(abs(x)), double>::value, \"abs(double)\");\n\
             static_assert(std::is_same<decltype(abs(f)), float>::value, \"abs(float)\");\n\
             static_assert(std::is_same<decltype(abs(big)), int64_t>::value, \"abs(int64)\");\n\
             static_assert(std::is_same<decltype(sdfgc_min(i, x)), double>::value, \"min\");\n\
             static_assert(std::is_same<decltype(sdfgc_ipow(N, 2)), int>::value, \"ipow\");\n\
             int main() {\n",
        );
        for (k, e) in corpus().iter().enumerate() {
            src.push_str(&format!("  auto v_{k} = {};\n  (void)v_{k};\n", to_cpp(e)));
        }
        src.push_str("  return 0;\n}\n");
        let dir = scratch("syntax");
        let file = dir.join("corpus.cpp");
        std::fs::write(&file, &src).unwrap();
        gxx(&[
            "-std=c++17",
            "-fsyntax-only",
            "-Wall",
            "-Werror",
            file.to_str().unwrap(),
        ]);
        let _ = std::fs::remove_dir_all(&dir);
    }

    /// `sdfgc_pow` is an integer power of integers (by squaring, negative
    /// exponents as integer division), `pow` otherwise; DaCe's
    /// `dace::math::pow`, `int_ceil` and `int_floor` for C++ tasklets agree.
    #[test]
    fn integer_powers_and_dace_math_helpers_compute_dace_values() {
        let mut src = headers();
        src.push_str(PRELUDE_DACE_MATH);
        src.push_str(
            "int main() {\n\
             static_assert(std::is_same<decltype(sdfgc_pow(int64_t(3), 4)), int64_t>::value, \"int\");\n\
             static_assert(std::is_same<decltype(sdfgc_pow(3, 0.5)), double>::value, \"double\");\n\
             int bad = 0;\n\
             bad += sdfgc_pow(int64_t(3), 13) != 1594323;\n\
             bad += sdfgc_pow(2, 0) != 1;\n\
             bad += sdfgc_pow(-2, 3) != -8;\n\
             bad += sdfgc_pow(2, -1) != 0 || sdfgc_pow(-1, -3) != -1 || sdfgc_pow(1, -5) != 1;\n\
             bad += sdfgc_pow(2.0, 0.5) != std::sqrt(2.0);\n\
             bad += dace::math::pow(3, 4 - 1) != 27;\n\
             bad += int_ceil(dace::math::pow(3, 2), 4) != 3 || int_floor(9, 4) != 2;\n\
             return bad;\n}\n",
        );
        let dir = scratch("pow");
        let file = dir.join("pow.cpp");
        let exe = dir.join("pow");
        std::fs::write(&file, &src).unwrap();
        gxx(&[
            "-std=c++17",
            "-Wall",
            "-Werror",
            file.to_str().unwrap(),
            "-o",
            exe.to_str().unwrap(),
        ]);
        let status = Command::new(&exe).status().unwrap();
        assert!(status.success(), "wrong values: {status}");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn integer_values_match_eval_int() {
        let srcs = [
            "-7 // 2",
            "Mod(-7, 3)",
            "7 % -3",
            "-7 % -3",
            "int_ceil(-7, 2)",
            "int_ceil(7, 2)",
            "int_ceil(-7, -2)",
            "int_floor(7, -2)",
            "int_floor(-9, 4)",
            "k // 3",
            "k % 3",
            "k // -3",
            "k % -3",
            "N // i",
            "Min(N, M, k)",
            "Max(0, k)",
            "N**2",
            "k**3",
            "Abs(k)",
            "2 ** j",
            "(k < N) == True",
            "N if k < 0 else M",
            "N - (M - i)",
            "(N + M) * i",
            "i << 2 + j",
            "i | j ^ N & M",
            "~k",
            "3000000000 * 2",
            "-(-k)",
            "N - 3 + 1 - 1 + 1",
            "not (i < N)",
            "(i < j) and (j < N) or k",
        ];
        let exprs: Vec<Expr> = srcs.iter().map(|s| p(s)).collect();
        let mut env = |n: &str| match n {
            "N" => Some(5),
            "M" => Some(7),
            "i" => Some(2),
            "j" => Some(3),
            "k" => Some(-4),
            _ => None,
        };
        let mut src = headers();
        src.push_str("int main() {\n");
        for e in &exprs {
            src.push_str(&format!(
                "  std::printf(\"%lld\\n\", (long long)({}));\n",
                to_cpp(e)
            ));
        }
        // Floating-point helpers against Python's results.
        for (e, want) in [
            ("-x // y", "-1.0"),
            ("-x % y", "1.0"),
            ("x % -y", "-1.0"),
            ("int_ceil(y, x)", "3.0"),
        ] {
            src.push_str(&format!(
                "  std::printf(\"%d\\n\", ({}) == {want} ? 1 : 0);\n",
                to_cpp(&p(e))
            ));
        }
        src.push_str("  return 0;\n}\n");
        let dir = scratch("values");
        let file = dir.join("values.cpp");
        let exe = dir.join("values");
        std::fs::write(&file, &src).unwrap();
        gxx(&[
            "-std=c++17",
            "-Wall",
            "-Werror",
            "-o",
            exe.to_str().unwrap(),
            file.to_str().unwrap(),
        ]);
        let out = Command::new(&exe).output().unwrap();
        assert!(out.status.success());
        let stdout = String::from_utf8(out.stdout).unwrap();
        let lines: Vec<&str> = stdout.lines().collect();
        assert_eq!(lines.len(), exprs.len() + 4);
        for (k, e) in exprs.iter().enumerate() {
            let want = eval_int(e, &mut env).unwrap_or_else(|| panic!("eval_int({})", srcs[k]));
            assert_eq!(
                lines[k],
                want.to_string(),
                "{} printed as {}",
                srcs[k],
                to_cpp(e)
            );
        }
        assert_eq!(&lines[exprs.len()..], ["1", "1", "1", "1"], "float helpers");
        // Spot checks of Python semantics.
        assert_eq!(&lines[..4], ["-4", "2", "-2", "-1"]);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
