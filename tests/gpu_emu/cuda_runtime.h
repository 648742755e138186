#include "gpu_emu.h"
#ifndef SDFGC_EMU_WARP_SIZE
#define SDFGC_EMU_WARP_SIZE 32
static constexpr int warpSize = 32;
#endif
// CUDA's typed overload (cuda_runtime.h), which DaCe's cuSOLVER expansions call.
template <typename T>
inline cudaError_t cudaMalloc(T **p, size_t n) {
    return cudaMalloc(reinterpret_cast<void **>(p), n);
}
