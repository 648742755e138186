// Warp shuffles and votes with CUDA's results (PTX's lane rules), full and
// partial masks and widths, in blocks whose last warp is partial; HIP's
// 64-lane non-sync forms; and the errors: a lane reading a lane outside the
// mask, a lane calling with a mask that does not name it.
#include <cuda_runtime.h>
#include <cstdio>
#include <cstring>

enum { IDX, UP, DOWN, XOR, DOWN16_PARTIAL, BALLOT_PARTIAL, ANY, ALL, ACTIVE, TESTS };

__global__ void shuffles(int *out, int n) {
    const int t = threadIdx.x, lane = t % 32;
    const int v = 100 * t;
    int *o = out + t * TESTS;
    o[ACTIVE] = int(__activemask());
    o[IDX] = __shfl_sync(0xffffffffu, v, 5);
    o[UP] = __shfl_up_sync(0xffffffffu, v, 3, 8);
    o[DOWN] = __shfl_down_sync(0xffffffffu, v, 2, 16);
    o[XOR] = __shfl_xor_sync(0xffffffffu, v, 1);
    o[DOWN16_PARTIAL] = -1;
    o[BALLOT_PARTIAL] = -1;
    if (lane < 16) {
        o[DOWN16_PARTIAL] = __shfl_down_sync(0x0000ffffu, v, 1, 16);
        o[BALLOT_PARTIAL] = int(__ballot_sync(0x0000ffffu, lane % 3 == 0));
    }
    o[ANY] = __any_sync(0xffffffffu, t == n - 1);
    o[ALL] = __all_sync(0xffffffffu, lane < 31);
}

__global__ void outside(int *out) {
    if (threadIdx.x < 16) out[threadIdx.x] = __shfl_sync(0x0000ffffu, int(threadIdx.x), 20);
}

__global__ void notself(int *out) {
    out[threadIdx.x] = __shfl_xor_sync(0x0000ffffu, int(threadIdx.x), 1);
}

// HIP's forms: 64 lanes, every running lane takes part.
__global__ void hip64(int *out) {
    const int t = threadIdx.x;
    out[2 * t] = __shfl_xor(t, 32);
    out[2 * t + 1] = int(__ballot(t >= 60) >> 32);
}

int main(int argc, char **argv) {
    const char *what = argc > 1 ? argv[1] : "";
    int *d;
    cudaMalloc((void **)&d, 48 * TESTS * sizeof(int));
    if (!std::strcmp(what, "outside")) {
        outside<<<1, 32>>>(d);
        cudaDeviceSynchronize();
        return 0;
    }
    if (!std::strcmp(what, "notself")) {
        notself<<<1, 32>>>(d);
        cudaDeviceSynchronize();
        return 0;
    }
    if (!std::strcmp(what, "hip64")) {
        hip64<<<1, 64>>>(d);
        int h[128];
        cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
        int wrong = 0;
        for (int t = 0; t < 64; ++t) wrong += h[2 * t] != (t ^ 32) || h[2 * t + 1] != 0xF0000000;
        std::printf("wrong %d\n", wrong);
        return 0;
    }
    const int n = 48;  // the second warp has 16 lanes
    shuffles<<<1, n>>>(d, n);
    int h[48 * TESTS];
    cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
    int wrong[TESTS] = {};
    for (int t = 0; t < n; ++t) {
        const int lane = t % 32, base = t - lane, lanes = t < 32 ? 32 : 16;
        const int *o = h + t * TESTS;
        wrong[IDX] += o[IDX] != 100 * (base + 5);
        wrong[UP] += o[UP] != (lane % 8 < 3 ? 100 * t : 100 * (t - 3));
        // Lanes past the block's last thread do not exist: a source there is not read (own value).
        const int down = lane % 16 + 2 < 16 && lane + 2 < lanes ? t + 2 : t;
        wrong[DOWN] += lane % 16 + 2 < 16 && lane + 2 >= lanes ? 0 : o[DOWN] != 100 * down;
        wrong[XOR] += o[XOR] != 100 * (t ^ 1);
        wrong[DOWN16_PARTIAL] += o[DOWN16_PARTIAL] != (lane >= 16 ? -1 : lane == 15 ? 100 * t : 100 * (t + 1));
        wrong[BALLOT_PARTIAL] += o[BALLOT_PARTIAL] != (lane >= 16 ? -1 : 0x9249);
        wrong[ANY] += o[ANY] != (base == 32);
        wrong[ALL] += o[ALL] != (base == 32);
        wrong[ACTIVE] += o[ACTIVE] != (t < 32 ? -1 : 0xffff);
    }
    const char *names[TESTS] = {"idx", "up", "down", "xor", "down16_partial", "ballot_partial", "any", "all", "activemask"};
    for (int k = 0; k < TESTS; ++k) std::printf("%s %d\n", names[k], wrong[k]);
    return 0;
}
