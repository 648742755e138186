// Emulated cuSOLVER dense (tests only): s/d/c/z getrf (LU with partial
// pivoting, as LAPACK's: the pivot of a column is its first element of
// largest |re| + |im|, ipiv 1-based, devInfo = i > 0 for the first exactly
// zero U(i,i), the factorization completed), getrs (N, T, C), potrf
// (Cholesky of the lower or upper triangle, only that triangle read and
// written; devInfo = i > 0 for the first leading minor that is not
// positive definite, where it stops) and potrs, column-major, with their
// _bufferSize queries, handles and streams. The calls are queued on the
// handle's stream like kernels and run on the CPU over the emulated device
// memory (see gpu_emu.h). Matrices, pivots, workspaces and devInfo must be
// device memory and sizes and leading dimensions valid: a call that breaks
// this aborts the test with a message (cuSOLVER returns
// CUSOLVER_STATUS_INVALID_VALUE), so a host operand fails instead of
// passing.
#pragma once
#include <cmath>
#include "cublas_api.h"

typedef enum {
    CUSOLVER_STATUS_SUCCESS = 0,
    CUSOLVER_STATUS_NOT_INITIALIZED = 1,
    CUSOLVER_STATUS_ALLOC_FAILED = 2,
    CUSOLVER_STATUS_INVALID_VALUE = 3,
} cusolverStatus_t;
struct SdfgcEmuCusolverDn {
    cudaStream_t stream = nullptr;
};
typedef SdfgcEmuCusolverDn *cusolverDnHandle_t;

inline cusolverStatus_t sdfgc_emu_cusolver_fail(const char *what) {
    std::fprintf(stderr, "gpu_emu: cuSOLVER %s\n", what);
    std::abort();
    return CUSOLVER_STATUS_INVALID_VALUE;
}

inline cusolverStatus_t cusolverDnCreate(cusolverDnHandle_t *h) {
    *h = new SdfgcEmuCusolverDn();
    return CUSOLVER_STATUS_SUCCESS;
}
inline cusolverStatus_t cusolverDnDestroy(cusolverDnHandle_t h) {
    if (!h) return CUSOLVER_STATUS_NOT_INITIALIZED;
    delete h;
    return CUSOLVER_STATUS_SUCCESS;
}
inline cusolverStatus_t cusolverDnSetStream(cusolverDnHandle_t h, cudaStream_t s) {
    if (!h) return CUSOLVER_STATUS_NOT_INITIALIZED;
    h->stream = s;
    return CUSOLVER_STATUS_SUCCESS;
}
inline cusolverStatus_t cusolverDnGetStream(cusolverDnHandle_t h, cudaStream_t *s) {
    if (!h) return CUSOLVER_STATUS_NOT_INITIALIZED;
    *s = h->stream;
    return CUSOLVER_STATUS_SUCCESS;
}

// LAPACK's |x| for pivoting: |re| + |im| for complex values.
template <typename T> inline double sdfgc_emu_abs1(T x) { return std::fabs(double(x)); }
template <typename T> inline double sdfgc_emu_abs1(std::complex<T> x) {
    return std::fabs(double(x.real())) + std::fabs(double(x.imag()));
}
template <typename T> inline double sdfgc_emu_real(T x) { return double(x); }
template <typename T> inline double sdfgc_emu_real(std::complex<T> x) { return double(x.real()); }

inline bool sdfgc_emu_cusolver_ld_ok(int rows, int ld) { return ld >= (rows > 1 ? rows : 1); }

