// Streams: work runs in stream order, events order streams, and nothing is
// done before the host synchronizes. Run eagerly (every operation when it is
// queued), every variant below passes; on the emulator the missing wait and
// the missing synchronization give wrong data.
#include <cuda_runtime.h>
#include <cstdio>
#include <cstring>

__global__ void fill(double *x, int n, double base) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = base + i;
}

__global__ void twice(const double *x, double *y, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = 2 * x[i];
}

int check(const double *y, int n, double base, double scale) {
    int wrong = 0;
    for (int i = 0; i < n; ++i) wrong += y[i] != scale * (base + i);
    return wrong;
}

int main(int argc, char **argv) {
    const char *what = argc > 1 ? argv[1] : "";
    const int n = 256;
    double *x, *y, h[n], hx[n];
    cudaMalloc((void **)&x, n * sizeof(double));
    cudaMalloc((void **)&y, n * sizeof(double));
    cudaStream_t a, b;
    cudaStreamCreateWithFlags(&a, cudaStreamNonBlocking);
    cudaStreamCreateWithFlags(&b, cudaStreamNonBlocking);
    cudaEvent_t e;
    cudaEventCreateWithFlags(&e, cudaEventDisableTiming);
    for (int i = 0; i < n; ++i) h[i] = -1;
    if (!std::strcmp(what, "wait") || !std::strcmp(what, "nowait")) {
        // x filled on stream a, read on stream b.
        fill<<<4, 64, 0, a>>>(x, n, 1.0);
        if (!std::strcmp(what, "wait")) {
            cudaEventRecord(e, a);
            cudaStreamWaitEvent(b, e, 0);
        }
        twice<<<4, 64, 0, b>>>(x, y, n);
        cudaMemcpyAsync(h, y, sizeof h, cudaMemcpyDeviceToHost, b);
        cudaDeviceSynchronize();
        std::printf("wrong %d\n", check(h, n, 1.0, 2.0));
    } else if (!std::strcmp(what, "sync") || !std::strcmp(what, "nosync")) {
        // The host reads a copy's destination.
        fill<<<4, 64, 0, a>>>(x, n, 3.0);
        cudaMemcpyAsync(h, x, sizeof h, cudaMemcpyDeviceToHost, a);
        if (!std::strcmp(what, "sync")) cudaStreamSynchronize(a);
        std::printf("wrong %d\n", check(h, n, 3.0, 1.0));
        cudaDeviceSynchronize();
    } else if (!std::strcmp(what, "order")) {
        // One stream: copy in, kernel, memset, 2-D copy, copy out, in order;
        // the host's buffer is read by the copy when the stream gets there.
        for (int i = 0; i < n; ++i) hx[i] = 5.0 + i;
        cudaMemcpyAsync(x, hx, sizeof hx, cudaMemcpyHostToDevice, a);
        twice<<<4, 64, 0, a>>>(x, y, n);
        cudaMemsetAsync(x, 0, 16 * sizeof(double), a);
        cudaMemcpy2DAsync(y + 128, 16 * sizeof(double), x, 32 * sizeof(double), 8 * sizeof(double), 4, cudaMemcpyDeviceToDevice, a);
        cudaMemcpyAsync(h, y, sizeof h, cudaMemcpyDeviceToHost, a);
        for (int i = 0; i < n; ++i) hx[i] = -7;  // not yet copied: the copy sees this
        cudaEventRecord(e, a);
        cudaEventSynchronize(e);
        int wrong = 0;
        for (int i = 0; i < n; ++i) {
            double want = 2 * -7.0;
            const int r = (i - 128) / 16, c = (i - 128) % 16;
            if (i >= 128 && i < 128 + 4 * 16 && c < 8) want = r * 32 + c < 16 ? 0.0 : -7.0;
            wrong += h[i] != want;
        }
        std::printf("wrong %d\n", wrong);
    } else if (!std::strcmp(what, "legacy")) {
        // The null stream waits for a blocking stream, not for a non-blocking one.
        cudaStream_t blocking;
        cudaStreamCreate(&blocking);
        fill<<<4, 64, 0, blocking>>>(x, n, 9.0);
        cudaMemcpy(h, x, sizeof h, cudaMemcpyDeviceToHost);
        const int wrong_blocking = check(h, n, 9.0, 1.0);
        fill<<<4, 64, 0, a>>>(y, n, 11.0);
        cudaMemcpy(h, y, sizeof h, cudaMemcpyDeviceToHost);
        std::printf("blocking_wrong %d\nnonblocking_wrong %d\n", wrong_blocking, check(h, n, 11.0, 1.0));
        cudaDeviceSynchronize();
        cudaStreamDestroy(blocking);
    }
    cudaEventDestroy(e);
    cudaStreamDestroy(a);
    cudaStreamDestroy(b);
    cudaFree(x);
    cudaFree(y);
    return 0;
}
