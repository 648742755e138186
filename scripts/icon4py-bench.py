#!/usr/bin/env python3
"""ICON4Py's dycore stencils timed three ways with ICON4Py's own benchmark
(`test_and_benchmark`: pytest-benchmark, and gt4py's metrics' `compute`
samples, the time of the compiled call alone) on a torus grid:

    gtfn      gt4py's gtfn_cpu (GridTools C++)
    dace      dace_cpu, DaCe's own generator
    sdfgc     dace_cpu through sdfgc (SDFGC_DACE=1), default memory mode
    external  dace_cpu_external through sdfgc (one shared workspace)

    python3 scripts/icon4py-bench.py                                   # every dycore stencil, torus:128x80, 80 levels
    python3 scripts/icon4py-bench.py --tests test_compute_airmass.py,test_compute_exner_from_rhotheta.py
    python3 scripts/icon4py-bench.py --threads 1,2 --passes 2 --configs gtfn,dace,sdfgc,external
    python3 scripts/icon4py-bench.py --table build/icon4py-bench/results.jsonl   # the tables again

Passes alternate: pass 0 runs the configurations in the order given, pass 1
in the reverse order, and so on; each pass runs every thread count. A pass
of one configuration is one pytest process over all the test files, with
`OMP_NUM_THREADS` set, `OMP_WAIT_POLICY=passive`, the build caches kept
between passes (the first pass compiles; later ones only load), gt4py's
metrics at PERFORMANCE level. The first pass verifies the results; later
ones skip verification (`--skip-stenciltest-verification`). Per stencil and
configuration the time is the median of its `compute` samples (10 calls in
each of 3 rounds after a warm-up round: ICON4Py's defaults), the lower of the
passes' medians. Ratios: sdfgc/dace, external/dace, sdfgc/gtfn. Writes one
JSON line per (pass, threads, configuration, test) to --json (default
build/icon4py-bench/results.jsonl) and prints the tables.

Needs build/venv-icon4py (scripts/install-test-tools.sh) with the sdfgc
package installed (scripts/icon4py-torus.sh installs it; --install here
does the same with the release profile).
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
STENCILS = "model/atmosphere/dycore/tests/dycore/stencil_tests"
CONFIGS = {
    # name: (backend, through sdfgc)
    "gtfn": ("gtfn_cpu", False),
    "dace": ("dace_cpu", False),
    "sdfgc": ("dace_cpu", True),
    "external": ("dace_cpu_external", True),
}


def parse_args():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--grid", default="torus:128x80")
    p.add_argument("--levels", type=int, default=80)
    p.add_argument("--threads", default="2,1", help="comma-separated OpenMP thread counts")
    p.add_argument("--passes", type=int, default=2)
    p.add_argument("--configs", default="gtfn,dace,sdfgc,external")
    p.add_argument("--tests", default="", help="comma-separated test files (default: every stencil test)")
    p.add_argument("--src", default=os.environ.get("ICON4PY_SRC", os.path.join(ROOT, "..", "shared", "icon4py")))
    p.add_argument("--venv", default=os.path.join(ROOT, "build", "venv-icon4py"))
    p.add_argument("--out", default=os.path.join(ROOT, "build", "icon4py-bench"))
    p.add_argument("--json", default=None)
    p.add_argument("--table", default=None, help="print the tables of a JSON-lines file and exit")
    p.add_argument("--install", action="store_true", help="build and pip-install sdfgc (release) first")
    p.add_argument("--timeout", type=int, default=7200, help="seconds per pytest process")
    p.add_argument("--nice", type=int, default=0,
                   help="run pytest under `nice -n N` (negative, as root, to time ahead of other work)")
    return p.parse_args()


def install(venv):
    subprocess.run(["cargo", "build", "--release", "--quiet"], cwd=ROOT, check=True)
    env = dict(os.environ, PATH=f"{venv}/bin:{os.environ['PATH']}")
    subprocess.run([f"{venv}/bin/python", "-m", "pip", "install", "--quiet", "--no-build-isolation",
                    "--config-settings=build-args=--profile release", "./python"], cwd=ROOT, env=env, check=True)


def copy_suite(src, out):
    """ICON4Py's sources, copied once (pytest writes caches next to them)."""
    dst = os.path.join(out, "icon4py")
    if not os.path.isdir(dst):
        shutil.copytree(src, dst + ".tmp", symlinks=True)
        os.rename(dst + ".tmp", dst)
    return dst