template <typename E>
inline cusolverStatus_t sdfgc_emu_getrf(cusolverDnHandle_t h, int m, int n, E *Ap, int lda, E *work, int *ipiv,
                                        int *info) {
    typedef typename SdfgcEmuMath<E>::type T;
    static_assert(sizeof(T) == sizeof(E), "cuSOLVER element layout");
    if (!h) return CUSOLVER_STATUS_NOT_INITIALIZED;
    if (m < 0 || n < 0 || !sdfgc_emu_cusolver_ld_ok(m, lda)) return sdfgc_emu_cusolver_fail("getrf: invalid sizes or leading dimension");
    if (!sdfgc_emu_is_device(info) || (m && n && (!sdfgc_emu_is_device(Ap) || !sdfgc_emu_is_device(work))) ||
        (ipiv && m && n && !sdfgc_emu_is_device(ipiv)))
        return sdfgc_emu_cusolver_fail("getrf: a matrix, pivot, workspace or devInfo is not device memory");
    sdfgc_emu_enqueue(h->stream, [=] { sdfgc_emu_on_device([&] {
        T *A = reinterpret_cast<T *>(Ap);
        auto a = [&](int i, int j) -> T & { return A[i + (size_t)j * lda]; };
        int first_zero = 0;
        const int k = m < n ? m : n;
        for (int j = 0; j < k; ++j) {
            int p = j;
            if (ipiv) {
                for (int i = j + 1; i < m; ++i)
                    if (sdfgc_emu_abs1(a(i, j)) > sdfgc_emu_abs1(a(p, j))) p = i;
                ipiv[j] = p + 1;
                if (p != j)
                    for (int c = 0; c < n; ++c) std::swap(a(j, c), a(p, c));
            }
            if (a(j, j) == T(0)) {
                if (!first_zero) first_zero = j + 1;
                continue;
            }
            const T d = a(j, j);
            for (int i = j + 1; i < m; ++i) a(i, j) /= d;
            for (int c = j + 1; c < n; ++c)
                for (int i = j + 1; i < m; ++i) a(i, c) -= a(i, j) * a(j, c);
        }
        *info = first_zero;
    }); });
    return CUSOLVER_STATUS_SUCCESS;
}

template <typename E>
inline cusolverStatus_t sdfgc_emu_getrs(cusolverDnHandle_t h, cublasOperation_t trans, int n, int nrhs, const E *Ap,
                                        int lda, const int *ipiv, E *Bp, int ldb, int *info) {
    typedef typename SdfgcEmuMath<E>::type T;
    if (!h) return CUSOLVER_STATUS_NOT_INITIALIZED;
    if (n < 0 || nrhs < 0 || !sdfgc_emu_cusolver_ld_ok(n, lda) || !sdfgc_emu_cusolver_ld_ok(n, ldb) ||
        (trans != CUBLAS_OP_N && trans != CUBLAS_OP_T && trans != CUBLAS_OP_C))
        return sdfgc_emu_cusolver_fail("getrs: invalid operation, sizes or leading dimensions");
    if (!sdfgc_emu_is_device(info) ||
        (n && (!sdfgc_emu_is_device(Ap) || !sdfgc_emu_is_device(ipiv) || (nrhs && !sdfgc_emu_is_device(Bp)))))
        return sdfgc_emu_cusolver_fail("getrs: a matrix, pivot or devInfo is not device memory");
    sdfgc_emu_enqueue(h->stream, [=] { sdfgc_emu_on_device([&] {
        const T *A = reinterpret_cast<const T *>(Ap);
        T *B = reinterpret_cast<T *>(Bp);
        auto op = [&](int i, int j) {  // op(A)(i, j) of the factors' storage
            T x = trans == CUBLAS_OP_N ? A[i + (size_t)j * lda] : A[j + (size_t)i * lda];
            return trans == CUBLAS_OP_C ? sdfgc_emu_conj(x) : x;
        };
        for (int c = 0; c < nrhs; ++c) {
            T *b = B + (size_t)c * ldb;
            if (trans == CUBLAS_OP_N) {
                for (int i = 0; i < n; ++i) std::swap(b[i], b[ipiv[i] - 1]);
                for (int i = 0; i < n; ++i)  // L, unit diagonal
                    for (int j = 0; j < i; ++j) b[i] -= op(i, j) * b[j];
                for (int i = n - 1; i >= 0; --i) {  // U
                    for (int j = i + 1; j < n; ++j) b[i] -= op(i, j) * b[j];
                    b[i] /= op(i, i);
                }
            } else {
                for (int i = 0; i < n; ++i) {  // U^T: lower, op(i, j) for j <= i
                    for (int j = 0; j < i; ++j) b[i] -= op(i, j) * b[j];
                    b[i] /= op(i, i);
                }
                for (int i = n - 1; i >= 0; --i)  // L^T, unit diagonal
                    for (int j = i + 1; j < n; ++j) b[i] -= op(i, j) * b[j];
                for (int i = n - 1; i >= 0; --i) std::swap(b[i], b[ipiv[i] - 1]);
            }
        }
        *info = 0;
    }); });
    return CUSOLVER_STATUS_SUCCESS;
}

