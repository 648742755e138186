#!/usr/bin/env python3
"""ICON4Py's dycore stencil tests in gt4py's four transient memory modes,
through DaCe's generator and through sdfgc (`SDFGC_DACE=1`), with the
project's pytest plugin (`python/sdfgc/icon4py_modes.py`). Not part of CI
(each test builds its programs: about a minute per test on 2 busy cores).

    python3 scripts/icon4py-modes.py [--tests test_a.py,test_b.py] [--modes scoped,external]
                                     [--gens dace,sdfgc] [--jobs 1] [--out build/icon4py-modes]

Needs the ICON4Py venv of ../shared/icon4py/README.md with the sdfgc package
installed (default `build/venv-icon`, `--venv`). For every mode and generator:
pytest from a copy of the ICON4Py test folder (fresh gt4py build cache, junit
XML; EXTERNAL: `--workspace-report`, the bytes each program asked the one
shared workspace for, at the simple grid's sizes). SDFGs handed to sdfgc are
kept (`SDFGC_DACE_KEEP`, one folder per mode). Then:

- results: passed/failed/error/skipped per mode and generator, and the tests
  that pass with DaCe's generator but not through sdfgc;
- workspace: per program, DaCe's bytes (its External transients, as DaCe
  2.0.0a10's `__dace_get_external_memory_size_CPU_Heap` sizes them) against
  sdfgc's packed layout, the largest program (what the shared workspace
  must hold), the median sdfgc/DaCe ratio, and `sdfgc plan` over every kept
  EXTERNAL SDFG (the one size to allocate up front);
- allocations per call: every kept PERSISTENT and EXTERNAL SDFG compiled by
  sdfgc with its sample program (`--emit-sample`: the library loaded by a
  main that calls it), run under the project's LD_PRELOAD malloc counter
  (`scripts/malloc_count.c`) with 1 and 1+N calls: (difference)/N heap
  allocations per call, second and later calls.

Writes `summary.json` and `summary.md` under `--out`.
"""

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ICON = Path(os.environ.get("ICON4PY_SRC", ROOT.parent / "shared" / "icon4py"))
STENCILS = "model/atmosphere/dycore/tests/dycore/stencil_tests"
DEFAULT_TESTS = [
    "test_compute_airmass.py",
    "test_mo_math_divrot_rot_vertex_ri_dsl.py",
    "test_interpolate_vn_to_half_levels_and_compute_kinetic_energy_on_edges.py",
]


def sh(cmd, **kw):
    return subprocess.run(cmd, text=True, capture_output=True, **kw)


def run_pytest(args, venv, src, out, mode, gen, tests):
    tag = f"{mode}-{gen}"
    env = dict(os.environ)
    env.update(
        GT4PY_BUILD_CACHE_LIFETIME="persistent",
        GT4PY_BUILD_CACHE_DIR=str(out / "cache" / tag),
        PATH=f"{venv}/bin:{env['PATH']}",
    )
    env.pop("SDFGC_DACE", None)
    if gen == "sdfgc":
        env.update(SDFGC_DACE="1", SDFGC_DACE_LOG=str(out / f"{tag}.sdfgc.log"),
                   SDFGC_DACE_KEEP=str(out / "sdfgs" / mode))
    shutil.rmtree(out / "cache" / tag, ignore_errors=True)
    cmd = ["nice", "-n", "10", f"{venv}/bin/python", "-m", "pytest", "-p", "no:cacheprovider",
           "-p", "sdfgc.icon4py_modes", f"--backend=dace_cpu_{mode}",
           f"--workspace-report={out / (tag + '.workspace.json')}",
           "--grid=simple", "--benchmark-disable", "--timeout=900",
           f"--junitxml={out / (tag + '.xml')}", "-q"]
    if args.jobs > 1:
        cmd += ["-n", str(args.jobs)]
    cmd += [f"{STENCILS}/{t}" for t in tests]
    r = subprocess.run(cmd, cwd=src, env=env, text=True, capture_output=True)
    (out / f"{tag}.log").write_text(r.stdout + r.stderr)
    return results(out / f"{tag}.xml")


