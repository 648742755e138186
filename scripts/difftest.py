#!/usr/bin/env python3
"""Differential test: DaCe's own library against sdfgc's, for any SDFG file.

    PYTHONPATH=python <venv with DaCe>/bin/python scripts/difftest.py FILE.sdfg
        [--symbol N=10 ...] [--case DIR] [--seed 1] [--mode external] [--repeat 2]
    python3 scripts/difftest.py --sweep fixtures    # every CPU fixture, both DaCe versions

Both libraries are built from the same SDFG and loaded by DaCe's own
`CompiledSDFG` (so sdfgc's parameter list is checked the way gt4py and DaCe
call it); both run on the same inputs: random ones by default (floats in
[-1, 1), integers in [0, 4), booleans), or the case's inputs with --case. Every
non-transient array and scalar after the call is compared (rtol 1e-6, atol
1e-9 for floats; exact for integers and booleans). Symbols: --symbol, else
case.json's, else 5. Prints one JSON line; exit 0 iff all outputs agree.

--sweep DIR runs every CPU variant under DIR with the DaCe version that wrote
it (`program.v2.sdfg` and gt4py `cpu*.sdfg` with DaCe 2.x from
$DACE2_PYTHON, the others with DaCe 1.0.2 from $DACE1_PYTHON) and prints a
table.
"""
import argparse
import copy
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def evaluate(expr, symbols):
    import dace
    return int(dace.symbolic.evaluate(expr, symbols)) if not isinstance(expr, int) else expr


def random_values(rng, npdt, shape):
    """Random inputs of numpy type `npdt`: floats (and complex parts) in
    [-1, 1), integers in [0, 4), booleans."""
    import numpy as np
    if np.issubdtype(npdt, np.bool_):
        return rng.integers(0, 2, size=shape).astype(npdt)
    if np.issubdtype(npdt, np.integer):
        return rng.integers(0, 4, size=shape).astype(npdt)
    if np.issubdtype(npdt, np.complexfloating):
        return (rng.uniform(-1, 1, size=shape) + 1j * rng.uniform(-1, 1, size=shape)).astype(npdt)
    return rng.uniform(-1, 1, size=shape).astype(npdt)


def make_inputs(sdfg, symbols, rng, case_dir):
    """Arguments by name: arrays as 1-D spans of total_size elements."""
    import numpy as np
    import dace
    from dace import data as dt

    case_args = {}
    if case_dir:
        with open(os.path.join(case_dir, "case.json")) as fh:
            case = json.load(fh)
        case_args = {a["name"]: a for a in case["args"]}
    out = {}
    for name, desc in sdfg.arglist().items():
        if name in symbols and not isinstance(desc, dt.Array):
            out[name] = desc.dtype.type(symbols[name])
            continue
        npdt = desc.dtype.as_numpy_dtype()
        if isinstance(desc, dt.Array):
            n = evaluate(desc.total_size, symbols)
            shape = (max(n, 1),)
        else:
            shape = ()
        ca = case_args.get(name)
        if ca is not None and ca.get("file"):
            v = np.fromfile(os.path.join(case_dir, ca["file"]), dtype=npdt)
            v = v.reshape(-1)[: max(shape[0], 1)].copy() if shape else npdt.type(v[0])
        else:
            v = random_values(rng, npdt, shape)
        out[name] = v if shape else (npdt.type(v) if not isinstance(v, np.generic) else v)
    return out


