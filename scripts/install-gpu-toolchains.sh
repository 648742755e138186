#!/usr/bin/env bash
# Installs compile-only GPU toolchains (no GPU needed) and writes build/gpu-env.sh:
#   CUDA nvcc 13.x from PyPI (cuda-toolkit[nvcc,cccl]) into build/venv-cuda,
#   cuBLAS's headers only (include/ of the nvidia-cublas wheel that
#   cuda-toolkit pins, next to nvcc's headers; the 444 MB wheel is deleted),
#   HIP 5.2 (hipcc, clang 15) from Debian's packages.
# Idempotent; about 45 s and 0.8 GB on a fresh machine.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p build
venv=build/venv-cuda
if [ ! -x "$venv/bin/python" ]; then
    python3 -m venv "$venv"
fi
if ! ls "$venv"/lib/python3*/site-packages/nvidia/cu13/bin/nvcc >/dev/null 2>&1; then
    "$venv/bin/pip" install --quiet 'cuda-toolkit[nvcc,cccl]==13.5.0'
fi
cu=$(ls -d "$PWD/$venv"/lib/python3*/site-packages/nvidia/cu13 | head -1)
if [ ! -f "$cu/include/cublas_v2.h" ]; then
    # The cuBLAS version cuda-toolkit's `cublas` extra pins (matches nvcc).
    pin=$(sed -n 's/^Requires-Dist: \(nvidia-cublas==[^;]*\);.*extra == .cublas.*/\1/p' \
        "$venv"/lib/python3*/site-packages/cuda_toolkit-*.dist-info/METADATA | head -1 | tr -d ' ')
    [ -n "$pin" ] || { echo "cannot find the nvidia-cublas version cuda-toolkit pins" >&2; exit 1; }
    tmp=$(mktemp -d)
    trap 'rm -rf "$tmp"' EXIT
    "$venv/bin/pip" download --quiet --no-deps --only-binary=:all: -d "$tmp" "$pin"
    # Only the headers: nvidia/cu13/include/* into site-packages (= $cu/include).
    "$venv/bin/python" - "$tmp"/nvidia_cublas-*.whl "$(dirname "$(dirname "$cu")")" <<'PY'
import sys, zipfile
wheel, site = sys.argv[1], sys.argv[2]
with zipfile.ZipFile(wheel) as z:
    headers = [n for n in z.namelist() if n.startswith("nvidia/cu13/include/") and n.endswith(".h")]
    if not any(n.endswith("/cublas_v2.h") for n in headers):
        sys.exit(f"{wheel}: no nvidia/cu13/include/cublas_v2.h")
    z.extractall(site, headers)
PY
    rm -rf "$tmp"
fi
if ! command -v hipcc >/dev/null 2>&1; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends hipcc >/dev/null
    apt-get clean
fi
cat > build/gpu-env.sh <<ENV
# Source this file to get nvcc and hipcc (compile-only).
export SDFGC_NVCC="$cu/bin/nvcc"
export SDFGC_HIPCC="$(command -v hipcc)"
export HIP_PLATFORM=amd
ENV
echo "nvcc:  $("$cu/bin/nvcc" --version | tail -1)"
echo "cuBLAS headers: $cu/include/cublas_v2.h"
echo "hipcc: $(HIP_PLATFORM=amd hipcc --version 2>/dev/null | head -1)"
echo "wrote build/gpu-env.sh"
