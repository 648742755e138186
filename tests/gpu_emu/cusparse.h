// Emulated cuSPARSE (tests only): the generic SpMV of a CSR matrix and dense
// vectors (cusparseCreateCsr, cusparseCreateDnVec, cusparseSpMV and its
// _bufferSize, non-transposed, transposed and conjugate-transposed; 32- or
// 64-bit indices, base 0 or 1; s/d/c/z values computed in their compute
// type), handles, streams and pointer modes. SpMV is queued on the handle's
// stream like a kernel and runs on the CPU over the emulated device memory
// (see gpu_emu.h): y = alpha op(A) x + beta y, y not read when beta is 0.
// The matrix and vectors must be device memory, alpha and beta in the
// memory the handle's pointer mode names, types matching: a call that
// breaks this aborts the test with a message (cuSPARSE returns
// CUSPARSE_STATUS_INVALID_VALUE).
#pragma once
#include <cstdint>
#include "cuComplex.h"
#include "library_types.h"

typedef enum {
    CUSPARSE_STATUS_SUCCESS = 0,
    CUSPARSE_STATUS_NOT_INITIALIZED = 1,
    CUSPARSE_STATUS_ALLOC_FAILED = 2,
    CUSPARSE_STATUS_INVALID_VALUE = 3,
    CUSPARSE_STATUS_NOT_SUPPORTED = 10,
} cusparseStatus_t;
typedef enum { CUSPARSE_POINTER_MODE_HOST = 0, CUSPARSE_POINTER_MODE_DEVICE = 1 } cusparsePointerMode_t;
typedef enum {
    CUSPARSE_OPERATION_NON_TRANSPOSE = 0,
    CUSPARSE_OPERATION_TRANSPOSE = 1,
    CUSPARSE_OPERATION_CONJUGATE_TRANSPOSE = 2,
} cusparseOperation_t;
typedef enum { CUSPARSE_INDEX_16U = 1, CUSPARSE_INDEX_32I = 2, CUSPARSE_INDEX_64I = 3 } cusparseIndexType_t;
typedef enum { CUSPARSE_INDEX_BASE_ZERO = 0, CUSPARSE_INDEX_BASE_ONE = 1 } cusparseIndexBase_t;
typedef enum {
    CUSPARSE_SPMV_ALG_DEFAULT = 0,
    CUSPARSE_SPMV_CSR_ALG1 = 2,
    CUSPARSE_SPMV_CSR_ALG2 = 3,
} cusparseSpMVAlg_t;

struct SdfgcEmuCusparse {
    cudaStream_t stream = nullptr;
    cusparsePointerMode_t mode = CUSPARSE_POINTER_MODE_HOST;
};
typedef SdfgcEmuCusparse *cusparseHandle_t;
struct SdfgcEmuSpMat {
    int64_t rows, cols, nnz;
    void *offsets, *columns, *values;
    cusparseIndexType_t offset_type, column_type;
    cusparseIndexBase_t base;
    cudaDataType type;
};
typedef SdfgcEmuSpMat *cusparseSpMatDescr_t;
typedef const SdfgcEmuSpMat *cusparseConstSpMatDescr_t;
struct SdfgcEmuDnVec {
    int64_t size;
    void *values;
    cudaDataType type;
};
typedef SdfgcEmuDnVec *cusparseDnVecDescr_t;
typedef const SdfgcEmuDnVec *cusparseConstDnVecDescr_t;

inline cusparseStatus_t sdfgc_emu_cusparse_fail(const char *what) {
    std::fprintf(stderr, "gpu_emu: cuSPARSE %s\n", what);
    std::abort();
    return CUSPARSE_STATUS_INVALID_VALUE;
}
inline const char *cusparseGetErrorString(cusparseStatus_t s) {
    return s == CUSPARSE_STATUS_SUCCESS ? "success (emulated)" : "emulated error";
}

inline cusparseStatus_t cusparseCreate(cusparseHandle_t *h) {
    *h = new SdfgcEmuCusparse();
    return CUSPARSE_STATUS_SUCCESS;
}
inline cusparseStatus_t cusparseDestroy(cusparseHandle_t h) {
    if (!h) return CUSPARSE_STATUS_NOT_INITIALIZED;
    delete h;
    return CUSPARSE_STATUS_SUCCESS;
}
inline cusparseStatus_t cusparseSetStream(cusparseHandle_t h, cudaStream_t s) {
    if (!h) return CUSPARSE_STATUS_NOT_INITIALIZED;
    h->stream = s;
    return CUSPARSE_STATUS_SUCCESS;
}
inline cusparseStatus_t cusparseSetPointerMode(cusparseHandle_t h, cusparsePointerMode_t m) {
    if (!h) return CUSPARSE_STATUS_NOT_INITIALIZED;
    h->mode = m;
    return CUSPARSE_STATUS_SUCCESS;
}
inline cusparseStatus_t cusparseGetPointerMode(cusparseHandle_t h, cusparsePointerMode_t *m) {
    if (!h) return CUSPARSE_STATUS_NOT_INITIALIZED;
    *m = h->mode;
    return CUSPARSE_STATUS_SUCCESS;
}