template <typename E>
inline cusolverStatus_t sdfgc_emu_potrf(cusolverDnHandle_t h, cublasFillMode_t uplo, int n, E *Ap, int lda, E *work,
                                        int lwork, int *info) {
    typedef typename SdfgcEmuMath<E>::type T;
    if (!h) return CUSOLVER_STATUS_NOT_INITIALIZED;
    if (n < 0 || !sdfgc_emu_cusolver_ld_ok(n, lda) || lwork < 0 ||
        (uplo != CUBLAS_FILL_MODE_LOWER && uplo != CUBLAS_FILL_MODE_UPPER))
        return sdfgc_emu_cusolver_fail("potrf: invalid fill mode, size, leading dimension or workspace size");
    if (!sdfgc_emu_is_device(info) || (n && (!sdfgc_emu_is_device(Ap) || !sdfgc_emu_is_device(work))))
        return sdfgc_emu_cusolver_fail("potrf: a matrix, workspace or devInfo is not device memory");
    sdfgc_emu_enqueue(h->stream, [=] { sdfgc_emu_on_device([&] {
        T *A = reinterpret_cast<T *>(Ap);
        // L(i, j), i >= j, of the stored triangle: the upper one holds L^H.
        const bool lower = uplo == CUBLAS_FILL_MODE_LOWER;
        auto l = [&](int i, int j) -> T & { return lower ? A[i + (size_t)j * lda] : A[j + (size_t)i * lda]; };
        auto get = [&](int i, int j) { return lower ? l(i, j) : sdfgc_emu_conj(l(i, j)); };
        auto put = [&](int i, int j, T v) { l(i, j) = lower ? v : sdfgc_emu_conj(v); };
        *info = 0;
        for (int j = 0; j < n; ++j) {
            double d = sdfgc_emu_real(get(j, j));
            for (int k = 0; k < j; ++k) {
                const T x = get(j, k);
                d -= sdfgc_emu_real(x * sdfgc_emu_conj(x));
            }
            if (!(d > 0)) {
                *info = j + 1;
                return;
            }
            const double s = std::sqrt(d);
            put(j, j, T(s));
            for (int i = j + 1; i < n; ++i) {
                T v = get(i, j);
                for (int k = 0; k < j; ++k) v -= get(i, k) * sdfgc_emu_conj(get(j, k));
                put(i, j, v / T(s));
            }
        }
    }); });
    return CUSOLVER_STATUS_SUCCESS;
}

template <typename E>
inline cusolverStatus_t sdfgc_emu_potrs(cusolverDnHandle_t h, cublasFillMode_t uplo, int n, int nrhs, const E *Ap,
                                        int lda, E *Bp, int ldb, int *info) {
    typedef typename SdfgcEmuMath<E>::type T;
    if (!h) return CUSOLVER_STATUS_NOT_INITIALIZED;
    if (n < 0 || nrhs < 0 || !sdfgc_emu_cusolver_ld_ok(n, lda) || !sdfgc_emu_cusolver_ld_ok(n, ldb) ||
        (uplo != CUBLAS_FILL_MODE_LOWER && uplo != CUBLAS_FILL_MODE_UPPER))
        return sdfgc_emu_cusolver_fail("potrs: invalid fill mode, sizes or leading dimensions");
    if (!sdfgc_emu_is_device(info) || (n && (!sdfgc_emu_is_device(Ap) || (nrhs && !sdfgc_emu_is_device(Bp)))))
        return sdfgc_emu_cusolver_fail("potrs: a matrix or devInfo is not device memory");
    sdfgc_emu_enqueue(h->stream, [=] { sdfgc_emu_on_device([&] {
        const T *A = reinterpret_cast<const T *>(Ap);
        T *B = reinterpret_cast<T *>(Bp);
        const bool lower = uplo == CUBLAS_FILL_MODE_LOWER;
        auto L = [&](int i, int j) {  // i >= j
            return lower ? A[i + (size_t)j * lda] : sdfgc_emu_conj(A[j + (size_t)i * lda]);
        };
        for (int c = 0; c < nrhs; ++c) {
            T *b = B + (size_t)c * ldb;
            for (int i = 0; i < n; ++i) {  // L y = b
                for (int j = 0; j < i; ++j) b[i] -= L(i, j) * b[j];
                b[i] /= L(i, i);
            }
            for (int i = n - 1; i >= 0; --i) {  // L^H x = y
                for (int j = i + 1; j < n; ++j) b[i] -= sdfgc_emu_conj(L(j, i)) * b[j];
                b[i] /= sdfgc_emu_conj(L(i, i));
            }
        }
        *info = 0;
    }); });
    return CUSOLVER_STATUS_SUCCESS;
}

