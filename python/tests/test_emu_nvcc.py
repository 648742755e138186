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

    missing = subprocess.run([EMU_NVCC, "-shared", str(src), "-o", str(lib), "-lcublas", "-lcusolver"],
                             capture_output=True, text=True)
    assert missing.returncode != 0 and "-lcusolver" in missing.stderr, missing.stderr
    undefined = tmp_path / "undefined.cu"
    undefined.write_text("extern \"C\" int cusolverDnCreate(void **);\n"
                         "extern \"C\" int make(void **h) { return cusolverDnCreate(h); }\n")
    r = subprocess.run([EMU_NVCC, "-shared", str(undefined), "-o", str(lib)], capture_output=True, text=True)
    assert r.returncode != 0 and "cusolverDnCreate" in r.stderr, r.stderr
