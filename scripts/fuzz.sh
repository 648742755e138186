#!/usr/bin/env bash
# Coverage-guided fuzzing of sdfgc (issue 8): runs each cargo-fuzz target in
# fuzz/ for a fixed time budget and prints libFuzzer's final statistics.
#
#   bash scripts/fuzz.sh                  # 600 s for each of frontend and pipeline
#   bash scripts/fuzz.sh 60 frontend      # 60 s, one target
#   FUZZ_JOBS=2 bash scripts/fuzz.sh      # libFuzzer -fork=2 (two processes)
#
# Targets (fuzz/fuzz_targets/): `frontend` (bytes -> JSON reader -> validation)
# and `pipeline` (+ planning and C++ generation, cpp target, every mode).
# Seeds are fuzz/corpus/<target>/seed-*.sdfg (minified fixtures); libFuzzer
# adds what it finds to the same directory (ignored by git). A crash is saved
# to fuzz/artifacts/<target>/ and makes this script exit non-zero; reproduce
# it with `cargo fuzz run <target> -O -a --sanitizer none <file>`, minimise
# it with `cargo fuzz tmin ...`, and add it to tests/bad/ or a unit test.
#
# Build: release (-O) with debug assertions (-a: integer overflow checks are
# on) and no sanitizer (sdfgc is safe Rust; a stack overflow still crashes
# through the guard page, and ASan would cost most of the speed). cargo-fuzz
# needs nightly compiler flags: the nightly toolchain is used when installed,
# else stable with RUSTC_BOOTSTRAP=1.
set -euo pipefail
cd "$(dirname "$0")/.."

secs=${1:-600}
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(frontend pipeline)

command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz
if rustup toolchain list 2>/dev/null | grep -q '^nightly'; then
    cargo=(cargo +nightly)
else
    export RUSTC_BOOTSTRAP=1
    cargo=(cargo)
fi
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$PWD/fuzz/target}

status=0
for t in "${targets[@]}"; do
    mkdir -p "fuzz/corpus/$t" "fuzz/artifacts/$t"
    echo "== fuzz target $t: ${secs}s" >&2
    fork=()
    [ -n "${FUZZ_JOBS:-}" ] && fork=(-fork="$FUZZ_JOBS" -ignore_crashes=0)
    if ! (cd fuzz && "${cargo[@]}" fuzz run "$t" -O -a --sanitizer none -- \
        -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
        -print_final_stats=1 "${fork[@]}"); then
        echo "== $t: crash found, see fuzz/artifacts/$t/" >&2
        status=1
    fi
done
exit $status
