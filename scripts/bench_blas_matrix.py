"""sdfgc --blas openblas against DaCe with OpenBLAS on NPBench's matrix
kernels that are not fixtures here (gemm, k3mm, mlp), at NPBench's preset S
(helper of scripts/bench-blas.sh; not part of CI).

    <venv with dace==1.0.2>/bin/python scripts/bench_blas_matrix.py [KERNEL...] [--repeat R] [--save DIR]

Each kernel is NPBench's DaCe program (its `<bench>_dace.py`), simplified by
DaCe (as `program.sdfg` in fixtures/npbench). DaCe's library expands its BLAS
nodes with OpenBLAS and is built by DaCe; sdfgc's is built by
`sdfgc.dace.load(..., blas="openblas")` with the same compiler flags (DaCe's
`compiler.cpu.args`). Both are called alternately on the same inputs; the
outputs must agree, then one markdown row per kernel gives the minimum and
median call of each and sdfgc/DaCe of the minima.
"""
import argparse
import copy
import os
import shlex
import sys
import tempfile
import time

import dace
import dace.libraries.blas as blas
import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python"))
import sdfgc.dace  # noqa: E402

NI, NJ, NK, NL, NM = (dace.symbol(s) for s in ("NI", "NJ", "NK", "NL", "NM"))
N, C_in, S0, S1, S2 = (dace.symbol(s) for s in ("N", "C_in", "S0", "S1", "S2"))


@dace.program
def gemm(alpha: dace.float64, beta: dace.float64, C: dace.float64[NI, NJ], A: dace.float64[NI, NK],
         B: dace.float64[NK, NJ]):
    C[:] = alpha * A @ B + beta * C


@dace.program
def k3mm(A: dace.float64[NI, NK], B: dace.float64[NK, NJ], C: dace.float64[NJ, NM], D: dace.float64[NM, NL]):
    return A @ B @ C @ D


@dace.program
def mlp(input: dace.float32[N, C_in], w1: dace.float32[C_in, S0], b1: dace.float32[S0], w2: dace.float32[S0, S1],
        b2: dace.float32[S1], w3: dace.float32[S1, S2], b3: dace.float32[S2]):
    x1 = np.maximum(input @ w1 + b1, 0)
    x2 = np.maximum(x1 @ w2 + b2, 0)
    x3 = x2 @ w3 + b3
    tmp_max = np.max(x3, axis=-1)
    tmp_out = np.exp(x3 - tmp_max[:, np.newaxis])
    tmp_sum = np.sum(tmp_out, axis=-1)
    return tmp_out / tmp_sum[:, np.newaxis]


def inputs(name, rng):
    """NPBench's preset S sizes; random inputs (scaled so that mlp's softmax
    stays finite)."""
    if name == "gemm":
        s = dict(NI=1000, NJ=1100, NK=1200)
        return s, dict(alpha=1.5, beta=1.2, C=rng.random((1000, 1100)), A=rng.random((1000, 1200)),
                       B=rng.random((1200, 1100)))
    if name == "k3mm":
        s = dict(NI=800, NJ=850, NK=900, NL=950, NM=1000)
        return s, dict(A=rng.random((800, 900)), B=rng.random((900, 850)), C=rng.random((850, 1000)),
                       D=rng.random((1000, 950)))
    s = dict(N=8, C_in=3, S0=30000, S1=2000, S2=2000)
    f = np.float32
    return s, {
        "input": rng.random((8, 3)).astype(f), "w1": (rng.random((3, 30000)) / 3).astype(f),
        "b1": (rng.random(30000) / 3).astype(f), "w2": (rng.random((30000, 2000)) / 30000).astype(f),
        "b2": (rng.random(2000) / 3).astype(f), "w3": (rng.random((2000, 2000)) / 2000).astype(f),
        "b3": (rng.random(2000) / 3).astype(f)
    }


PROGRAMS = {"gemm": gemm, "k3mm": k3mm, "mlp": mlp}


def call(lib, args, symbols):
    """One call on fresh copies of the arguments: (seconds, output)."""
    vals = {k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in args.items()}
    t = time.perf_counter()
    ret = lib(**vals, **symbols)
    dt = time.perf_counter() - t
    return dt, (ret if ret is not None else vals.get("C"))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("kernels", nargs="*", default=list(PROGRAMS))
    ap.add_argument("--repeat", type=int, default=15)
    ap.add_argument("--save", metavar="DIR", help="also save each simplified SDFG as DIR/<kernel>.sdfg")
    opts = ap.parse_args()
    flags = shlex.split(dace.Config.get("compiler", "cpu", "args")) + ["-fopenmp", "-fPIC", "-shared"]
    print("| kernel | DaCe+OpenBLAS min (median) ms | sdfgc --blas openblas min (median) ms | sdfgc/DaCe (min) |")
    print("|---|---:|---:|---:|")
    for name in opts.kernels:
        rng = np.random.default_rng(42)
        symbols, args = inputs(name, rng)
        sdfg = PROGRAMS[name].to_sdfg(simplify=True)
        sdfg.name = f"blasbench_{name}"
        if opts.save:
            os.makedirs(opts.save, exist_ok=True)
            sdfg.save(os.path.join(opts.save, f"{name}.sdfg"))
        with tempfile.TemporaryDirectory(prefix="bench-blas-") as tmp:
            mine = sdfgc.dace.load(copy.deepcopy(sdfg), blas="openblas", flags=flags,
                                   build_dir=os.path.join(tmp, "sdfgc"))
            blas.default_implementation = "OpenBLAS"
            theirs_sdfg = copy.deepcopy(sdfg)
            theirs_sdfg.build_folder = os.path.join(tmp, "dace")
            theirs_sdfg.expand_library_nodes()
            theirs = theirs_sdfg.compile()
            ts, tm = [], []
            out_s = out_m = None
            for _ in range(opts.repeat):
                dt, out_s = call(theirs, args, symbols)
                ts.append(dt)
                dt, out_m = call(mine, args, symbols)
                tm.append(dt)
            if not np.allclose(np.asarray(out_s), np.asarray(out_m), rtol=1e-4, atol=1e-6):
                print(f"| {name} | | WRONG: outputs differ | |")
                continue
            ms = lambda v: f"{min(v) * 1e3:.1f} ({np.median(v) * 1e3:.1f})"  # noqa: E731
            print(f"| {name} | {ms(ts)} | {ms(tm)} | {min(tm) / min(ts):.2f} |", flush=True)


if __name__ == "__main__":
    main()
