//! Complex numbers in generated code: DaCe's `dace::complex64` /
//! `dace::complex128` (`std::complex` on CPUs, `thrust::complex` in CUDA files
//! as DaCe's `types.h`, and in HIP files where rocThrust is installed, else
//! `std::complex`, which clang compiles for the device), the helpers that tasklet code and
//! write-conflict resolution call on them, and the header's C types.

/// Definitions a translation unit carries when it uses complex numbers.
/// Needs [`crate::ir::cexpr::PRELUDE_BASE`] (for `SDFGC_HD`) and the helpers
/// it names (`sdfgc_sign`) first.
pub const PRELUDE: &str = r#"// ---- complex numbers: DaCe's dace::complex64 / dace::complex128 ----
#if defined(__CUDACC__) || (defined(__HIPCC__) && __has_include(<thrust/complex.h>))
#include <thrust/complex.h>
template <typename T>
using sdfgc_cplx = thrust::complex<T>;
#else
// Host code, and HIP without rocThrust: clang's CUDA/HIP wrapper of <complex>
// makes std::complex usable in device code. Same layout either way.
#include <complex>
template <typename T>
using sdfgc_cplx = std::complex<T>;
#endif
namespace dace {
typedef sdfgc_cplx<float> complex64;
typedef sdfgc_cplx<double> complex128;
}  // namespace dace
// real(x), imag(x), conj(x) for complex and real values (DaCe's dace::math::conj).
template <typename T>
SDFGC_HD T sdfgc_real(const T &a) { return a; }
template <typename T>
SDFGC_HD T sdfgc_real(const sdfgc_cplx<T> &a) { return a.real(); }
template <typename T>
SDFGC_HD T sdfgc_imag(const T &) { return T(0); }
template <typename T>
SDFGC_HD T sdfgc_imag(const sdfgc_cplx<T> &a) { return a.imag(); }
template <typename T>
SDFGC_HD T sdfgc_conj(const T &a) { return a; }
template <typename T>
SDFGC_HD sdfgc_cplx<T> sdfgc_conj(const sdfgc_cplx<T> &a) { return conj(a); }
// DaCe's complex overloads of dace/math.h, same formulas (ADL finds exp,
// log, abs and arg of std:: and thrust:: complex numbers alike). ln 2 is a
// literal of type T: HIP's host `log(float)` is the double one.
template <typename T>
SDFGC_HD sdfgc_cplx<T> exp2(const sdfgc_cplx<T> &n) {
  return exp(n * T(0.693147180559945309417));
}
template <typename T>
SDFGC_HD sdfgc_cplx<T> log2(const sdfgc_cplx<T> &n) {
  return sdfgc_cplx<T>(log2(abs(n)), arg(n) / T(0.693147180559945309417));
}
template <typename T>
SDFGC_HD sdfgc_cplx<T> expm1(const sdfgc_cplx<T> &n) { return exp(n) - T(1); }
// np.rint of a complex number: each part rounded (DaCe's `round` overload).
template <typename T>
SDFGC_HD sdfgc_cplx<T> round(const sdfgc_cplx<T> &a) {
  return sdfgc_cplx<T>(round(a.real()), round(a.imag()));
}
template <typename T>
SDFGC_HD sdfgc_cplx<T> log1p(const sdfgc_cplx<T> &n) { return log(n + T(1)); }
template <typename T>
SDFGC_HD bool isfinite(const sdfgc_cplx<T> &a) { return isfinite(a.real()) && isfinite(a.imag()); }
template <typename T>
SDFGC_HD bool isinf(const sdfgc_cplx<T> &a) { return isinf(a.real()) || isinf(a.imag()); }
template <typename T>
SDFGC_HD bool isnan(const sdfgc_cplx<T> &a) { return isnan(a.real()) || isnan(a.imag()); }
// DaCe's sign of a complex number: sign(x.real) + 0j, or sign(x.imag) + 0j
// when the real part is 0 (numpy 1's rule).
template <typename T>
SDFGC_HD sdfgc_cplx<T> sdfgc_sign(const sdfgc_cplx<T> &x) {
  return sdfgc_cplx<T>(x.real() != T(0) ? sdfgc_sign(x.real()) : sdfgc_sign(x.imag()), T(0));
}
// DaCe 2's sign_numpy_2 of a complex number: x / |x| where both parts are
// nonzero, else 0.
template <typename T>
SDFGC_HD sdfgc_cplx<T> sdfgc_sign_numpy_2(const sdfgc_cplx<T> &x) {
  return (x.real() != T(0) && x.imag() != T(0)) ? x / abs(x) : sdfgc_cplx<T>(T(0), T(0));
}
// DaCe's py_floor of complex numbers: the real part of the quotient, floored.
template <typename T>
SDFGC_HD sdfgc_cplx<T> sdfgc_floordiv(const sdfgc_cplx<T> &a, const sdfgc_cplx<T> &b) {
  return sdfgc_cplx<T>(floor((a / b).real()), T(0));
}
// DaCe's py_mod of complex numbers: a - py_floor(a, b) * b.
template <typename T>
SDFGC_HD sdfgc_cplx<T> sdfgc_pymod(const sdfgc_cplx<T> &a, const sdfgc_cplx<T> &b) {
  return a - sdfgc_cplx<T>(floor((a / b).real()), T(0)) * b;
}
// Atomic complex sum: the real and imaginary parts are added atomically one
// by one (a sum commutes componentwise; the layout is two T's, as C's _Complex).
template <typename T>
static inline void sdfgc_atomic_add_complex(sdfgc_cplx<T> *p, sdfgc_cplx<T> v) {
    T *parts = reinterpret_cast<T *>(p);
    const T re = v.real(), im = v.imag();
#pragma omp atomic
    parts[0] += re;
#pragma omp atomic
    parts[1] += im;
}"#;

/// The device-side complex sum of GPU files (after [`PRELUDE`]): two
/// native atomic adds (`double` atomics need sm_60 or newer).
pub const GPU_ATOMICS: &str = r#"template <typename T>
__device__ inline void sdfgc_gpu_atomic_add_complex(sdfgc_cplx<T> *p, sdfgc_cplx<T> v) {
    T *parts = reinterpret_cast<T *>(p);
    atomicAdd(&parts[0], v.real());
    atomicAdd(&parts[1], v.imag());
}"#;

/// The header's complex types (before its `extern "C"` block).
pub const HEADER_TYPES: &str = r#"#ifndef SDFGC_COMPLEX_TYPES
#define SDFGC_COMPLEX_TYPES
/* Complex numbers: two floats / doubles, real part first (DaCe's dace::complex64 / complex128). */
#ifdef __cplusplus
#include <complex>
typedef std::complex<float> sdfgc_complex64;
typedef std::complex<double> sdfgc_complex128;
#else
#include <complex.h>
typedef float _Complex sdfgc_complex64;
typedef double _Complex sdfgc_complex128;
#endif
#endif"#;

/// Whether generated code uses complex numbers or the helpers of [`PRELUDE`].
pub fn used_in(code: &str) -> bool {
    [
        "dace::complex",
        "sdfgc_real(",
        "sdfgc_imag(",
        "sdfgc_conj(",
        "atomic_add_complex(",
    ]
    .iter()
    .any(|m| code.contains(m))
}