def clear_stale_caches(args):
    """gt4py caches a compiled program by its SDFG, whatever compiled it: a
    library built by an earlier sdfgc would be timed again. Drop the sdfgc
    configurations' caches when the installed sdfgc is not the one that
    filled them (its identity: version and binary hash)."""
    ident = subprocess.run([f"{args.venv}/bin/python", "-c", "import sdfgc._binary as b; print(b.identity())"],
                           capture_output=True, text=True).stdout.strip()
    stamp = os.path.join(args.out, "cache", "sdfgc-identity")
    old = open(stamp).read().strip() if os.path.exists(stamp) else None
    if old != ident:
        for config, (_, through_sdfgc) in CONFIGS.items():
            if through_sdfgc:
                shutil.rmtree(os.path.join(args.out, "cache", config), ignore_errors=True)
        os.makedirs(os.path.dirname(stamp), exist_ok=True)
        with open(stamp, "w") as f:
            f.write(ident + "\n")


def run_pass(args, suite, tests, config, threads, pass_no):
    backend, through_sdfgc = CONFIGS[config]
    cache = os.path.join(args.out, "cache", config)
    os.makedirs(cache, exist_ok=True)
    bench = os.path.join(args.out, "raw", f"p{pass_no}-t{threads}-{config}.json")
    os.makedirs(os.path.dirname(bench), exist_ok=True)
    env = {k: v for k, v in os.environ.items() if k not in ("SDFGC", "PYTHONPATH", "SDFGC_DACE")}
    env.update(PATH=f"{args.venv}/bin:{os.environ['PATH']}", OMP_NUM_THREADS=str(threads),
               OMP_WAIT_POLICY="passive", GT4PY_BUILD_CACHE_LIFETIME="persistent",
               GT4PY_BUILD_CACHE_DIR=os.path.join(cache, "gt4py"), SDFGC_CACHE_DIR=os.path.join(cache, "sdfgc"),
               GT4PY_COLLECT_METRICS_LEVEL="10")
    if through_sdfgc:
        env.update(SDFGC_DACE="1", SDFGC_DACE_LOG=os.path.join(args.out, f"sdfgc-{config}.log"))
    cmd = ["nice", "-n", str(args.nice)] if args.nice else []
    cmd += [f"{args.venv}/bin/python", "-m", "pytest", "-p", "no:cacheprovider", "-p", "sdfgc.icon4py_modes",
           f"--backend={backend}", f"--grid={args.grid}", "--levels", str(args.levels),
           "--benchmark-enable", f"--benchmark-json={bench}", "-q", "-rfE", "--timeout", str(args.timeout)]
    if pass_no > 0:
        cmd.append("--skip-stenciltest-verification")
    cmd += [os.path.join(STENCILS, t) for t in tests]
    start = time.time()
    log = os.path.join(args.out, "raw", f"p{pass_no}-t{threads}-{config}.log")
    with open(log, "w") as f:
        rc = subprocess.run(cmd, cwd=suite, env=env, stdout=f, stderr=subprocess.STDOUT,
                            timeout=args.timeout + 600).returncode
    wall = time.time() - start
    tail = open(log).read().strip().splitlines()[-1:] or [""]
    print(f"  pass {pass_no} threads {threads} {config}: rc {rc}, {wall:.0f} s, {tail[0]}", flush=True)
    rows = []
    if os.path.exists(bench):
        for b in json.load(open(bench)).get("benchmarks", []):
            samples = b.get("extra_info", {}).get("gtx_metrics") or []
            rows.append({"pass": pass_no, "threads": threads, "config": config, "grid": args.grid,
                         "levels": args.levels, "test": b["name"],
                         "compute_median_s": statistics.median(samples) if samples else None,
                         "call_median_s": b["stats"]["median"], "samples": len(samples)})
        os.remove(bench)
    return rows


