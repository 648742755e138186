#!/usr/bin/env bash
# Run time of sdfgc's generated code against DaCe 1.0.2's on the NPBench
# kernels (fixtures/npbench/*/program.autoopt.sdfg: auto-optimized by DaCe).
# Not part of CI (timings), see docs/performance.md section 6.
#
#   bash scripts/bench-npbench.sh [CASE...]        # default: every case with the variant
#
# Env: SDFGC (binary; default target/release/sdfgc), DACE_PY (python of a venv
# with dace==1.0.2; default /work/venv-dace1/bin/python, else build/venv-dace1),
# OMP_NUM_THREADS (default 2), SIZE (S or fixture; default S), REPS (rounds,
# default 21), BUDGET (seconds of calls per kernel, default 4), VARIANT
# (default program.autoopt.sdfg), BEFORE (another sdfgc binary, e.g. of an
# earlier commit: its libraries are timed in the same rounds), BENCH_CXXFLAGS (default "-std=c++17 -fPIC
# -O3 -march=native -fopenmp -Wno-unused-parameter"; CMake build type Release).
#
# For each case scripts/bench_npbench.py builds DaCe's library and sdfgc's (the
# SDFG's own lifetimes, and --mode external) through DaCe's own build with the
# same flags, checks sdfgc's outputs against DaCe's on the fixture's data, then
# calls the three alternately in one process at NPBench's preset S sizes
# (where the fixture was reduced) on random inputs, and prints one JSON line.
# This script collects them (build/bench-npbench/results.jsonl) and prints a
# markdown table: per kernel and mode, DaCe's and sdfgc's median call and the
# ratios sdfgc/DaCe of the medians and of the worst calls; then the median and
# the worst ratio over the kernels per mode.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
SDFGC=${SDFGC:-${CARGO_TARGET_DIR:-$root/target}/release/sdfgc}
DACE_PY=${DACE_PY:-/work/venv-dace1/bin/python}
[ -x "$DACE_PY" ] || DACE_PY=$root/build/venv-dace1/bin/python
VARIANT=${VARIANT:-program.autoopt.sdfg}
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-2}
[ -x "$SDFGC" ] || { echo "build sdfgc first: cargo build --release" >&2; exit 1; }
[ -x "$DACE_PY" ] || { echo "no DaCe 1.0.2 venv at $DACE_PY (scripts/bench-vs-dace.sh makes one)" >&2; exit 1; }
export SDFGC PYTHONPATH=$root/python${PYTHONPATH:+:$PYTHONPATH}
cases=("$@")
if [ ${#cases[@]} -eq 0 ]; then
    for d in fixtures/npbench/*/; do [ -f "$d/$VARIANT" ] && cases+=("$(basename "$d")"); done
fi
out=$root/build/bench-npbench
mkdir -p "$out"
res=$out/results.jsonl
: >"$res"
for c in "${cases[@]}"; do
    line=$("$DACE_PY" scripts/bench_npbench.py "fixtures/npbench/$c" --variant "$VARIANT" \
        --size "${SIZE:-S}" --reps "${REPS:-21}" --budget "${BUDGET:-4}" --build "$out" \
        ${BEFORE:+--before "$BEFORE"} \
        2>"$out/$c.log" | tail -1) || true
    [ -n "$line" ] || line="{\"case\": \"$c\", \"status\": \"error\", \"error\": \"$(tail -1 "$out/$c.log" | tr -d '"\\' | cut -c1-200)\"}"
    echo "$line" >>"$res"
    echo "$line" >&2
done
python3 - "$res" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
print("| kernel | sizes | calls | DaCe ms | sdfgc ms | ratio | worst-call ratio | external ms | ratio | worst-call ratio |")
print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
ratios = {"sdfgc": [], "sdfgc_ext": []}
for r in rows:
    if r.get("status") != "ok":
        print(f"| {r['case']} | {r.get('status')}: {str(r.get('error', r.get('differ', '')))[:80]} | | | | | | | | |")
        continue
    d = r["dace"]
    cells = []
    for who in ("sdfgc", "sdfgc_ext"):
        s = r[who]
        ratio, worst = s["median_s"] / d["median_s"], s["max_s"] / d["max_s"]
        ratios[who].append((ratio, r["case"]))
        cells += [f"{s['median_s'] * 1e3:.3f}", f"{ratio:.3f}", f"{worst:.2f}"]
    sizes = " ".join(f"{k}={v}" for k, v in r.get("symbols", {}).items())
    print(f"| {r['case']} | {sizes} | {r['calls']} | {d['median_s'] * 1e3:.3f} | " + " | ".join(cells) + " |")
before = {"before": [], "before_ext": []}
for r in rows:
    for who in before:
        if r.get("status") == "ok" and who in r:
            before[who].append((r[who]["median_s"] / r["dace"]["median_s"], r["case"]))
if before["before"]:
    print("\n| kernel | before: default ratio | before: external ratio |\n|---|---:|---:|")
    for (a, c), (b, _) in zip(before["before"], before["before_ext"]):
        print(f"| {c} | {a:.3f} | {b:.3f} |")
for who, mode in (("sdfgc", "default"), ("sdfgc_ext", "external"), ("before", "before, default"),
                  ("before_ext", "before, external")):
    v = ratios.get(who) or before.get(who)
    if v:
        worst = max(v)
        print(f"\n{mode}: median sdfgc/DaCe {statistics.median(x for x, _ in v):.3f} over {len(v)} kernels, "
              f"worst {worst[0]:.3f} ({worst[1]}), above 1.0x: {sum(x > 1.0 for x, _ in v)}, "
              f"above 1.2x: {sum(x > 1.2 for x, _ in v)}")
PY
