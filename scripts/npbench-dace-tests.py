#!/usr/bin/env python3
"""SDFGs of the NPBench kernels in DaCe's own test suite, for the timing
differential (issue 40): the kernels `../shared/dace-tests/tests/npbench`
holds, most of which are not among the cases of `../shared/npbench`.

For each test file the program its test builds (`<name>.to_sdfg(`, the
first in the file) is made by DaCe 1.0.2's frontend, simplified
(`program.sdfg`), and auto-optimized for the CPU (`program.autoopt.sdfg`),
into OUT/<file stem>/. No case.json: scripts/timediff.py then starts every
free symbol at 5 and doubles the sizes until a call takes milliseconds,
with random inputs (a kernel whose inputs must be indices, e.g. spmv's CSR
arrays, can fail there; it is reported, not timed).

    build/venv-dace/bin/python scripts/npbench-dace-tests.py [--out build/npbench-dt] [NAME...]
    python3 scripts/timediff.py build/npbench-dt/*/program*.sdfg --json build/timediff/npbench-dt.jsonl

Nothing of DaCe's test code is copied: the files are imported from the suite.
"""
import argparse
import copy
import importlib.util
import os
import re
import sys
import traceback

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SUITE = os.path.join(os.path.dirname(ROOT), "shared", "dace-tests", "tests", "npbench")


def program_name(path):
    """The program the test builds: the first `<name>.to_sdfg(` in the file."""
    with open(path) as fh:
        m = re.search(r"([A-Za-z_][A-Za-z_0-9]*)\.to_sdfg\(", fh.read())
    return m.group(1) if m else None


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("names", nargs="*", help="file stems to make (default: all)")
    ap.add_argument("--out", default=os.path.join(ROOT, "build", "npbench-dt"))
    ap.add_argument("--suite", default=SUITE)
    args = ap.parse_args()

    import dace
    from dace.transformation.auto.auto_optimize import auto_optimize

    files = sorted(
        os.path.join(d, f)
        for d, _, fs in os.walk(args.suite)
        for f in fs
        if f.endswith("_test.py")
    )
    made = failed = 0
    for path in files:
        stem = os.path.basename(path)[: -len("_test.py")]
        if args.names and stem not in args.names:
            continue
        name = program_name(path)
        if name is None:
            continue
        out = os.path.join(args.out, stem)
        os.makedirs(out, exist_ok=True)
        try:
            spec = importlib.util.spec_from_file_location(f"npbdt_{stem}", path)
            mod = importlib.util.module_from_spec(spec)
            sys.path.insert(0, os.path.dirname(path))
            spec.loader.exec_module(mod)
            prog = getattr(mod, name)
            sdfg = prog.to_sdfg(simplify=True)
            sdfg.name = f"npbdt_{stem}"
            sdfg.save(os.path.join(out, "program.sdfg"))
            ao = copy.deepcopy(sdfg)
            ao = auto_optimize(ao, dace.dtypes.DeviceType.CPU)
            ao.save(os.path.join(out, "program.autoopt.sdfg"))
            made += 1
            print(f"made {stem} ({name})", flush=True)
        except Exception:
            failed += 1
            print(f"FAILED {stem} ({name}):\n{traceback.format_exc(limit=3)}", flush=True)
    print(f"{made} made, {failed} failed")
    return 1 if failed and not made else 0


if __name__ == "__main__":
    sys.exit(main())
