#!/usr/bin/env python3
"""Makes the GPU_ThreadBlock / GPU_Shared fixtures under fixtures/gpu-tb/.

Run with DaCe 1.0.2 (the project's venv):

    /work/main/build/venv-dace1/bin/python scripts/make-gpu-tb-fixtures.py [OUTDIR]

Each case is built with DaCe's SDFG API (GPU_Device kernel maps holding
GPU_ThreadBlock maps and GPU_Shared / Register transients, as DaCe's tiling
transformations produce them), validated, run through DaCe's own code
generator (which needs no GPU), and saved as `program.gpu.sdfg` next to a
`case.json` in the corpus format (see fixtures/corpus/README.md) with the
inputs and numpy-computed expected outputs.
"""
import os

import numpy as np

import dace
from dace import dtypes
from dace.memlet import Memlet

from fixturelib import arglist_abi, array_arg, generator_info, out_dir, output_entry, write_json

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
GPU = dtypes.StorageType.GPU_Global
SHARED = dtypes.StorageType.GPU_Shared
REG = dtypes.StorageType.Register
DEV = dtypes.ScheduleType.GPU_Device
TB = dtypes.ScheduleType.GPU_ThreadBlock
SEQ = dtypes.ScheduleType.Sequential


def stencil_shared():
    """B[i] = (A[i] + 2 A[i+1] + A[i+2]) / 4, 64 outputs per block.

    One thread-block map (66 threads) loads a 66-element tile of A into
    shared memory, a second one (64 threads: its range does not fill the
    66-thread block) reads three neighbours from the tile, through a
    Register scalar. The two thread-block scopes need a __syncthreads().
    """
    N = dace.symbol("N")
    sdfg = dace.SDFG("tb_stencil_shared")
    sdfg.add_array("A", [N + 2], dace.float64, storage=GPU)
    sdfg.add_array("B", [N], dace.float64, storage=GPU)
    sdfg.add_array("tile", [66], dace.float64, storage=SHARED, transient=True)
    sdfg.add_scalar("acc", dace.float64, storage=REG, transient=True)
    st = sdfg.add_state("main")
    A = st.add_read("A")
    B = st.add_write("B")
    me, mx = st.add_map("blocks", dict(b="0:N/64"), schedule=DEV)
    t1e, t1x = st.add_map("load", dict(t="0:66"), schedule=TB)
    t2e, t2x = st.add_map("compute", dict(t="0:64"), schedule=TB)
    tile = st.add_access("tile")
    acc = st.add_access("acc")
    load = st.add_tasklet("load", {"a"}, {"s"}, "s = a")
    comb = st.add_tasklet("combine", {"l", "c", "r"}, {"o"}, "o = l + 2.0 * c + r")
    scale = st.add_tasklet("scale", {"x"}, {"y"}, "y = 0.25 * x")
    st.add_memlet_path(A, me, t1e, load, dst_conn="a", memlet=Memlet("A[64*b + t]"))
    st.add_memlet_path(load, t1x, tile, src_conn="s", memlet=Memlet("tile[t]"))
    st.add_memlet_path(tile, t2e, comb, dst_conn="l", memlet=Memlet("tile[t]"))
    st.add_memlet_path(tile, t2e, comb, dst_conn="c", memlet=Memlet("tile[t + 1]"))
    st.add_memlet_path(tile, t2e, comb, dst_conn="r", memlet=Memlet("tile[t + 2]"))
    st.add_edge(comb, "o", acc, None, Memlet("acc[0]"))
    st.add_edge(acc, None, scale, "x", Memlet("acc[0]"))
    st.add_memlet_path(scale, t2x, mx, B, src_conn="y", memlet=Memlet("B[64*b + t]"))
    n = 320
    rng = np.random.default_rng(20261130)
    a = rng.standard_normal(n + 2)
    b = (a[:-2] + 2.0 * a[1:-1] + a[2:]) / 4.0
    return sdfg, {"N": n}, [("A", a, "in"), ("B", b, "out")], [
        "gpu_threadblock", "gpu_shared", "register", "syncthreads", "partial_block"]


