// Emulated cuBLAS (tests only): column-major s/d gemm, gemv and dot run on
// the CPU over the emulated device memory (see gpu_emu.h), queued on the
// handle's stream like kernels (host-mode scalars read at the call, a
// host-mode dot result waited for), with handles, pointer modes and statuses. Matrix and vector operands must be
// device memory, and alpha, beta and a dot result must be in the memory
// the handle's pointer mode names: a call that breaks this returns
// CUBLAS_STATUS_INVALID_VALUE and aborts the test with a message, so a
// wrong pointer mode or a host operand fails instead of passing.
#pragma once
#include "gpu_emu.h"

typedef enum {
    CUBLAS_STATUS_SUCCESS = 0,
    CUBLAS_STATUS_NOT_INITIALIZED = 1,
    CUBLAS_STATUS_ALLOC_FAILED = 3,
    CUBLAS_STATUS_INVALID_VALUE = 7,
} cublasStatus_t;
typedef enum { CUBLAS_OP_N = 0, CUBLAS_OP_T = 1, CUBLAS_OP_C = 2 } cublasOperation_t;
typedef enum { CUBLAS_POINTER_MODE_HOST = 0, CUBLAS_POINTER_MODE_DEVICE = 1 } cublasPointerMode_t;
struct cuComplex { float x, y; };
struct cuDoubleComplex { double x, y; };
struct SdfgcEmuCublas {
    cudaStream_t stream = nullptr;
    cublasPointerMode_t mode = CUBLAS_POINTER_MODE_HOST;
};
typedef SdfgcEmuCublas *cublasHandle_t;

inline cublasStatus_t sdfgc_emu_cublas_fail(const char *what) {
    std::fprintf(stderr, "gpu_emu: cuBLAS %s\n", what);
    std::abort();
    return CUBLAS_STATUS_INVALID_VALUE;
}

inline cublasStatus_t cublasCreate(cublasHandle_t *h) {
    *h = new SdfgcEmuCublas();
    return CUBLAS_STATUS_SUCCESS;
}
inline cublasStatus_t cublasDestroy(cublasHandle_t h) {
    if (!h) return CUBLAS_STATUS_NOT_INITIALIZED;
    delete h;
    return CUBLAS_STATUS_SUCCESS;
}
inline cublasStatus_t cublasSetStream(cublasHandle_t h, cudaStream_t s) {
    if (!h) return CUBLAS_STATUS_NOT_INITIALIZED;
    h->stream = s;
    return CUBLAS_STATUS_SUCCESS;
}
inline cublasStatus_t cublasSetPointerMode(cublasHandle_t h, cublasPointerMode_t m) {
    if (!h) return CUBLAS_STATUS_NOT_INITIALIZED;
    h->mode = m;
    return CUBLAS_STATUS_SUCCESS;
}
inline cublasStatus_t cublasGetPointerMode(cublasHandle_t h, cublasPointerMode_t *m) {
    if (!h) return CUBLAS_STATUS_NOT_INITIALIZED;
    *m = h->mode;
    return CUBLAS_STATUS_SUCCESS;
}

// A scalar argument in the memory the pointer mode names.
inline bool sdfgc_emu_cublas_scalar_ok(cublasHandle_t h, const void *p) {
    return sdfgc_emu_is_device(p) == (h->mode == CUBLAS_POINTER_MODE_DEVICE);
}

template <typename T>
inline cublasStatus_t sdfgc_emu_gemm(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
                                     const T *alpha, const T *A, int lda, const T *B, int ldb, const T *beta, T *C,
                                     int ldc) {
    if (!h) return CUBLAS_STATUS_NOT_INITIALIZED;
    if (m < 0 || n < 0 || k < 0 || ldc < (m > 1 ? m : 1) || lda < ((ta == CUBLAS_OP_N ? m : k) > 1 ? (ta == CUBLAS_OP_N ? m : k) : 1) ||
        ldb < ((tb == CUBLAS_OP_N ? k : n) > 1 ? (tb == CUBLAS_OP_N ? k : n) : 1))
        return sdfgc_emu_cublas_fail("gemm: invalid sizes or leading dimensions");
    if (!sdfgc_emu_cublas_scalar_ok(h, alpha) || !sdfgc_emu_cublas_scalar_ok(h, beta))
        return sdfgc_emu_cublas_fail("gemm: alpha/beta not in the pointer mode's memory");
    if (m && n && (!sdfgc_emu_is_device(C) || (k && (!sdfgc_emu_is_device(A) || !sdfgc_emu_is_device(B)))))
        return sdfgc_emu_cublas_fail("gemm: an operand is not device memory");
    const bool host = h->mode == CUBLAS_POINTER_MODE_HOST;
    const T ha = host ? *alpha : T(0), hb = host ? *beta : T(0);
    sdfgc_emu_enqueue(h->stream, [=] { sdfgc_emu_on_device([&] {
        const T a = host ? ha : *alpha, b = host ? hb : *beta;
        for (int j = 0; j < n; ++j)
            for (int i = 0; i < m; ++i) {
                T s = T(0);
                for (int l = 0; l < k; ++l) {
                    const T x = ta == CUBLAS_OP_N ? A[i + (size_t)l * lda] : A[l + (size_t)i * lda];
                    const T y = tb == CUBLAS_OP_N ? B[l + (size_t)j * ldb] : B[j + (size_t)l * ldb];
                    s += x * y;
                }
                T &c = C[i + (size_t)j * ldc];
                c = b == T(0) ? a * s : a * s + b * c;
            }
    }); });
    return CUBLAS_STATUS_SUCCESS;
}

