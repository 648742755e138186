#!/usr/bin/env bash
# Run time of sdfgc's generated CPU code against DaCe 1.0.2's, built from the
# same program.sdfg with the same compiler and the same flags. Not part of CI.
#
#   bash scripts/bench-runtime.sh [CASE...]       # default: every corpus case
#
# Env: SDFGC (binary; default $CARGO_TARGET_DIR/release/sdfgc or target/release/sdfgc),
#      DACE_PY (python of a venv with dace==1.0.2; default build/venv-dace1/bin/python,
#      created by scripts/bench-vs-dace.sh), REPEAT (timed calls per run, default 300),
#      ROUNDS (alternating runs per library, default 3), OMP_NUM_THREADS (default 1:
#      on a shared machine more threads mostly measure scheduling noise).
#
# DaCe's library: `SDFG.from_file(..).compile()` (its CMake build). Its effective
# flags are "-std=c++14 -fPIC -Wall -Wextra -O3 -march=native -ffast-math
# -Wno-unused-parameter -Wno-unused-label -O2 -g -DNDEBUG -fopenmp" (RelWithDebInfo
# appends -O2 -g, which wins over -O3); sdfgc's library is built with exactly those
# flags, except -std=c++17. Both run through run_case.py on the case's inputs
# (outputs checked), REPEAT timed calls per run, ROUNDS runs alternating between
# the two libraries; the time of a library is the minimum over its runs of the
# fastest call (run_case.py's min_time_s), the number least disturbed by load.
# Prints a markdown table: DaCe us, sdfgc us, sdfgc/DaCe, and the median ratio.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
SDFGC=${SDFGC:-${CARGO_TARGET_DIR:-$root/target}/release/sdfgc}
DACE_PY=${DACE_PY:-$root/build/venv-dace1/bin/python}
REPEAT=${REPEAT:-300}
ROUNDS=${ROUNDS:-3}
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}
FLAGS="-std=c++17 -fPIC -Wall -Wextra -O3 -march=native -ffast-math -Wno-unused-parameter -Wno-unused-label -O2 -g -DNDEBUG -fopenmp"
[ -x "$SDFGC" ] || { echo "build sdfgc first: cargo build --release" >&2; exit 1; }
[ -x "$DACE_PY" ] || { echo "no DaCe 1.0.2 venv at $DACE_PY (run scripts/bench-vs-dace.sh once)" >&2; exit 1; }
cases=("$@")
if [ ${#cases[@]} -eq 0 ]; then
    for d in fixtures/corpus/*/; do [ -f "$d/program.sdfg" ] && cases+=("$(basename "$d")"); done
fi
out=$root/build/bench-runtime
mkdir -p "$out"
ratios=()
printf '| case | DaCe us | sdfgc us | sdfgc/DaCe |\n|---|---:|---:|---:|\n'
for c in "${cases[@]}"; do
    case_dir=fixtures/corpus/$c
    f=$case_dir/program.sdfg
    dlib=$("$DACE_PY" scripts/bench_runtime_dace.py "$f" "$out/dace/$c" 2>"$out/dace-$c.log" | tail -1) || {
        printf '| %s | DaCe build failed: %s | | |\n' "$c" "$(tail -1 "$out/dace-$c.log" | cut -c1-80)"; continue; }
    d=$out/sdfgc/$c
    rm -rf "$d"; mkdir -p "$d"
    "$SDFGC" "$f" --target cpp -o "$d"
    src=$(ls "$d"/*.cpp)
    slib=$d/lib$(basename "$src" .cpp).so
    g++ $FLAGS -shared "$src" -o "$slib"
    best() { # lib -> fastest call in us over its runs (empty on failure)
        python3 "$case_dir/../run_case.py" --lib "$1" --case "$case_dir" --repeat "$REPEAT" |
            python3 -c 'import json,sys; r=json.loads(sys.stdin.read()); print(r["min_time_s"]*1e6 if r["ok"] else "FAIL")'
    }
    td=(); ts=()
    for _ in $(seq "$ROUNDS"); do td+=("$(best "$dlib")"); ts+=("$(best "$slib")"); done
    line=$(python3 - "${td[*]}" "${ts[*]}" <<'PY'
import sys
d, s = sys.argv[1].split(), sys.argv[2].split()
if "FAIL" in d or "FAIL" in s:
    print("FAIL")
else:
    a, b = min(map(float, d)), min(map(float, s))
    print(f"{a:.2f} {b:.2f} {b / a:.3f}")
PY
)
    if [ "$line" = FAIL ]; then printf '| %s | outputs wrong | | |\n' "$c"; continue; fi
    read -r a b r <<<"$line"
    ratios+=("$r")
    printf '| %s | %s | %s | %s |\n' "$c" "$a" "$b" "$r"
done
python3 -c 'import statistics,sys; v=[float(x) for x in sys.argv[1:]]; print(f"\nmedian sdfgc/DaCe over {len(v)} cases: {statistics.median(v):.3f}")' "${ratios[@]}"
