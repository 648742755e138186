// Emulated library_types.h (tests only): CUDA's data type tags (cuSPARSE's
// value and compute types).
#pragma once

typedef enum cudaDataType_t {
    CUDA_R_32F = 0,
    CUDA_R_64F = 1,
    CUDA_R_16F = 2,
    CUDA_C_32F = 4,
    CUDA_C_64F = 5,
} cudaDataType;
