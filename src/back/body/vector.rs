//! DaCe's vector types (`dace::vec<T, N>`, `dace.vector`).
//!
//! On the CPU, `sdfgc_vec<T, N>` is GCC's vector extension, as DaCe's
//! `vector.h` defines `dace::vec` for g++: elementwise arithmetic and
//! comparisons, scalars broadcast, `sdfgc_min`/`sdfgc_max` elementwise.
//! Values are loaded from and stored to N consecutive elements with `memcpy`
//! (no alignment assumed).
//!
//! On GPU targets (CUDA, HIP), `sdfgc_gvec<T, N>` is a struct of N lanes
//! with the same elementwise operations, valid in host and device code
//! (nvcc and hipcc have no GCC vectors in device code; DaCe's are CUDA's
//! `float4` and friends). A vector of `half` (DaCe's `half4`/`half8` of
//! `cuda/halfvec.cuh`) adds, subtracts and multiplies its lanes in pairs
//! with CUDA's `half2` arithmetic (`__hadd2`, `__hsub2`, `__hmul2`), as
//! DaCe's runtime does; each lane rounds as the scalar `half` operation.

use crate::ir::DType;

/// The prelude of files that use a vector type. The pragma silences g++'s
/// note that passing such vectors by value depends on `-mavx`: they never
/// cross the file's exported functions, which take pointers only.
pub const PRELUDE: &str = r#"// DaCe's dace::vec<T, N> (GCC vector extension).
#pragma GCC diagnostic ignored "-Wpsabi"
template <typename T, int N>
struct sdfgc_vec_of { typedef T type __attribute__((vector_size(N * sizeof(T)))); };
template <typename T, int N>
using sdfgc_vec = typename sdfgc_vec_of<T, N>::type;
template <typename T, int N>
inline sdfgc_vec<T, N> sdfgc_vload(const T *p) {
  sdfgc_vec<T, N> v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
template <typename T, int N>
inline void sdfgc_vstore(T *p, const sdfgc_vec<T, N> &v) {
  std::memcpy(p, &v, sizeof v);
}
"#;

/// The prelude of GPU files that use a vector type (after the float16
/// prelude, whose scalar functions of a `half` the lanes call).
pub const GPU_PRELUDE: &str = r#"// DaCe's dace::vec<T, N> on GPU targets: N lanes, elementwise operations.
// Aligned to its size up to 16 bytes, as CUDA's float4 or DaCe's half8: an
// aligned address loads and stores in wide accesses (DaCe's code
// dereferences the cast pointer), any other lane by lane.
template <typename T, int N>
struct alignas(sizeof(T) * N < 16 ? sizeof(T) * N : 16) sdfgc_gvec {
  T v[N];
  SDFGC_HD T &operator[](int i) { return v[i]; }
  SDFGC_HD const T &operator[](int i) const { return v[i]; }
};
template <typename T, int N>
SDFGC_HD sdfgc_gvec<T, N> sdfgc_gvload(const T *p) {
  if (reinterpret_cast<uintptr_t>(p) % alignof(sdfgc_gvec<T, N>) == 0)
    return *reinterpret_cast<const sdfgc_gvec<T, N> *>(p);
  sdfgc_gvec<T, N> r;
  for (int i = 0; i < N; ++i) r.v[i] = p[i];
  return r;
}
template <typename T, int N>
SDFGC_HD void sdfgc_gvstore(T *p, const sdfgc_gvec<T, N> &a) {
  if (reinterpret_cast<uintptr_t>(p) % alignof(sdfgc_gvec<T, N>) == 0) {
    *reinterpret_cast<sdfgc_gvec<T, N> *>(p) = a;
    return;
  }
  for (int i = 0; i < N; ++i) p[i] = a.v[i];
}
template <typename T> struct sdfgc_is_gvec { static const bool value = false; };
template <typename T, int N> struct sdfgc_is_gvec<sdfgc_gvec<T, N>> { static const bool value = true; };
// Lane by lane; a scalar operand is converted to the lanes' type first, as
// GCC's vectors broadcast it.
#define SDFGC_GVEC_OP(op) \
  template <typename T, int N> \
  SDFGC_HD sdfgc_gvec<T, N> operator op(const sdfgc_gvec<T, N> &a, const sdfgc_gvec<T, N> &b) { \
    sdfgc_gvec<T, N> r; \
    for (int i = 0; i < N; ++i) r.v[i] = a.v[i] op b.v[i]; \
    return r; \
  } \
  template <typename T, int N, typename U, typename = typename std::enable_if<!sdfgc_is_gvec<U>::value>::type> \
  SDFGC_HD sdfgc_gvec<T, N> operator op(const sdfgc_gvec<T, N> &a, const U &b) { \
    sdfgc_gvec<T, N> r; \
    const T s = static_cast<T>(b); \
    for (int i = 0; i < N; ++i) r.v[i] = a.v[i] op s; \
    return r; \
  } \
  template <typename T, int N, typename U, typename = typename std::enable_if<!sdfgc_is_gvec<U>::value>::type> \
  SDFGC_HD sdfgc_gvec<T, N> operator op(const U &a, const sdfgc_gvec<T, N> &b) { \
    sdfgc_gvec<T, N> r; \
    const T s = static_cast<T>(a); \
    for (int i = 0; i < N; ++i) r.v[i] = s op b.v[i]; \
    return r; \
  } \
  template <typename T, int N, typename U> \
  SDFGC_HD sdfgc_gvec<T, N> &operator op##=(sdfgc_gvec<T, N> &a, const U &b) { return a = a op b; }
SDFGC_GVEC_OP(+) SDFGC_GVEC_OP(-) SDFGC_GVEC_OP(*) SDFGC_GVEC_OP(/)
#undef SDFGC_GVEC_OP
template <typename T, int N>
SDFGC_HD sdfgc_gvec<T, N> operator-(const sdfgc_gvec<T, N> &a) {
  sdfgc_gvec<T, N> r;
  for (int i = 0; i < N; ++i) r.v[i] = -a.v[i];
  return r;
}
template <typename T, int N>
SDFGC_HD sdfgc_gvec<T, N> operator+(const sdfgc_gvec<T, N> &a) { return a; }
// min, max and x ** k lane by lane, each lane as its scalar.
#define SDFGC_GVEC_F2(f) \
  template <typename T, int N> \
  SDFGC_HD sdfgc_gvec<T, N> f(const sdfgc_gvec<T, N> &a, const sdfgc_gvec<T, N> &b) { \
    sdfgc_gvec<T, N> r; \
    for (int i = 0; i < N; ++i) r.v[i] = f(a.v[i], b.v[i]); \
    return r; \
  } \
  template <typename T, int N, typename U, typename = typename std::enable_if<!sdfgc_is_gvec<U>::value>::type> \
  SDFGC_HD sdfgc_gvec<T, N> f(const sdfgc_gvec<T, N> &a, const U &b) { \
    sdfgc_gvec<T, N> r; \
    for (int i = 0; i < N; ++i) r.v[i] = f(a.v[i], static_cast<T>(b)); \
    return r; \
  } \
  template <typename T, int N, typename U, typename = typename std::enable_if<!sdfgc_is_gvec<U>::value>::type> \
  SDFGC_HD sdfgc_gvec<T, N> f(const U &a, const sdfgc_gvec<T, N> &b) { \
    sdfgc_gvec<T, N> r; \
    for (int i = 0; i < N; ++i) r.v[i] = f(static_cast<T>(a), b.v[i]); \
    return r; \
  }
SDFGC_GVEC_F2(sdfgc_min) SDFGC_GVEC_F2(sdfgc_max)
#undef SDFGC_GVEC_F2
template <typename T, int N>
SDFGC_HD sdfgc_gvec<T, N> sdfgc_ipow(const sdfgc_gvec<T, N> &a, int exp) {
  sdfgc_gvec<T, N> r;
  for (int i = 0; i < N; ++i) r.v[i] = static_cast<T>(sdfgc_ipow(a.v[i], exp));
  return r;
}
// <cmath>'s functions of one argument lane by lane.
#define SDFGC_GVEC_F1(f) \
  template <typename T, int N> \
  SDFGC_HD sdfgc_gvec<T, N> f(const sdfgc_gvec<T, N> &a) { \
    sdfgc_gvec<T, N> r; \
    for (int i = 0; i < N; ++i) r.v[i] = static_cast<T>(f(a.v[i])); \
    return r; \
  }
SDFGC_GVEC_F1(abs) SDFGC_GVEC_F1(fabs) SDFGC_GVEC_F1(sqrt) SDFGC_GVEC_F1(exp) SDFGC_GVEC_F1(log)
SDFGC_GVEC_F1(log10) SDFGC_GVEC_F1(log2) SDFGC_GVEC_F1(sin) SDFGC_GVEC_F1(cos) SDFGC_GVEC_F1(tan)
SDFGC_GVEC_F1(asin) SDFGC_GVEC_F1(acos) SDFGC_GVEC_F1(atan) SDFGC_GVEC_F1(sinh) SDFGC_GVEC_F1(cosh)
SDFGC_GVEC_F1(tanh) SDFGC_GVEC_F1(floor) SDFGC_GVEC_F1(ceil) SDFGC_GVEC_F1(trunc) SDFGC_GVEC_F1(round)
SDFGC_GVEC_F1(cbrt) SDFGC_GVEC_F1(exp2) SDFGC_GVEC_F1(expm1) SDFGC_GVEC_F1(log1p)
#undef SDFGC_GVEC_F1"#;

/// The half2 arithmetic of a vector of `half` (DaCe's `half4`/`half8`):
/// after [`GPU_PRELUDE`] and the float16 prelude, in files that use both.
pub const GPU_HALF_PRELUDE: &str = r#"// A vector of half adds, subtracts and multiplies pairs of lanes with half2
// arithmetic, as DaCe's half4/half8 (cuda/halfvec.cuh); a scalar operand is
// broadcast to both halves (__half2half2).
#define SDFGC_HVEC_OP(op, f) \
  template <int N> \
  SDFGC_HD sdfgc_gvec<half, N> operator op(const sdfgc_gvec<half, N> &a, const sdfgc_gvec<half, N> &b) { \
    sdfgc_gvec<half, N> r; \
    for (int i = 0; i + 1 < N; i += 2) { \
      const half2 p = f(__halves2half2(a.v[i], a.v[i + 1]), __halves2half2(b.v[i], b.v[i + 1])); \
      r.v[i] = __low2half(p); \
      r.v[i + 1] = __high2half(p); \
    } \
    return r; \
  } \
  template <int N> \
  SDFGC_HD sdfgc_gvec<half, N> operator op(const sdfgc_gvec<half, N> &a, const half &b) { \
    sdfgc_gvec<half, N> r; \
    const half2 s = __half2half2(b); \
    for (int i = 0; i + 1 < N; i += 2) { \
      const half2 p = f(__halves2half2(a.v[i], a.v[i + 1]), s); \
      r.v[i] = __low2half(p); \
      r.v[i + 1] = __high2half(p); \
    } \
    return r; \
  } \
  template <int N> \
  SDFGC_HD sdfgc_gvec<half, N> operator op(const half &a, const sdfgc_gvec<half, N> &b) { \
    sdfgc_gvec<half, N> r; \
    const half2 s = __half2half2(a); \
    for (int i = 0; i + 1 < N; i += 2) { \
      const half2 p = f(s, __halves2half2(b.v[i], b.v[i + 1])); \
      r.v[i] = __low2half(p); \
      r.v[i + 1] = __high2half(p); \
    } \
    return r; \
  }
SDFGC_HVEC_OP(+, __hadd2) SDFGC_HVEC_OP(-, __hsub2) SDFGC_HVEC_OP(*, __hmul2)
#undef SDFGC_HVEC_OP
// min/max of a vector of half and a half, lane by lane as the scalar's
// (DaCe's max of half2: each lane's __hgt select), more specialised than
// the float16 prelude's min/max of a half and any type.
#define SDFGC_HVEC_F2(f) \
  template <int N> \
  SDFGC_HD sdfgc_gvec<half, N> f(const sdfgc_gvec<half, N> &a, const half &b) { \
    sdfgc_gvec<half, N> r; \
    for (int i = 0; i < N; ++i) r.v[i] = f(a.v[i], b); \
    return r; \
  } \
  template <int N> \
  SDFGC_HD sdfgc_gvec<half, N> f(const half &a, const sdfgc_gvec<half, N> &b) { \
    sdfgc_gvec<half, N> r; \
    for (int i = 0; i < N; ++i) r.v[i] = f(a, b.v[i]); \
    return r; \
  }
SDFGC_HVEC_F2(sdfgc_min) SDFGC_HVEC_F2(sdfgc_max)
#undef SDFGC_HVEC_F2"#;

/// The C++ type of a vector of `n` elements of `t` (`gpu`: in a file of a
/// GPU target).
pub fn ctype(t: DType, n: u32, gpu: bool) -> String {
    if gpu {
        format!("sdfgc_gvec<{}, {n}>", t.ctype())
    } else {
        format!("sdfgc_vec<{}, {n}>", t.ctype())
    }
}

/// The call that loads a vector of `n` elements of `t` from `at`.
pub fn load(t: DType, n: u32, at: &str, gpu: bool) -> String {
    let f = if gpu { "sdfgc_gvload" } else { "sdfgc_vload" };
    format!("{f}<{}, {n}>({at})", t.ctype())
}

/// The statement that stores the vector `var` of `n` elements of `t` to `at`.
pub fn store(t: DType, n: u32, at: &str, var: &str, gpu: bool) -> String {
    let f = if gpu { "sdfgc_gvstore" } else { "sdfgc_vstore" };
    format!("{f}<{}, {n}>({at}, {var});", t.ctype())
}
