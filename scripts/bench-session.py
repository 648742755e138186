#!/usr/bin/env python3
"""A whole gt4py test session, wall clock, with DaCe's generator and through
sdfgc (`SDFGC_DACE=1`: sdfgc's code, built without CMake), each with fresh
caches: what a gt4py user waits for (issue 25). Not part of CI.

    python3 scripts/bench-session.py [--gens dace,sdfgc] [--phases] [--out build/bench-session] [-- PYTEST ARGS]
    python3 scripts/bench-session.py --suite ../shared/icon4py --venv build/venv-icon -- \
        --backend=dace_cpu --grid=simple --benchmark-disable model/atmosphere/dycore/tests/dycore/stencil_tests/test_x.py

Default selection: gt4py 1.2.1's `ffront_tests -k dace_cpu`
(../shared/gt4py-suite, about 20 minutes with DaCe's generator on 2 quiet cores).
Uses build/venv-gt4py (scripts/install-test-tools.sh) with the sdfgc package
installed from this checkout (`--no-install` keeps what is there).

Each generator runs pytest in its own fresh copy of the suite, with a fresh
gt4py build cache, DaCe's build folders inside it, a fresh sdfgc cache
(library cache, precompiled header and loader stub are all built inside
the session) and ccache off. The sdfgc run goes first, so whatever the
operating system's file cache gives a second run goes to DaCe's.
`--sdfgc-cache DIR` reuses an earlier run's sdfgc cache instead: with every
library a copy, the session's wall clock is what gt4py and DaCe spend
outside sdfgc and the compiler (the floor no code generator goes below). The load
average is sampled every 30 s: numbers taken on a busy machine say so.
`--phases` splits each run's time (scripts/session_phases): gt4py's
translation, its compile step and the parts of `SDFG.compile()`, with
gt4py's builds serial so that the phases are parts of the wall clock.

Writes `summary.json` and `summary.md` under `--out`: per generator the wall
clock, pytest's outcome counts, sdfgc's counts (compiled, refused, foreign
libraries, CMake builds) and the tests whose outcome differs.
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import threading
import time
import xml.etree.ElementTree as ET
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SUITE = Path(os.environ.get("SDFGC_GT4PY_SUITE", ROOT.parent / "shared" / "gt4py-suite"))
FFRONT = "tests/next_tests/integration_tests/feature_tests/ffront_tests"


def outcomes(xml):
    """junit XML -> {test id: passed|failed|error|skipped|xfailed}."""
    res = {}
    if not xml.exists():
        return res
    for case in ET.parse(xml).getroot().iter("testcase"):
        tid = f"{case.get('classname')}::{case.get('name')}"
        kind = "passed"
        for child in case:
            if child.tag in ("failure", "error"):
                kind = "failed" if child.tag == "failure" else "error"
            elif child.tag == "skipped":
                kind = "xfailed" if (child.get("type") or "").endswith("xfail") else "skipped"
        res[tid] = kind
    return res


class LoadSampler(threading.Thread):
    """The 1-minute load average every `every` seconds while a run lasts."""

    def __init__(self, every=30.0):
        super().__init__(daemon=True)
        self.every, self.samples, self.stop = every, [], threading.Event()

    def run(self):
        while not self.stop.is_set():
            with open("/proc/loadavg") as f:
                self.samples.append(float(f.read().split()[0]))
            self.stop.wait(self.every)


def phase_totals(folder):
    """{phase: {calls, total_s, median_s}} over the session's processes
    (`session_phases/sitecustomize.py`)."""
    calls = {}
    for f in sorted(folder.glob("*.json")):
        for name, secs in json.loads(f.read_text()).items():
            calls.setdefault(name, []).extend(secs)
    return {name: {"calls": len(secs), "total_s": round(sum(secs), 1),
                   "median_s": round(statistics.median(secs), 3)} for name, secs in calls.items()}


def run(gen, args, venv, pytest_args):
    out = Path(args.out)
    work = out / gen
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    shutil.copytree(args.suite, work / "suite")
    env = {k: v for k, v in os.environ.items() if k not in ("SDFGC", "PYTHONPATH", "SDFGC_DACE")}
    env.update(
        PATH=f"{venv}/bin:{env['PATH']}",
        GT4PY_BUILD_CACHE_LIFETIME="persistent",
        GT4PY_BUILD_CACHE_DIR=str(work / "gt4py-cache"),
        SDFGC_CACHE_DIR=args.sdfgc_cache or str(work / "sdfgc-cache"),
        CCACHE_DISABLE="1",
    )
    if gen == "sdfgc":
        env.update(SDFGC_DACE="1", SDFGC_DACE_LOG=str(work / "sdfgc.log"))
    if args.phases:  # every process adds up its phases; serial: they are parts of the wall clock
        env.update(PYTHONPATH=str(ROOT / "scripts" / "session_phases"), SDFGC_PHASES_DIR=str(work / "phases"),
                   GT4PY_BUILD_JOBS_MODE="serial")
    cmd = [f"{venv}/bin/python", "-m", "pytest", "-q", "-p", "no:cacheprovider", "--tb=line",
           f"--junitxml={work / 'junit.xml'}", *pytest_args]
    sampler = LoadSampler()
    sampler.start()
    t0 = time.monotonic()
    with open(work / "pytest.log", "w") as log:
        rc = subprocess.run(cmd, cwd=work / "suite", env=env, stdout=log, stderr=subprocess.STDOUT).returncode
    wall = time.monotonic() - t0
    sampler.stop.set()
    res = outcomes(work / "junit.xml")
    counts = {}
    for kind in res.values():
        counts[kind] = counts.get(kind, 0) + 1
    rec = {"gen": gen, "rc": rc, "wall_s": round(wall, 1), "counts": counts,
           "load_median": statistics.median(sampler.samples) if sampler.samples else None,
           "load_max": max(sampler.samples) if sampler.samples else None}
    if gen == "sdfgc":
        log = (work / "sdfgc.log").read_text().splitlines() if (work / "sdfgc.log").exists() else []
        for key in ("compiled", "refused", "foreign", "checked", "cmake"):
            rec[key] = sum(1 for line in log if line.startswith(key + " "))
    if args.phases:
        rec["phases"] = phase_totals(work / "phases")
    shutil.rmtree(work / "suite", ignore_errors=True)  # the caches stay for inspection
    return rec, res


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--gens", default="sdfgc,dace")
    ap.add_argument("--suite", default=str(SUITE),
                    help="the test folder copied for each run (default: ../shared/gt4py-suite; "
                         "ICON4Py's: ../shared/icon4py with --venv build/venv-icon)")
    ap.add_argument("--venv", default=str(ROOT / "build" / "venv-gt4py"))
    ap.add_argument("--out", default=str(ROOT / "build" / "bench-session"))
    ap.add_argument("--no-install", action="store_true")
    ap.add_argument("--sdfgc-cache", default=None, metavar="DIR",
                    help="sdfgc's cache to use instead of a fresh one (an earlier run's: every "
                         "library a copy, what is left is gt4py's and DaCe's own work)")
    ap.add_argument("--phases", action="store_true",
                    help="time gt4py's translation, its compile step and SDFG.compile()'s parts in every "
                         "process (scripts/session_phases), with gt4py's builds serial")
    ap.add_argument("pytest_args", nargs="*", help=f"default: {FFRONT} -k dace_cpu")
    args = ap.parse_args()
    args.out = str(Path(args.out).absolute())  # the runs' caches are named in other folders
    venv = Path(args.venv).absolute()
    if not (venv / "bin" / "python").exists():
        sys.exit(f"error: {venv} is missing: run scripts/install-test-tools.sh")
    if not args.no_install:
        subprocess.run(["cargo", "build", "--release", "--quiet"], cwd=ROOT, check=True)
        subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet",
                        "--no-build-isolation", str(ROOT / "python")],
                       cwd=ROOT, check=True, env={**os.environ, "PATH": f"{venv}/bin:{os.environ['PATH']}"})
    pytest_args = args.pytest_args or [FFRONT, "-k", "dace_cpu"]
    Path(args.out).mkdir(parents=True, exist_ok=True)
    recs, results = [], {}
    for gen in args.gens.split(","):
        rec, res = run(gen, args, venv, pytest_args)
        recs.append(rec)
        results[gen] = res
        print(json.dumps(rec), flush=True)
    differ = []
    if len(results) == 2:
        a, b = results.values()
        for tid in sorted(set(a) | set(b)):
            if a.get(tid) != b.get(tid):
                differ.append({"test": tid, **{g: r.get(tid) for g, r in results.items()}})
    summary = {"selection": pytest_args, "runs": recs, "differ": differ}
    Path(args.out, "summary.json").write_text(json.dumps(summary, indent=1) + "\n")
    lines = ["| generator | wall clock (s) | passed | failed | skipped | xfailed | load (median, max) |",
             "|---|---:|---:|---:|---:|---:|---|"]
    for r in recs:
        c = r["counts"]
        lines.append(f"| {r['gen']} | {r['wall_s']} | {c.get('passed', 0)} | {c.get('failed', 0) + c.get('error', 0)}"
                     f" | {c.get('skipped', 0)} | {c.get('xfailed', 0)} | {r['load_median']}, {r['load_max']} |")
    for r in recs:
        if "phases" in r:
            lines.append(f"\n{r['gen']} phases (calls, total s, median s): " + ", ".join(
                f"{k} {p['calls']} {p['total_s']} {p['median_s']}" for k, p in r["phases"].items()))
    walls = {r["gen"]: r["wall_s"] for r in recs}
    if "dace" in walls and "sdfgc" in walls:
        lines.append(f"\nsdfgc / DaCe wall clock: {walls['sdfgc'] / walls['dace']:.3f}")
    lines.append(f"tests whose outcome differs: {len(differ)}")
    lines += [f"- {d}" for d in differ[:50]]
    Path(args.out, "summary.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