def matmul_tiled():
    """C = A @ B with 8x8 output tiles per block and 4-wide K tiles.

    The kernel map (one block per output tile) holds a Sequential map over K
    tiles; each iteration copies an 8x4 tile of A and a 4x8 tile of B into
    shared memory with two thread-block maps (8x4 and 4x8 threads in an 8x8
    block: their ranges do not fill it) and accumulates with a third one
    (8x8). Shared tiles are rewritten by the next iteration, so the scopes
    need barriers.
    """
    M, N, K = (dace.symbol(s) for s in "MNK")
    sdfg = dace.SDFG("tb_matmul_tiled")
    sdfg.add_array("A", [M, K], dace.float64, storage=GPU)
    sdfg.add_array("B", [K, N], dace.float64, storage=GPU)
    sdfg.add_array("C", [M, N], dace.float64, storage=GPU)
    sdfg.add_array("sA", [8, 4], dace.float64, storage=SHARED, transient=True)
    sdfg.add_array("sB", [4, 8], dace.float64, storage=SHARED, transient=True)
    # State 1: zero C.
    init = sdfg.add_state("init")
    init.add_mapped_tasklet("zero", dict(i="0:M", j="0:N"), {}, "c = 0.0",
                            {"c": Memlet("C[i, j]")}, schedule=DEV, external_edges=True)
    st = sdfg.add_state_after(init, "main")
    A = st.add_read("A")
    B = st.add_read("B")
    C = st.add_write("C")
    me, mx = st.add_map("tiles", dict(bi="0:M/8", bj="0:N/8"), schedule=DEV)
    ke, kx = st.add_map("ktiles", dict(kt="0:K/4"), schedule=SEQ)
    lae, lax = st.add_map("load_a", dict(ti="0:8", tj="0:4"), schedule=TB)
    lbe, lbx = st.add_map("load_b", dict(ti="0:4", tj="0:8"), schedule=TB)
    ce, cx = st.add_map("mult", dict(ti="0:8", tj="0:8"), schedule=TB)
    ie, ix = st.add_map("inner", dict(k="0:4"), schedule=SEQ)
    sA = st.add_access("sA")
    sB = st.add_access("sB")
    ta = st.add_tasklet("load_a", {"a"}, {"s"}, "s = a")
    tb = st.add_tasklet("load_b", {"b"}, {"s"}, "s = b")
    st.add_memlet_path(A, me, ke, lae, ta, dst_conn="a", memlet=Memlet("A[8*bi + ti, 4*kt + tj]"))
    st.add_memlet_path(B, me, ke, lbe, tb, dst_conn="b", memlet=Memlet("B[4*kt + ti, 8*bj + tj]"))
    st.add_memlet_path(ta, lax, sA, src_conn="s", memlet=Memlet("sA[ti, tj]"))
    st.add_memlet_path(tb, lbx, sB, src_conn="s", memlet=Memlet("sB[ti, tj]"))
    mul = st.add_tasklet("fma", {"x", "y"}, {"z"}, "z = x * y")
    st.add_memlet_path(sA, ce, ie, mul, dst_conn="x", memlet=Memlet("sA[ti, k]"))
    st.add_memlet_path(sB, ce, ie, mul, dst_conn="y", memlet=Memlet("sB[k, tj]"))
    st.add_memlet_path(mul, ix, cx, kx, mx, C, src_conn="z",
                       memlet=Memlet("C[8*bi + ti, 8*bj + tj]", wcr="lambda a, b: a + b"))
    m, n, k = 16, 24, 12
    rng = np.random.default_rng(20261131)
    a = rng.standard_normal((m, k))
    b = rng.standard_normal((k, n))
    return sdfg, {"M": m, "N": n, "K": k}, [("A", a, "in"), ("B", b, "in"), ("C", a @ b, "out")], [
        "gpu_threadblock", "gpu_shared", "syncthreads", "sequential_in_kernel", "wcr", "partial_block"]


CASES = {"tb_stencil_shared": stencil_shared, "tb_matmul_tiled": matmul_tiled}


def make(name, out):
    sdfg, symbols, args, features = CASES[name]()
    sdfg.validate()
    code = "\n".join(c.clean_code for c in sdfg.generate_code())
    assert "__syncthreads" in code and "__shared__" in code, f"{name}: DaCe emitted no block-level code"
    signature = arglist_abi(sdfg, code)  # checked against DaCe's own signature
    d = os.path.join(out, name)
    os.makedirs(d, exist_ok=True)
    sdfg.save(os.path.join(d, "program.gpu.sdfg"))
    case_args, outputs = [], []
    for arg, value, role in args:
        value = np.ascontiguousarray(value)
        file = f"{arg}.{'out' if role == 'out' else 'in'}.bin"
        value.tofile(os.path.join(d, file))
        case_args.append(array_arg(arg, value, role, file))
        if role == "out":
            outputs.append(output_entry(arg, value, (1e-10, 1e-12), file))
    case = {
        "name": name,
        "description": CASES[name].__doc__.strip().splitlines()[0],
        "symbols": symbols,
        "args": case_args,
        "outputs": outputs,
        "default_variant": "program.gpu.sdfg",
        "abi": {"program.gpu.sdfg": signature},
        "features": features,
        "variants": {"program.gpu.sdfg": True},
        "sdfg_name": sdfg.name,
        "generator": generator_info("scripts/make-gpu-tb-fixtures.py",
                                    checks="validated; DaCe code generation emits __shared__ and __syncthreads"),
    }
    write_json(os.path.join(d, "case.json"), case)
    print(f"{name}: {d}")


if __name__ == "__main__":
    out = out_dir(os.path.join(ROOT, "fixtures", "gpu-tb"))
    for name in CASES:
        make(name, out)