inline cusparseStatus_t cusparseCreateCsr(cusparseSpMatDescr_t *d, int64_t rows, int64_t cols, int64_t nnz,
                                          void *offsets, void *columns, void *values,
                                          cusparseIndexType_t offset_type, cusparseIndexType_t column_type,
                                          cusparseIndexBase_t base, cudaDataType type) {
    if (rows < 0 || cols < 0 || nnz < 0 || (offset_type != CUSPARSE_INDEX_32I && offset_type != CUSPARSE_INDEX_64I) ||
        (column_type != CUSPARSE_INDEX_32I && column_type != CUSPARSE_INDEX_64I))
        return sdfgc_emu_cusparse_fail("cusparseCreateCsr: invalid sizes or index types");
    if (!sdfgc_emu_is_device(offsets) || (nnz && (!sdfgc_emu_is_device(columns) || !sdfgc_emu_is_device(values))))
        return sdfgc_emu_cusparse_fail("cusparseCreateCsr: an array is not device memory");
    *d = new SdfgcEmuSpMat{rows, cols, nnz, offsets, columns, values, offset_type, column_type, base, type};
    return CUSPARSE_STATUS_SUCCESS;
}
inline cusparseStatus_t cusparseDestroySpMat(cusparseConstSpMatDescr_t d) {
    delete d;
    return CUSPARSE_STATUS_SUCCESS;
}
inline cusparseStatus_t cusparseCreateDnVec(cusparseDnVecDescr_t *d, int64_t size, void *values, cudaDataType type) {
    if (size < 0) return sdfgc_emu_cusparse_fail("cusparseCreateDnVec: negative size");
    if (size && !sdfgc_emu_is_device(values)) return sdfgc_emu_cusparse_fail("cusparseCreateDnVec: values not device memory");
    *d = new SdfgcEmuDnVec{size, values, type};
    return CUSPARSE_STATUS_SUCCESS;
}
inline cusparseStatus_t cusparseDestroyDnVec(cusparseConstDnVecDescr_t d) {
    delete d;
    return CUSPARSE_STATUS_SUCCESS;
}

inline int64_t sdfgc_emu_cusparse_index(const void *p, cusparseIndexType_t t, int64_t i) {
    return t == CUSPARSE_INDEX_32I ? int64_t(static_cast<const int32_t *>(p)[i]) : static_cast<const int64_t *>(p)[i];
}

template <typename E>
inline void sdfgc_emu_spmv_run(cusparseOperation_t op, E alpha_e, const SdfgcEmuSpMat A, const void *xv, E beta_e,
                               void *yv) {
    typedef typename SdfgcEmuMath<E>::type T;
    const T alpha = reinterpret_cast<const T &>(alpha_e), beta = reinterpret_cast<const T &>(beta_e);
    const T *vals = static_cast<const T *>(A.values);
    const T *x = static_cast<const T *>(xv);
    T *y = static_cast<T *>(yv);
    const int64_t ny = op == CUSPARSE_OPERATION_NON_TRANSPOSE ? A.rows : A.cols;
    std::vector<T> acc(ny, T(0));
    const int64_t base = A.base == CUSPARSE_INDEX_BASE_ONE ? 1 : 0;
    for (int64_t r = 0; r < A.rows; ++r) {
        const int64_t lo = sdfgc_emu_cusparse_index(A.offsets, A.offset_type, r) - base;
        const int64_t hi = sdfgc_emu_cusparse_index(A.offsets, A.offset_type, r + 1) - base;
        for (int64_t k = lo; k < hi; ++k) {
            const int64_t c = sdfgc_emu_cusparse_index(A.columns, A.column_type, k) - base;
            if (k < 0 || k >= A.nnz || c < 0 || c >= A.cols) {
                std::fprintf(stderr, "gpu_emu: cuSPARSE SpMV: CSR entry %lld of row %lld out of range\n", (long long)k, (long long)r);
                std::abort();
            }
            if (op == CUSPARSE_OPERATION_NON_TRANSPOSE)
                acc[r] += vals[k] * x[c];
            else
                acc[c] += (op == CUSPARSE_OPERATION_CONJUGATE_TRANSPOSE ? sdfgc_emu_conj(vals[k]) : vals[k]) * x[r];
        }
    }
    for (int64_t i = 0; i < ny; ++i) y[i] = beta == T(0) ? alpha * acc[i] : alpha * acc[i] + beta * y[i];
}

