#!/usr/bin/env bash
# Installs the tools the build-integration tests need on a fresh machine:
#   * cmake and ninja (from PyPI, into the user's Python scripts directory),
#     linked into /usr/local/bin (or ~/.local/bin when that is not writable) so
#     that tests/cmake_example.rs finds them on PATH;
#   * a Python virtual environment with DaCe 1.0.2 (networkx<3.4, numpy, pytest;
#     scipy and pytest-timeout for the slice of DaCe's own tests)
#     under build/venv-dace, used by examples/dace/, tests/dace_example.rs and
#     the Python package's tests (python/tests), with maturin to install the
#     package (`pip install --no-build-isolation ./python` in scripts/test.sh);
#   * a Python 3.12 venv with gt4py 1.2.1 and DaCe 2.0.0a10 under
#     build/venv-gt4py, for the gt4py slice (scripts/gt4py-suite.sh --ci);
#   * a Python 3.12 venv with ICON4Py 0.4.1 (and the same gt4py and DaCe) under
#     build/venv-icon4py, for the ICON4Py torus slice (scripts/icon4py-torus.sh --ci);
#   * ccache, through which the tests compile the generated libraries.
# Idempotent: finished steps are skipped on a second run.
set -euo pipefail
cd "$(dirname "$0")/.."

PY=${PYTHON:-python3}

# Creates a venv at $1 (installing Debian's python3-venv first if needed).
make_venv() {
    "$PY" -m venv "$1" 2>/dev/null && return 0
    rm -rf "$1"
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        apt-get update -qq && apt-get install -y -qq python3-venv >/dev/null
    fi
    "$PY" -m venv "$1"
}

# ---- cmake and ninja ----
if ! command -v cmake >/dev/null 2>&1 || ! command -v ninja >/dev/null 2>&1; then
    if ! "$PY" -m pip install --quiet --user cmake ninja 2>/dev/null &&
        ! "$PY" -m pip install --quiet cmake ninja 2>/dev/null; then
        # An externally managed Python: a venv of its own under build/.
        make_venv build/venv-tools
        build/venv-tools/bin/python -m pip install --quiet cmake ninja
    fi
    bindir=/usr/local/bin
    [ -w "$bindir" ] || { bindir="$HOME/.local/bin"; mkdir -p "$bindir"; }
    for tool in cmake ninja; do
        if ! command -v "$tool" >/dev/null 2>&1 && [ -x "build/venv-tools/bin/$tool" ]; then
            ln -sf "$PWD/build/venv-tools/bin/$tool" "$bindir/$tool"
        fi
    done
    for tool in cmake ninja; do
        command -v "$tool" >/dev/null 2>&1 && continue
        # The pip packages install a launcher script; find it via the package itself.
        src=$("$PY" - "$tool" <<'PYEOF'
import os, shutil, sys, sysconfig, site
tool = sys.argv[1]
cands = [sysconfig.get_path("scripts"), sysconfig.get_path("scripts", "posix_user"),
         os.path.join(site.getuserbase(), "bin")]
for d in cands:
    p = os.path.join(d, tool)
    if os.path.isfile(p) and os.access(p, os.X_OK):
        print(p); break
else:
    print(shutil.which(tool) or "")
PYEOF
)
        [ -n "$src" ] || { echo "error: $tool was installed but its launcher was not found" >&2; exit 1; }
        ln -sf "$src" "$bindir/$tool"
    done
fi
for tool in cmake ninja; do
    command -v "$tool" >/dev/null 2>&1 ||
        { echo "error: $tool is installed in ${bindir:-?}, which is not on PATH: add it" >&2; exit 1; }
done
echo "cmake: $(command -v cmake) ($(cmake --version | head -n1))"
echo "ninja: $(command -v ninja) ($(ninja --version))"

# ---- DaCe 1.0.2 in a venv ----
VENV=build/venv-dace
if ! "$VENV/bin/python" -c 'import dace, numpy' >/dev/null 2>&1; then
    rm -rf "$VENV"
    make_venv "$VENV"
    "$VENV/bin/python" -m pip install --quiet 'dace==1.0.2' 'networkx<3.4' numpy
fi
if ! "$VENV/bin/python" -c 'import pytest' >/dev/null 2>&1 || [ ! -x "$VENV/bin/maturin" ]; then
    "$VENV/bin/python" -m pip install --quiet pytest 'maturin>=1.5,<2'
fi
# DaCe's own tests (scripts/dace-tests.py --ci) import scipy and run under pytest-timeout;
# python/tests/test_concurrency.py runs two pytest-xdist workers on one build cache.
if ! "$VENV/bin/python" -c 'import scipy, pytest_timeout, xdist' >/dev/null 2>&1; then
    "$VENV/bin/python" -m pip install --quiet scipy pytest-timeout pytest-xdist
fi
echo "dace: $("$VENV/bin/python" -c 'import dace; print(dace.__version__)') in $VENV"

