//! The file-scope helpers of a translation unit's runtime section: what
//! the generated code calls (allocation, atomics, copies, reductions,
//! threads, workspace checks, GPU error checks), each only in files that
//! name it.

use super::FileText;
use crate::back::gpu::libs::GpuLib;
use crate::back::gpu::{Dialect, cublas};
use crate::ir::cexpr;
use crate::passes::Program;

/// Runtime helpers (allocation, alignment, atomics), each with the names
/// that bring it into a file.
const RUNTIME: &cexpr::HelperTable = &[
    (
        &["sdfgc_alloc<", "sdfgc_free("],
        r#"// `new T[n]` like DaCe: an over-aligned operator new goes through
// memalign, which is measurably slower for the per-call allocations of scoped mode.
template <typename T>
static inline T *sdfgc_alloc(size_t n) {
    return new T[n];
}
template <typename T>
static inline void sdfgc_free(T *p) {
    delete[] p;
}"#,
    ),
    (
        &["sdfgc_align_up("],
        "static inline size_t sdfgc_align_up(size_t n, size_t a) { return (n + a - 1) / a * a; }",
    ),
    (
        &[
            "sdfgc_atomic_update(",
            "sdfgc_atomic_min(",
            "sdfgc_atomic_max(",
        ],
        r#"template <typename T, typename F>
static inline void sdfgc_atomic_update(T *p, T v, F f) {
    T old;
    __atomic_load(p, &old, __ATOMIC_RELAXED);
    T upd = f(old, v);
    while (!__atomic_compare_exchange(p, &old, &upd, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
        upd = f(old, v);
    }
}
template <typename T>
static inline void sdfgc_atomic_min(T *p, T v) {
    sdfgc_atomic_update(p, v, [](T a, T b) { return b < a ? b : a; });
}
template <typename T>
static inline void sdfgc_atomic_max(T *p, T v) {
    sdfgc_atomic_update(p, v, [](T a, T b) { return a < b ? b : a; });
}"#,
    ),
];

/// Where a file's [`cexpr::HELPERS`] and [`RUNTIME`] helpers go, until the
/// rendered file tells which it names.
pub(super) const HELPERS_MARK: &str = "@@sdfgc-helpers@@";
pub(super) const RUNTIME_MARK: &str = "@@sdfgc-runtime@@";

/// The [`RUNTIME`] helpers that a file's text (`named`) calls, ending in a
/// newline; empty when it calls none.
fn runtime_helpers(named: &dyn Fn(&str) -> bool) -> String {
    cexpr::pick_helpers(RUNTIME, named, "// ---- sdfgc runtime helpers ----\n", "\n")
}

/// Contiguous host copies, only in files that make them.
const RUNTIME_COPY: &str = r#"// ---- contiguous copies: memcpy like DaCe's (its large-copy path beats a
// vectorised loop); sdfgc_move where both sides are parts of one container ----
template <typename T>
static inline void sdfgc_copy(T *dst, const T *src, int64_t n) {
    if (n > 0) std::memcpy(dst, src, sizeof(T) * static_cast<size_t>(n));
}
template <typename T>
static inline void sdfgc_move(T *dst, const T *src, int64_t n) {
    if (n > 0) std::memmove(dst, src, sizeof(T) * static_cast<size_t>(n));
}"#;

/// The floating-point min and max reductions of parallel maps (see
/// `back::body::reduction`), only in files that use them.
const RUNTIME_MINMAX: &str = r#"// ---- min and max reductions: compare-and-select, identity infinity ----
#ifdef _OPENMP
#pragma omp declare reduction(sdfgc_min : float : omp_out = omp_in < omp_out ? omp_in : omp_out) initializer(omp_priv = std::numeric_limits<float>::infinity())
#pragma omp declare reduction(sdfgc_min : double : omp_out = omp_in < omp_out ? omp_in : omp_out) initializer(omp_priv = std::numeric_limits<double>::infinity())
#pragma omp declare reduction(sdfgc_max : float : omp_out = omp_out < omp_in ? omp_in : omp_out) initializer(omp_priv = -std::numeric_limits<float>::infinity())
#pragma omp declare reduction(sdfgc_max : double : omp_out = omp_out < omp_in ? omp_in : omp_out) initializer(omp_priv = -std::numeric_limits<double>::infinity())
#endif"#;

/// Thread helpers for per-thread slots (serial fallbacks without OpenMP).
const RUNTIME_THREADS: &str = r#"// ---- threads (per-thread workspace and persistent slots) ----
#ifdef _OPENMP
#include <omp.h>
static inline int sdfgc_max_threads() { return omp_get_max_threads(); }
static inline int sdfgc_thread_num() { return omp_get_thread_num(); }
#else
static inline int sdfgc_max_threads() { return 1; }
static inline int sdfgc_thread_num() { return 0; }
#endif"#;

/// Error codes and messages of the checked workspace setter (only in files with a workspace).
const RUNTIME_WORKSPACE: &str = r#"// ---- workspace checks ----
#include <cstdio>
enum {
    SDFGC_OK = 0,
    SDFGC_ERR_NULL_STATE = 1,
    SDFGC_ERR_NULL_POINTER = 2,
    SDFGC_ERR_TOO_SMALL = 3,
    SDFGC_ERR_MISALIGNED = 4,
    SDFGC_ERR_NOT_DEVICE_MEMORY = 5,
};
static thread_local size_t sdfgc_detail[2];
static thread_local char sdfgc_message[256];
__attribute__((unused)) static inline void sdfgc_last_error_detail(size_t a, size_t b) {
    sdfgc_detail[0] = a;
    sdfgc_detail[1] = b;
}
__attribute__((unused)) static inline const char *sdfgc_error_message(int code) {
    switch (code) {
    case SDFGC_OK: return "success";
    case SDFGC_ERR_NULL_STATE: return "the state pointer is null: call __dace_init_* first";
    case SDFGC_ERR_NULL_POINTER: return "the workspace pointer is null";
    case SDFGC_ERR_TOO_SMALL:
        std::snprintf(sdfgc_message, sizeof sdfgc_message,
                      "the workspace is too small: %zu bytes given, %zu bytes required", sdfgc_detail[0], sdfgc_detail[1]);
        return sdfgc_message;
    case SDFGC_ERR_MISALIGNED:
        std::snprintf(sdfgc_message, sizeof sdfgc_message,
                      "the workspace pointer is misaligned: it is %zu bytes past a multiple of the required %zu-byte alignment",
                      sdfgc_detail[0], sdfgc_detail[1]);
        return sdfgc_message;
    case SDFGC_ERR_NOT_DEVICE_MEMORY:
        return "the workspace is not device memory: copy it to the GPU first (allocate it with the GPU allocator)";
    default: return "unknown error code";
    }
}"#;

/// Device-side helpers of GPU translation units: error checks and atomics.
fn gpu_runtime(g: &Dialect) -> String {
    let api = g.prefix;
    let device_test = device_test(g);
    format!(
        r#"// ---- GPU runtime helpers ----
__attribute__((unused)) static inline void sdfgc_gpu_check({api}Error_t e, const char *what) {{
    if (e != {api}Success) {{
        std::fprintf(stderr, "sdfgc: %s failed: %s\n", what, {api}GetErrorString(e));
    }}
}}
// True if `p` points to device (or managed) memory.
__attribute__((unused)) static inline bool sdfgc_on_device(const void *ptr) {{
{device_test}
}}
// Atomic read-modify-write of any 1-, 2-, 4- or 8-byte value with a compare-and-swap loop
// on the aligned word that holds it.
template <typename T, typename F>
__device__ inline void sdfgc_gpu_atomic_update(T *p, T v, F f) {{
    static_assert(sizeof(T) == 1 || sizeof(T) == 2 || sizeof(T) == 4 || sizeof(T) == 8, "atomic size");
    if constexpr (sizeof(T) == 8) {{
        unsigned long long *a = reinterpret_cast<unsigned long long *>(p);
        unsigned long long old = *a, assumed;
        do {{
            assumed = old;
            T cur;
            memcpy(&cur, &assumed, 8);
            T upd = f(cur, v);
            unsigned long long u;
            memcpy(&u, &upd, 8);
            old = atomicCAS(a, assumed, u);
        }} while (assumed != old);
    }} else {{
        const uintptr_t addr = reinterpret_cast<uintptr_t>(p);
        unsigned int *a = reinterpret_cast<unsigned int *>(addr & ~uintptr_t(3));
        const unsigned int shift = static_cast<unsigned int>(addr & 3) * 8;
        unsigned int old = *a, assumed;
        do {{
            assumed = old;
            T cur;
            unsigned int word = assumed >> shift;
            memcpy(&cur, &word, sizeof(T));
            T upd = f(cur, v);
            unsigned int bits = 0;
            memcpy(&bits, &upd, sizeof(T));
            const unsigned int mask = sizeof(T) == 4 ? 0xffffffffu : ((1u << (8 * (sizeof(T) & 3))) - 1u) << shift;
            const unsigned int next = sizeof(T) == 4 ? bits : ((assumed & ~mask) | ((bits << shift) & mask));
            old = atomicCAS(a, assumed, next);
        }} while (assumed != old);
    }}
}}"#
    )
}

/// Statements that return whether `ptr` is device memory.
fn device_test(g: &Dialect) -> String {
    let api = g.prefix;
    let attrs = g.pointer_attributes;
    let field = if api == "hip" {
        "#if HIP_VERSION_MAJOR >= 6\n    return __attrs.type == hipMemoryTypeDevice;\n#else\n    return __attrs.memoryType == hipMemoryTypeDevice;\n#endif".to_string()
    } else {
        "    return __attrs.type == cudaMemoryTypeDevice || __attrs.type == cudaMemoryTypeManaged;"
            .to_string()
    };
    format!(
        "    {attrs} __attrs;\n    if ({api}PointerGetAttributes(&__attrs, ptr) != {api}Success) {{\n        (void){api}GetLastError();\n        return false;\n    }}\n{field}"
    )
}

/// The runtime section of the translation unit: [`RUNTIME_MARK`] (where
/// the [`RUNTIME`] helpers go), then the GPU, workspace, thread, library,
/// copy, warp-reduction and min/max helpers the file needs. `threads`: the
/// program has per-thread slots.
pub(super) fn section(p: &Program, text: &FileText, threads: bool, gpu_libs: &[&GpuLib]) -> String {
    let uses = |s: &str| text.uses(s);
    let mut r = String::new();
    if let Some(g) = p.gpu {
        r = format!("{r}\n{}", gpu_runtime(g));
    }
    if !p.layouts.is_empty() {
        r = format!("{r}\n{RUNTIME_WORKSPACE}");
    }
    if threads || uses("sdfgc_thread_num(") || uses("sdfgc_max_threads(") {
        r = format!("{r}\n{RUNTIME_THREADS}");
    }
    if p.cublas_calls {
        r = format!("{r}\n{}", cublas::RUNTIME);
    }
    for l in gpu_libs {
        r = format!("{r}\n{}", l.runtime);
    }
    if uses("sdfgc_copy(") || uses("sdfgc_move(") {
        r = format!("{r}\n{RUNTIME_COPY}");
    }
    if let Some(g) = p.gpu.filter(|_| uses("dace::warpReduce<")) {
        r = format!("{r}\n{}", crate::back::gpu::warp::runtime(g));
    }
    if p.gpu.is_some() && uses("sdfgc_block_reduce(") {
        r = format!("{r}\n{}", crate::back::gpu::warp::BLOCK_REDUCE);
    }
    if uses("reduction(sdfgc_m") {
        r = format!("{r}\n{RUNTIME_MINMAX}");
    }
    format!("{RUNTIME_MARK}{r}")
}

/// The rendered file `cpp` with the [`cexpr::HELPERS`] and [`RUNTIME`]
/// helpers it names in place of their marks.
pub(super) fn insert_helpers(cpp: &str) -> String {
    let named = |n: &str| cpp.contains(n);
    let (helpers, runtime) = (cexpr::helpers(&named), runtime_helpers(&named));
    cpp.replacen(&format!("{HELPERS_MARK}\n"), &helpers, 1)
        .replacen(&format!("{RUNTIME_MARK}\n"), &runtime, 1)
}
