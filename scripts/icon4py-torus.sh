#!/usr/bin/env bash
# ICON4Py's dycore stencil tests (../shared/icon4py, run from a copy) on a
# torus grid of any size (`--grid=torus:NxM --levels K`, the project's pytest
# plugin: python/sdfgc/icon4py_grid.py) through SDFGC_DACE=1, in the ICON4Py
# venv build/venv-icon4py (scripts/install-test-tools.sh makes it).
#
#   bash scripts/icon4py-torus.sh --ci      # the CI slice: 7 stencils at torus:16x8, dace_cpu
#   bash scripts/icon4py-torus.sh [--grid torus:128x80] [--levels 80] [--backend dace_cpu]
#        [--jobs N] [--nice N] [--dace] [--no-install] [--tag NAME] [TEST FILES...]   # default: every test file
#
# --dace: DaCe's own generator (no SDFGC_DACE) for comparison. --no-install:
# use the sdfgc package and binary already in the venv (a long run that must
# not pick up a tree being edited). Writes build/icon4py-torus/<tag>/
# (pytest.log, junit.xml, sdfgc.log; workspace.json, the shared workspace's
# programs and size, for a *_external backend) and prints pytest's summary
# line, the outcome counts and sdfgc's counters: SDFGs compiled, refused, libraries
# loaded with their parameter lists checked, loaded but not built by sdfgc,
# built by DaCe's CMake. A check test added to the copy first asserts that
# the `grid` fixture is the torus asked for. With --ci it fails unless every
# test passes, nothing was refused and every library loaded was sdfgc's.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
src=${ICON4PY_SRC:-$root/../shared/icon4py}
venv=${ICON4PY_VENV:-$root/build/venv-icon4py}
grid=torus:128x80 levels=80 backend=dace_cpu jobs=1 nice=10 ci=0 gen=sdfgc install=1 tag=
tests=()
while [ $# -gt 0 ]; do
  case "$1" in
    --ci) ci=1 grid=torus:16x8 levels=40 ;;
    --grid) grid=$2; shift ;;
    --levels) levels=$2; shift ;;
    --backend) backend=$2; shift ;;
    --jobs) jobs=$2; shift ;;
    --nice) nice=$2; shift ;;
    --dace) gen=dace ;;
    --no-install) install=0 ;;
    --tag) tag=$2; shift ;;
    -h|--help) sed -n '2,20p' "$0"; exit 0 ;;
    *) tests+=("$1") ;;
  esac
  shift
