#!/usr/bin/env python3
"""DaCe 1.0.2's own tests (../shared/dace-tests) with DaCe's generator and
through sdfgc, every difference classified.

    scripts/dace-tests.py [PATHS...] [-k EXPR] [--sample N --seed S] [--ids FILE]
                          [--sides dace,sdfgc] [--asan] [--out DIR] [--timeout S] [--sdfgc BIN]
    scripts/dace-tests.py --report --out DIR      # tables from the records already there
    scripts/dace-tests.py --ci                    # the CI slice (scripts/dace-tests-ci.txt), sdfgc only
    scripts/dace-tests.py --gpu [--ci]            # DaCe's GPU tests on the emulated CUDA runtime, sdfgc only

Selection: DaCe's CPU CI marker expression over the tests collected from
PATHS (default: tests/), narrowed by -k, then a sample stratified by folder
(tests/<dir>, seeded) or the ids in a file. Each side (`dace`: DaCe's
generator; `sdfgc`: SDFGC_DACE=1; `sdfgc-asan`: the same with the generated
libraries built with -fsanitize=address and libasan preloaded) runs from its
own copy of the suite with a fresh DaCe build folder and DaCe's CI settings.
The sdfgc sides use what --venv has installed, or with `--sdfgc BIN` that
executable and this checkout's python/ package (a worktree's build).

A dying interpreter does not end a side: the pytest plugin
(scripts/dace_tests_plugin.py) records each test's start and end, so the test
that started and did not end is recorded as `died` (with the exit signal, the
output's tail and any sanitizer report) and pytest restarts on the tests left.
A test still running `--timeout`+60 s after its start (a hang in C code that
pytest-timeout's signal cannot stop) is killed the same way.

Every test that passes with DaCe's generator and fails through sdfgc gets one
class: refused (sdfgc's message), compiler-error (the C++ does not build),
abi, wrong-data (an assertion on values), crash (a signal), sanitizer (an
AddressSanitizer report: its kind and first frames), timeout, reads-dace-code
(the failure is an assertion on DaCe's code text or warnings), other. Tests
passing both ways that built no program are counted as compiles-nothing.
With `--gpu` the selection is DaCe's GPU marker (`gpu` with the CPU CI's
other exclusions) and only the sdfgc side runs (DaCe's own CUDA code needs
nvcc and a GPU): sdfgc's CUDA is built by scripts/emu-nvcc (`NVCC`, which
`sdfgc.build` reads) with g++ against the CPU emulation of the CUDA runtime
(tests/gpu_emu), DaCe's `compiler.cuda.backend` cuda. Its classes add
emulator-limit (a CUDA or cuBLAS primitive the emulation lacks, a CUDA
binary tool such as cuobjdump, or a `gpu_emu:` abort; the primitive is the
key line) and missing-package (a
Python package the test imports, e.g. cupy); `--gpu --ci` runs
scripts/dace-tests-gpu-ci.txt.
Writes DIR/results.json and DIR/results.md (per folder: counts, classes,
wall times of each side). Stdlib only; pytest runs in --venv.
"""

import argparse
import collections
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPTS = os.path.join(ROOT, "scripts")
CI_IDS = os.path.join(SCRIPTS, "dace-tests-ci.txt")
GPU_CI_IDS = os.path.join(SCRIPTS, "dace-tests-gpu-ci.txt")
EMU_NVCC = os.path.join(SCRIPTS, "emu-nvcc")

# DaCe's CPU CI (.github/workflows/general-ci.yml at v1.0.2), and the data
# instrumentation tests (`datainstrument`) that it leaves out.
MARKERS = ("not gpu and not verilator and not tensorflow and not mkl and not sve and not papi and not mlir "
           "and not lapack and not fpga and not mpi and not rtl_hardware and not scalapack "
           "and not long")
# DaCe's GPU tests: the same exclusions around the gpu marker.
GPU_MARKERS = "gpu and " + " and ".join(MARKERS.split(" and ")[1:])
DACE_ENV = {"NOSTATUSBAR": "1", "DACE_testing_serialization": "1", "DACE_testing_deserialize_exception": "1",
            "DACE_cache": "unique", "DACE_optimizer_automatic_simplification": "1"}
