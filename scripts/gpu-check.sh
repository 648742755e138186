#!/usr/bin/env bash
# Runs every GPU fixture on a real NVIDIA GPU and prints one line per run and
# a pass count (tests/gpu_device.rs, a test target that plain `cargo test`
# leaves out: `test = false` in Cargo.toml; this script selects it).
#
#   bash scripts/gpu-check.sh            # everything: ~600 runs
#   SDFGC_GPU_FILTER=gt4py bash scripts/gpu-check.sh   # only paths containing "gt4py"
#
# Every program.gpu*.sdfg / program.v2.gpu.sdfg of fixtures/corpus, every
# gt4py gpu/gpu_external/gpu_persistent.sdfg and every fixtures/gpu case is
# generated for CUDA in the scoped, pool, persistent and external modes and
# external with --streams 3 (fixtures/gpu also with --constant-memory), built
# with nvcc for this machine's GPU, and run twice by the harness's real-device
# driver against the expected outputs: GPU_Global arguments and workspaces in
# cudaMalloc'ed memory, the workspace poisoned with 0xFF before every call and
# followed by a guard zone, cudaDeviceSynchronize after every call, and the
# checked workspace setter made to refuse host memory.
#
# Needs: an NVIDIA GPU (nvidia-smi), nvcc (SDFGC_NVCC, else nvcc on PATH,
# else /usr/local/cuda/bin/nvcc), g++, python3, and either cargo with the
# crates already fetched (nothing is downloaded: --offline) or a prebuilt
# test binary in SDFGC_GPU_CHECK_BIN (e.g. target/release/deps/gpu_device-*
# carried from a build machine). SDFGC_GPU_ARCH sets nvcc's -arch (default:
# native). Exit status 0 iff every run passed.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

nvcc=${SDFGC_NVCC:-}
if [ -z "$nvcc" ]; then
    nvcc=$(command -v nvcc || true)
fi
if [ -z "$nvcc" ] && [ -x /usr/local/cuda/bin/nvcc ]; then
    nvcc=/usr/local/cuda/bin/nvcc
fi
if [ -z "$nvcc" ] || [ ! -x "$nvcc" ]; then
    echo "gpu-check: nvcc not found (set SDFGC_NVCC)" >&2
    exit 2
fi
if ! nvidia-smi -L >/dev/null 2>&1; then
    echo "gpu-check: no NVIDIA GPU (nvidia-smi -L failed)" >&2
    exit 2
fi
echo "gpu-check: $(nvidia-smi -L | head -1); $("$nvcc" --version | tail -1)"
export SDFGC_NVCC=$nvcc SDFGC_ROOT=$root
export SDFGC_GPU_ARCH=${SDFGC_GPU_ARCH:-native}

args=(--nocapture --test-threads 1)
if [ -n "${SDFGC_GPU_CHECK_BIN:-}" ]; then
    exec "$SDFGC_GPU_CHECK_BIN" "${args[@]}"
fi
exec cargo test --release --offline --test gpu_device -- "${args[@]}"
