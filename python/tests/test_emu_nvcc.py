"""scripts/emu-nvcc: sdfgc's CUDA built with g++ against the emulated GPU
runtime (tests/gpu_emu), as ICON4Py's GPU SDFGs run without a GPU
(scripts/icon4py-modes.py --gpu-emulated): kernels launched by the
emulator, a per-thread array from the device heap, results as DaCe's."""
import os

import pytest

import sdfgc
from conftest import REPO, run_case

EMU_NVCC = os.path.join(REPO, "scripts", "emu-nvcc")
CASE = "gpu/dynamic_row_buffer"


@pytest.mark.parametrize("mode", [None, "persistent", "pool"])
def test_cuda_runs_on_the_emulated_runtime(cache, mode):
    sdfg = os.path.join(REPO, "fixtures", CASE, "program.gpu.sdfg")
    lib = sdfgc.build(sdfg, target="cuda", mode=mode, compiler=EMU_NVCC, build_dir=cache)
    run_case(lib, CASE, "program.gpu.sdfg")


def test_launches_become_emulator_calls():
    import importlib.machinery
    import importlib.util

    loader = importlib.machinery.SourceFileLoader("emu_nvcc", EMU_NVCC)
    spec = importlib.util.spec_from_loader("emu_nvcc", loader)
    emu = importlib.util.module_from_spec(spec)
    loader.exec_module(emu)
    out = emu.emulate_launches("    k_0<<<dim3(f(a, b), 1, 1), __block, 0, s>>>(x, y);\n")
    assert out == "    sdfgc_emu_launch_async(s, dim3(dim3(f(a, b), 1, 1)), dim3(__block), 0, false, k_0, x, y);\n"
    assert emu.emulate_launches("k<<<1, 2>>>();\n") == "sdfgc_emu_launch_async(nullptr, dim3(1), dim3(2), 0, false, k);\n"
    assert ", 0, true, k);" in emu.emulate_launches("__syncthreads();\nk<<<1, 2>>>();\n")
    assert ", 0, false, k);" in emu.emulate_launches("Axes__all_reduce();\nk<<<1, 2>>>();\n")
    shared = emu.emulate_launches("    __shared__ double tile[66];\n    extern __shared__ float dyn[];\n")
    assert shared == (
        '    static char sdfgc_emu_key_tile; SdfgcEmuShared<double, std::size_t(66)> tile(&sdfgc_emu_key_tile, "tile");\n'
        "    float *dyn = static_cast<float *>(sdfgc_emu_dynamic_shared());\n"
    )


def test_cublas_links_and_missing_libraries_fail_to_link(tmp_path):
    # `-lcublas` (DaCe's cuBLAS environment, sdfgc.build for cuBLAS calls)
    # names the emulated cuBLAS, headers compiled into the unit: the library
    # links and its complex GEMM runs. A library the emulation lacks fails at
    # link time, and so does a call into it.
    import ctypes
    import subprocess

    src = tmp_path / "zgemm.cu"
    src.write_text(
        "#include <cublas_v2.h>\n"
        "extern \"C\" int zgemm_2x2(double *out) {\n"
        "    cuDoubleComplex a[4] = {{1, 1}, {0, 2}, {3, 0}, {1, -1}}, one = make_cuDoubleComplex(1, 0), zero = {0, 0};\n"
        "    void *d = nullptr;\n"
        "    cudaMalloc(&d, 2 * sizeof a);\n"
        "    cuDoubleComplex *da = static_cast<cuDoubleComplex *>(d), *dc = da + 4;\n"
        "    cudaMemcpy(da, a, sizeof a, cudaMemcpyHostToDevice);\n"
        "    cublasHandle_t h;\n"
        "    cublasCreate(&h);\n"
        "    int s = cublasZgemm(h, CUBLAS_OP_C, CUBLAS_OP_N, 2, 2, 2, &one, da, 2, da, 2, &zero, dc, 2);\n"
        "    cudaMemcpy(out, dc, sizeof a, cudaMemcpyDeviceToHost);\n"
        "    cublasDestroy(h);\n"
        "    cudaFree(d);\n"
        "    return s;\n"
        "}\n"
    )
    lib = tmp_path / "libzgemm.so"
    subprocess.run([EMU_NVCC, "-shared", str(src), "-o", str(lib), "-lcublas"], check=True)
    import numpy as np
    out = np.zeros(8)
    assert ctypes.CDLL(str(lib)).zgemm_2x2(out.ctypes.data_as(ctypes.c_void_p)) == 0
    a = np.array([[1 + 1j, 3], [2j, 1 - 1j]])  # column-major {a00, a10, a01, a11}
    np.testing.assert_allclose(out.view(np.complex128).reshape(2, 2).T, a.conj().T @ a)

    missing = subprocess.run([EMU_NVCC, "-shared", str(src), "-o", str(lib), "-lcublas", "-lcurand"],
                             capture_output=True, text=True)
    assert missing.returncode != 0 and "-lcurand" in missing.stderr, missing.stderr
    undefined = tmp_path / "undefined.cu"
    undefined.write_text("extern \"C\" int curandCreateGenerator(void **, int);\n"
                         "extern \"C\" int make(void **g) { return curandCreateGenerator(g, 100); }\n")
    r = subprocess.run([EMU_NVCC, "-shared", str(undefined), "-o", str(lib)], capture_output=True, text=True)
    assert r.returncode != 0 and "curandCreateGenerator" in r.stderr, r.stderr


