#!/usr/bin/env python3
"""Every GPU SDFG of a folder (e.g. gt4py's GPU SDFGs of ICON4Py's stencils,
kept by `SDFGC_DACE_KEEP` in a `scripts/icon4py-modes.py --gpu-emulated` run)
through sdfgc for CUDA and HIP in every memory mode, each file compiled with
nvcc (sm_80) and hipcc (gfx90a), warnings as errors, as tests/gpu_compile.rs
does. Not part of CI (a minute or more per program on 2 cores).

    python3 scripts/gpu-sdfgs-compile.py DIR [--modes default,scoped,persistent,pool,external]
        [--compile all|rotate|none] [--jobs 2] [--out build/gpu-sdfgs-compile] [--sdfgc BIN]

`--compile rotate` (the default) compiles each program once per toolchain,
in a mode that rotates with its place in the sorted list (CUDA and HIP in
different modes); `all` compiles every generated file. Needs the toolchains of
scripts/install-gpu-toolchains.sh (`SDFGC_NVCC`, `SDFGC_HIPCC`, or
build/gpu-env.sh). Writes OUT/summary.json and prints the counts and every
refusal or compiler error.
"""
import argparse
import concurrent.futures
import glob
import json
import os
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MODES = ["default", "scoped", "persistent", "pool", "external"]


def toolchain(var, fallback):
    exe = os.environ.get(var)
    if exe:
        return exe
    env = ROOT / "build" / "gpu-env.sh"
    if env.exists():
        for line in env.read_text().splitlines():
            if line.startswith(f"export {var}="):
                return line.split("=", 1)[1].strip('"')
    return fallback


NVCC = toolchain("SDFGC_NVCC", "nvcc")
HIPCC = toolchain("SDFGC_HIPCC", "hipcc")


def compile_cmd(target, src, lib):
    if target == "cuda":
        return [NVCC, "-std=c++17", "-gencode", "arch=compute_80,code=sm_80", "-Werror", "all-warnings",
                "-Xcompiler", "-fPIC", "-shared", str(src), "-o", str(lib)]
    return [HIPCC, "-std=c++17", "--offload-arch=gfx90a", "-fPIC", "-shared", "-Wall", "-Werror",
            "-Wno-unused-function", "-Wno-unused-variable", "-Wno-unused-result", str(src), "-o", str(lib)]


def one(job):
    sdfg, target, mode, build, out, sdfgc = job
    name = Path(sdfg).stem
    work = out / "work" / f"{name}.{target}.{mode}"
    work.mkdir(parents=True, exist_ok=True)
    cmd = [sdfgc, sdfg, "--target", target, "-o", str(work)]
    if mode != "default":
        cmd += ["--mode", mode]
    r = subprocess.run(cmd, capture_output=True, text=True)
    row = {"sdfg": name, "target": target, "mode": mode}
    if r.returncode != 0:
        row["result"] = "refused"
        row["message"] = r.stderr.strip()[-600:]
        return row
    row["result"] = "generated"
    if build:
        src = next(p for p in work.iterdir() if p.suffix in (".cu", ".hip"))
        env = dict(os.environ, HIP_PLATFORM="amd")
        c = subprocess.run(compile_cmd(target, src, work / "lib.so"), capture_output=True, text=True, env=env)
        if c.returncode != 0:
            row["result"] = "compiler-error"
            row["message"] = "\n".join(l for l in c.stderr.splitlines() if "error" in l)[:1200]
        else:
            row["result"] = "compiled"
        (work / "lib.so").unlink(missing_ok=True)
    return row


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dir")
    ap.add_argument("--modes", default=",".join(MODES))
    ap.add_argument("--compile", choices=["all", "rotate", "none"], default="rotate")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--out", default=str(ROOT / "build" / "gpu-sdfgs-compile"))
    ap.add_argument("--sdfgc", default=os.environ.get("SDFGC", str(ROOT / "target" / "release" / "sdfgc")))
    args = ap.parse_args()
    out = Path(args.out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    modes = [m for m in args.modes.split(",") if m]
    sdfgs = sorted(glob.glob(os.path.join(args.dir, "*.sdfg")))
    jobs = []
    for i, sdfg in enumerate(sdfgs):
        for t, target in enumerate(("cuda", "hip")):
            for k, mode in enumerate(modes):
                build = args.compile == "all" or (args.compile == "rotate" and k == (i + 2 * t) % len(modes))
                jobs.append((sdfg, target, mode, build, out, args.sdfgc))
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as ex:
        rows = list(ex.map(one, jobs))
    counts = {}
    for r in rows:
        key = f"{r['target']} {r['result']}"
        counts[key] = counts.get(key, 0) + 1
    (out / "summary.json").write_text(json.dumps({"sdfgs": len(sdfgs), "counts": counts, "rows": rows}, indent=1))
    print(f"{len(sdfgs)} SDFGs, {len(rows)} (SDFG, target, mode) files:")
    for k in sorted(counts):
        print(f"  {k}: {counts[k]}")
    for r in rows:
        if r["result"] in ("refused", "compiler-error"):
            print(f"{r['result']}: {r['sdfg']} {r['target']} {r['mode']}:\n  {r['message']}")


if __name__ == "__main__":
    main()