// Workspace sizes, in elements (at least one, so that the workspace is a
// real allocation).
inline cusolverStatus_t sdfgc_emu_cusolver_lwork(cusolverDnHandle_t h, int n, int lda, int *lwork) {
    if (!h) return CUSOLVER_STATUS_NOT_INITIALIZED;
    if (n < 0 || lda < 1) return sdfgc_emu_cusolver_fail("_bufferSize: invalid size or leading dimension");
    *lwork = n > 1 ? n : 1;
    return CUSOLVER_STATUS_SUCCESS;
}

#define SDFGC_EMU_CUSOLVER(P, E)                                                                                  \
    inline cusolverStatus_t cusolverDn##P##getrf_bufferSize(cusolverDnHandle_t h, int m, int n, E *, int lda,    \
                                                           int *lwork) {                                         \
        return sdfgc_emu_cusolver_lwork(h, m > n ? m : n, lda, lwork);                                           \
    }                                                                                                            \
    inline cusolverStatus_t cusolverDn##P##getrf(cusolverDnHandle_t h, int m, int n, E *A, int lda, E *work,     \
                                                int *ipiv, int *info) {                                          \
        return sdfgc_emu_getrf(h, m, n, A, lda, work, ipiv, info);                                               \
    }                                                                                                            \
    inline cusolverStatus_t cusolverDn##P##getrs(cusolverDnHandle_t h, cublasOperation_t t, int n, int nrhs,     \
                                                const E *A, int lda, const int *ipiv, E *B, int ldb, int *info) { \
        return sdfgc_emu_getrs(h, t, n, nrhs, A, lda, ipiv, B, ldb, info);                                       \
    }                                                                                                            \
    inline cusolverStatus_t cusolverDn##P##potrf_bufferSize(cusolverDnHandle_t h, cublasFillMode_t, int n, E *,  \
                                                           int lda, int *lwork) {                                \
        return sdfgc_emu_cusolver_lwork(h, n, lda, lwork);                                                       \
    }                                                                                                            \
    inline cusolverStatus_t cusolverDn##P##potrf(cusolverDnHandle_t h, cublasFillMode_t uplo, int n, E *A,       \
                                                int lda, E *work, int lwork, int *info) {                        \
        return sdfgc_emu_potrf(h, uplo, n, A, lda, work, lwork, info);                                           \
    }                                                                                                            \
    inline cusolverStatus_t cusolverDn##P##potrs(cusolverDnHandle_t h, cublasFillMode_t uplo, int n, int nrhs,   \
                                                const E *A, int lda, E *B, int ldb, int *info) {                 \
        return sdfgc_emu_potrs(h, uplo, n, nrhs, A, lda, B, ldb, info);                                          \
    }
SDFGC_EMU_CUSOLVER(S, float)
SDFGC_EMU_CUSOLVER(D, double)
SDFGC_EMU_CUSOLVER(C, cuComplex)
SDFGC_EMU_CUSOLVER(Z, cuDoubleComplex)
#undef SDFGC_EMU_CUSOLVER
