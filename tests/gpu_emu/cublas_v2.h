// Emulated cuBLAS (tests only): column-major s/d/c/z gemm (and strided
// batched) and geam, s/d gemv and dot run on
// the CPU over the emulated device memory (see gpu_emu.h), queued on the
// handle's stream like kernels (host-mode scalars read at the call, a
// host-mode dot result waited for), with handles, pointer modes and statuses. Matrix and vector operands must be
// device memory, and alpha, beta and a dot result must be in the memory
// the handle's pointer mode names: a call that breaks this returns
// CUBLAS_STATUS_INVALID_VALUE and aborts the test with a message, so a
// wrong pointer mode or a host operand fails instead of passing.
#pragma once
#include "cublas_api.h"

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

// C = alpha op(A) op(B) + beta C for `batches` matrices `stride*` elements
// apart (CUBLAS_OP_C conjugates complex operands).
template <typename E>
inline cublasStatus_t sdfgc_emu_gemm(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
                                     const E *alpha_, const E *A_, int lda, const E *B_, int ldb, const E *beta_, E *C_,
                                     int ldc, long long strideA = 0, long long strideB = 0, long long strideC = 0,
                                     int batches = 1) {
    typedef typename SdfgcEmuMath<E>::type T;
    static_assert(sizeof(T) == sizeof(E), "cuBLAS element layout");
    const T *alpha = reinterpret_cast<const T *>(alpha_), *beta = reinterpret_cast<const T *>(beta_);
    const T *A = reinterpret_cast<const T *>(A_), *B = reinterpret_cast<const T *>(B_);
    T *C = reinterpret_cast<T *>(C_);
    if (!h) return CUBLAS_STATUS_NOT_INITIALIZED;
    if (m < 0 || n < 0 || k < 0 || ldc < (m > 1 ? m : 1) || lda < ((ta == CUBLAS_OP_N ? m : k) > 1 ? (ta == CUBLAS_OP_N ? m : k) : 1) ||
        ldb < ((tb == CUBLAS_OP_N ? k : n) > 1 ? (tb == CUBLAS_OP_N ? k : n) : 1))
        return sdfgc_emu_cublas_fail("gemm: invalid sizes or leading dimensions");
    if (batches < 0) return sdfgc_emu_cublas_fail("gemm: negative batch count");
    if (!sdfgc_emu_cublas_scalar_ok(h, alpha) || !sdfgc_emu_cublas_scalar_ok(h, beta))
        return sdfgc_emu_cublas_fail("gemm: alpha/beta not in the pointer mode's memory");
    if (m && n && (!sdfgc_emu_is_device(C) || (k && (!sdfgc_emu_is_device(A) || !sdfgc_emu_is_device(B)))))
        return sdfgc_emu_cublas_fail("gemm: an operand is not device memory");
    const bool host = h->mode == CUBLAS_POINTER_MODE_HOST;
    const T ha = host ? *alpha : T(0), hb = host ? *beta : T(0);
    sdfgc_emu_enqueue(h->stream, [=] { sdfgc_emu_on_device([&] {
        const T a = host ? ha : *alpha, b = host ? hb : *beta;
        for (int q = 0; q < batches; ++q) {
            const T *Aq = A + q * strideA, *Bq = B + q * strideB;
            T *Cq = C + q * strideC;
            for (int j = 0; j < n; ++j)
                for (int i = 0; i < m; ++i) {
                    T s = T(0);
                    for (int l = 0; l < k; ++l) {
                        T x = ta == CUBLAS_OP_N ? Aq[i + (size_t)l * lda] : Aq[l + (size_t)i * lda];
                        T y = tb == CUBLAS_OP_N ? Bq[l + (size_t)j * ldb] : Bq[j + (size_t)l * ldb];
                        if (ta == CUBLAS_OP_C) x = sdfgc_emu_conj(x);
                        if (tb == CUBLAS_OP_C) y = sdfgc_emu_conj(y);
                        s += x * y;
                    }
                    T &c = Cq[i + (size_t)j * ldc];
                    c = b == T(0) ? a * s : a * s + b * c;
                }
        }
    }); });
    return CUBLAS_STATUS_SUCCESS;
}

