#!/usr/bin/env bash
# Installs the tools the build-integration tests need on a fresh machine:
#   * cmake and ninja (from PyPI, into the user's Python scripts directory),
#     linked into /usr/local/bin (or ~/.local/bin when that is not writable) so
#     that tests/cmake_example.rs finds them on PATH;
#   * a Python virtual environment with DaCe 1.0.2 (networkx<3.4, numpy, pytest)
#     under build/venv-dace, used by examples/dace/, tests/dace_example.rs and
#     the Python package's tests (python/tests).
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
if ! "$VENV/bin/python" -c 'import pytest' >/dev/null 2>&1; then
    "$VENV/bin/python" -m pip install --quiet pytest
fi
echo "dace: $("$VENV/bin/python" -c 'import dace; print(dace.__version__)') in $VENV"

# ---- OpenBLAS (tests/blas_calls.rs: --blas openblas) ----
if ! [ -e /usr/include/cblas.h ] && ! ls /usr/include/*/cblas.h >/dev/null 2>&1; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        apt-get update -qq && apt-get install -y -qq libopenblas-dev >/dev/null
    else
        echo "install libopenblas-dev (cblas.h, -lopenblas) for tests/blas_calls.rs" >&2
    fi
fi
