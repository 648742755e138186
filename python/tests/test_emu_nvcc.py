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