def run_one(args):
    import numpy as np
    import dace

    sys.path.insert(0, os.path.join(ROOT, "python"))
    import sdfgc.dace as hook

    symbols = {}
    if args.case:
        with open(os.path.join(args.case, "case.json")) as fh:
            symbols.update(json.load(fh).get("symbols", {}))
    for s in args.symbol:
        k, v = s.split("=", 1)
        symbols[k] = int(v)
    base = dace.SDFG.from_file(args.file)
    for s in set(map(str, base.free_symbols)) | set(base.symbols):
        symbols.setdefault(s, 5)
    result = {"file": os.path.relpath(args.file), "dace": dace.__version__}
    rng = np.random.default_rng(args.seed)
    inputs = make_inputs(base, symbols, rng, args.case)
    with tempfile.TemporaryDirectory(prefix="difftest-") as tmp:
        dace.Config.set("default_build_folder", value=tmp)
        libs = {}
        for who in ("dace", "sdfgc"):
            sdfg = dace.SDFG.from_file(args.file)
            sdfg.name = f"{sdfg.name}_{who}"
            if who == "sdfgc":
                hook.enable(mode=args.mode)
            try:
                libs[who] = sdfg.compile()
            except Exception as e:  # noqa: BLE001 - reported, not hidden
                hook.disable()
                msg = str(e).strip().splitlines()
                result.update(status=f"{who}-failed", error=(msg[-1] if msg else repr(e))[:400])
                return result
        # The hook stays on while the libraries run: it gives sdfgc's
        # external-mode library its workspace on the first call.
        outs = {}
        for who, lib in libs.items():
            # The compiled SDFG's arguments (library expansion may add symbols).
            wanted = lib._sdfg.arglist()
            for _ in range(args.repeat):
                vals = copy.deepcopy(inputs)
                call = dict(vals)
                call.update({k: v for k, v in symbols.items() if k in wanted and k not in call})
                lib(**call)
            outs[who] = vals
        hook.disable()
    bad = {}
    for name, ref in outs["dace"].items():
        got = outs["sdfgc"][name]
        if not isinstance(ref, np.ndarray):
            continue
        if np.issubdtype(ref.dtype, np.floating) or np.issubdtype(ref.dtype, np.complexfloating):
            ok = np.allclose(got, ref, rtol=1e-6, atol=1e-9, equal_nan=True)
        else:
            ok = np.array_equal(got, ref)
        if not ok:
            diff = np.abs(got.astype(np.complex128) - ref.astype(np.complex128))
            bad[name] = float(np.nanmax(diff))
    result.update(status="agree" if not bad else "differ", differ=bad)
    return result


def sweep(root):
    d1 = os.environ.get("DACE1_PYTHON", "/work/venv-dace1/bin/python")
    d2 = os.environ.get("DACE2_PYTHON", "/work/venv-dace2/bin/python")
    rows = []
    for dirpath, _, files in sorted(os.walk(root)):
        if "case.json" not in files:
            continue
        for f in sorted(files):
            if f in ("program.sdfg", "program.external.sdfg", "program.autoopt.sdfg"):
                py = d1
            elif f == "program.v2.sdfg" or (f.startswith("cpu") and f.endswith(".sdfg")):
                py = d2
            else:
                continue
            env = dict(os.environ, PATH=os.path.dirname(py) + os.pathsep + os.environ["PATH"])
            r = subprocess.run([py, __file__, os.path.join(dirpath, f), "--case", dirpath], env=env,
                               capture_output=True, text=True, timeout=1800)
            line = r.stdout.strip().splitlines()[-1] if r.stdout.strip() else ""
            try:
                res = json.loads(line)
            except ValueError:
                res = {"file": os.path.join(dirpath, f), "status": "error",
                       "error": (r.stderr.strip().splitlines() or ["?"])[-1][:300]}
            rows.append(res)
            print(json.dumps(res), flush=True)
    counts = {}
    for r in rows:
        counts[r["status"]] = counts.get(r["status"], 0) + 1
    print("\n| status | files |\n|---|---|")
    for k, v in sorted(counts.items()):
        print(f"| {k} | {v} |")
    return 0 if all(r["status"] == "agree" for r in rows) else 1


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("file", nargs="?")
    ap.add_argument("--symbol", action="append", default=[])
    ap.add_argument("--case")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--mode", default=None)
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--sweep")
    args = ap.parse_args()
    if args.sweep:
        return sweep(args.sweep)
    res = run_one(args)
    print(json.dumps(res))
    return 0 if res.get("status") == "agree" else 1


if __name__ == "__main__":
    sys.exit(main())
