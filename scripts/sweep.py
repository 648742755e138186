#!/usr/bin/env python3
"""Runs sdfgc over case folders and checks every result against the case's
reference outputs (not part of CI: the long sweep behind docs/correctness.md).

    python3 scripts/sweep.py [--sdfgc target/release/sdfgc] [--jobs 2]
                             [--modes default,external] [--variants program.sdfg,...]
                             [--threads 3] [--filter SUBSTR] [--blas openblas] CASE_ROOT...

For every case folder under each CASE_ROOT (a folder with case.json) and every
CPU variant present (`program.sdfg`, `program.external.sdfg`,
`program.autoopt.sdfg`, `program.v2.sdfg`, gt4py `cpu*.sdfg`) and mode:
sdfgc writes C++, g++ -O2 -fopenmp -Wall -Wextra builds it, and
`fixtures/corpus/run_case.py --poison` runs it with OMP_NUM_THREADS=--threads.
Each run ends as one of: ok, wrong (ran, outputs differ: a silent miscompile),
refused (sdfgc said no), cc-fail (g++ failed), crash (the run died).
Prints one line per run and a summary table; exits 1 on any `wrong`, `cc-fail`
or `crash`.
"""
import argparse
import concurrent.futures
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CPU_VARIANTS = ("program.sdfg", "program.external.sdfg", "program.autoopt.sdfg", "program.v2.sdfg",
                "program.parsed.sdfg", "program.v2.autoopt.sdfg")


def variants_of(case_dir, only):
    names = sorted(os.listdir(case_dir))
    out = [n for n in names if n in CPU_VARIANTS or (n.startswith("cpu") and n.endswith(".sdfg"))]
    if only:
        out = [n for n in out if n in only]
    return out


BLAS_LINK = {"openblas": ["-lopenblas"]}


def run_one(sdfgc, case_dir, variant, mode, threads, keep, blas=""):
    work = tempfile.mkdtemp(prefix="sweep-")
    try:
        cmd = [sdfgc, os.path.join(case_dir, variant), "--target", "cpp", "-o", work]
        if mode != "default":
            cmd += ["--mode", mode]
        if blas:
            cmd += ["--blas", blas]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            return "refused", r.stderr.strip().splitlines()[-1] if r.stderr.strip() else f"rc {r.returncode}"
        cpp = [f for f in os.listdir(work) if f.endswith(".cpp")]
        lib = os.path.join(work, "lib.so")
        r = subprocess.run(["g++", "-std=c++17", "-O2", "-fopenmp", "-fPIC", "-shared", "-Wall", "-Wextra",
                            os.path.join(work, cpp[0]), "-o", lib] + BLAS_LINK.get(blas, []),
                           capture_output=True, text=True)
        if r.returncode != 0:
            err = [l for l in r.stderr.splitlines() if "error" in l]
            return "cc-fail", (err[0] if err else r.stderr[:300])
        warnings = r.stderr.count("warning:")
        env = dict(os.environ, OMP_NUM_THREADS=str(threads))
        r = subprocess.run([sys.executable, os.path.join(ROOT, "fixtures/corpus/run_case.py"), "--lib", lib,
                            "--case", case_dir, "--variant", variant, "--poison"],
                           capture_output=True, text=True, env=env, timeout=600)
        line = r.stdout.strip().splitlines()[-1] if r.stdout.strip() else ""
        try:
            res = json.loads(line)
        except ValueError:
            return "crash", (r.stderr.strip()[-300:] or f"rc {r.returncode}")
        if r.returncode == 0:
            return "ok", f"{warnings} warnings" if warnings else ""
        bad = {k: v.get("max_abs_err") for k, v in (res.get("outputs") or {}).items() if not v.get("ok")}
        if res.get("error"):
            return "crash", str(res["error"])[:300]
        return "wrong", f"outputs differ: {bad}"
    except subprocess.TimeoutExpired:
        return "crash", "timeout"
    finally:
        if not keep:
            subprocess.run(["rm", "-rf", work])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("roots", nargs="+")
    ap.add_argument("--sdfgc", default=os.path.join(ROOT, "target/release/sdfgc"))
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--modes", default="default,external")
    ap.add_argument("--variants", default="")
    ap.add_argument("--threads", type=int, default=3)
    ap.add_argument("--filter", default="")
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("--blas", default="", help="pass --blas to sdfgc (openblas: link -lopenblas)")
    a = ap.parse_args()
    only = set(filter(None, a.variants.split(",")))
    tasks = []
    for root in a.roots:
        for dirpath, _, files in sorted(os.walk(root)):
            if "case.json" in files and a.filter in dirpath:
                for v in variants_of(dirpath, only):
                    for m in a.modes.split(","):
                        tasks.append((dirpath, v, m))
    tasks.sort()
    results = {}
    with concurrent.futures.ThreadPoolExecutor(a.jobs) as ex:
        futs = {ex.submit(run_one, a.sdfgc, d, v, m, a.threads, a.keep, a.blas): (d, v, m) for d, v, m in tasks}
        for f in concurrent.futures.as_completed(futs):
            d, v, m = futs[f]
            status, msg = f.result()
            results[(d, v, m)] = (status, msg)
            print(f"{status:8} {os.path.relpath(d)}/{v} [{m}] {msg}", flush=True)
    counts = {}
    for (d, v, m), (s, _) in results.items():
        counts.setdefault((v, m), {}).setdefault(s, 0)
        counts[(v, m)][s] += 1
    print("\n| variant | mode | ok | wrong | refused | cc-fail | crash |\n|---|---|---|---|---|---|---|")
    for (v, m), c in sorted(counts.items()):
        print(f"| {v} | {m} | " + " | ".join(str(c.get(s, 0)) for s in
                                             ("ok", "wrong", "refused", "cc-fail", "crash")) + " |")
    bad = sum(1 for s, _ in results.values() if s in ("wrong", "cc-fail", "crash"))
    total_ok = sum(1 for s, _ in results.values() if s == "ok")
    print(f"\nsweep: {total_ok} passed, {len(results) - total_ok} failed")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
