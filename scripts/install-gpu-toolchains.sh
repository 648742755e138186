#!/usr/bin/env bash
# Installs compile-only GPU toolchains (no GPU needed) and writes build/gpu-env.sh:
#   CUDA nvcc 13.x from PyPI (cuda-toolkit[nvcc,cccl]) into build/venv-cuda,
#   HIP 5.2 (hipcc, clang 15) from Debian's packages.
# Idempotent; about 35 s and 0.8 GB on a fresh machine.
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
echo "hipcc: $(HIP_PLATFORM=amd hipcc --version 2>/dev/null | head -1)"
echo "wrote build/gpu-env.sh"
