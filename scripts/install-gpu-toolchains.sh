#!/usr/bin/env bash
# Installs compile-only GPU toolchains (no GPU needed) and writes build/gpu-env.sh:
#   CUDA nvcc 13.x from PyPI (cuda-toolkit[nvcc,cccl]) into build/venv-cuda,
#   the headers only of cuBLAS, cuSOLVER, cuSPARSE and cuFFT (include/ of
#   the wheels cuda-toolkit pins, next to nvcc's headers; wheels deleted),
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
# The headers only (nvidia/cu13/include/*.h of each wheel, next to nvcc's;
# the wheels, 100-450 MB each, are deleted) of the libraries DaCe's GPU
# programs call, at the versions cuda-toolkit's extras pin (they match nvcc).
headers() { # <package> <extra> <header that must come with it>
    local pkg=$1 extra=$2 header=$3
    [ -f "$cu/include/$header" ] && return 0
    local pin tmp
    pin=$(sed -n "s/^Requires-Dist: \($pkg==[^;]*\);.*extra == .$extra.*/\1/p" \
        "$venv"/lib/python3*/site-packages/cuda_toolkit-*.dist-info/METADATA | head -1 | tr -d ' ')
    [ -n "$pin" ] || { echo "cannot find the $pkg version cuda-toolkit pins" >&2; exit 1; }
    tmp=$(mktemp -d)
    "$venv/bin/pip" download --quiet --no-deps --only-binary=:all: -d "$tmp" "$pin"
    "$venv/bin/python" - "$tmp"/*.whl "$(dirname "$(dirname "$cu")")" "$header" <<'PY'
import sys, zipfile
wheel, site, header = sys.argv[1:]
with zipfile.ZipFile(wheel) as z:
    headers = [n for n in z.namelist() if n.startswith("nvidia/cu13/include/") and n.endswith(".h")]
    if not any(n.endswith("/" + header) for n in headers):
        sys.exit(f"{wheel}: no nvidia/cu13/include/{header}")
    z.extractall(site, headers)
PY
    rm -rf "$tmp"
}
headers nvidia-cublas cublas cublas_v2.h
headers nvidia-cusolver cusolver cusolverDn.h
headers nvidia-cusparse cusparse cusparse.h
headers nvidia-cufft cufft cufft.h
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
echo "library headers: $(cd "$cu/include" && ls cublas_v2.h cusolverDn.h cusparse.h cufft.h | tr '\n' ' ')"
echo "hipcc: $(HIP_PLATFORM=amd hipcc --version 2>/dev/null | head -1)"
echo "wrote build/gpu-env.sh"