done
[ -x "$venv/bin/python" ] || { echo "error: $venv is missing: run scripts/install-test-tools.sh" >&2; exit 1; }
[ -d "$src" ] || { echo "error: ICON4Py's tests not found at $src (set ICON4PY_SRC)" >&2; exit 1; }
stencils=model/atmosphere/dycore/tests/dycore/stencil_tests
if [ $ci = 1 ] && [ ${#tests[@]} = 0 ]; then
  # pointwise, V2E, V2C, E2C2E, C2E, a vertical scan, a k-offset
  tests=(test_compute_airmass.py test_mo_math_divrot_rot_vertex_ri_dsl.py
    test_mo_icon_interpolation_scalar_cells2verts_scalar_ri_dsl.py test_compute_tangential_wind.py
    test_interpolate_to_cell_center.py test_solve_tridiagonal_matrix_for_w_forward_sweep.py
    test_interpolate_vn_and_vt_to_ie_and_compute_ekin_on_edges.py)
fi
if [ ${#tests[@]} = 0 ]; then
  tests=($(cd "$src/$stencils" && ls test_*.py))
fi
if [ $install = 1 ]; then
  # The package as a user gets it, its binary built with $SDFGC_CARGO_PROFILE
  # (default release; scripts/test.sh: ci, already built).
  profile=${SDFGC_CARGO_PROFILE:-release}
  cargo build --profile "$profile" --quiet
  PATH="$venv/bin:$PATH" "$venv/bin/python" -m pip install --quiet --no-build-isolation \
    --config-settings=build-args="--profile $profile" ./python
fi
tag=${tag:-${grid//[:]/-}-$backend-$gen}
out=$root/build/icon4py-torus/$tag
rm -rf "$out" && mkdir -p "$out"
cp -r "$src"/. "$out/icon4py"
n=${grid#torus:}; n=${n%%:*}
case "$grid" in
  torus:*) cells=$(( 2 * ${n%x*} * ${n#*x} )) ;;
  *) cells= ;;
esac
# the grid the tests get is the one asked for
cat > "$out/icon4py/$stencils/test_sdfgc_grid_in_use.py" <<EOF
def test_sdfgc_grid_in_use(grid):
    assert "$cells" == "" or grid.num_cells == int("$cells"), grid.num_cells
    assert grid.num_levels == $levels, grid.num_levels
EOF
args=(-p no:cacheprovider -p sdfgc.icon4py_modes "--backend=$backend" "--grid=$grid" "--levels" "$levels"
  --benchmark-disable --timeout=3600 -v -rfE "--junitxml=$out/junit.xml")
[ "$jobs" -gt 1 ] && args+=(-n "$jobs")
# EXTERNAL: the programs the one shared workspace served and its size (FILE.gw0, ... under -n)
case "$backend" in *_external) args+=("--workspace-report=$out/workspace.json") ;; esac
envs=(GT4PY_BUILD_CACHE_LIFETIME=persistent GT4PY_BUILD_CACHE_DIR="$out/gt4py-cache"
  SDFGC_CACHE_DIR="$out/sdfgc-cache" PATH="$venv/bin:$PATH")
[ $gen = sdfgc ] && envs+=(SDFGC_DACE=1 SDFGC_DACE_LOG="$out/sdfgc.log")
paths=("$stencils/test_sdfgc_grid_in_use.py")
for t in "${tests[@]}"; do paths+=("$stencils/${t##*/}"); done
echo "icon4py-torus: $tag: ${#tests[@]} test files, --grid=$grid --levels $levels --backend=$backend, $gen, -n $jobs"
start=$(date +%s)
set +e
(cd "$out/icon4py" && env -u SDFGC -u PYTHONPATH -u SDFGC_DACE "${envs[@]}" \
  nice -n "$nice" "$venv/bin/python" -m pytest "${args[@]}" "${paths[@]}") > "$out/pytest.log" 2>&1
rc=$?
set -e
wall=$(( $(date +%s) - start ))
count() { grep -c "^$1 " "$out/sdfgc.log" 2>/dev/null || true; }
compiled=$(count compiled) refused=$(count refused) foreign=$(count foreign) checked=$(count checked) cmake=$(count cmake)
tail -n 1 "$out/pytest.log"
python3 - "$out/junit.xml" <<'PYEOF' || true
import sys, xml.etree.ElementTree as ET
counts = dict.fromkeys(("passed", "failed", "error", "skipped"), 0)
for case in ET.parse(sys.argv[1]).getroot().iter("testcase"):
    tags = {c.tag for c in case} & {"failure", "error", "skipped"}
    counts[{"failure": "failed"}.get(min(tags), min(tags)) if tags else "passed"] += 1
print("  " + ", ".join(f"{k} {v}" for k, v in counts.items()) + " (junit, the grid check included)")
PYEOF
echo "wall-clock: $wall s"
if [ $gen = sdfgc ]; then
  echo "SDFGs compiled by sdfgc: ${compiled:-0}"
  echo "refused by sdfgc: ${refused:-0}"
  echo "libraries loaded with their parameter lists checked: ${checked:-0}"
  echo "libraries loaded that sdfgc did not build: ${foreign:-0}"
  echo "programs built by DaCe's CMake build (not sdfgc's code): ${cmake:-0}"
  grep '^refused ' "$out/sdfgc.log" 2>/dev/null | sort | uniq -c | sort -rn | head -20 || true
fi
if [ $ci = 1 ]; then
  [ $rc = 0 ] || { grep -E '^(FAILED|ERROR)' "$out/pytest.log" | head -20; echo "icon4py torus slice: tests failed" >&2; exit 1; }
  [ "${compiled:-0}" -gt 0 ] && [ "${checked:-0}" -gt 0 ] || { echo "icon4py torus slice: nothing went through sdfgc" >&2; exit 1; }
  [ "${refused:-0}" = 0 ] && [ "${foreign:-0}" = 0 ] && [ "${cmake:-0}" = 0 ] ||
    { echo "icon4py torus slice: refused, foreign or CMake-built programs" >&2; exit 1; }
fi
exit $rc
