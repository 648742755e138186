#!/usr/bin/env python3
"""ICON4Py's dycore stencil tests in gt4py's four transient memory modes,
through DaCe's generator and through sdfgc (`SDFGC_DACE=1`), with the
project's pytest plugin (`python/sdfgc/icon4py_modes.py`). Not part of CI
(each test builds its programs: about a minute per test on 2 busy cores).

    python3 scripts/icon4py-modes.py [--tests test_a.py,test_b.py|all] [--modes scoped,external]
                                     [--gens dace,sdfgc] [--jobs 1] [--nice 10] [--out build/icon4py-modes]
    python3 scripts/icon4py-modes.py --gpu-emulated --gens sdfgc [...]   # gt4py's GPU SDFGs, emulated GPU

Needs the ICON4Py venv of ../shared/icon4py/README.md with the sdfgc package
installed (default `build/venv-icon`, `--venv`). For every mode and generator:
pytest from a copy of the ICON4Py test folder (fresh gt4py build cache, junit
XML; EXTERNAL: `--workspace-report`, the bytes each program asked the one
shared workspace for, at the simple grid's sizes). SDFGs handed to sdfgc are
kept (`SDFGC_DACE_KEEP`, one folder per mode). Then:

- results: passed/failed/error/skipped and wall-clock per mode and
  generator, and the tests that pass with DaCe's generator but not through
  sdfgc; a test that fails through sdfgc in a run without DaCe's generator
  is rerun alone with DaCe's generator in that mode (`<mode>-dace-recheck`,
  `--no-recheck` skips it): a failure both ways is the test's or the
  plugin's, not sdfgc's;
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
import concurrent.futures
import glob
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NICE = 10
ICON = Path(os.environ.get("ICON4PY_SRC", ROOT.parent / "shared" / "icon4py"))
STENCILS = "model/atmosphere/dycore/tests/dycore/stencil_tests"
DEFAULT_TESTS = [
    "test_compute_airmass.py",
    "test_mo_math_divrot_rot_vertex_ri_dsl.py",
    "test_interpolate_vn_to_half_levels_and_compute_kinetic_energy_on_edges.py",
]


def sh(cmd, **kw):
    return subprocess.run(cmd, text=True, capture_output=True, **kw)


def all_tests():
    return sorted(p.name for p in (ICON / STENCILS).glob("test_*.py"))


def run_pytest(args, venv, src, out, mode, gen, tests, tag=None):
    """pytest over `tests` (file names, or node ids `file::Class::test[...]`);
    returns (results, wall-clock seconds)."""
    tag = tag or f"{args.prefix}{mode}-{gen}"
    env = dict(os.environ)
    env.update(
        GT4PY_BUILD_CACHE_LIFETIME="persistent",
        GT4PY_BUILD_CACHE_DIR=str(out / "cache" / tag),
        # sdfgc's library cache (by content) fresh for every run too
        SDFGC_CACHE_DIR=str(out / "sdfgc-cache" / tag),
        PATH=f"{venv}/bin:{env['PATH']}",
    )
    env.pop("SDFGC_DACE", None)
    if gen == "sdfgc":
        shutil.rmtree(out / "sdfgs" / (args.prefix + mode), ignore_errors=True)
        if not args.gpu_emulated:  # the CPU SDFGs' allocation counts
            shutil.rmtree(out / "percall" / mode, ignore_errors=True)
            if (out / "percall" / f"{mode}.json").exists():
                os.remove(out / "percall" / f"{mode}.json")
        env.update(SDFGC_DACE="1", SDFGC_DACE_LOG=str(out / f"{tag}.sdfgc.log"),
                   SDFGC_DACE_KEEP=str(out / "sdfgs" / (args.prefix + mode)))
    shutil.rmtree(out / "cache" / tag, ignore_errors=True)
    shutil.rmtree(out / "sdfgc-cache" / tag, ignore_errors=True)
    for old in glob.glob(str(out / (tag + ".workspace.json")) + "*") + [str(out / (tag + ".xml"))]:
        if os.path.exists(old):
            os.remove(old)
    if args.gpu_emulated:  # gt4py's GPU SDFGs, built against the emulated GPU runtime, host fields
        env["NVCC"] = str(ROOT / "scripts" / "emu-nvcc")
    device = "gpu" if args.gpu_emulated else "cpu"
    cmd = ["nice", "-n", str(args.nice), f"{venv}/bin/python", "-m", "pytest", "-p", "no:cacheprovider",
           "-p", "sdfgc.icon4py_modes", f"--backend=dace_{device}_{mode}",
           f"--workspace-report={out / (tag + '.workspace.json')}",
           "--grid=simple", "--benchmark-disable", "--timeout=900",
           f"--junitxml={out / (tag + '.xml')}", "-v"]
    if args.jobs > 1:
        cmd += ["-n", str(args.jobs)]
    cmd += [f"{STENCILS}/{t}" for t in tests]
    t0 = time.monotonic()
    with open(out / f"{tag}.log", "w") as log:  # streamed: a run stopped early keeps its outcomes
        subprocess.run(cmd, cwd=src, env=env, stdout=log, stderr=subprocess.STDOUT)
    wall = time.monotonic() - t0
    return results(out / f"{tag}.xml"), wall


def node_id(name):
    """junit `classname::name` (dotted module path and class) -> a pytest
    node id relative to the stencil folder."""
    cls, test = name.split("::", 1)
    parts = cls.split(".")
    for i, part in enumerate(parts):
        if part.startswith("test_"):
            return "::".join([part + ".py", *parts[i + 1:], test])
    return None


def results(xml):
    out = {}
    if not xml.exists():
        return results_from_log(xml.with_suffix(".log"))
    for case in ET.parse(xml).getroot().iter("testcase"):
        name = f"{case.get('classname')}::{case.get('name')}"
        state = "passed"
        for child in case:
            if child.tag in ("failure", "error", "skipped"):
                state = {"failure": "failed"}.get(child.tag, child.tag)
        out[name] = state
    return out


def log_wall(log):
    """pytest's own wall-clock ('... in 123.45s') from a run's log."""
    m = re.findall(r" in ([\d.]+)s(?: \(|\s*=*\s*$)", log.read_text() if log.exists() else "", re.M)
    return float(m[-1]) if m else None


def results_from_log(log):
    """A run stopped before pytest wrote its junit XML: the outcomes `-v`
    printed so far, by the same names (dotted classname::test)."""
    out = {}
    if not log.exists():
        return out
    states = {"PASSED": "passed", "FAILED": "failed", "ERROR": "error", "SKIPPED": "skipped"}
    for m in re.finditer(r"^(?:\[gw\d+\] \[[ \d]+%\] )?(PASSED|FAILED|ERROR|SKIPPED) (\S+)\s*$|"
                         r"^(\S+\.py::\S+) (PASSED|FAILED|ERROR|SKIPPED)\s*$", log.read_text(), re.M):
        state, node = (m.group(1), m.group(2)) if m.group(1) else (m.group(4), m.group(3))
        path, _, rest = node.partition("::")
        cls, _, test = rest.rpartition("::")
        name = path[:-3].replace("/", ".") + ("." + cls if cls else "") + "::" + test
        out[name] = states[state]
    return out


# The simple grid of the stencil tests: 18 cells, 27 edges, 9 vertices, 40
# levels (ICON4Py's stencil-test default, 41 half levels): every domain
# bound a program gets lies in [0, 27] x [0, 41].
def plan_bounds(plan):
    """Every symbol of the plan's formulas at the simple grid's largest
    domain: lower bounds (`*_start`, `start_*`, `*_range_0`) 0, vertical
    upper bounds (`vertical_end`, `*_K_range_1`) 41, horizontal ones 27."""
    text = json.dumps(plan)
    names = set(re.findall(r"[A-Za-z_]\w*", " ".join(
        p["bytes"] for st in plan.values() if isinstance(st, dict) for p in st.get("programs", []))))
    out = []
    for n in sorted(names - {"sdfgc_max", "sdfgc_min", "sdfgc_int_ceil"}):
        if n.endswith("_start") or n.startswith("start_") or n.endswith("_range_0"):
            out.append(f"{n}=0")
        elif n == "vertical_end" or n.endswith("_K_range_1"):
            out.append(f"{n}=41")
        else:
            out.append(f"{n}=27")
    return tuple(out) if text else ()


def workspace_table(out, sdfgc):
    def load(gen):
        # one file, or one per pytest-xdist worker (FILE.gw0, ...)
        sizes = {}
        for p in sorted(glob.glob(str(out / f"external-{gen}.workspace.json")) +
                        glob.glob(str(out / f"external-{gen}.workspace.json.*"))):
            for prog in json.loads(Path(p).read_text())["programs"]:
                # a program per test (its parametrisation): the same name can
                # be built with other compile-time domains by other tests
                key = (prog["name"], prog.get("test", ""))
                sizes[key] = max(sizes.get(key, 0), prog["bytes"])
        return sizes

    dace, ours = load("dace"), load("sdfgc")
    rows = [(f"{n} ({t.rsplit('::', 1)[-1]})" if t else n, dace[n, t], ours[n, t])
            for n, t in sorted(set(dace) & set(ours))]
    ratios = [o / d for _, d, o in rows if d]
    kept = sorted((out / "sdfgs" / "external").glob("*.sdfg"))
    plan = bound = None
    if kept:
        r = sh([sdfgc, "plan", *map(str, kept), "--json"])
        plan = json.loads(r.stdout) if r.returncode == 0 else {"error": r.stderr.strip()}
        # the one size at the simple grid's largest domain
        bounds = plan_bounds(plan) if "error" not in plan else ()
        r = sh([sdfgc, "plan", *map(str, kept), "--json", *(a for b in bounds for a in ("--symbol", b))])
        if r.returncode == 0:
            heap = json.loads(r.stdout).get("CPU_Heap", {})
            bound = {"symbols": bounds, "max_bytes": heap.get("max_bytes"), "largest": heap.get("largest"),
                     "programs": len(heap.get("programs", [])),
                     "unevaluated": [p["name"] for p in heap.get("programs", []) if p.get("bytes_value") is None]}
        else:
            bound = {"error": r.stderr.strip()}
    return {
        "programs": [{"name": n, "dace_bytes": d, "sdfgc_bytes": o} for n, d, o in rows],
        "largest_dace": max((d for _, d, _ in rows), default=0),
        "largest_sdfgc": max((o for _, _, o in rows), default=0),
        "median_ratio": statistics.median(ratios) if ratios else None,
        "plan": plan,
        "plan_at_bounds": bound,
        "kept": len(kept),
        "sdfgc_only": len(set(ours) - set(dace)),
        "dace_only": len(set(dace) - set(ours)),
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


def allocs_per_call(out, sdfgc, mode, iters, jobs=1):
    work = out / "percall" / mode
    work.mkdir(parents=True, exist_ok=True)
    counter = out / "malloc_count.so"
    if not counter.exists():
        subprocess.run(["gcc", "-O2", "-shared", "-fPIC", str(ROOT / "scripts" / "malloc_count.c"), "-o",
                        str(counter)], check=True)
    files = sorted((out / "sdfgs" / mode).glob("*.sdfg"))
    with concurrent.futures.ThreadPoolExecutor(max(1, jobs)) as pool:
        return list(pool.map(lambda f: alloc_count(f, work, counter, sdfgc, iters), files))


def alloc_count(f, work, counter, sdfgc, iters):
    """One kept SDFG: sdfgc's library and sample main, heap allocations of
    1 and 1+iters calls."""
    if True:
        d = work / f.stem
        shutil.rmtree(d, ignore_errors=True)
        d.mkdir()
        r = sh([sdfgc, str(f), "--target", "cpp", "--emit-sample", "-o", str(d)])
        if r.returncode != 0:
            return {"name": f.stem, "error": r.stderr.strip()[:300]}
        main_cpp = next(d.glob("*_main.cpp"))
        name = main_cpp.name[: -len("_main.cpp")]
        cxx = ["nice", "-n", str(NICE), "g++", "-std=c++17", "-O2", "-fopenmp", "-fPIC"]
        r = sh(cxx + ["-shared", str(d / f"{name}.cpp"), "-o", str(d / f"lib{name}.so")])
        if r.returncode == 0:
            r = sh(cxx + [str(main_cpp), f"-L{d}", f"-l{name}", f"-Wl,-rpath,{d}", "-o", str(d / "main")])
        if r.returncode != 0:
            return {"name": f.stem, "error": r.stderr.strip()[:300]}
        syms = sample_symbols(d / "main")

        def count(n):
            # libgomp mallocs a team per parallel region with one thread (scripts/bench-percall.sh)
            env = dict(os.environ, LD_PRELOAD=str(counter), OMP_NUM_THREADS=str(max(2, os.cpu_count() or 2)))
            p = sh([str(d / "main"), "--iterations", str(n), *syms], env=env)
            m = re.search(r"malloc_count: (\d+)", p.stderr)
            return int(m.group(1)) if m and p.returncode == 0 else None

        a1, an = count(1), count(1 + iters)
        return {"name": f.stem, "first": a1, "per_call": None if a1 is None or an is None
                else (an - a1) / iters}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tests", default=",".join(DEFAULT_TESTS),
                    help="test files of the stencil folder, comma-separated, or 'all' (every test_*.py)")
    ap.add_argument("--tests-from", default=None,
                    help="a file of tests (file names or node ids, one a line) instead of --tests")
    ap.add_argument("--modes", default="scoped,persistent,pool,external")
    ap.add_argument("--gens", default="dace,sdfgc")
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--nice", type=int, default=10, help="niceness of pytest and the compilers")
    ap.add_argument("--no-recheck", action="store_true",
                    help="do not rerun sdfgc's failures with DaCe's generator")
    ap.add_argument("--gpu-emulated", action="store_true",
                    help="gt4py's GPU SDFGs (dace_gpu_<mode>), sdfgc's CUDA built by scripts/emu-nvcc against "
                         "the emulated GPU runtime, fields on the host (sdfgc only; runs tagged gpu-<mode>-sdfgc)")
    ap.add_argument("--venv", default=str(ROOT / "build" / "venv-icon"))
    ap.add_argument("--out", default=str(ROOT / "build" / "icon4py-modes"))
    ap.add_argument("--iterations", type=int, default=20)
    ap.add_argument("--skip-tests", action="store_true", help="only summarise an earlier run")
    ap.add_argument("--no-allocs", action="store_true", help="no allocation counts this time")
    ap.add_argument("--allocs-only", default=None, metavar="MODE",
                    help="count the allocations per call of MODE's kept SDFGs (percall/MODE.json, which "
                         "later summaries reuse) and exit")
    args = ap.parse_args()
    args.prefix = "gpu-" if args.gpu_emulated else ""
    if args.gpu_emulated:
        args.no_recheck = True  # DaCe's generator cannot build for a GPU here
    if args.gpu_emulated and "dace" in args.gens.split(","):
        ap.error("--gpu-emulated runs sdfgc only (--gens sdfgc): DaCe's generator needs nvcc and a GPU")
    global NICE
    NICE = args.nice
    out = Path(args.out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    sdfgc = os.environ.get("SDFGC", str(ROOT / "target" / "release" / "sdfgc"))
    if args.allocs_only:
        rows = allocs_per_call(out, sdfgc, args.allocs_only, args.iterations, args.jobs)
        (out / "percall" / f"{args.allocs_only}.json").write_text(json.dumps(rows, indent=1))
        print(f"{args.allocs_only}: {len(rows)} programs, {sum(r.get('per_call') == 0 for r in rows)} with 0")
        return
    tests = all_tests() if args.tests == "all" else [t for t in args.tests.split(",") if t]
    if args.tests_from:
        tests = [t.strip() for t in Path(args.tests_from).read_text().splitlines() if t.strip()]
    modes = [m for m in args.modes.split(",") if m]
    gens = [g for g in args.gens.split(",") if g]
    src = out / "icon4py"
    if not src.exists():
        shutil.copytree(ICON, src)
    old = out / "summary.json"
    summary = {"tests": tests, "results": {}}
    if old.exists():  # runs of earlier invocations with the same --out are kept (and summarised)
        summary["results"] = json.loads(old.read_text()).get("results", {})
    for mode in modes:
        for gen in gens:
            tag = f"{args.prefix}{mode}-{gen}"
            if args.skip_tests:
                res = results(out / f"{tag}.xml")
                wall = summary["results"].get(tag, {}).get("wall_s") or log_wall(out / f"{tag}.log")
            else:
                print(f"== {tag}", flush=True)
                res, wall = run_pytest(args, args.venv, src, out, mode, gen, tests)
            counts = {s: sum(v == s for v in res.values()) for s in ("passed", "failed", "error", "skipped")}
            summary["results"][tag] = {"counts": counts, "tests": res, "wall_s": wall}
            print(f"{tag}: {counts}, wall-clock {wall and round(wall)} s", flush=True)
            bad = [t for t, v in res.items() if v in ("failed", "error")]
            if gen == "sdfgc" and "dace" not in gens and bad and not args.no_recheck and not args.skip_tests:
                ids = [i for i in map(node_id, bad) if i]
                rtag = f"{mode}-dace-recheck"
                print(f"== {rtag}: {len(ids)} tests", flush=True)
                rres, rwall = run_pytest(args, args.venv, src, out, mode, "dace", ids, tag=rtag)
                summary["results"][rtag] = {"tests": rres, "wall_s": rwall}
                print(f"{rtag}: {rres}", flush=True)
        if f"{mode}-dace" in summary["results"] and f"{mode}-sdfgc" in summary["results"]:
            d, s = summary["results"][f"{mode}-dace"]["tests"], summary["results"][f"{mode}-sdfgc"]["tests"]
            summary["results"][f"{mode}-regressions"] = sorted(
                t for t, v in d.items() if v == "passed" and s.get(t) != "passed")
    summary["workspace"] = workspace_table(out, sdfgc)
    summary["allocs_per_call"] = {}
    for m in ("persistent", "external"):
        if args.no_allocs or not (out / "sdfgs" / m).exists():
            continue
        cached = out / "percall" / f"{m}.json"
        if not cached.exists():
            cached.parent.mkdir(parents=True, exist_ok=True)
            cached.write_text(json.dumps(allocs_per_call(out, sdfgc, m, args.iterations, args.jobs), indent=1))
        summary["allocs_per_call"][m] = json.loads(cached.read_text())
    (out / "summary.json").write_text(json.dumps(summary, indent=1))
    lines = ["| mode | generator | passed | failed | error | skipped | wall-clock (s) |",
             "|---|---|---:|---:|---:|---:|---:|"]
    for tag, r in summary["results"].items():
        if tag.endswith("-regressions") or "counts" not in r:
            continue
        c = r["counts"]
        mode, gen = tag.rsplit("-", 1)
        wall = r.get("wall_s")
        lines.append(f"| {mode} | {gen} | {c['passed']} | {c['failed']} | {c['error']} | {c['skipped']} | "
                     f"{'' if wall is None else round(wall)} |")
    for tag, r in summary["results"].items():
        if tag.endswith("-recheck"):
            lines.append(f"{tag} (sdfgc's failures with DaCe's generator): {r['tests']}")
    ws = summary["workspace"]
    lines += ["", "| program | DaCe bytes | sdfgc bytes |", "|---|---:|---:|"]
    lines += [f"| {p['name']} | {p['dace_bytes']} | {p['sdfgc_bytes']} |" for p in ws["programs"]]
    lines += ["", f"largest: DaCe {ws['largest_dace']}, sdfgc {ws['largest_sdfgc']}; "
              f"median sdfgc/DaCe {ws['median_ratio']}; sdfgc plan over {ws['kept']} kept EXTERNAL SDFGs "
              f"at the simple grid's largest domain: {ws['plan_at_bounds']}"]
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
