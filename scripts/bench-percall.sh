#!/usr/bin/env bash
# Per-call overhead of sdfgc's generated code on small problem sizes, in the
# scoped, persistent and external modes (--mode), and heap allocations per
# call. Not part of CI. Usage:
#
#   bash scripts/bench-percall.sh [CASE...]        # default: a few corpus cases
#
# Env: SDFGC (binary; default $CARGO_TARGET_DIR/release/sdfgc or target/release/sdfgc),
#      ITER (timed calls, default 20000), OMP_NUM_THREADS (default: nproc; with 1 thread
#      libgomp itself mallocs a team per parallel region, in every mode and in DaCe's code too),
#      CXXFLAGS (default "-O3 -march=native -fopenmp -fPIC", DaCe's CPU flags).
#
# For each case and mode: `sdfgc program.sdfg --mode M --emit-sample`, builds the
# library and the sample program (<name>_main.cpp, which calls the program ITER
# times with its default small symbol values and prints the mean time per call),
# and runs the sample under an LD_PRELOAD malloc counter (scripts/malloc_count.c)
# with --iterations 1 and --iterations 1+ITER: (difference) / ITER = heap
# allocations per call (start-up, init, OpenMP pool and the first call cancel out).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
SDFGC=${SDFGC:-${CARGO_TARGET_DIR:-$root/target}/release/sdfgc}
ITER=${ITER:-20000}
CXXFLAGS=${CXXFLAGS:-"-O3 -march=native -fopenmp -fPIC"}
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-$(nproc)}
[ -x "$SDFGC" ] || { echo "build sdfgc first: cargo build --release" >&2; exit 1; }
cases=("$@")
[ ${#cases[@]} -gt 0 ] || cases=(jacobi_1d elementwise_chain_1d mixed_dtypes_transients softmax atax matvec_wcr)
out=$root/build/bench-percall
mkdir -p "$out"
gcc -O2 -shared -fPIC scripts/malloc_count.c -o "$out/malloc_count.so"
count() { LD_PRELOAD="$out/malloc_count.so" "$@" 2>&1 >/dev/null | sed -n 's/^malloc_count: //p'; }
printf '| case | mode | us/call | calls/s | heap allocs/call |\n|---|---|---:|---:|---:|\n'
for c in "${cases[@]}"; do
    f=fixtures/corpus/$c/program.sdfg
    for mode in scoped persistent external; do
        d=$out/$c/$mode
        rm -rf "$d"; mkdir -p "$d"
        "$SDFGC" "$f" --target cpp --mode "$mode" --emit-sample -o "$d"
        name=$(basename "$(ls "$d"/*_main.cpp)" _main.cpp)
        g++ -std=c++17 $CXXFLAGS -shared "$d/$name.cpp" -o "$d/lib$name.so"
        g++ -std=c++17 -O2 "$d/${name}_main.cpp" -L"$d" -l"$name" -Wl,-rpath,"$d" -o "$d/main"
        us=$("$d/main" --iterations "$ITER" | sed -n 's/^time per call: \([0-9.]*\) us.*/\1/p')
        a1=$(count "$d/main" --iterations 1)
        an=$(count "$d/main" --iterations $((ITER + 1)))
        per=$(python3 -c "print(f'{($an - $a1) / $ITER:g}')")
        cps=$(python3 -c "print(f'{1e6 / $us:,.0f}')")
        printf '| %s | %s | %s | %s | %s |\n' "$c" "$mode" "$us" "$cps" "$per"
    done
done
