#!/usr/bin/env python3
"""Library build time per program: sdfgc + g++ (`sdfgc.build`) against
DaCe's own route (`SDFG.compile()`: its code generator, then CMake
configure + build), and DaCe's CMake build of sdfgc's code
(`sdfgc.dace.enable()`). Medians over the NPBench fixtures (not in CI).

    build/venv-dace/bin/python scripts/bench-build-time.py [--limit N] [--filter SUBSTR]

Needs DaCe (1.0.2 or 2.x) and the sdfgc package (installed, or
PYTHONPATH=python with $SDFGC). Every build is cold: fresh cache and build
folders. Prints one line per program and the medians.
"""
import argparse
import os
import statistics
import sys
import tempfile
import time

import dace
from dace.codegen import compiler

import sdfgc
import sdfgc.dace

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def timed(fn):
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--fixtures", default=os.path.join(REPO, "fixtures", "npbench"))
    ap.add_argument("--limit", type=int, default=12)
    ap.add_argument("--filter", default="")
    args = ap.parse_args()
    cases = sorted(c for c in os.listdir(args.fixtures)
                   if args.filter in c and os.path.exists(os.path.join(args.fixtures, c, "program.sdfg")))
    cases = cases[: args.limit]
    rows = []
    # g++ with DaCe's own CPU flags too (-O3 -march=native ...), for a like-for-like compile
    dace_flags = ["-std=c++17", "-shared", *dace.Config.get("compiler", "cpu", "args").split()]
    print(f"{'program':24} {'sdfgc+g++':>10} {'(DaCe flags)':>12} {'DaCe compile':>13} {'DaCe CMake':>11} "
          f"{'sdfgc+CMake':>12}  (seconds)")
    for case in cases:
        path = os.path.join(args.fixtures, case, "program.sdfg")
        with tempfile.TemporaryDirectory() as tmp:
            t_sdfgc = timed(lambda: sdfgc.build(path, build_dir=os.path.join(tmp, "c"), cache=False))
            t_flags = timed(lambda: sdfgc.build(path, build_dir=os.path.join(tmp, "f"), cache=False, flags=dace_flags))
            dace.Config.set("default_build_folder", value=os.path.join(tmp, "dace"))
            cmake_times = []
            original = compiler.configure_and_compile

            def configure_and_compile(*a, **k):
                t = time.perf_counter()
                try:
                    return original(*a, **k)
                finally:
                    cmake_times.append(time.perf_counter() - t)

            compiler.configure_and_compile = configure_and_compile
            try:
                sdfg = dace.SDFG.from_file(path)
                t_dace = timed(lambda: sdfg.compile(return_program_handle=False))
                sdfgc.dace.enable()
                try:
                    sdfg2 = dace.SDFG.from_file(path)
                    sdfg2.name = sdfg2.name + "_sdfgc"
                    t_hook = timed(lambda: sdfg2.compile(return_program_handle=False))
                finally:
                    sdfgc.dace.disable()
            except Exception as e:  # DaCe (or sdfgc) cannot build this one: say so, go on
                print(f"{case:24} skipped: {type(e).__name__}: {str(e).splitlines()[0][:80]}")
                continue
            finally:
                compiler.configure_and_compile = original
        row = (case, t_sdfgc, t_flags, t_dace, cmake_times[0], t_hook)
        rows.append(row)
        print(f"{case:24} {t_sdfgc:10.2f} {t_flags:12.2f} {t_dace:13.2f} {cmake_times[0]:11.2f} {t_hook:12.2f}",
              flush=True)
    if not rows:
        sys.exit("no program built")
    med = [statistics.median(r[i] for r in rows) for i in range(1, 6)]
    print(f"{'median (' + str(len(rows)) + ')':24} {med[0]:10.2f} {med[1]:12.2f} {med[2]:13.2f} {med[3]:11.2f} "
          f"{med[4]:12.2f}")
    print(f"sdfgc+g++ / DaCe compile: {med[0] / med[2]:.2f} (DaCe flags: {med[1] / med[2]:.2f}); "
          f"sdfgc+g++ / DaCe CMake alone: {med[0] / med[3]:.2f} (DaCe flags: {med[1] / med[3]:.2f})")


if __name__ == "__main__":
    main()