// C = alpha op(A) + beta op(B), m x n (B not read when beta is 0).
template <typename E>
inline cublasStatus_t sdfgc_emu_geam(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n,
                                     const E *alpha_, const E *A_, int lda, const E *beta_, const E *B_, int ldb, E *C_,
                                     int ldc) {
    typedef typename SdfgcEmuMath<E>::type T;
    const T *alpha = reinterpret_cast<const T *>(alpha_), *beta = reinterpret_cast<const T *>(beta_);
    const T *A = reinterpret_cast<const T *>(A_), *B = reinterpret_cast<const T *>(B_);
    T *C = reinterpret_cast<T *>(C_);
    if (!h) return CUBLAS_STATUS_NOT_INITIALIZED;
    const int rowsA = ta == CUBLAS_OP_N ? m : n, rowsB = tb == CUBLAS_OP_N ? m : n;
    if (m < 0 || n < 0 || ldc < (m > 1 ? m : 1) || lda < (rowsA > 1 ? rowsA : 1) || ldb < (rowsB > 1 ? rowsB : 1))
        return sdfgc_emu_cublas_fail("geam: invalid sizes or leading dimensions");
    if (!sdfgc_emu_cublas_scalar_ok(h, alpha) || !sdfgc_emu_cublas_scalar_ok(h, beta))
        return sdfgc_emu_cublas_fail("geam: alpha/beta not in the pointer mode's memory");
    if (m && n && (!sdfgc_emu_is_device(C) || !sdfgc_emu_is_device(A) || !sdfgc_emu_is_device(B)))
        return sdfgc_emu_cublas_fail("geam: an operand is not device memory");
    const bool host = h->mode == CUBLAS_POINTER_MODE_HOST;
    const T ha = host ? *alpha : T(0), hb = host ? *beta : T(0);
    sdfgc_emu_enqueue(h->stream, [=] { sdfgc_emu_on_device([&] {
        const T a = host ? ha : *alpha, b = host ? hb : *beta;
        for (int j = 0; j < n; ++j)
            for (int i = 0; i < m; ++i) {
                T x = ta == CUBLAS_OP_N ? A[i + (size_t)j * lda] : A[j + (size_t)i * lda];
                if (ta == CUBLAS_OP_C) x = sdfgc_emu_conj(x);
                T r = a * x;
                if (b != T(0)) {
                    T y = tb == CUBLAS_OP_N ? B[i + (size_t)j * ldb] : B[j + (size_t)i * ldb];
                    if (tb == CUBLAS_OP_C) y = sdfgc_emu_conj(y);
                    r += b * y;
                }
                C[i + (size_t)j * ldc] = r;
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
inline cublasStatus_t cublasCgemm(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
                                  const cuComplex *alpha, const cuComplex *A, int lda, const cuComplex *B, int ldb,
                                  const cuComplex *beta, cuComplex *C, int ldc) {
    return sdfgc_emu_gemm(h, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}
inline cublasStatus_t cublasZgemm(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k,
                                  const cuDoubleComplex *alpha, const cuDoubleComplex *A, int lda,
                                  const cuDoubleComplex *B, int ldb, const cuDoubleComplex *beta, cuDoubleComplex *C,
                                  int ldc) {
    return sdfgc_emu_gemm(h, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc);
}
#define SDFGC_EMU_GEMM_STRIDED_BATCHED(P, E)                                                                      \
    inline cublasStatus_t cublas##P##gemmStridedBatched(                                                         \
        cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, int k, const E *alpha,        \
        const E *A, int lda, long long sA, const E *B, int ldb, long long sB, const E *beta, E *C, int ldc,       \
        long long sC, int batches) {                                                                             \
        return sdfgc_emu_gemm(h, ta, tb, m, n, k, alpha, A, lda, B, ldb, beta, C, ldc, sA, sB, sC, batches);     \
    }
SDFGC_EMU_GEMM_STRIDED_BATCHED(S, float)
SDFGC_EMU_GEMM_STRIDED_BATCHED(D, double)
SDFGC_EMU_GEMM_STRIDED_BATCHED(C, cuComplex)
SDFGC_EMU_GEMM_STRIDED_BATCHED(Z, cuDoubleComplex)
#undef SDFGC_EMU_GEMM_STRIDED_BATCHED
#define SDFGC_EMU_GEAM(P, E)                                                                                     \
    inline cublasStatus_t cublas##P##geam(cublasHandle_t h, cublasOperation_t ta, cublasOperation_t tb, int m, int n, \
                                          const E *alpha, const E *A, int lda, const E *beta, const E *B, int ldb, \
                                          E *C, int ldc) {                                                        \
        return sdfgc_emu_geam(h, ta, tb, m, n, alpha, A, lda, beta, B, ldb, C, ldc);                             \
    }
SDFGC_EMU_GEAM(S, float)
SDFGC_EMU_GEAM(D, double)
SDFGC_EMU_GEAM(C, cuComplex)
SDFGC_EMU_GEAM(Z, cuDoubleComplex)
#undef SDFGC_EMU_GEAM
