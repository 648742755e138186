#!/usr/bin/env python3
"""Library build time per program: DaCe's own route (`SDFG.compile()`: its
code generator, then CMake configure + build), `SDFG.compile()` through
`sdfgc.dace.enable()` (sdfgc's code, compiled directly without CMake), and
`sdfgc.build` (sdfgc + one compiler command). Medians (not in CI).

    build/venv-dace/bin/python scripts/bench-build-time.py [--limit N] [--filter SUBSTR]
    build/venv-gt4py/bin/python scripts/bench-build-time.py --gt4py /work/shared/gt4py

Default programs: the NPBench fixtures' `program.sdfg`; `--gt4py DIR`: every
`cpu*.sdfg` under DIR (gt4py's own SDFGs, DaCe 2.x JSON). Needs DaCe (1.0.2
or 2.x) and the sdfgc package (installed, or PYTHONPATH=python with $SDFGC).

Columns (seconds of wall time): DaCe's `compile()` in a fresh build folder,
of which its CMake configure + build (`configure_and_compile`); `enable()`
with a cold library cache, split into sdfgc's generation (including DaCe's
preparation of the SDFG object; the compiler starts at its end), the wait
for the compiler in DaCe's compile step (what of the compile did not overlap
DaCe's own work), and the rest (DaCe's deep copy, folder writing, hashing,
stub copy); `enable()`
again in a fresh build folder with the library cache warm (another process
or build folder building the same program); `sdfgc.build` with no cache.
The loader stub is compiled once before the first program (once per DaCe
version, as in a session) and reported on its own.
"""
import argparse
import glob
import os
import statistics
import sys
import tempfile
import time

import dace
from dace.codegen import codegen, compiler

import sdfgc
import sdfgc.dace
from sdfgc import _dace_build

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def timed(fn):
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


class Spent:
    """Wraps a module function, summing the seconds spent in it."""

    def __init__(self, module, attr):
        self.module, self.attr, self.total = module, attr, 0.0
        self.fn = getattr(module, attr)

        def wrapper(*a, **k):
            t = time.perf_counter()
            try:
                return self.fn(*a, **k)
            finally:
                self.total += time.perf_counter() - t

        setattr(module, attr, wrapper)

    def restore(self):
        setattr(self.module, self.attr, self.fn)


def programs(args):
    if args.gt4py:
        paths = sorted(glob.glob(os.path.join(args.gt4py, "**", "cpu*.sdfg"), recursive=True))
        out = [(os.path.relpath(p, args.gt4py)[:-5], p) for p in paths]
    else:
        out = sorted((c, os.path.join(args.fixtures, c, "program.sdfg")) for c in os.listdir(args.fixtures)
                     if os.path.exists(os.path.join(args.fixtures, c, "program.sdfg")))
    return [(n, p) for n, p in out if args.filter in n][: args.limit]


def fresh(sdfg_path, folder, suffix):
    sdfg = dace.SDFG.from_file(sdfg_path)
    sdfg.name = sdfg.name + suffix  # a name no loaded library has
    dace.Config.set("default_build_folder", value=folder)
    return sdfg


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--fixtures", default=os.path.join(REPO, "fixtures", "npbench"))
    ap.add_argument("--gt4py", default="", help="a folder of gt4py SDFGs (cpu*.sdfg)")
    ap.add_argument("--limit", type=int, default=40)
    ap.add_argument("--filter", default="")
    ap.add_argument("--no-dace", action="store_true", help="skip DaCe's own route")
    args = ap.parse_args()
    cases = programs(args)
    dace.Config.set("compiler", "use_cache", value=False)
    root = tempfile.mkdtemp(prefix="bench-build-")
    os.environ["SDFGC_CACHE_DIR"] = os.path.join(root, "cache")
    t_stub = timed(lambda: _dace_build.stub(os.path.join(root, "stub"), "warmup"))
    print(f"DaCe {dace.__version__}; loader stub compiled once: {t_stub:.2f} s")
    head = ["DaCe", "(CMake)", "enable", "(sdfgc)", "(wait)", "(rest)", "warm", "build"]
    print(f"{'program':44} " + " ".join(f"{h:>8}" for h in head) + "  (seconds)", flush=True)
    rows = []
    for i, (name, path) in enumerate(cases):
        work = os.path.join(root, str(i))
        try:
            t_dace = t_cmake = float("nan")
            if not args.no_dace:
                cmake = Spent(compiler, "configure_and_compile")
                try:
                    sdfg = fresh(path, os.path.join(work, "dace"), f"_d{i}")
                    t_dace = timed(lambda: sdfg.compile(return_program_handle=False))
                finally:
                    cmake.restore()
                t_cmake = cmake.total
            sdfgc.dace.enable()
            gen = Spent(codegen, "generate_code")
            try:
                # a name of its own: two variants of one program may give one source (a cache hit)
                sdfg = fresh(path, os.path.join(work, "cold"), f"_s{i}")
                t_cold = timed(lambda: sdfg.compile(return_program_handle=False))
                step = _dace_build.timings[-1]
                assert not step["hit"], step
                t_gen, t_cc = gen.total, step["compile"]
                sdfg = fresh(path, os.path.join(work, "warm"), f"_s{i}")
                t_warm = timed(lambda: sdfg.compile(return_program_handle=False))
                assert _dace_build.timings[-1]["hit"], _dace_build.timings[-1]
            finally:
                gen.restore()
                sdfgc.dace.disable()
            assert not glob.glob(os.path.join(work, "cold", "**", "CMakeCache.txt"), recursive=True)
            t_build = timed(lambda: sdfgc.build(path, build_dir=os.path.join(work, "b"), cache=False))
        except Exception as e:  # DaCe (or sdfgc) cannot build this one: say so, go on
            print(f"{name:44} skipped: {type(e).__name__}: {str(e).splitlines()[0][:80]}", flush=True)
            continue
        row = (t_dace, t_cmake, t_cold, t_gen, t_cc, t_cold - t_gen - t_cc, t_warm, t_build)
        rows.append((name, row))
        print(f"{name:44} " + " ".join(f"{v:8.2f}" for v in row), flush=True)
    if not rows:
        sys.exit("no program built")
    med = [statistics.median(r[j] for _, r in rows) for j in range(len(head))]
    print(f"{'median (' + str(len(rows)) + ')':44} " + " ".join(f"{v:8.2f}" for v in med))
    if not args.no_dace:
        print(f"enable() / DaCe compile(): {med[2] / med[0]:.3f} cold, {med[6] / med[0]:.3f} warm cache; "
              f"sdfgc.build / DaCe compile(): {med[7] / med[0]:.3f}")


if __name__ == "__main__":
    main()