template <typename T>
inline cublasStatus_t sdfgc_emu_gemv(cublasHandle_t h, cublasOperation_t t, int m, int n, const T *alpha, const T *A,
                                     int lda, const T *x, int incx, const T *beta, T *y, int incy) {
    if (!h) return CUBLAS_STATUS_NOT_INITIALIZED;
    if (m < 0 || n < 0 || lda < (m > 1 ? m : 1) || incx == 0 || incy == 0)
        return sdfgc_emu_cublas_fail("gemv: invalid sizes, leading dimension or increments");
    if (!sdfgc_emu_cublas_scalar_ok(h, alpha) || !sdfgc_emu_cublas_scalar_ok(h, beta))
        return sdfgc_emu_cublas_fail("gemv: alpha/beta not in the pointer mode's memory");
    if (m && n && (!sdfgc_emu_is_device(A) || !sdfgc_emu_is_device(x) || !sdfgc_emu_is_device(y)))
        return sdfgc_emu_cublas_fail("gemv: an operand is not device memory");
    const int leny = t == CUBLAS_OP_N ? m : n, lenx = t == CUBLAS_OP_N ? n : m;
    const bool host = h->mode == CUBLAS_POINTER_MODE_HOST;
    const T ha = host ? *alpha : T(0), hb = host ? *beta : T(0);
    sdfgc_emu_enqueue(h->stream, [=] { sdfgc_emu_on_device([&] {
        const T a = host ? ha : *alpha, b = host ? hb : *beta;
        const long ox = incx < 0 ? (long)(1 - lenx) * incx : 0, oy = incy < 0 ? (long)(1 - leny) * incy : 0;
        for (int i = 0; i < leny; ++i) {
            T s = T(0);
            for (int l = 0; l < lenx; ++l) {
                const T e = t == CUBLAS_OP_N ? A[i + (size_t)l * lda] : A[l + (size_t)i * lda];
                s += e * x[ox + (long)l * incx];
            }
            T &r = y[oy + (long)i * incy];
            r = b == T(0) ? a * s : a * s + b * r;
        }
    }); });
    return CUBLAS_STATUS_SUCCESS;
}

template <typename T>
inline cublasStatus_t sdfgc_emu_dot(cublasHandle_t h, int n, const T *x, int incx, const T *y, int incy, T *result) {
    if (!h) return CUBLAS_STATUS_NOT_INITIALIZED;
    if (!sdfgc_emu_cublas_scalar_ok(h, result))
        return sdfgc_emu_cublas_fail("dot: result not in the pointer mode's memory");
    if (n > 0 && (!sdfgc_emu_is_device(x) || !sdfgc_emu_is_device(y)))
        return sdfgc_emu_cublas_fail("dot: an operand is not device memory");
    // The result in host memory: the call waits for it.
    const bool host = h->mode == CUBLAS_POINTER_MODE_HOST;
    sdfgc_emu_enqueue(h->stream, [=] { sdfgc_emu_on_device([&] {
        T s = T(0);
        const long ox = incx < 0 ? (long)(1 - n) * incx : 0, oy = incy < 0 ? (long)(1 - n) * incy : 0;
        for (int i = 0; i < n; ++i) s += x[ox + (long)i * incx] * y[oy + (long)i * incy];
        *result = s;
    }); });
    if (host) sdfgc_emu_stream_synchronize(h->stream);
    return CUBLAS_STATUS_SUCCESS;
}

inline cublasStatus_t cublasSgemm(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
                                  const float *alpha, const float *A, int lda, const float *B, int ldb,
                                  const float *beta, float *C, int ldc) {
    return sdfgc_emu_gemm(h, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}
inline cublasStatus_t cublasDgemm(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
                                  const double *alpha, const double *A, int lda, const double *B, int ldb,
                                  const double *beta, double *C, int ldc) {
    return sdfgc_emu_gemm(h, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}
inline cublasStatus_t cublasSgemv(cublasHandle_t h, cublasOperation_t t, int m, int n, const float *alpha,
                                  const float *A, int lda, const float *x, int incx, const float *beta, float *y,
                                  int incy) {
    return sdfgc_emu_gemv(h, t, m, n, alpha, A, lda, x, incx, beta, y, incy);
}
inline cublasStatus_t cublasDgemv(cublasHandle_t h, cublasOperation_t t, int m, int n, const double *alpha,
                                  const double *A, int lda, const double *x, int incx, const double *beta, double *y,
                                  int incy) {
    return sdfgc_emu_gemv(h, t, m, n, alpha, A, lda, x, incx, beta, y, incy);
}
inline cublasStatus_t cublasSdot(cublasHandle_t h, int n, const float *x, int incx, const float *y, int incy,
                                 float *result) {
    return sdfgc_emu_dot(h, n, x, incx, y, incy, result);
}
inline cublasStatus_t cublasDdot(cublasHandle_t h, int n, const double *x, int incx, const double *y, int incy,
                                 double *result) {
    return sdfgc_emu_dot(h, n, x, incx, y, incy, result);
}