def results(xml):
    out = {}
    if not xml.exists():
        return out
    for case in ET.parse(xml).getroot().iter("testcase"):
        name = f"{case.get('classname')}::{case.get('name')}"
        state = "passed"
        for child in case:
            if child.tag in ("failure", "error", "skipped"):
                state = {"failure": "failed"}.get(child.tag, child.tag)
        out[name] = state
    return out


def workspace_table(out, sdfgc):
    def load(gen):
        p = out / f"external-{gen}.workspace.json"
        if not p.exists():
            return {}
        sizes = {}
        for prog in json.loads(p.read_text())["programs"]:
            sizes[prog["name"]] = max(sizes.get(prog["name"], 0), prog["bytes"])
        return sizes

    dace, ours = load("dace"), load("sdfgc")
    rows = [(n, dace[n], ours[n]) for n in sorted(set(dace) & set(ours))]
    ratios = [o / d for _, d, o in rows if d]
    kept = sorted((out / "sdfgs" / "external").glob("*.sdfg"))
    plan = None
    if kept:
        r = sh([sdfgc, "plan", *map(str, kept), "--json"])
        plan = json.loads(r.stdout) if r.returncode == 0 else {"error": r.stderr.strip()}
    return {
        "programs": [{"name": n, "dace_bytes": d, "sdfgc_bytes": o} for n, d, o in rows],
        "largest_dace": max((d for _, d, _ in rows), default=0),
        "largest_sdfgc": max((o for _, _, o in rows), default=0),
        "median_ratio": statistics.median(ratios) if ratios else None,
        "plan": plan,
        "kept": len(kept),
    }


def sample_symbols(main):
    """Symbol values for the sample: every lower bound 0, every extent 32,
    the computed domain [0, 16) (so indices 1..17 from the sample's fill
    stay inside the fields)."""
    usage = sh([str(main), "--help"]).stdout + sh([str(main), "--help"]).stderr
    vals = []
    for m in re.finditer(r"^  (\w+): int \(default ([^)]*)\)", usage, re.M):
        name, default = m.groups()
        if name == "iterations" or default.startswith("contiguous"):
            continue
        if name.endswith("_start") or name.endswith("_range_0"):
            vals.append(f"{name}=0")
        elif name.endswith("_end"):
            vals.append(f"{name}=16")
        else:
            vals.append(f"{name}=32")
    return vals


