// Barriers: each thread reads what its left neighbour wrote to global
// memory. Thread after thread, the neighbour has always run first, so a
// missing __syncthreads() passes; threads that run concurrently (in any
// order) need the barrier. `diverge`: a barrier only some threads reach.
#include <cuda_runtime.h>
#include <cstdio>
#include <cstring>

__global__ void neighbour(int *g, int *out, int sync) {
    const int t = blockIdx.x * blockDim.x + threadIdx.x;
    g[t] = 10 * t + 1;
    if (sync) __syncthreads();
    out[t] = threadIdx.x == 0 ? -1 : g[t - 1];
}

__global__ void diverge(int *out) {
    if (threadIdx.x < 3) __syncthreads();
    out[threadIdx.x] = 1;
}

int main(int argc, char **argv) {
    const int blocks = 4, threads = 64, n = blocks * threads;
    int *g, *out;
    cudaMalloc((void **)&g, n * sizeof(int));
    cudaMalloc((void **)&out, n * sizeof(int));
    if (argc > 1 && std::strcmp(argv[1], "diverge") == 0) {
        diverge<<<1, 8>>>(out);
        cudaDeviceSynchronize();
        return 0;
    }
    for (int sync = 0; sync < 2; ++sync) {
        cudaMemset(g, 0, n * sizeof(int));
        neighbour<<<blocks, threads>>>(g, out, sync);
        int h[blocks * threads];
        cudaMemcpy(h, out, sizeof h, cudaMemcpyDeviceToHost);
        int wrong = 0;
        for (int t = 0; t < n; ++t) wrong += h[t] != (t % threads == 0 ? -1 : 10 * (t - 1) + 1);
        std::printf("%s %d\n", sync ? "with_barrier_wrong" : "without_barrier_wrong", wrong);
    }
    return 0;
}