# ---- gt4py 1.2.1 + DaCe 2.0.0a10 on Python 3.12 ----
# Sets py312 to a Python 3.12.
find_python312() {
    py312=python3.12  # else pyenv's (its shim may exist without being selected)
    "$py312" -c pass 2>/dev/null ||
        py312=$(ls "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.12*/bin/python3 2>/dev/null | head -1)
    if [ -z "$py312" ]; then
        # Neither python3.12 nor pyenv's: uv fetches a standalone CPython 3.12.
        "$VENV/bin/python" -m pip install --quiet uv
        "$VENV/bin/uv" python install 3.12
        py312=$("$VENV/bin/uv" python find 3.12)
    fi
    [ -n "$py312" ] || { echo "error: the gt4py and ICON4Py slices need Python 3.12 (python3.12, pyenv or uv)" >&2; exit 1; }
}
GT=build/venv-gt4py
if ! "$GT/bin/python" -c 'import gt4py, dace, pytest' >/dev/null 2>&1 || [ ! -x "$GT/bin/maturin" ]; then
    find_python312
    rm -rf "$GT"
    "$py312" -m venv "$GT"
    "$GT/bin/python" -m pip install --quiet gt4py==1.2.1 dace==2.0.0a10 pytest hypothesis pytest-timeout \
        pytest-benchmark pytest-factoryboy pytest-xdist psutil 'maturin>=1.5,<2'
fi
echo "gt4py: $("$GT/bin/python" -c 'import gt4py; print(gt4py.__version__)') in $GT"

# ---- ICON4Py 0.4.1 (../shared/icon4py/README.md) on Python 3.12 ----
# Its dycore stencil tests on a torus grid (scripts/icon4py-torus.sh --ci) and
# python/tests/test_torus.py against ICON4Py's own grid objects. About 2.5
# minutes on 2 cores from an empty pip cache. icon4py-driver is imported by
# icon4py.model.testing's fixtures, and imports microphysics and tracer advection.
IC=build/venv-icon4py
if ! "$IC/bin/python" -c 'from importlib.metadata import version as v; [v(p) for p in ("icon4py-testing",
        "icon4py-atmosphere-dycore", "icon4py-driver", "gt4py", "dace", "pytest-xdist", "pytest-timeout")]' \
        >/dev/null 2>&1 || [ ! -x "$IC/bin/maturin" ]; then
    find_python312
    rm -rf "$IC"
    "$py312" -m venv "$IC"
    "$IC/bin/python" -m pip install --quiet icon4py-common==0.4.1 icon4py-testing==0.4.1 \
        icon4py-atmosphere-dycore==0.4.1 icon4py-driver==0.4.1 icon4py-atmosphere-microphysics==0.4.1 \
        icon4py-atmosphere-tracer-advection==0.4.1 gt4py==1.2.1 dace==2.0.0a10 pytest pytest-xdist \
        pytest-timeout pytest-benchmark hypothesis pytest-factoryboy psutil 'maturin>=1.5,<2'
fi
echo "icon4py: $("$IC/bin/python" -c 'from importlib import metadata; print(metadata.version("icon4py-common"))') in $IC"

# ---- ccache (tests/common/cxx.rs compiles generated libraries through it) ----
if ! command -v ccache >/dev/null 2>&1; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        apt-get update -qq && apt-get install -y -qq ccache >/dev/null
    else
        echo "note: ccache not found; the tests compile every library from scratch" >&2
    fi
fi

# ---- OpenBLAS (tests/blas_calls.rs: --blas openblas) ----
if ! [ -e /usr/include/cblas.h ] && ! ls /usr/include/*/cblas.h >/dev/null 2>&1; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        apt-get update -qq && apt-get install -y -qq libopenblas-dev >/dev/null
    else
        echo "error: install libopenblas-dev (cblas.h, -lopenblas) for tests/blas_calls.rs" >&2
        exit 1
    fi
fi

# ---- Open MPI and mpi4py (tests/mpi.rs: MPI library nodes under mpirun) ----
if ! command -v mpicxx >/dev/null 2>&1 || ! command -v mpirun >/dev/null 2>&1; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        apt-get update -qq && apt-get install -y -qq openmpi-bin libopenmpi-dev >/dev/null
    else
        echo "error: install openmpi-bin libopenmpi-dev (mpicxx, mpirun) for tests/mpi.rs" >&2
        exit 1
    fi
fi
# In both DaCe venvs: the fixtures run under DaCe 1.0.2 and 2.x (*.v2.sdfg).
for py in "$VENV/bin/python" "$GT/bin/python"; do
    if ! "$py" -c 'import mpi4py' >/dev/null 2>&1; then
        "$py" -m pip install --quiet mpi4py
    fi
done
echo "mpi: $(mpirun --version 2>&1 | head -1), mpi4py $("$VENV/bin/python" -c 'import mpi4py; print(mpi4py.__version__)') ($VENV), $("$GT/bin/python" -c 'import mpi4py; print(mpi4py.__version__)') ($GT)"
