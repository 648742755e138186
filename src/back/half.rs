//! `float16` on CPUs: DaCe's `dace::float16`, a 2-byte storage struct whose
//! arithmetic runs in `float` through its conversions. The two DaCe versions
//! convert differently, and sdfgc computes what the version that saved the
//! SDFG computes:
//!
//! - DaCe 2.x (`types.h`'s `DACE_LP_STRUCT(half, ...)`): IEEE binary16,
//!   float to half rounded to nearest even, half to float exact;
//! - DaCe 1.x: the struct of `types.h` before 2.0, whose conversions shift
//!   the bit fields and convert the resulting *integer* to `float` by value,
//!   so that a stored half reads back as a large number (not IEEE).
//!
//! Arithmetic, comparisons and unary minus come from `operator float()`, as
//! in DaCe; compound assignments store through the constructor, and so do
//! the products of `x ** k` (DaCe's `ipow` multiplies into a `T`).

/// The struct of DaCe 2.x (IEEE binary16, the emulated conversions of its
/// `types.h`, with `memcpy` in place of C++20's `std::bit_cast`).
pub const PRELUDE_IEEE: &str = r#"// ---- float16: DaCe 2's dace::float16 (IEEE binary16, arithmetic in float) ----
#include <cstring>
namespace dace {
inline uint32_t sdfgc_f2u(float f) { uint32_t u; std::memcpy(&u, &f, 4); return u; }
inline float sdfgc_u2f(uint32_t u) { float f; std::memcpy(&f, &u, 4); return f; }
inline uint16_t sdfgc_half_from_float(float f) {
    uint32_t u = sdfgc_f2u(f), sign = u & 0x80000000u; u ^= sign; uint16_t h;
    if (u >= 0x47800000u) h = (u > 0x7f800000u) ? 0x7e00 : 0x7c00;
    else if (u < 0x38800000u) { float m = sdfgc_u2f(u) + sdfgc_u2f(0x3f000000u); h = (uint16_t)(sdfgc_f2u(m) - 0x3f000000u); }
    else { uint32_t mo = (u >> 13) & 1; u += 0xc8000000u + 0xfffu; u += mo; h = (uint16_t)(u >> 13); }
    return (uint16_t)(h | (uint16_t)(sign >> 16));
}
inline float sdfgc_half_to_float(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000) << 16, exp = (h >> 10) & 0x1f, mant = h & 0x3ff, out;
    if (exp == 0) {
        if (mant == 0) out = sign;
        else { exp = 1; do { exp--; mant <<= 1; } while ((mant & 0x400) == 0); mant &= 0x3ff; out = sign | ((exp + 112) << 23) | (mant << 13); }
    } else if (exp == 0x1f) out = sign | 0x7f800000u | (mant << 13);
    else out = sign | ((exp + 112) << 23) | (mant << 13);
    return sdfgc_u2f(out);
}
struct alignas(2) half {
    uint16_t h;
    half() : h(0) {}
    half(float f) : h(sdfgc_half_from_float(f)) {}
    operator float() const { return sdfgc_half_to_float(h); }
    half &operator+=(float f) { *this = half((float)*this + f); return *this; }
    half &operator-=(float f) { *this = half((float)*this - f); return *this; }
    half &operator*=(float f) { *this = half((float)*this * f); return *this; }
    half &operator/=(float f) { *this = half((float)*this / f); return *this; }
};
typedef half float16;
// nextafter of a half as DaCe's code computes it: its C `nextafter` in
// double (std's float overload would make `nextafter(x, inf)` ambiguous).
inline double nextafter(half x, double y) { return ::nextafter(double(float(x)), y); }
inline double nextafter(half x, half y) { return ::nextafter(double(float(x)), double(float(y))); }
}  // namespace dace
// DaCe's T(...) of a half: a value rounded to half; a vector unchanged.
template <typename T> inline auto sdfgc_half_round(const T &x) {
    if constexpr (std::is_convertible<T, float>::value) return dace::float16((float)x); else return x;
}
// x ** k as DaCe's dace::math::ipow: the product stored as half at each step.
inline dace::half sdfgc_ipow(dace::half base, int exp) {
    dace::half r = 1.0f;
    for (int i = 0; i < exp; ++i) r *= base;
    return r;
}"#;