def test_cusolver_cusparse_cufft_link_and_compute(tmp_path):
    # `-lcusolver -lcusparse -lcufft` name the emulated libraries (headers):
    # an LU solve with partial pivoting (getrf, getrs) and its devInfo, a
    # Cholesky factorization (potrf) and solve (potrs), and its devInfo for
    # a matrix that is not positive definite, a CSR SpMV, and a Z2Z FFT
    # through cufftXtExec, against numpy.
    import ctypes
    import subprocess

    import numpy as np

    src = tmp_path / "libs.cu"
    src.write_text(r"""
#include <cusolverDn.h>
#include <cusparse.h>
#include <cufftXt.h>
template <typename T> static T *dev(const T *h, int n) {
    void *d = nullptr;
    cudaMalloc(&d, sizeof(T) * n);
    cudaMemcpy(d, h, sizeof(T) * n, cudaMemcpyHostToDevice);
    return static_cast<T *>(d);
}
template <typename T> static void back(T *h, const T *d, int n) { cudaMemcpy(h, d, sizeof(T) * n, cudaMemcpyDeviceToHost); }
// A (n x n, column-major), b (n): x of A x = b, the LU factors and pivots; info of getrf.
extern "C" int lu_solve(int n, double *a, double *b, int *ipiv) {
    cusolverDnHandle_t h;
    cusolverDnCreate(&h);
    double *da = dev(a, n * n), *db = dev(b, n), *w;
    int *dp, *di, lw = 0, info = -1;
    cudaMalloc(reinterpret_cast<void **>(&dp), sizeof(int) * n);
    cudaMalloc(reinterpret_cast<void **>(&di), sizeof(int));
    cusolverDnDgetrf_bufferSize(h, n, n, da, n, &lw);
    cudaMalloc(reinterpret_cast<void **>(&w), sizeof(double) * lw);
    cusolverDnDgetrf(h, n, n, da, n, w, dp, di);
    back(&info, di, 1);
    cusolverDnDgetrs(h, CUBLAS_OP_N, n, 1, da, n, dp, db, n, di);
    back(a, da, n * n), back(b, db, n), back(ipiv, dp, n);
    cusolverDnDestroy(h);
    return info;
}
// Lower Cholesky of a (in place, column-major), then b := A^-1 b; info of potrf.
extern "C" int cholesky_solve(int n, float *a, float *b) {
    cusolverDnHandle_t h;
    cusolverDnCreate(&h);
    float *da = dev(a, n * n), *db = dev(b, n), *w;
    int *di, lw = 0, info = -1;
    cudaMalloc(reinterpret_cast<void **>(&di), sizeof(int));
    cusolverDnSpotrf_bufferSize(h, CUBLAS_FILL_MODE_LOWER, n, da, n, &lw);
    cudaMalloc(reinterpret_cast<void **>(&w), sizeof(float) * lw);
    cusolverDnSpotrf(h, CUBLAS_FILL_MODE_LOWER, n, da, n, w, lw, di);
    back(&info, di, 1);
    if (info == 0) cusolverDnSpotrs(h, CUBLAS_FILL_MODE_LOWER, n, 1, da, n, db, n, di);
    back(a, da, n * n), back(b, db, n);
    cusolverDnDestroy(h);
    return info;
}
// y := alpha A x + beta y for a CSR A (rows x cols).
extern "C" int spmv(int rows, int cols, int nnz, const int *rp, const int *ci, const double *v, const double *x,
                    double alpha, double beta, double *y) {
    cusparseHandle_t h;
    cusparseCreate(&h);
    cusparseSpMatDescr_t A;
    cusparseDnVecDescr_t X, Y;
    int *drp = dev(rp, rows + 1), *dci = dev(ci, nnz);
    double *dv = dev(v, nnz), *dx = dev(x, cols), *dy = dev(y, rows);
    cusparseCreateCsr(&A, rows, cols, nnz, drp, dci, dv, CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
                      CUSPARSE_INDEX_BASE_ZERO, CUDA_R_64F);
    cusparseCreateDnVec(&X, cols, dx, CUDA_R_64F);
    cusparseCreateDnVec(&Y, rows, dy, CUDA_R_64F);
    size_t size = 1;
    cusparseSpMV_bufferSize(h, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, A, X, &beta, Y, CUDA_R_64F,
                            CUSPARSE_SPMV_ALG_DEFAULT, &size);
    void *buf = nullptr;
    cudaMalloc(&buf, size);
    int s = cusparseSpMV(h, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, A, X, &beta, Y, CUDA_R_64F,
                         CUSPARSE_SPMV_ALG_DEFAULT, buf);
    back(y, dy, rows);
    cusparseDestroySpMat(A), cusparseDestroyDnVec(X), cusparseDestroyDnVec(Y), cusparseDestroy(h);
    return s;
}
// x (n complex128) := its FFT (direction -1) or unnormalized inverse (+1).
extern "C" int fft(int n, double *x, int direction) {
    cufftHandle p;
    cufftCreate(&p);
    size_t work = 0;
    cufftMakePlan1d(p, n, CUFFT_Z2Z, 1, &work);
    cufftDoubleComplex *d = dev(reinterpret_cast<cufftDoubleComplex *>(x), n);
    int s = cufftXtExec(p, d, d, direction);
    back(reinterpret_cast<cufftDoubleComplex *>(x), d, n);
    cufftDestroy(p);
    return s;
}
""")
    lib = tmp_path / "liblibs.so"
    subprocess.run([EMU_NVCC, "-shared", str(src), "-o", str(lib), "-lcusolver", "-lcusparse", "-lcufft"], check=True)
    so = ctypes.CDLL(str(lib))
    ptr = lambda x: x.ctypes.data_as(ctypes.c_void_p)
    rng = np.random.default_rng(7)

    a = rng.random((5, 5))
    b = rng.random(5)
    lu, x, piv = np.asfortranarray(a), b.copy(), np.zeros(5, np.int32)
    assert so.lu_solve(5, ptr(lu), ptr(x), ptr(piv)) == 0
    np.testing.assert_allclose(a @ x, b, rtol=1e-12)
    # Partial pivoting: the first pivot is the row of the largest |a[:, 0]|.
    assert piv[0] == np.argmax(np.abs(a[:, 0])) + 1
    L, U = np.tril(lu, -1) + np.eye(5), np.triu(lu)
    P = np.eye(5)
    for i, p in enumerate(piv):
        P[[i, p - 1]] = P[[p - 1, i]]
    np.testing.assert_allclose(P @ a, L @ U, rtol=1e-12, atol=1e-12)
    singular = np.asfortranarray(np.array([[1.0, 2.0], [2.0, 4.0]]))
    assert so.lu_solve(2, ptr(singular), ptr(np.ones(2)), ptr(np.zeros(2, np.int32))) == 2

    m = rng.random((4, 4)).astype(np.float32)
    spd = (m @ m.T + 4 * np.eye(4)).astype(np.float32)
    c, y = np.asfortranarray(spd), np.ones(4, np.float32)
    assert so.cholesky_solve(4, ptr(c), ptr(y)) == 0
    np.testing.assert_allclose(np.tril(c), np.linalg.cholesky(spd), rtol=1e-5)
    np.testing.assert_allclose(spd @ y, np.ones(4), rtol=1e-4)
    indefinite = np.asfortranarray(np.diag([1.0, -1.0, 1.0]).astype(np.float32))
    assert so.cholesky_solve(3, ptr(indefinite), ptr(np.ones(3, np.float32))) == 2

    import scipy.sparse
    dense = rng.random((6, 4)) * (rng.random((6, 4)) < 0.5)
    csr = scipy.sparse.csr_matrix(dense)
    xs, ys = rng.random(4), rng.random(6)
    out = ys.copy()
    assert so.spmv(6, 4, csr.nnz, ptr(csr.indptr.astype(np.int32)), ptr(csr.indices.astype(np.int32)),
                   ptr(csr.data), ptr(xs), ctypes.c_double(2.0), ctypes.c_double(0.5), ptr(out)) == 0
    np.testing.assert_allclose(out, 2.0 * dense @ xs + 0.5 * ys, rtol=1e-12)

    z = rng.random(21) + 1j * rng.random(21)
    f = z.copy()
    assert so.fft(21, ptr(f), -1) == 0
    np.testing.assert_allclose(f, np.fft.fft(z), rtol=1e-12, atol=1e-12)
    assert so.fft(21, ptr(f), 1) == 0
    np.testing.assert_allclose(f / 21, z, rtol=1e-12, atol=1e-12)
