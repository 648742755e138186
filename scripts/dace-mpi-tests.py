#!/usr/bin/env python3
"""DaCe 1.0.2's MPI tests (`tests/library/mpi/`) and distributed samples
(`samples/distributed/`) under `mpirun`, with DaCe's generator (side `dace`)
and through sdfgc (`SDFGC_DACE=1`, side `sdfgc`). Not part of CI: every
test builds its programs on every side (minutes).

    python3 scripts/dace-mpi-tests.py [--np 4] [--sides dace,sdfgc] [-k EXPR] [--out build/dace-mpi]
    python3 scripts/dace-mpi-tests.py --samples jacobi_1d,jacobi_2d,poly_gemm,poly_gesummv [--np 1,2,4]
    python3 scripts/dace-mpi-tests.py --sides sdfgc --every-rank-compiles

With `--every-rank-compiles`, DaCe's `distributed_compile` (rank 0 compiles,
the others load its library) compiles on every rank at once, into one build
folder (the plugin `scripts/dace_mpi_every_rank.py`). Every side counts the
CMake runs of each test (a `cmake` on PATH that logs each call and runs the
real one): through sdfgc there must be none.

Each test id runs alone (`mpirun -np N --oversubscribe python -m pytest ID`)
from its side's own copy of `../shared/dace-tests` (fresh `.dacecache`), with
a timeout, so a hung or dying rank costs one test. A test passes when every
rank's pytest passes. Output: `OUT/results.json` and a Markdown table
`OUT/results.md` (per test: each side's result, seconds, sdfgc's refusal or
first error line).

With `--samples`, DaCe's distributed samples run instead (`mpirun -np N
python samples/distributed/X.py` for each N of `--np`): each validates its
own result ("OK") and prints the median time of its distributed program
("Median is X ms"); OUT/samples.md lists both sides and the ratio.
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SUITE = Path(os.environ.get("DACE_TESTS_SRC", ROOT.parent / "shared" / "dace-tests"))
FILES = ["tests/library/mpi"]


def collect(py, src, k):
    cmd = [py, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", "-m", "mpi", *FILES]
    if k:
        cmd += ["-k", k]
    r = subprocess.run(cmd, cwd=src, text=True, capture_output=True)
    ids = [ln.strip() for ln in r.stdout.splitlines() if "::" in ln]
    if not ids:
        sys.exit(f"no MPI tests collected:\n{r.stdout}\n{r.stderr}")
    return ids


def first_error(text):
    for pat in (r"SdfgcError: (.*)", r"(error: .*)", r"^E\s+(\w*Error.*)$", r"(Segmentation fault.*)",
                r"(MPI_ABORT.*)"):
        m = re.search(pat, text, re.M)
        if m:
            return m.group(1).strip()[:300]
    return ""


def cmake_counter(folder):
    """A folder holding a `cmake` that appends its arguments to
    `folder/cmake.log` and runs the real cmake."""
    real = shutil.which("cmake") or "cmake"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "cmake").write_text(f'#!/bin/sh\necho "$*" >> "{folder / "cmake.log"}"\nexec "{real}" "$@"\n')
    (folder / "cmake").chmod(0o755)
    return folder


def cmake_runs(folder):
    log = folder / "cmake.log"
    return len(log.read_text().splitlines()) if log.exists() else 0


def run_side(side, args, ids):
    src = args.out / side / "suite"
    shutil.rmtree(args.out / side, ignore_errors=True)
    src.mkdir(parents=True)
    counter = cmake_counter(args.out / side / "cmake-bin")
    shutil.copytree(SUITE / "tests", src / "tests")
    shutil.copy(SUITE / "pytest.ini", src / "pytest.ini")
    env = dict(os.environ)
    env.pop("SDFGC_DACE", None)
    env.update(OMPI_MCA_rmaps_base_oversubscribe="1", OMPI_ALLOW_RUN_AS_ROOT="1",
               OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", PATH=f"{counter}{os.pathsep}{env['PATH']}")
    paths = [str(ROOT / "scripts")] if args.every_rank_compiles else []
    if side == "sdfgc":
        env.update(SDFGC_DACE="1", SDFGC_DACE_LOG=str(args.out / side / "sdfgc.log"))
        paths += [str(ROOT / "python"), str(ROOT / "python" / "sdfgc" / "_startup")]
    if paths:
        env["PYTHONPATH"] = os.pathsep.join([*paths, env.get("PYTHONPATH", "")])
    plugin = ["-p", "dace_mpi_every_rank"] if args.every_rank_compiles else []
    out = {}
    for tid in ids:
        t0 = time.time()
        before = cmake_runs(counter)
        cmd = ["mpirun", "-np", str(args.np), "--oversubscribe", args.python, "-m", "pytest", "-q", "-x",
               "-p", "no:cacheprovider", *plugin, "-m", "mpi", tid]
        try:
            r = subprocess.run(cmd, cwd=src, env=env, text=True, capture_output=True, timeout=args.timeout)
            text, rc = r.stdout + r.stderr, r.returncode
            state = "passed" if rc == 0 else ("skipped" if re.search(r"\d+ skipped", text) and
                                                 not re.search(r"failed|error", text) else "failed")
        except subprocess.TimeoutExpired as e:
            text = (e.stdout or b"").decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or "")
            state = "timeout"
        secs = time.time() - t0
        (args.out / side / (re.sub(r"\W+", "_", tid) + ".log")).write_text(text)
        out[tid] = {"state": state, "seconds": round(secs, 1), "error": "" if state == "passed" else first_error(text),
                    "cmake": cmake_runs(counter) - before}
        print(f"{side:6} {state:8} {secs:6.1f}s cmake {out[tid]['cmake']:3} {tid} {out[tid]['error'][:120]}",
              flush=True)
    return out


def run_samples(args):
    rows = []
    for side in args.sides.split(","):
        src = args.out / side / "samples"
        shutil.rmtree(src, ignore_errors=True)
        shutil.copytree(SUITE / "samples" / "distributed", src)
        env = dict(os.environ)
        env.pop("SDFGC_DACE", None)
        env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
                   OMPI_MCA_mpi_yield_when_idle="1")
        if side == "sdfgc":
            env.update(SDFGC_DACE="1", PYTHONPATH=os.pathsep.join(
                [str(ROOT / "python"), str(ROOT / "python" / "sdfgc" / "_startup"), env.get("PYTHONPATH", "")]))
        for name in args.samples.split(","):
            for np_ in str(args.np).split(","):
                t0 = time.time()
                cmd = ["mpirun", "-np", np_, "--oversubscribe", args.python, f"{name}.py"]
                try:
                    r = subprocess.run(cmd, cwd=src, env=env, text=True, capture_output=True, timeout=args.timeout)
                    text = r.stdout + r.stderr
                    ok = r.returncode == 0 and "OK" in r.stdout
                except subprocess.TimeoutExpired:
                    text, ok = "", False
                (args.out / side / f"sample_{name}_np{np_}.log").write_text(text)
                m = re.search(r"Median is ([0-9.]+)\s*ms", text)
                ms = float(m.group(1)) if m else None
                rows.append(dict(side=side, sample=name, np=int(np_), ok=ok, ms=ms, seconds=round(time.time() - t0, 1),
                                 error="" if ok else first_error(text)))
                print(rows[-1], flush=True)
    (args.out / "samples.json").write_text(json.dumps(rows, indent=1))
    md = ["| sample | ranks | DaCe: valid, median ms | sdfgc: valid, median ms | sdfgc / DaCe |", "|---|---|---|---|---|"]
    for name in args.samples.split(","):
        for np_ in str(args.np).split(","):
            cell = {r["side"]: r for r in rows if r["sample"] == name and r["np"] == int(np_)}
            d, o = cell.get("dace"), cell.get("sdfgc")
            fmt = lambda r: "-" if not r else f"{'OK' if r['ok'] else 'FAIL'}, {r['ms']}"
            ratio = f"{o['ms'] / d['ms']:.2f}" if d and o and d["ms"] and o["ms"] else "-"
            md.append(f"| {name} | {np_} | {fmt(d)} | {fmt(o)} | {ratio} |")
    (args.out / "samples.md").write_text("\n".join(md) + "\n")
    print("\n".join(md))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--np", default="4", help="ranks (with --samples: a comma list)")
    ap.add_argument("--samples", default="", help="run these distributed samples instead of the tests")
    ap.add_argument("--sides", default="dace,sdfgc")
    ap.add_argument("-k", default="")
    ap.add_argument("--python", default=str(ROOT / "build" / "venv-dace" / "bin" / "python"))
    ap.add_argument("--timeout", type=int, default=600)
    ap.add_argument("--every-rank-compiles", action="store_true",
                    help="every rank compiles at once (DaCe's distributed_compile: rank 0 only)")
    ap.add_argument("--out", type=Path, default=ROOT / "build" / "dace-mpi")
    args = ap.parse_args()
    args.out = args.out.resolve()
    if args.samples:
        return run_samples(args)
    ids = collect(args.python, SUITE, args.k)
    results = {side: run_side(side, args, ids) for side in args.sides.split(",")}
    (args.out / "results.json").write_text(json.dumps(results, indent=1))
    sides = list(results)
    md = [f"| test | {' | '.join(sides)} | note |", "|---|" + "---|" * len(sides) + "---|"]
    for tid in ids:
        cells = [f"{results[s][tid]['state']} ({results[s][tid]['seconds']} s, cmake {results[s][tid]['cmake']})"
                 for s in sides]
        note = next((results[s][tid]["error"] for s in sides if results[s][tid]["error"]), "")
        md.append(f"| `{tid}` | {' | '.join(cells)} | {note} |")
    for s in sides:
        n = sum(r["state"] == "passed" for r in results[s].values())
        runs = sum(r["cmake"] for r in results[s].values())
        every = ", every rank compiling" if args.every_rank_compiles else ""
        md.append(f"\n{s}: {n} of {len(ids)} passed (mpirun -np {args.np}{every}), {runs} CMake runs")
    (args.out / "results.md").write_text("\n".join(md) + "\n")
    print("\n".join(md))


if __name__ == "__main__":
    main()
