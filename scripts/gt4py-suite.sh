#!/usr/bin/env bash
# gt4py 1.2.1's own integration tests (../shared/gt4py-suite) with every DaCe
# build generating its code through sdfgc: the package is pip-installed into
# build/venv-gt4py (made by scripts/install-test-tools.sh) and switched on
# with SDFGC_DACE=1 alone (its .pth file), in gt4py's spawned build workers too.
#
#   bash scripts/gt4py-suite.sh [PYTEST ARGS...]   # default: ffront_tests -k dace_cpu (about an hour)
#   bash scripts/gt4py-suite.sh --ci               # the CI slice: 44 tests, both DaCe CPU backends
#
# Prints pytest's summary, per backend passed/failed/skipped, the number of SDFGs sdfgc compiled, every refusal
# (sdfgc's message) and every library DaCe loaded that sdfgc did not build
# (build/gt4py-suite/). With --ci it fails unless every test passes (with
# DaCe's own generator they all do), nothing was refused, every library
# loaded was sdfgc's and none went to DaCe's CMake build.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
suite=${SDFGC_GT4PY_SUITE:-$root/../shared/gt4py-suite}
venv=$root/build/venv-gt4py
[ -x "$venv/bin/python" ] || { echo "error: $venv is missing: run scripts/install-test-tools.sh" >&2; exit 1; }
[ -d "$suite" ] || { echo "error: gt4py's tests not found at $suite (set SDFGC_GT4PY_SUITE)" >&2; exit 1; }
# The package as a user gets it, its binary built with the cargo profile
# $SDFGC_CARGO_PROFILE (default release; scripts/test.sh: ci, already built).
profile=${SDFGC_CARGO_PROFILE:-release}
cargo build --profile "$profile" --quiet
PATH="$venv/bin:$PATH" "$venv/bin/python" -m pip install --quiet --no-build-isolation \
  --config-settings=build-args="--profile $profile" ./python
ci=0
ffront=tests/next_tests/integration_tests/feature_tests/ffront_tests
if [ "${1:-}" = --ci ]; then
  ci=1
  shift
  set -- "$ffront"/test_basic.py "$ffront"/test_where.py "$ffront"/test_cartesian_shifts.py \
    "$ffront"/test_scalar_args.py -k dace_cpu
fi
[ $# -gt 0 ] || set -- "$ffront" -k dace_cpu
out=$root/build/gt4py-suite
rm -rf "$out" && mkdir -p "$out" && cp -r "$suite"/. "$out/suite"
cd "$out/suite"
set +e
env -u SDFGC -u PYTHONPATH SDFGC_DACE=1 SDFGC_DACE_LOG="$out/sdfgc.log" GT4PY_BUILD_CACHE_DIR="$out/gt4py-cache" \
  PATH="$venv/bin:$PATH" python -m pytest -q -p no:cacheprovider --tb=line -rA "$@" > "$out/pytest.log" 2>&1
rc=$?
set -e
count() { grep -c "^$1 " "$out/sdfgc.log" 2>/dev/null || true; }
compiled=$(count compiled) refused=$(count refused) foreign=$(count foreign) checked=$(count checked) cmake=$(count cmake)
tail -n 1 "$out/pytest.log"
# per backend (the test id's parameter): passed / failed / skipped / xfailed
grep -E '^(PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS) ' "$out/pytest.log" |
  sed -E 's/^([A-Z]+) .*(dace\.run_dace_[a-z_]+|dace_[a-z_]+).*/\2 \1/; t; s/^([A-Z]+) .*/other \1/' |
  sort | uniq -c | awk '{printf "  %-28s %-8s %d\n", $2, $3, $1}' || true
echo "SDFGs compiled by sdfgc: ${compiled:-0}"
echo "refused by sdfgc: ${refused:-0}"
echo "libraries loaded with their parameter lists checked: ${checked:-0}"
echo "libraries loaded that sdfgc did not build: ${foreign:-0}"
echo "programs built by DaCe's CMake build (not sdfgc's code): ${cmake:-0}"
grep '^refused ' "$out/sdfgc.log" 2>/dev/null | sed 's/.*unsupported: //; s/.*invalid code: //' | sort | uniq -c | sort -rn | head -20 || true
if [ $ci = 1 ]; then
  [ $rc = 0 ] || { grep -E '^(FAILED|ERROR)' "$out/pytest.log" | head -20; echo "gt4py slice: tests failed" >&2; exit 1; }
  [ "${compiled:-0}" -gt 0 ] && [ "${checked:-0}" -gt 0 ] || { echo "gt4py slice: nothing went through sdfgc" >&2; exit 1; }
  [ "${refused:-0}" = 0 ] && [ "${foreign:-0}" = 0 ] && [ "${cmake:-0}" = 0 ] ||
    { echo "gt4py slice: not every SDFG was sdfgc's, built without CMake" >&2; exit 1; }
fi
exit $rc
