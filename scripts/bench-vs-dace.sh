#!/usr/bin/env bash
# Code-generation speed, sdfgc vs DaCe. Not part of CI. Usage:
#
#   bash scripts/bench-vs-dace.sh            # REPS=5 by default
#
# Creates (once) build/venv-dace1 (python3, dace==1.0.2, networkx<3.4, numpy) and,
# when pyenv has Python 3.12, build/venv-dace2 (dace==2.0.0a10) for the 2.x files
# (program.v2.sdfg; skipped with a note otherwise). For each fixture it times
#   * DaCe: generate_code() in-process, fresh SDFG.from_file() before each call,
#     median of REPS (scripts/bench_dace_codegen.py); interpreter start and
#     `import dace` (seconds) are NOT counted, which favours DaCe;
#   * sdfgc: the whole process `sdfgc FILE --target cpp -o DIR`, median of REPS
#     (hyperfine when installed, else a perf_counter loop over subprocess runs);
# and prints the ratio DaCe/sdfgc per file and the median ratio; then the whole
# corpus in ONE sdfgc invocation against the sum of DaCe's medians.
# 1.0.2 files: fixtures/corpus/*/program.sdfg and fixtures/gt4py/**/cpu.sdfg;
# 2.x files: fixtures/corpus/*/program.v2.sdfg.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
REPS=${REPS:-5}
SDFGC=${SDFGC:-${CARGO_TARGET_DIR:-$root/target}/release/sdfgc}
[ -x "$SDFGC" ] || cargo build --release --bin sdfgc
V1=build/venv-dace1 V2=build/venv-dace2
if ! "$V1/bin/python" -c 'import dace' 2>/dev/null; then
    python3 -m venv "$V1"
    "$V1/bin/pip" install -q dace==1.0.2 "networkx<3.4" numpy
fi
PY312=$(pyenv root 2>/dev/null)/versions/$(pyenv versions --bare 2>/dev/null | grep -E '^3\.12' | tail -1)/bin/python
have2=0
if "$V2/bin/python" -c 'import dace' 2>/dev/null; then have2=1
elif [ -x "$PY312" ]; then
    "$PY312" -m venv "$V2" && "$V2/bin/pip" install -q dace==2.0.0a10 numpy && have2=1
else
    echo "note: no Python 3.12 in pyenv; skipping DaCe 2.x (program.v2.sdfg)" >&2
fi
v1files=$(ls fixtures/corpus/*/program.sdfg; find fixtures/gt4py -name cpu.sdfg | sort)
v2files=$(ls fixtures/corpus/*/program.v2.sdfg)
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
export DACE_default_build_folder="$tmp/dacecache"
"$V1/bin/python" scripts/bench_dace_codegen.py --reps "$REPS" $v1files > "$tmp/dace.tsv"
[ $have2 = 1 ] && "$V2/bin/python" scripts/bench_dace_codegen.py --reps "$REPS" $v2files >> "$tmp/dace.tsv"
python3 - "$SDFGC" "$REPS" "$tmp" <<'PYEOF'
import os, shutil, statistics, subprocess, sys, time, json
sdfgc, reps, tmp = sys.argv[1], int(sys.argv[2]), sys.argv[3]
rows = [l.rstrip("\n").split("\t") for l in open(os.path.join(tmp, "dace.tsv"))]
hf = shutil.which("hyperfine")
def sdfgc_time(files):
    cmd = [sdfgc, *files, "--target", "cpp", "-o", os.path.join(tmp, "out")]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)  # warm-up, and fail loudly
    if hf:
        j = os.path.join(tmp, "hf.json")
        subprocess.run([hf, "-N", "-w", "1", "-r", str(max(reps, 10)), "--export-json", j, " ".join(cmd)],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        return json.load(open(j))["results"][0]["median"]
    ts = []
    for _ in range(max(reps, 10)):
        t0 = time.perf_counter(); subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts)
ratios, ok, dsum = [], [], 0.0
print("| file | DaCe generate_code ms | sdfgc process ms | DaCe/sdfgc |")
print("|---|---:|---:|---:|")
for f, d in rows:
    if d.startswith("ERROR"):
        print(f"| {f} | {d} | | |"); continue
    d = float(d)
    try:
        s = sdfgc_time([f])
    except subprocess.CalledProcessError:
        print(f"| {f} | {d*1e3:.1f} | sdfgc refused | |"); continue
    ratios.append(d / s); ok.append(f); dsum += d
    print(f"| {f} | {d*1e3:.1f} | {s*1e3:.2f} | {d/s:.0f}x |", flush=True)
print(f"\nmedian ratio per file: {statistics.median(ratios):.0f}x over {len(ratios)} files")
allt = sdfgc_time(ok)
print(f"whole corpus: {len(ok)} files in ONE sdfgc run {allt*1e3:.1f} ms vs sum of DaCe generate_code "
      f"{dsum*1e3:.0f} ms: {dsum/allt:.0f}x")
PYEOF