inline std::size_t sdfgc_emu_cuda_type_size(cudaDataType t) {
    switch (t) {
        case CUDA_R_32F: return 4;
        case CUDA_R_64F: return 8;
        case CUDA_C_32F: return 8;
        case CUDA_C_64F: return 16;
        default: return 0;
    }
}

inline cusparseStatus_t sdfgc_emu_spmv_check(cusparseHandle_t h, cusparseOperation_t op, const void *alpha,
                                             cusparseConstSpMatDescr_t A, cusparseConstDnVecDescr_t x,
                                             const void *beta, cusparseDnVecDescr_t y, cudaDataType compute) {
    if (!h) return CUSPARSE_STATUS_NOT_INITIALIZED;
    if (!A || !x || !y) return sdfgc_emu_cusparse_fail("SpMV: a null descriptor");
    if (!sdfgc_emu_cuda_type_size(compute) || A->type != compute || x->type != compute || y->type != compute)
        return sdfgc_emu_cusparse_fail("SpMV: value types differ from the compute type (or are not s/d/c/z)");
    const bool nt = op == CUSPARSE_OPERATION_NON_TRANSPOSE;
    if ((nt ? A->cols : A->rows) != x->size || (nt ? A->rows : A->cols) != y->size)
        return sdfgc_emu_cusparse_fail("SpMV: vector sizes do not match the matrix");
    const bool host = h->mode == CUSPARSE_POINTER_MODE_HOST;
    if (sdfgc_emu_is_device(alpha) == host || sdfgc_emu_is_device(beta) == host)
        return sdfgc_emu_cusparse_fail("SpMV: alpha/beta not in the pointer mode's memory");
    return CUSPARSE_STATUS_SUCCESS;
}

inline cusparseStatus_t cusparseSpMV_bufferSize(cusparseHandle_t h, cusparseOperation_t op, const void *alpha,
                                                cusparseConstSpMatDescr_t A, cusparseConstDnVecDescr_t x,
                                                const void *beta, cusparseDnVecDescr_t y, cudaDataType compute,
                                                cusparseSpMVAlg_t, size_t *size) {
    cusparseStatus_t s = sdfgc_emu_spmv_check(h, op, alpha, A, x, beta, y, compute);
    if (s != CUSPARSE_STATUS_SUCCESS) return s;
    *size = 0;
    return CUSPARSE_STATUS_SUCCESS;
}

template <typename E>
inline void sdfgc_emu_spmv_enqueue(cusparseHandle_t h, cusparseOperation_t op, const void *alpha,
                                   const SdfgcEmuSpMat A, const void *x, const void *beta, void *y) {
    const bool host = h->mode == CUSPARSE_POINTER_MODE_HOST;
    E ha{}, hb{};
    if (host) {
        std::memcpy(&ha, alpha, sizeof(E));
        std::memcpy(&hb, beta, sizeof(E));
    }
    sdfgc_emu_enqueue(h->stream, [=] { sdfgc_emu_on_device([&] {
        E a = ha, b = hb;
        if (!host) {
            std::memcpy(&a, alpha, sizeof(E));
            std::memcpy(&b, beta, sizeof(E));
        }
        sdfgc_emu_spmv_run<E>(op, a, A, x, b, y);
    }); });
}

inline cusparseStatus_t cusparseSpMV(cusparseHandle_t h, cusparseOperation_t op, const void *alpha,
                                     cusparseConstSpMatDescr_t A, cusparseConstDnVecDescr_t x, const void *beta,
                                     cusparseDnVecDescr_t y, cudaDataType compute, cusparseSpMVAlg_t, void *) {
    cusparseStatus_t s = sdfgc_emu_spmv_check(h, op, alpha, A, x, beta, y, compute);
    if (s != CUSPARSE_STATUS_SUCCESS) return s;
    switch (compute) {
        case CUDA_R_32F: sdfgc_emu_spmv_enqueue<float>(h, op, alpha, *A, x->values, beta, y->values); break;
        case CUDA_R_64F: sdfgc_emu_spmv_enqueue<double>(h, op, alpha, *A, x->values, beta, y->values); break;
        case CUDA_C_32F: sdfgc_emu_spmv_enqueue<cuComplex>(h, op, alpha, *A, x->values, beta, y->values); break;
        case CUDA_C_64F: sdfgc_emu_spmv_enqueue<cuDoubleComplex>(h, op, alpha, *A, x->values, beta, y->values); break;
        default: return sdfgc_emu_cusparse_fail("SpMV: unsupported compute type");
    }
    return CUSPARSE_STATUS_SUCCESS;
}
