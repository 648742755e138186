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
    assert out == "    sdfgc_emu_launch(dim3(dim3(f(a, b), 1, 1)), dim3(__block), [&] { k_0(x, y); });\n"
    assert "sdfgc_emu_launch_fibers(" in emu.emulate_launches("__syncthreads();\nk<<<1, 2>>>(a);\n")