def allocs_per_call(out, sdfgc, mode, iters):
    work = out / "percall" / mode
    work.mkdir(parents=True, exist_ok=True)
    counter = out / "malloc_count.so"
    if not counter.exists():
        subprocess.run(["gcc", "-O2", "-shared", "-fPIC", str(ROOT / "scripts" / "malloc_count.c"), "-o",
                        str(counter)], check=True)
    rows = []
    for f in sorted((out / "sdfgs" / mode).glob("*.sdfg")):
        d = work / f.stem
        shutil.rmtree(d, ignore_errors=True)
        d.mkdir()
        r = sh([sdfgc, str(f), "--target", "cpp", "--emit-sample", "-o", str(d)])
        if r.returncode != 0:
            rows.append({"name": f.stem, "error": r.stderr.strip()[:300]})
            continue
        main_cpp = next(d.glob("*_main.cpp"))
        name = main_cpp.name[: -len("_main.cpp")]
        cxx = ["nice", "-n", "10", "g++", "-std=c++17", "-O2", "-fopenmp", "-fPIC"]
        r = sh(cxx + ["-shared", str(d / f"{name}.cpp"), "-o", str(d / f"lib{name}.so")])
        if r.returncode == 0:
            r = sh(cxx + [str(main_cpp), f"-L{d}", f"-l{name}", f"-Wl,-rpath,{d}", "-o", str(d / "main")])
        if r.returncode != 0:
            rows.append({"name": f.stem, "error": r.stderr.strip()[:300]})
            continue
        syms = sample_symbols(d / "main")

        def count(n):
            # libgomp mallocs a team per parallel region with one thread (scripts/bench-percall.sh)
            env = dict(os.environ, LD_PRELOAD=str(counter), OMP_NUM_THREADS=str(max(2, os.cpu_count() or 2)))
            p = sh([str(d / "main"), "--iterations", str(n), *syms], env=env)
            m = re.search(r"malloc_count: (\d+)", p.stderr)
            return int(m.group(1)) if m and p.returncode == 0 else None

        a1, an = count(1), count(1 + iters)
        rows.append({"name": f.stem, "first": a1, "per_call": None if a1 is None or an is None
                     else (an - a1) / iters})
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tests", default=",".join(DEFAULT_TESTS))
    ap.add_argument("--modes", default="scoped,persistent,pool,external")
    ap.add_argument("--gens", default="dace,sdfgc")
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--venv", default=str(ROOT / "build" / "venv-icon"))
    ap.add_argument("--out", default=str(ROOT / "build" / "icon4py-modes"))
    ap.add_argument("--iterations", type=int, default=20)
    ap.add_argument("--skip-tests", action="store_true", help="only summarise an earlier run")
    args = ap.parse_args()
    out = Path(args.out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    sdfgc = os.environ.get("SDFGC", str(ROOT / "target" / "release" / "sdfgc"))
    tests = [t for t in args.tests.split(",") if t]
    modes = [m for m in args.modes.split(",") if m]
    gens = [g for g in args.gens.split(",") if g]
    src = out / "icon4py"
    if not src.exists():
        shutil.copytree(ICON, src)
    summary = {"tests": tests, "results": {}}
    for mode in modes:
        for gen in gens:
            tag = f"{mode}-{gen}"
            if args.skip_tests:
                res = results(out / f"{tag}.xml")
            else:
                print(f"== {tag}", flush=True)
                res = run_pytest(args, args.venv, src, out, mode, gen, tests)
            counts = {s: sum(v == s for v in res.values()) for s in ("passed", "failed", "error", "skipped")}
            summary["results"][tag] = {"counts": counts, "tests": res}
            print(f"{tag}: {counts}", flush=True)
        if "dace" in gens and "sdfgc" in gens:
            d, s = summary["results"][f"{mode}-dace"]["tests"], summary["results"][f"{mode}-sdfgc"]["tests"]
            summary["results"][f"{mode}-regressions"] = sorted(
                t for t, v in d.items() if v == "passed" and s.get(t) != "passed")
    summary["workspace"] = workspace_table(out, sdfgc)
    summary["allocs_per_call"] = {m: allocs_per_call(out, sdfgc, m, args.iterations)
                                  for m in ("persistent", "external") if (out / "sdfgs" / m).exists()}
    (out / "summary.json").write_text(json.dumps(summary, indent=1))
    lines = ["| mode | generator | passed | failed | error | skipped |", "|---|---|---:|---:|---:|---:|"]
    for tag, r in summary["results"].items():
        if tag.endswith("-regressions"):
            continue
        c = r["counts"]
        mode, gen = tag.rsplit("-", 1)
        lines.append(f"| {mode} | {gen} | {c['passed']} | {c['failed']} | {c['error']} | {c['skipped']} |")
    ws = summary["workspace"]
    lines += ["", "| program | DaCe bytes | sdfgc bytes |", "|---|---:|---:|"]
    lines += [f"| {p['name']} | {p['dace_bytes']} | {p['sdfgc_bytes']} |" for p in ws["programs"]]
    lines += ["", f"largest: DaCe {ws['largest_dace']}, sdfgc {ws['largest_sdfgc']}; "
              f"median sdfgc/DaCe {ws['median_ratio']}"]
    for m, rows in summary["allocs_per_call"].items():
        per = [r.get("per_call") for r in rows]
        lines.append(f"allocations per call, {m}: {len(rows)} programs, "
                     f"{sum(p == 0 for p in per)} with 0, others: "
                     f"{[(r['name'], r.get('per_call', r.get('error'))) for r in rows if r.get('per_call') != 0]}")
    (out / "summary.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    bad = any(summary["results"].get(f"{m}-regressions") for m in modes)
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
