"""Time per call of DaCe's distributed jacobi_2d sample, DaCe's library
against sdfgc's, built with the same compiler and flags (DaCe's
`compiler.cpu.args`: sdfgc's library through `sdfgc.dace.enable()`).

    mpirun -np K python scripts/bench-mpi.py [--n 1200] [--tsteps 50] [--repeat 7]

The program is the sample's `jacobi_2d_dist` (`../shared/dace-tests/samples/
distributed/jacobi_2d.py`, imported, not copied), prepared as the sample
does (simplify, MapFusion, simplify) and called with the sample's arguments
for a 1x1, 2x1, 2x2, 4x2 or 4x4 process grid. Rank 0 builds each library,
the other ranks load it. The two libraries are called in turn, `--repeat`
times each after one warm-up call; one call's time is the slowest rank's
(between barriers). Both results are checked against each other. Rank 0
prints one JSON line: ranks, n, tsteps, the median seconds per call of each
library and their ratio (sdfgc / DaCe).
"""

import argparse
import copy
import importlib.util
import json
import os
import sys
import time

import numpy as np
from mpi4py import MPI

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SAMPLE = os.path.join(ROOT, "..", "shared", "dace-tests", "samples", "distributed", "jacobi_2d.py")
GRIDS = {1: (1, 1), 2: (2, 1), 4: (2, 2), 8: (4, 2), 16: (4, 4)}


def sample_module(path):
    spec = importlib.util.spec_from_file_location("jacobi_2d_sample", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def arguments(comm, n, tsteps):
    """The sample's arguments for this rank (rank 0 holds the whole arrays)."""
    px, py = GRIDS[comm.size]
    pi, pj = comm.rank // py, comm.rank % py
    off = dict(noff=0, soff=0, woff=0, eoff=0)
    nb = dict(nn=(pi - 1) * py + pj, ns=(pi + 1) * py + pj, nw=pi * py + pj - 1, ne=pi * py + pj + 1)
    if pi == 0:
        off["noff"], nb["nn"] = 1, MPI.PROC_NULL
    if pi == px - 1:
        off["soff"], nb["ns"] = 1, MPI.PROC_NULL
    if pj == 0:
        off["woff"], nb["nw"] = 1, MPI.PROC_NULL
    if pj == py - 1:
        off["eoff"], nb["ne"] = 1, MPI.PROC_NULL
    if comm.rank == 0:
        i, j = np.meshgrid(np.arange(n), np.arange(n), indexing="ij")
        a, b = i * (j + 2) / n, i * (j + 3) / n
    else:
        a, b = np.empty((n, n)), np.empty((n, n))
    return dict(A=a, B=b, TSTEPS=tsteps, lNx=n // px, lNy=n // py, rank=comm.rank, size=comm.size, Px=px, Py=py,
                pi=pi, pj=pj, **off, **nb)


def build(comm, sdfg):
    """Rank 0 compiles, the other ranks load the library it built."""
    from dace.sdfg.utils import load_precompiled_sdfg

    func = sdfg.compile() if comm.rank == 0 else None
    comm.Barrier()
    if comm.rank != 0:
        func = load_precompiled_sdfg(sdfg.build_folder)
    comm.Barrier()
    return func


def one_call(comm, func, args):
    fresh = {k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in args.items()}
    comm.Barrier()
    t0 = time.perf_counter()
    func(**fresh)
    comm.Barrier()
    took = comm.allreduce(time.perf_counter() - t0, op=MPI.MAX)
    return took, fresh


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=1200)
    ap.add_argument("--tsteps", type=int, default=50)
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--sample", default=SAMPLE)
    args = ap.parse_args()
    comm = MPI.COMM_WORLD
    if comm.size not in GRIDS or args.n % max(GRIDS[comm.size]):
        sys.exit(f"ranks must be one of {sorted(GRIDS)} and --n divisible by the grid")
    from dace.transformation.dataflow import MapFusion
    import sdfgc.dace

    mod = sample_module(args.sample)
    sdfg = mod.jacobi_2d_dist.to_sdfg(simplify=False)
    sdfg.simplify()
    sdfg.apply_transformations_repeated([MapFusion])
    sdfg.simplify()
    theirs = copy.deepcopy(sdfg)
    theirs.name = sdfg.name + "_dace"
    ours = copy.deepcopy(sdfg)
    ours.name = sdfg.name + "_sdfgc"
    funcs = {"dace": build(comm, theirs)}
    sdfgc.dace.enable()
    funcs["sdfgc"] = build(comm, ours)
    sdfgc.dace.disable()
    call_args = arguments(comm, args.n, args.tsteps)
    times = {k: [] for k in funcs}
    outs = {}
    for k, f in funcs.items():
        _, outs[k] = one_call(comm, f, call_args)  # warm-up
    for _ in range(args.repeat):
        for k, f in funcs.items():
            took, _ = one_call(comm, f, call_args)
            times[k].append(took)
    if comm.rank == 0:
        same = all(np.allclose(outs["dace"][x], outs["sdfgc"][x]) for x in ("A", "B"))
        med = {k: float(np.median(v)) for k, v in times.items()}
        print(json.dumps(dict(ranks=comm.size, n=args.n, tsteps=args.tsteps, repeat=args.repeat, same_result=same,
                              dace_s=round(med["dace"], 4), sdfgc_s=round(med["sdfgc"], 4),
                              ratio=round(med["sdfgc"] / med["dace"], 3),
                              omp_threads=os.environ.get("OMP_NUM_THREADS", "default"))), flush=True)


if __name__ == "__main__":
    main()
