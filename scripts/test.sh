#!/usr/bin/env bash
# The whole test suite: formatting, lints, unit and integration tests
# (the integration tests build generated C++ with g++ and run it), and the
# Python package's tests.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v g++ >/dev/null || { echo "error: g++ is required by the tests" >&2; exit 1; }
cargo fmt --all -- --check
cargo clippy --all-targets --profile ci -- -D warnings
INSTA_UPDATE=no cargo test --profile ci
# The Python package, pip-installed as users get it, but with the binary of
# the test profile just built (a user's install builds the release profile,
# whose fat LTO would cost CI minutes), against DaCe 1.0.2: build, cache,
# Workspace, load, the SDFG.compile() switch, spawned workers.
PIP_SDFGC=(-m pip install --quiet --no-build-isolation --config-settings=build-args="--profile ci" ./python)
PATH="$PWD/build/venv-dace/bin:$PATH" build/venv-dace/bin/python "${PIP_SDFGC[@]}"
env -u SDFGC -u PYTHONPATH PATH="$PWD/build/venv-dace/bin:$PATH" SDFGC_CACHE_DIR="$PWD/build/sdfgc-cache" \
    build/venv-dace/bin/python -m pytest -q -p no:cacheprovider python/tests
# load() with DaCe 2.0.0a10's CompiledSDFG (the gt4py venv).
PATH="$PWD/build/venv-gt4py/bin:$PATH" build/venv-gt4py/bin/python "${PIP_SDFGC[@]}"
env -u SDFGC -u PYTHONPATH PATH="$PWD/build/venv-gt4py/bin:$PATH" SDFGC_CACHE_DIR="$PWD/build/sdfgc-cache" \
    build/venv-gt4py/bin/python -m pytest -q -p no:cacheprovider python/tests/test_load.py
# gt4py 1.2.1's own tests (a slice, both DaCe CPU backends) through SDFGC_DACE=1.
SDFGC_CARGO_PROFILE=ci bash scripts/gt4py-suite.sh --ci
# ICON4Py 0.4.1's dycore stencil tests on a torus grid (7 stencils at
# torus:16x8, the project's pytest plugin) through SDFGC_DACE=1; then the torus
# against ICON4Py's own grid objects (its venv, where the package is now installed).
SDFGC_CARGO_PROFILE=ci bash scripts/icon4py-torus.sh --ci
env -u SDFGC -u PYTHONPATH PATH="$PWD/build/venv-icon4py/bin:$PATH" \
    build/venv-icon4py/bin/python -m pytest -q -p no:cacheprovider python/tests/test_torus.py
# A slice of DaCe 1.0.2's own tests (scripts/dace-tests-ci.txt: copies, views,
# symbols, nested SDFGs, reductions, library nodes, dynamic map ranges) through SDFGC_DACE=1.
python3 scripts/dace-tests.py --ci --venv build/venv-dace --out build/dace-tests-ci
# DaCe 1.0.2's GPU tests, a slice (scripts/dace-tests-gpu-ci.txt: kernels, thread-block
# maps, shared memory, reductions, streams, cuBLAS) through SDFGC_DACE=1, sdfgc's CUDA built
# by scripts/emu-nvcc and run on the emulated CUDA runtime (no GPU needed).
python3 scripts/dace-tests.py --gpu --ci --venv build/venv-dace --out build/dace-tests-gpu-ci
# Differential fuzzing (docs/fuzzing.md): the CI slice of scripts/fuzz_numpy.py,
# a fixed list of random NumPy programs built by DaCe 1.0.2's generator and by
# sdfgc (default and external modes), with and without auto_optimize.
PATH="$PWD/build/venv-dace/bin:$PATH" build/venv-dace/bin/python scripts/fuzz_numpy.py --ci --sdfgc target/ci/sdfgc
# The enumeration's CI slice (docs/enumeration.md): every 23rd cell of DaCe's
# tables (ufuncs, operators, math functions, reductions, powers) x dtypes, built
# by DaCe 1.0.2's generator and by sdfgc (default and external); an sdfgc-side
# failure fails the run.
SDFGC="$PWD/target/ci/sdfgc" PATH="$PWD/build/venv-dace/bin:$PATH" \
    build/venv-dace/bin/python scripts/enumerate.py --ci --out build/enumerate-ci
# The same slice under DaCe 2.0.0a10 (the gt4py venv): its runtime's math
# functions, float16 and ufuncs differ from DaCe 1's, and sdfgc follows the
# version that saved each SDFG.
SDFGC="$PWD/target/ci/sdfgc" PATH="$PWD/build/venv-gt4py/bin:$PATH" \
    build/venv-gt4py/bin/python scripts/enumerate.py --ci --out build/enumerate-ci-dace2