/// The struct of DaCe 1.x, same conversions (a default constructor and
/// compound assignments added; DaCe 1 cannot compile code that needs them).
pub const PRELUDE_DACE1: &str = r#"// ---- float16: DaCe 1's dace::float16 (its conversions: not IEEE) ----
#include <cstring>
namespace dace {
struct half {
    half() : h(0) {}
    half(float f) {
        uint32_t x; std::memcpy(&x, &f, 4);
        h = ((x>>16)&0x8000)|((((x&0x7f800000)-0x38000000)>>13)&0x7c00)|((x>>13)&0x03ff);
    }
    operator float() const {
        float f = ((h&0x8000)<<16) | (((h&0x7c00)+0x1C000)<<13) | ((h&0x03FF)<<13);
        return f;
    }
    half &operator+=(float f) { *this = half((float)*this + f); return *this; }
    half &operator-=(float f) { *this = half((float)*this - f); return *this; }
    half &operator*=(float f) { *this = half((float)*this * f); return *this; }
    half &operator/=(float f) { *this = half((float)*this / f); return *this; }
    uint16_t h;
};
typedef half float16;
// nextafter of a half as DaCe's code computes it: its C `nextafter` in
// double (std's float overload would make `nextafter(x, inf)` ambiguous).
inline double nextafter(half x, double y) { return ::nextafter(double(float(x)), y); }
inline double nextafter(half x, half y) { return ::nextafter(double(float(x)), double(float(y))); }
}  // namespace dace
// DaCe's T(...) of a half: a value rounded to half; a vector unchanged.
template <typename T> inline auto sdfgc_half_round(const T &x) {
    if constexpr (std::is_convertible<T, float>::value) return dace::float16((float)x); else return x;
}
// x ** k as DaCe's dace::math::ipow: the product stored as half at each step.
inline dace::half sdfgc_ipow(dace::half base, int exp) {
    dace::half r = 1.0f;
    for (int i = 0; i < exp; ++i) r *= base;
    return r;
}"#;

/// The prelude for an SDFG saved by DaCe `version` ("" : DaCe 2's).
pub fn prelude(version: &str) -> &'static str {
    if version.starts_with("1.") || version.starts_with("0.") {
        PRELUDE_DACE1
    } else {
        PRELUDE_IEEE
    }
}

/// `float16` on GPU targets, after the API's header line (see
/// [`gpu_prelude`]): DaCe's `dace::float16` is CUDA's or HIP's `half`, IEEE
/// binary16 in host and device code alike, whatever DaCe version saved the
/// SDFG.
const GPU_PRELUDE_BODY: &str = r#"namespace dace { typedef half float16; }
// DaCe's T(...) of a half: a value rounded to half; a vector unchanged.
template <typename T> SDFGC_HD auto sdfgc_half_round(const T &x) {
    if constexpr (std::is_convertible<T, float>::value) return dace::float16((float)x); else return x;
}
// x ** k as DaCe's dace::math::ipow: the product stored as half at each step.
SDFGC_HD dace::float16 sdfgc_ipow(dace::float16 base, int exp) {
    dace::float16 r = 1.0f;
    for (int i = 0; i < exp; ++i) r = dace::float16((float)r * (float)base);
    return r;
}
// min/max with a half as DaCe's math.h: the other argument converted to half.
SDFGC_HD dace::float16 sdfgc_min(dace::float16 a, dace::float16 b) { return a < b ? a : b; }
SDFGC_HD dace::float16 sdfgc_max(dace::float16 a, dace::float16 b) { return a > b ? a : b; }
template <typename T>
SDFGC_HD dace::float16 sdfgc_min(dace::float16 a, T b) { return sdfgc_min(a, dace::float16(b)); }
template <typename T>
SDFGC_HD dace::float16 sdfgc_min(T a, dace::float16 b) { return sdfgc_min(dace::float16(a), b); }
template <typename T>
SDFGC_HD dace::float16 sdfgc_max(dace::float16 a, T b) { return sdfgc_max(a, dace::float16(b)); }
template <typename T>
SDFGC_HD dace::float16 sdfgc_max(T a, dace::float16 b) { return sdfgc_max(dace::float16(a), b); }
// <cmath>'s functions of a half, computed in float as the CPU's float16 does
// (half converts to several types, so abs(x) or pow(x, y) is ambiguous).
#define SDFGC_HALF_F1(f, g) \
    SDFGC_HD dace::float16 f(dace::float16 x) { return dace::float16(g((float)x)); }
#define SDFGC_HALF_F2(f, g) \
    SDFGC_HD dace::float16 f(dace::float16 x, dace::float16 y) { return dace::float16(g((float)x, (float)y)); }
