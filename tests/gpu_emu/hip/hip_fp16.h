#pragma once
// HIP's half (hip_fp16.h) for the CPU emulation: the same type as CUDA's.
#include "../cuda_fp16.h"
