//! DaCe's vector types (`dace::vec<T, N>`, `dace.vector`) on the CPU.
//!
//! `sdfgc_vec<T, N>` is GCC's vector extension, as DaCe's `vector.h`
//! defines `dace::vec` for g++: elementwise arithmetic and comparisons,
//! scalars broadcast, `sdfgc_min`/`sdfgc_max` elementwise. Values are
//! loaded from and stored to N consecutive elements with `memcpy` (no
//! alignment assumed).

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

/// The C++ type of a vector of `n` elements of `t`.
pub fn ctype(t: DType, n: u32) -> String {
    format!("sdfgc_vec<{}, {n}>", t.ctype())
}
