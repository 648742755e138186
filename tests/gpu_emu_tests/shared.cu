// __shared__ memory: per block, uninitialised, and checked for races.
//   race:    threads read an element another thread writes, no barrier
//   benign:  every thread writes the same value (not a race)
//   fixed:   the same exchange with a barrier
//   perblock: each block sums into its own array; a read before any write
//            sees garbage (0xFF bytes), not zero or another block's values
//   bounds:  an index past the end
#include <cuda_runtime.h>
#include <cstdio>
#include <cstring>
#include <cmath>

__global__ void exchange(double *out, int sync) {
    __shared__ double s[32];
    s[threadIdx.x] = threadIdx.x;
    if (sync) __syncthreads();
    out[threadIdx.x] = s[(threadIdx.x + 1) % 32];
}

__global__ void benign(double *out) {
    __shared__ double flag[1];
    flag[0] = 7.0;
    __syncthreads();
    out[threadIdx.x] = flag[0];
}

__global__ void perblock(double *out) {
    __shared__ double acc[4];
    if (threadIdx.x == 0) out[2 * blockIdx.x] = acc[0];  // never written in this block yet
    __syncthreads();
    if (threadIdx.x == 0) acc[0] = 0;
    __syncthreads();
    atomicAdd(&acc[0], double(blockIdx.x + 1));
    __syncthreads();
    if (threadIdx.x == 0) out[2 * blockIdx.x + 1] = acc[0];
}

__global__ void bounds(double *out) {
    __shared__ double s[16];
    s[threadIdx.x] = 1.0;
    out[threadIdx.x] = 0;
}

int main(int argc, char **argv) {
    const char *what = argc > 1 ? argv[1] : "";
    double *d;
    cudaMalloc((void **)&d, 64 * sizeof(double));
    double h[64];
    if (!std::strcmp(what, "race") || !std::strcmp(what, "fixed")) {
        exchange<<<1, 32>>>(d, !std::strcmp(what, "fixed"));
        cudaMemcpy(h, d, 32 * sizeof(double), cudaMemcpyDeviceToHost);
        int wrong = 0;
        for (int t = 0; t < 32; ++t) wrong += h[t] != (t + 1) % 32;
        std::printf("wrong %d\n", wrong);
    } else if (!std::strcmp(what, "benign")) {
        benign<<<2, 32>>>(d);
        cudaMemcpy(h, d, 32 * sizeof(double), cudaMemcpyDeviceToHost);
        int wrong = 0;
        for (int t = 0; t < 32; ++t) wrong += h[t] != 7.0;
        std::printf("wrong %d\n", wrong);
    } else if (!std::strcmp(what, "perblock")) {
        perblock<<<3, 32>>>(d);
        cudaMemcpy(h, d, 6 * sizeof(double), cudaMemcpyDeviceToHost);
        int garbage = 0, wrong = 0;
        for (int b = 0; b < 3; ++b) {
            garbage += std::isnan(h[2 * b]);
            wrong += h[2 * b + 1] != 32.0 * (b + 1);
        }
        std::printf("garbage %d\nwrong %d\n", garbage, wrong);
    } else if (!std::strcmp(what, "bounds")) {
        bounds<<<1, 17>>>(d);
        cudaDeviceSynchronize();
    }
    return 0;
}
