#!/usr/bin/env bash
# gt4py 1.2.1's own integration tests (../shared/gt4py-suite) with every DaCe
# build generating its code through sdfgc (not in CI: about an hour on 2 cores).
#
#   bash scripts/gt4py-suite.sh [PYTEST ARGS...]    # default: ffront_tests -k dace_cpu
#
# Needs Python 3.12 (pyenv has it here); makes build/venv-gt4py with gt4py
# 1.2.1 and DaCe 2.0.0a10. DaCe's SDFG.compile() is switched to sdfgc by
# python/sdfgc/_startup/sitecustomize.py with SDFGC_DACE=1, in gt4py's spawned
# build workers too. Prints pytest's summary, the number of SDFGs sdfgc
# compiled and every refusal (sdfgc's message), from build/gt4py-suite/.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
suite=${SDFGC_GT4PY_SUITE:-$root/../shared/gt4py-suite}
venv=$root/build/venv-gt4py
py=$(command -v python3.12 || ls "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.12*/bin/python3 2>/dev/null | head -1)
[ -x "$venv/bin/python" ] || {
  "$py" -m venv "$venv"
  "$venv/bin/pip" install -q gt4py==1.2.1 dace==2.0.0a10 cmake pytest hypothesis pytest-timeout \
    pytest-benchmark pytest-factoryboy pytest-xdist psutil
}
cargo build --release --quiet
out=$root/build/gt4py-suite
rm -rf "$out" && mkdir -p "$out" && cp -r "$suite"/. "$out/suite"
[ $# -gt 0 ] || set -- tests/next_tests/integration_tests/feature_tests/ffront_tests -k dace_cpu
cd "$out/suite"
set +e
SDFGC_DACE=1 SDFGC="$root/target/release/sdfgc" SDFGC_DACE_LOG="$out/sdfgc.log" \
  PYTHONPATH="$root/python:$root/python/sdfgc/_startup" PATH="$venv/bin:$PATH" \
  python -m pytest -q -p no:cacheprovider --tb=line -rf "$@" > "$out/pytest.log" 2>&1
rc=$?
set -e
tail -n 1 "$out/pytest.log"
echo "SDFGs compiled by sdfgc: $(grep -c '^compiled ' "$out/sdfgc.log" 2>/dev/null || echo 0)"
echo "refused by sdfgc: $(grep -c '^refused ' "$out/sdfgc.log" 2>/dev/null || echo 0)"
grep '^refused ' "$out/sdfgc.log" 2>/dev/null | sed 's/.*unsupported: //; s/.*invalid code: //' | sort | uniq -c | sort -rn | head -20 || true
exit $rc