# DaCe 1.0.2's default compiler.cpu.args, plus AddressSanitizer for --asan.
DACE_CPU_ARGS = "-std=c++14 -fPIC -Wall -Wextra -O3 -march=native -ffast-math -Wno-unused-parameter -Wno-unused-label"
ASAN_ARGS = " -fsanitize=address -fno-omit-frame-pointer -g"

# A failure that is an assertion on DaCe's generated code text or its warnings
# (the test then reads sdfgc's code): what its traceback shows.
CODE_TEXT = re.compile(r"generate_code|clean_code|code_objects|codeobj|\.code\b|__restrict__|DID NOT WARN|"
                       r"pytest\.warns|catch_warnings|warnings\.|\bcode\s*=|in code\b|\.cpp\b|#pragma")
# Code of the emulated runtime (tests/gpu_emu) that a failure names: a primitive
# it does not declare, or one of its own aborts.
EMU_MISSING = re.compile(r"error: [‘']((?:cuda|cublas|cusolver|cusparse|cufft|curand|hip|__half|__float2half|__shfl|__ldg)"
                         r"[A-Za-z0-9_]*|"
                         r"CUBLAS_[A-Z0-9_]+|CUSOLVER[A-Z0-9_]*|CUSPARSE[A-Z0-9_]*)[’'] "
                         r"(?:was not declared|is not a member|has not been declared)|"
                         r"fatal error: ((?:cusolver|cusparse|cufft|curand|cub|cuda_fp16|cutensor|thrust)[^:\s]*): "
                         r"No such file|cannot find (-l(?:cublas|cusolver|cusparse|cufft|curand|cutensor)\b)")
EMU_ABORT = re.compile(r"gpu_emu: [^\n]*")
COMPILE = re.compile(r"CompilationError|CompilerError|Compiler failure|CMake|cmake")


def folder_of(test_id):
    parts = test_id.split("::")[0].split("/")
    return "/".join(parts[:2]) if len(parts) > 2 else parts[0]


def venv_env(venv):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("SDFGC", "DACE_", "ASAN_")) and k not in ("PYTHONPATH", "LD_PRELOAD")}
    env["PATH"] = os.path.join(venv, "bin") + os.pathsep + env.get("PATH", "")
    env["PYTHONPATH"] = SCRIPTS
    return env


def collect(args, suite):
    """The test ids DaCe's CPU CI would run from args.paths (-k applied)."""
    cmd = [os.path.join(args.venv, "bin", "python"), "-m", "pytest", "-p", "no:cacheprovider", "--collect-only",
           "-q", "--continue-on-collection-errors", "-m", args.markers, *args.paths]
    if args.k:
        cmd += ["-k", args.k]
    r = subprocess.run(cmd, cwd=suite, env={**venv_env(args.venv), **DACE_ENV}, capture_output=True, text=True)
    ids = [line.strip() for line in r.stdout.splitlines() if "::" in line and not line.startswith(" ")]
    if not ids:
        sys.exit(f"error: no tests collected:\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}")
    return ids