SDFGC_HALF_F1(abs, fabsf) SDFGC_HALF_F1(fabs, fabsf) SDFGC_HALF_F1(sqrt, sqrtf) SDFGC_HALF_F1(exp, expf)
SDFGC_HALF_F1(log, logf) SDFGC_HALF_F1(log10, log10f) SDFGC_HALF_F1(log2, log2f) SDFGC_HALF_F1(sin, sinf)
SDFGC_HALF_F1(cos, cosf) SDFGC_HALF_F1(tan, tanf) SDFGC_HALF_F1(asin, asinf) SDFGC_HALF_F1(acos, acosf)
SDFGC_HALF_F1(atan, atanf) SDFGC_HALF_F1(sinh, sinhf) SDFGC_HALF_F1(cosh, coshf) SDFGC_HALF_F1(tanh, tanhf)
SDFGC_HALF_F1(floor, floorf) SDFGC_HALF_F1(ceil, ceilf) SDFGC_HALF_F1(trunc, truncf) SDFGC_HALF_F1(round, roundf)
SDFGC_HALF_F1(cbrt, cbrtf) SDFGC_HALF_F1(exp2, exp2f) SDFGC_HALF_F1(expm1, expm1f) SDFGC_HALF_F1(log1p, log1pf)
SDFGC_HALF_F1(asinh, asinhf) SDFGC_HALF_F1(acosh, acoshf) SDFGC_HALF_F1(atanh, atanhf)
SDFGC_HALF_F1(erf, erff) SDFGC_HALF_F1(erfc, erfcf) SDFGC_HALF_F1(lgamma, lgammaf) SDFGC_HALF_F1(tgamma, tgammaf)
SDFGC_HALF_F2(atan2, atan2f) SDFGC_HALF_F2(fmod, fmodf) SDFGC_HALF_F2(hypot, hypotf)
SDFGC_HALF_F2(fmin, fminf) SDFGC_HALF_F2(fmax, fmaxf) SDFGC_HALF_F2(copysign, copysignf)
#undef SDFGC_HALF_F1
#undef SDFGC_HALF_F2
// pow of halves in float, not rounded to half, as the CPU's std::pow.
SDFGC_HD float pow(dace::float16 x, dace::float16 y) { return powf((float)x, (float)y); }
// nextafter of a half in double, as on the CPU.
SDFGC_HD double nextafter(dace::float16 x, double y) { return nextafter((double)(float)x, y); }
SDFGC_HD double nextafter(dace::float16 x, dace::float16 y) { return nextafter((double)(float)x, (double)(float)y); }
// A half and a double compute in double, as on the CPU (where a half only
// converts to float); the API's half operators would make them ambiguous.
#define SDFGC_HALF_MIXED(op) \
    SDFGC_HD double operator op(double a, dace::float16 b) { return a op (double)(float)b; } \
    SDFGC_HD double operator op(dace::float16 a, double b) { return (double)(float)a op b; }
SDFGC_HALF_MIXED(+) SDFGC_HALF_MIXED(-) SDFGC_HALF_MIXED(*) SDFGC_HALF_MIXED(/)
#undef SDFGC_HALF_MIXED"#;

/// The float16 prelude for GPU code of `api` (`cuda` or `hip`): the API's
/// `half` header, then [`GPU_PRELUDE_BODY`].
pub fn gpu_prelude(api: &str) -> String {
    let (name, header) = if api == "hip" {
        ("HIP", "hip/hip_fp16.h")
    } else {
        ("CUDA", "cuda_fp16.h")
    };
    // clang's HIP `<cmath>` templates promote their arguments through
    // `__hip::__numeric_type`, whose test is ambiguous for `__half` (a hard
    // error, not a substitution failure): declared no numeric type there,
    // `__half` takes the overloads below.
    let hip_numeric = if api == "hip" {
        "#if defined(__clang__) && defined(__HIP__)\nnamespace __hip { template <> struct __numeric_type<__half> { static const bool value = false; }; }\n#endif\n"
    } else {
        ""
    };
    format!(
        "// ---- float16: {name}'s half (IEEE binary16), as DaCe's dace::float16 ----\n#include <{header}>\n{hip_numeric}{GPU_PRELUDE_BODY}"
    )
}

/// Whether generated code names the float16 type.
pub fn used_in(code: &str) -> bool {
    code.contains("dace::float16") || code.contains("dace::half")
}