def stencil_name(test):
    """`test_TestFoo[...]` -> `TestFoo[...]`: the row label."""
    return test[len("test_"):] if test.startswith("test_") else test


def tables(rows):
    best = {}  # (threads, test, config) -> lowest median over passes
    # Stencils whose `compute` samples ICON4Py cannot recover (a field
    # operator as PROGRAM: its metrics key is not set), timed per call
    # (pytest-benchmark's median, Python's overhead included).
    by_call = {r["test"] for r in rows if r["compute_median_s"] is None}
    for r in rows:
        t = r["compute_median_s"] or r["call_median_s"]
        key = (r["threads"], r["test"], r["config"])
        best[key] = min(best.get(key, t), t)
    for threads in sorted({k[0] for k in best}, reverse=True):
        tests = sorted({k[1] for k in best if k[0] == threads})
        configs = [c for c in CONFIGS if any((threads, t, c) in best for t in tests)]
        print(f"\n### {threads} thread(s): compute time per call (ms), the lower of the passes' medians\n")
        ratio_cols = [("sdfgc", "dace"), ("external", "dace"), ("sdfgc", "gtfn")]
        ratio_cols = [rc for rc in ratio_cols if rc[0] in configs and rc[1] in configs]
        print("| stencil | " + " | ".join(configs) + " | " + " | ".join(f"{a}/{b}" for a, b in ratio_cols) + " |")
        print("|---|" + "---:|" * (len(configs) + len(ratio_cols)))
        ratios = {rc: [] for rc in ratio_cols}
        for t in tests:
            cells = [f"{best[(threads, t, c)] * 1e3:.3f}" if (threads, t, c) in best else "" for c in configs]
            rs = []
            for a, b in ratio_cols:
                if (threads, t, a) in best and (threads, t, b) in best:
                    r = best[(threads, t, a)] / best[(threads, t, b)]
                    ratios[(a, b)].append((r, t))
                    rs.append(f"{r:.2f}" + (" **>1.05**" if r > 1.05 else ""))
                else:
                    rs.append("")
            mark = " (per call)" if t in by_call else ""
            print(f"| {stencil_name(t)}{mark} | " + " | ".join(cells + rs) + " |")
        for (a, b), rs in ratios.items():
            if rs:
                worst = max(rs)
                print(f"\n{a}/{b}, {threads} thread(s): {len(rs)} stencils, median {statistics.median([r for r, _ in rs]):.3f},"
                      f" worst {worst[0]:.3f} ({stencil_name(worst[1])}), above 1.05: {sum(r > 1.05 for r, _ in rs)}")


def main():
    args = parse_args()
    args.out = os.path.abspath(args.out)
    args.json = args.json or os.path.join(args.out, "results.jsonl")
    if args.table:
        tables([json.loads(l) for l in open(args.table)])
        return
    if args.install:
        install(args.venv)
    clear_stale_caches(args)
    configs = [c for c in args.configs.split(",") if c]
    for c in configs:
        if c not in CONFIGS:
            sys.exit(f"unknown configuration {c!r} (known: {', '.join(CONFIGS)})")
    os.makedirs(args.out, exist_ok=True)
    suite = copy_suite(os.path.abspath(args.src), args.out)
    tests = [t for t in args.tests.split(",") if t] or sorted(
        f for f in os.listdir(os.path.join(suite, STENCILS)) if f.startswith("test_") and f.endswith(".py"))
    threads = [int(t) for t in args.threads.split(",")]
    print(f"icon4py-bench: {len(tests)} test files, --grid={args.grid} --levels {args.levels}, "
          f"configs {configs}, threads {threads}, {args.passes} passes", flush=True)
    rows = []
    for p in range(args.passes):
        order = configs if p % 2 == 0 else configs[::-1]
        for th in threads:
            for c in order:
                new = run_pass(args, suite, tests, c, th, p)
                with open(args.json, "a") as f:
                    for r in new:
                        f.write(json.dumps(r) + "\n")
                rows += new
    tables(rows)


if __name__ == "__main__":
    main()