def stratified(ids, n, seed):
    """n ids, each folder's share proportional to its size (at least one each)."""
    groups = collections.defaultdict(list)
    for i in ids:
        groups[folder_of(i)].append(i)
    if n >= len(ids):
        return list(ids)
    quota = {f: max(1, n * len(g) // len(ids)) for f, g in groups.items()}
    order = sorted(groups, key=lambda f: -(n * len(groups[f]) / len(ids) - quota[f]))
    for f in order[:max(0, n - sum(quota.values()))]:
        quota[f] += 1
    rng = random.Random(seed)
    chosen = set()
    for f, g in groups.items():
        chosen.update(rng.sample(g, min(quota[f], len(g))))
    return [i for i in ids if i in chosen]


def read_records(path):
    """test id -> its last end/died record; plus the start record of a test
    that started and has not ended (in the latest pytest process)."""
    done, started = {}, None
    if os.path.exists(path):
        with open(path) as fh:
            for line in fh:
                try:
                    rec = json.loads(line)
                except ValueError:
                    continue  # a line cut short by a dying process
                if rec["ev"] == "run":  # a new pytest process: a start before it was interrupted
                    started = None
                elif rec["ev"] == "start":
                    started = rec
                else:
                    done[rec["id"]] = rec
                    if started and started["id"] == rec["id"]:
                        started = None
    return done, started


def asan_reports(folder, seen):
    """The AddressSanitizer report files written since the last call."""
    new = sorted(set(os.listdir(folder)) - seen)
    seen.update(new)
    return [os.path.join(folder, name) for name in new]


def parse_asan(path, folder=""):
    """A report's kind (with the access) and first frames."""
    if isinstance(path, dict):  # records of an older runner: the file name in `folder`
        path = os.path.join(folder, path["file"])
    with open(path, errors="replace") as fh:
        text = fh.read()
    kind = re.search(r"AddressSanitizer: \S+", text)
    access = re.search(r"^(READ|WRITE) of size \d+", text, re.M)
    kind = (kind.group(0) if kind else text[:200].strip()) + (f" ({access.group(0)})" if access else "")
    frames = re.findall(r"^\s+#\d+ 0x[0-9a-f]+ .*$", text, re.M)[:8]
    return {"kind": kind, "frames": [re.sub(r"^#\d+ 0x[0-9a-f]+ ", "", f.strip()) for f in frames], "file": path}


def side_env(args, side, d):
    env = {**venv_env(args.venv), **DACE_ENV, "DACE_default_build_folder": os.path.join(d, "dacecache"),
           "DTESTS_RECORD": os.path.join(d, "records.jsonl")}
    if side != "dace":
        env.update(SDFGC_DACE="1", SDFGC_DACE_LOG=os.path.join(d, "sdfgc.log"), DTESTS_KEEP=os.path.join(d, "sdfgs"))
        if args.sdfgc:  # this checkout's package and the given executable, not those installed in the venv
            # The checkout's sitecustomize switches DaCe over without an installed package.
            startup = os.path.join(ROOT, "python", "sdfgc", "_startup")
            env.update(SDFGC=args.sdfgc,
                       PYTHONPATH=os.pathsep.join([SCRIPTS, os.path.join(ROOT, "python"), startup]))
    if args.gpu:  # sdfgc's CUDA on the emulated runtime; DaCe's CUDA settings
        env.update(NVCC=args.nvcc, DACE_compiler_cuda_backend="cuda")
    if side.endswith("asan"):
        libasan = subprocess.run(["gcc", "-print-file-name=libasan.so"], capture_output=True, text=True).stdout.strip()
        os.makedirs(os.path.join(d, "asan"), exist_ok=True)
        env.update(DACE_compiler_cpu_args=DACE_CPU_ARGS + ASAN_ARGS, LD_PRELOAD=libasan, DTESTS_PRELOAD_ONLY_HERE="1",
                   ASAN_OPTIONS="detect_leaks=0:abort_on_error=1:halt_on_error=1:"
                   f"log_path={os.path.join(d, 'asan', 'report')}")
    return env


def run_side(args, side, ids):
    """Runs ids on one side until each has ended or died; resumes records already there."""
    d = os.path.join(args.out, side)
    if not args.resume and os.path.exists(d):
        shutil.rmtree(d)
    os.makedirs(d, exist_ok=True)
    suite = os.path.join(d, "suite")
    if not os.path.exists(suite):
        shutil.copytree(args.suite, suite)
    env = side_env(args, side, d)
    records = env["DTESTS_RECORD"]
    seen_asan = set(os.listdir(os.path.join(d, "asan"))) if side.endswith("asan") else set()
    t0 = time.time()
    for attempt in range(len(ids) + 1):
        done, _ = read_records(records)
        left = [i for i in ids if i not in done]
        if not left:
            break
        out_path = os.path.join(d, f"pytest-{sum(n.startswith('pytest-') for n in os.listdir(d))}.log")
        with open(records, "a") as fh:
            fh.write(json.dumps({"ev": "run", "t": time.time()}) + "\n")
        cmd = ["nice", "-n", str(args.nice), os.path.join(args.venv, "bin", "python"), "-m", "pytest",
               "-p", "no:cacheprovider", "-p", "dace_tests_plugin", "-q", "--tb=short", "-m", args.markers,
               "--timeout", str(args.timeout), *left]
        with open(out_path, "w") as log:
            proc = subprocess.Popen(cmd, cwd=suite, env=env, stdout=log, stderr=subprocess.STDOUT,
                                    start_new_session=True)
            killed = False
            while proc.poll() is None:
                time.sleep(2)
                _, started = read_records(records)
                if started and time.time() - started["t"] > args.timeout + 60:
                    os.killpg(proc.pid, signal.SIGKILL)
                    killed = True
            rc = proc.wait()
        done, started = read_records(records)
        if started:  # the interpreter died in this test
            with open(out_path, errors="replace") as fh:
                tail = fh.read()[-4000:]
            rec = {"ev": "died", "id": started["id"], "outcome": "died", "rc": rc, "killed": killed,
                   "seconds": round(time.time() - started["t"], 3), "tail": tail, "programs": None, "log": []}
            if side.endswith("asan"):
                rec["asan"] = asan_reports(os.path.join(d, "asan"), seen_asan)
            with open(records, "a") as fh:
                fh.write(json.dumps(rec) + "\n")
            print(f"  [{side}] died: {started['id']} (rc {rc}{', killed' if killed else ''})", flush=True)
        elif not [i for i in left if i in done]:  # nothing ran: ids pytest does not find
            with open(records, "a") as fh:
                for i in left:
                    fh.write(json.dumps({"ev": "end", "id": i, "outcome": "not-run", "seconds": 0,
                                         "longrepr": f"pytest ran nothing (rc {rc}), see {out_path}"}) + "\n")
            break
    print(f"  [{side}] {len(ids)} tests in {time.time() - t0:.0f} s", flush=True)


def key_line(text):
    """The line of a failure text that says most: the first `E   ` line with an error."""
    lines = [ln[1:].strip() for ln in text.splitlines() if ln.startswith("E ")]
    for ln in lines:
        if re.search(r"error:|Error|assert|Mismatch|Timeout", ln):
            return ln[:300]
    return (lines[0] if lines else text.strip().splitlines()[-1] if text.strip() else "")[:300]


def own_frames(text):
    """The test's own lines of a failure text (pytest's --tb=short frames
    outside site-packages, and the `E` lines), not DaCe's."""
    keep, mine = [], True
    for ln in text.splitlines():
        m = re.match(r"^(\S.*?\.py):\d+: in ", ln)
        if m:
            mine = "site-packages" not in m.group(1)
        if mine or ln.startswith("E "):
            keep.append(ln)
    return "\n".join(keep)


def source_before(text, suite, n=5):
    """The test's source lines up to the line that failed (the last frame in
    tests/): a `with warnings.catch_warnings()` or a code string read a few
    lines above an `assert w` does not show in the traceback."""
    frames = re.findall(r"^(tests/\S+\.py):(\d+): in ", text, re.M)
    if not frames:
        return ""
    path, line = frames[-1][0], int(frames[-1][1])
    try:
        with open(os.path.join(suite, path), errors="replace") as fh:
            lines = fh.read().splitlines()
    except OSError:
        return ""
    return "\n".join(lines[max(0, line - 1 - n):line])


def source_file(text, suite):
    """The source of the test file of a failure text's last frame in tests/."""
    frames = re.findall(r"^(tests/\S+\.py):\d+: in ", text, re.M)
    try:
        with open(os.path.join(suite, frames[-1]), errors="replace") as fh:
            return fh.read()
    except (IndexError, OSError):
        return ""


def refusal(rec):
    for ln in rec.get("log") or []:
        if ln.startswith("refused "):
            msg = ln.split(": ", 1)[-1]
            msg = re.sub(r"^error: \S+\.sdfg: ", "", msg)
            return (msg[msg.index("unsupported:"):] if "unsupported:" in msg else msg)[:300]
    m = re.search(r"SdfgcError: (.*)", rec.get("longrepr", ""))
    return m.group(1)[:300] if m else "refused"


def classify(rec, folder="", suite=""):
    """(class, key line) of a test that did not pass on an sdfgc side."""
    text = rec.get("longrepr") or ""
    if rec["outcome"] == "died":
        if rec.get("asan"):
            a = parse_asan(rec["asan"][0], folder)
            frames = [f for f in a["frames"] if "libsanitizer" not in f]
            return "sanitizer", a["kind"] + " | " + " | ".join(f.split("/")[0] + f.split("/")[-1] for f in frames[:3])
        if rec.get("killed"):
            return "timeout", "killed after the timeout (hang in native code)"
        m = EMU_ABORT.search(rec["tail"])
        if m and re.search(r"unsupported|not emulated|not implemented", m.group(0)):
            return "emulator-limit", m.group(0)[:300]
        sig = -rec["rc"] if rec["rc"] < 0 else rec["rc"]
        m = re.search(r"Fatal Python error: (.*)|(free\(\).*|double free.*|malloc\(\).*|corrupted .*)", rec["tail"])
        emu = EMU_ABORT.search(rec["tail"])
        if emu:  # the emulator's checks: a race, an index out of bounds, a bad launch
            return "crash", f"exit {rec['rc']} (signal {sig}): {emu.group(0)[:250]}"
        return "crash", f"exit {rec['rc']} (signal {sig})" + (f": {m.group(0).strip()}" if m else "")
    if rec["outcome"] == "not-run":
        return "not-run", text[:200]
    m = re.search(r"(?:ModuleNotFoundError|ImportError): No module named '([^']+)'", text)
    if m:
        return "missing-package", f"needs the package {m.group(1).split('.')[0]}"
    m = re.search(r"No such file or directory: '(cuobjdump|nvdisasm)'", text)
    if m:  # cuda_grid_test's was_vectorized: the SASS of a real CUDA binary
        return "emulator-limit", f"the emulated toolchain has no {m.group(1)} (the test reads the binary's SASS)"
    m = EMU_MISSING.search(text)
    if m:
        what = m.group(1) or m.group(2) or f"the library {m.group(3)} (emu-nvcc links it; the emulation is headers)"
        return "emulator-limit", f"the emulated runtime lacks {what}"
    if "'NoneType' object has no attribute" in text and re.search(r"^\s*cupy = None", source_file(text, suite), re.M):
        return "missing-package", "needs the package cupy (the test's module set it to None)"
    if re.search(r"cuda/dummy\.cu|CMake.*DACE_FILES=\S*\.cu", text):
        return "dace-own-cuda", "builds DaCe's own CUDA code with CMake and nvcc"
    if "Timeout >" in text or "Failed: Timeout" in text:
        return "timeout", key_line(text)
    if "SdfgcAbiError" in text:
        lists = re.findall(r"^E\s+(library: .*|DaCe: .*)$", text, re.M)
        return "abi", " / ".join([key_line(text)] + [x.strip() for x in lists])[:400]
    if any(ln.startswith("refused ") for ln in rec.get("log") or []) or "SdfgcError" in text:
        return "refused", refusal(rec)
    if COMPILE.search(text):
        err = re.search(r"^.*error:.*$", text, re.M)
        return "compiler-error", re.sub(r"^E?\s*\S*/", "", err.group(0).strip() if err else key_line(text))[:300]
    if CODE_TEXT.search(own_frames(text) + "\n" + source_before(text, suite)):
        return "reads-dace-code", key_line(text)
    if re.search(r"AssertionError|^E\s+assert |Mismatch|Not equal to tolerance|not close", text, re.M):
        return "wrong-data", key_line(text)
    return "other", key_line(text)


def report(args, ids):
    sides = [s for s in ("dace", "sdfgc", "sdfgc-asan") if os.path.exists(os.path.join(args.out, s, "records.jsonl"))]
    recs = {s: read_records(os.path.join(args.out, s, "records.jsonl"))[0] for s in sides}
    tests = []
    for i in ids:
        t = {"id": i, "folder": folder_of(i)}
        for s in sides:
            r = recs[s].get(i)
            if not r:
                continue
            t[s] = {"outcome": r["outcome"], "seconds": r.get("seconds", 0), "programs": r.get("programs")}
            compiled = sum(ln.startswith("compiled ") for ln in r.get("log") or [])
            if s != "dace":
                t[s]["compiled"] = compiled
            if r["outcome"] in ("failed", "died", "not-run"):
                asan_dir = os.path.join(args.out, s, "asan")
                cls, line = classify(r, asan_dir, args.suite) if s != "dace" else ("fails", key_line(r.get("longrepr", "")))
                t[s].update({"class": cls, "line": line})
                if r.get("asan"):
                    t[s]["asan"] = [parse_asan(a, asan_dir) for a in r["asan"]]
        tests.append(t)
    with open(os.path.join(args.out, "results.json"), "w") as fh:
        json.dump({"sides": sides, "tests": tests}, fh, indent=1)

    ok = ("passed", "xfailed", "skipped")
    # Only tests every side has run are compared (a side may still be running).
    tests = [t for t in tests if all(s in t for s in sides)]
    md = [f"# DaCe's tests: {len(tests)} of {len(ids)} selected run on every side ({', '.join(sides)})", ""]
    classes = ["refused", "compiler-error", "wrong-data", "crash", "sanitizer", "abi", "timeout",
               "reads-dace-code", "emulator-limit", "missing-package", "dace-own-cuda", "other", "not-run"]
    for s in [s for s in sides if s != "dace"]:
        md += [f"## {s}" + (" against dace" if "dace" in sides else ""), "",
               "| folder | tests | pass both | of which compile nothing | skipped | fail with dace | "
               + " | ".join(classes) + " | dace s | " + s + " s |",
               "|---" * (8 + len(classes)) + "|"]
        rows = collections.OrderedDict()
        for t in sorted(tests, key=lambda t: t["folder"]):
            row = rows.setdefault(t["folder"], collections.Counter())
            row["tests"] += 1
            dace, mine = t.get("dace", {}), t[s]
            row["dace s"] += dace.get("seconds", 0)
            row["mine s"] += mine.get("seconds", 0)
            d_ok = dace.get("outcome", "passed") in ok
            if dace.get("outcome") == "skipped" or mine["outcome"] == "skipped":
                row["skipped"] += 1
            elif not d_ok:
                row["fail with dace"] += 1
            elif mine["outcome"] in ok:
                row["pass both"] += 1
                if not mine.get("compiled") and not mine.get("programs"):
                    row["compile nothing"] += 1
            else:
                row[mine["class"]] += 1
        total = collections.Counter()
        for f, row in rows.items():
            total.update(row)
        for f, row in list(rows.items()) + [("**all**", total)]:
            md.append(f"| {f} | {row['tests']} | {row['pass both']} | {row['compile nothing']} | {row['skipped']} | "
                      f"{row['fail with dace']} | " + " | ".join(str(row[c]) for c in classes)
                      + f" | {row['dace s']:.0f} | {row['mine s']:.0f} |")
        md += ["", f"### {s}: every test that fails here and passes with DaCe's generator", ""]
        for c in classes:
            bad = [t for t in tests if s in t and t[s].get("class") == c
                   and t.get("dace", {}).get("outcome", "passed") in ok]
            if bad:
                md.append(f"- **{c}** ({len(bad)})")
                md += [f"  - `{t['id']}`: {t[s]['line']}" for t in bad]
        md.append("")
    if "dace" in sides:
        bad = [t for t in tests if t.get("dace", {}).get("class")]
        md += [f"## failing with DaCe's own generator ({len(bad)})", ""]
        md += [f"- `{t['id']}`: {t['dace']['line']}" for t in bad]
    with open(os.path.join(args.out, "results.md"), "w") as fh:
        fh.write("\n".join(md) + "\n")
    return tests, sides


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("paths", nargs="*", default=["tests"], help="test paths in the suite (default: tests)")
    p.add_argument("-k", help="pytest -k expression for the selection")
    p.add_argument("--sample", type=int, help="a stratified sample of this many tests")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--ids", help="a file of test ids (one a line, '#' comments) instead of collecting")
    p.add_argument("--sides", default="dace,sdfgc", help="dace, sdfgc (default: both)")
    p.add_argument("--asan", action="store_true", help="the sdfgc side with AddressSanitizer (side sdfgc-asan)")
    p.add_argument("--ci", action="store_true", help="the CI slice through sdfgc; fails unless every test passes")
    p.add_argument("--gpu", action="store_true",
                   help="DaCe's GPU tests (marker gpu), sdfgc's CUDA built by scripts/emu-nvcc on the emulated "
                   "runtime; side sdfgc only (default --out build/dace-tests-gpu)")
    p.add_argument("--nvcc", default=EMU_NVCC, help="with --gpu: the nvcc stand-in (default scripts/emu-nvcc)")
    p.add_argument("--report", action="store_true", help="only write the tables from the records in --out")
    p.add_argument("--resume", action="store_true", help="keep the records in --out and run what is left")
    p.add_argument("--suite", default=os.environ.get("SDFGC_DACE_TESTS", os.path.join(ROOT, "..", "shared", "dace-tests")))
    p.add_argument("--venv", default=os.path.join(ROOT, "build", "venv-dace"))
    p.add_argument("--out", help="results folder (default build/dace-tests, with --gpu build/dace-tests-gpu)")
    p.add_argument("--timeout", type=int, default=300, help="seconds a test may run (pytest-timeout)")
    p.add_argument("--nice", type=int, default=10)
    p.add_argument("--sdfgc", help="sdfgc executable for the sdfgc sides (with this checkout's python/ package; "
                   "default: what --venv has installed)")
    args = p.parse_args()
    args.out = args.out or os.path.join(ROOT, "build", "dace-tests-gpu" if args.gpu else "dace-tests")
    args.markers = GPU_MARKERS if args.gpu else MARKERS
    args.suite, args.venv, args.out = (os.path.abspath(x) for x in (args.suite, args.venv, args.out))
    args.sdfgc = args.sdfgc and os.path.abspath(args.sdfgc)
    args.nvcc = os.path.abspath(args.nvcc)
    if args.ci:
        args.ids, args.sides = args.ids or (GPU_CI_IDS if args.gpu else CI_IDS), "sdfgc"
    if args.gpu:
        if "dace" in args.sides.split(","):
            if args.sides != p.get_default("sides"):
                p.error("--gpu runs the sdfgc side only: DaCe's own CUDA code needs nvcc and a GPU")
            args.sides = "sdfgc"
    sides = args.sides.split(",")
    if args.asan:
        sides = [s + "-asan" if s == "sdfgc" else s for s in sides]
    os.makedirs(args.out, exist_ok=True)
    sel = os.path.join(args.out, "selection.txt")
    if args.report or args.resume:
        with open(sel) as fh:  # one id a line (parametrized ids may hold spaces)
            ids = [ln.strip() for ln in fh if ln.strip()]
    elif args.ids:
        with open(args.ids) as fh:
            ids = [ln.split("#")[0].strip() for ln in fh if ln.split("#")[0].strip()]
    else:
        ids = collect(args, args.suite)
        print(f"collected {len(ids)} tests", flush=True)
        if args.sample:
            ids = stratified(ids, args.sample, args.seed)
    if not (args.report or args.resume):
        with open(sel, "w") as fh:
            fh.write("\n".join(ids) + "\n")
    if not args.report:
        print(f"{len(ids)} tests, sides {', '.join(sides)} -> {args.out}", flush=True)
        for s in sides:
            run_side(args, s, ids)
    tests, ran = report(args, ids)
    print(open(os.path.join(args.out, "results.md")).read())
    for s in (s for s in sides if s != "dace"):
        mine = [t[s] for t in tests if s in t]
        if any(m.get("programs") for m in mine) and not os.path.exists(os.path.join(args.out, s, "sdfgc.log")):
            # DaCe built programs and sdfgc logged none of them: the switch never took effect.
            sys.exit(f"side {s}: DaCe built programs but sdfgc compiled or refused none "
                     "(is the sdfgc package installed in --venv, or --sdfgc given?)")
    if args.ci:
        bad = [t for t in tests if t.get("sdfgc", {}).get("outcome") not in ("passed", "xfailed")]
        compiled = sum(t.get("sdfgc", {}).get("compiled", 0) for t in tests)
        print(f"dace-tests CI slice: {len(tests) - len(bad)} of {len(tests)} passed, {compiled} SDFGs compiled by sdfgc")
        if bad or not compiled:
            sys.exit("dace-tests CI slice failed")


if __name__ == "__main__":
    main()
