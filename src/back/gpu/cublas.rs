//! cuBLAS calls in CUDA files: tasklets of DaCe's cuBLAS environment (left
//! by DaCe's cuBLAS expansions, or written by `--blas cublas`) run on the
//! host, on the stream the writer gives them (`__dace_current_stream`), with
//! one handle per program state (`__state->cublas_handle`).
//!
//! The state member is a small stand-in for DaCe's `dace::blas::CublasHandle`
//! with only what DaCe's expansions use: `Get(device)` gives the handle
//! (created at init with `CUBLAS_POINTER_MODE_DEVICE`, as DaCe's are;
//! destroyed at exit) and `Constants(device)` the device-memory constants
//! `<Type>Pone()` and `<Type>Zero()` for Float, Double, Complex64 and
//! Complex128. Any other name of DaCe's runtime is refused by name
//! (`valid::environments`).

pub use crate::passes::expand::blascall::{CUBLAS_ENVIRONMENT, calls_cublas as uses};

/// The state member DaCe's tasklets name.
pub const MEMBER: &str = "sdfgc_cublas cublas_handle;  // cuBLAS handle and constants: created in init, destroyed in exit";

/// The link flag of cuBLAS.
pub const LINK: &str = "-lcublas";

/// File-scope C++ of files that call cuBLAS (after the GPU runtime helpers).
pub const RUNTIME: &str = r#"// ---- cuBLAS ----
#include <cublas_v2.h>
__attribute__((unused)) static inline void sdfgc_cublas_check(cublasStatus_t s, const char *what) {
    if (s != CUBLAS_STATUS_SUCCESS) {
        std::fprintf(stderr, "sdfgc: %s failed: cuBLAS status %d\n", what, static_cast<int>(s));
    }
}
// Device-memory constants 0 and 1 (DaCe's `_CublasConstants`): 64 bytes,
// zero at 0 (16 bytes), complex128 one at 16, double one at 32, complex64
// one at 40, float one at 48.
struct sdfgc_cublas_constants {
    unsigned char *mem = nullptr;
    const float *FloatZero() const { return reinterpret_cast<const float *>(mem); }
    const double *DoubleZero() const { return reinterpret_cast<const double *>(mem); }
    const cuComplex *Complex64Zero() const { return reinterpret_cast<const cuComplex *>(mem); }
    const cuDoubleComplex *Complex128Zero() const { return reinterpret_cast<const cuDoubleComplex *>(mem); }
    const cuDoubleComplex *Complex128Pone() const { return reinterpret_cast<const cuDoubleComplex *>(mem + 16); }
    const double *DoublePone() const { return reinterpret_cast<const double *>(mem + 32); }
    const cuComplex *Complex64Pone() const { return reinterpret_cast<const cuComplex *>(mem + 40); }
    const float *FloatPone() const { return reinterpret_cast<const float *>(mem + 48); }
};
// The program's cuBLAS handle and constants (DaCe's `CublasHandle`, one device).
struct sdfgc_cublas {
    cublasHandle_t handle = nullptr;
    sdfgc_cublas_constants constants;
    cublasHandle_t &Get(int) { return handle; }
    sdfgc_cublas_constants &Constants(int) { return constants; }
};
// Frees the handle and the constants (created in __dace_init_*).
static inline void sdfgc_cublas_exit(sdfgc_cublas &c) {
    if (c.constants.mem) sdfgc_gpu_check(cudaFree(c.constants.mem), "cudaFree (cuBLAS constants)");
    if (c.handle) sdfgc_cublas_check(cublasDestroy(c.handle), "cublasDestroy");
    c.constants.mem = nullptr;
    c.handle = nullptr;
}"#;

/// Init statements (in `__dace_init_*`, `__state` allocated): the handle
/// (device pointer mode, as DaCe's) and the constants.
pub const INIT: &str = r#"    {
        sdfgc_cublas &c = __state->cublas_handle;
        unsigned char host[64] = {};
        const double d1 = 1.0;
        const float f1 = 1.0f;
        std::memcpy(host + 16, &d1, sizeof d1);
        std::memcpy(host + 32, &d1, sizeof d1);
        std::memcpy(host + 40, &f1, sizeof f1);
        std::memcpy(host + 48, &f1, sizeof f1);
        if (cublasCreate(&c.handle) != CUBLAS_STATUS_SUCCESS) c.handle = nullptr;
        if (cudaMalloc(reinterpret_cast<void **>(&c.constants.mem), sizeof host) != cudaSuccess) c.constants.mem = nullptr;
        if (!c.handle || !c.constants.mem || cublasSetPointerMode(c.handle, CUBLAS_POINTER_MODE_DEVICE) != CUBLAS_STATUS_SUCCESS ||
            cudaMemcpy(c.constants.mem, host, sizeof host, cudaMemcpyHostToDevice) != cudaSuccess) {
            std::fprintf(stderr, "sdfgc: cuBLAS initialization failed\n");
            sdfgc_cublas_exit(c);
            delete __state;
            return nullptr;
        }
    }
"#;

/// Exit statements (in `__dace_exit_*`).
pub const EXIT: &str = "    sdfgc_cublas_exit(__state->cublas_handle);\n";
