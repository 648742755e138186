#!/usr/bin/env bash
# sdfgc --blas openblas vs DaCe with its OpenBLAS expansions on the NPBench
# kernels that have BLAS library nodes (not part of CI). Usage:
#
#   bash scripts/bench-blas.sh [KERNEL...]     # default: the matrix kernels
#
# gemm, k3mm and mlp are not fixtures: scripts/bench_blas_matrix.py makes
# them from NPBench's DaCe programs at preset S and prints its own table.
#
# Both libraries are built with g++ -O3 -march=native -fopenmp (DaCe's default
# CPU flags) and linked to the same OpenBLAS; each runs the case's inputs
# (program.sdfg, preset S) REPEAT times (default 200) through
# fixtures/corpus/run_case.py, which checks the outputs and reports the
# minimum and mean time per call. Threads: OMP_NUM_THREADS and
# OPENBLAS_NUM_THREADS (default 2).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
SDFGC=${SDFGC:-$root/target/release/sdfgc}
PY=${DACE_PYTHON:-/work/venv-dace1/bin/python}
REPEAT=${REPEAT:-200}
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-2} OPENBLAS_NUM_THREADS=${OPENBLAS_NUM_THREADS:-2}
kernels=${*:-"k2mm atax mvt gemver gemm k3mm mlp"}  # covariance: ~1 s per call on both sides
generated=()
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
export DACE_default_build_folder="$tmp/dacecache"
printf '| kernel | DaCe+OpenBLAS min us | sdfgc --blas openblas min us | sdfgc/DaCe |\n|---|---:|---:|---:|\n'
for k in $kernels; do
    case $k in gemm|k3mm|mlp) generated+=("$k"); continue ;; esac
    case=fixtures/npbench/$k
    mkdir -p "$tmp/$k/s"
    dlib=$("$PY" scripts/bench_blas_dace.py "$case/program.sdfg" "$tmp/$k/d" 2>"$tmp/$k/d.log" | tail -1) || {
        echo "| $k | DaCe failed: $(grep -m1 -i error "$tmp/$k/d.log") | | |"; continue; }
    "$SDFGC" "$case/program.sdfg" --blas openblas -o "$tmp/$k/s"
    g++ -std=c++17 -O3 -march=native -fopenmp -fPIC -shared "$tmp/$k"/s/*.cpp -o "$tmp/$k/s/lib.so" -lopenblas
    t() { python3 fixtures/corpus/run_case.py --lib "$1" --case "$case" --variant program.sdfg --repeat "$REPEAT" |
          python3 -c 'import json,sys; r=json.loads(sys.stdin.read().strip().splitlines()[-1]); print(("%.1f" % (r["min_time_s"]*1e6)) if r["ok"] else "WRONG")'; }
    d=$(t "$dlib" || echo FAIL); s=$(t "$tmp/$k/s/lib.so" || echo FAIL)
    r=$(python3 -c "print('%.2f' % ($s/$d))" 2>/dev/null || echo -)
    echo "| $k | $d | $s | $r |"
done
if [ ${#generated[@]} -gt 0 ]; then
    echo
    SDFGC=$SDFGC "$PY" scripts/bench_blas_matrix.py "${generated[@]}" --repeat "${MATRIX_REPEAT:-15}" 2>/dev/null
fi
