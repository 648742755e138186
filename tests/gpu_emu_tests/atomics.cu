// Atomics under interleaving: every operation's total over many threads and
// blocks, and a read-modify-write that is not atomic (a load, an atomic on
// another word, a store): threads run concurrently, so updates are lost,
// where thread after thread every update lands.
#include <cuda_runtime.h>
#include <cstdio>
#include <cstring>

struct Totals {
    int add_i, sub_i, min_i, max_i, exch_hits, cas_count, and_u, or_u, xor_u;
    unsigned long long add_ull;
    float add_f;
    double add_d, cas_d;
    unsigned inc_u;
    int lost, dummy;
};

__global__ void atomics(Totals *s, int *exch_seen) {
    const int t = blockIdx.x * blockDim.x + threadIdx.x;
    atomicAdd(&s->add_i, t);
    atomicSub(&s->sub_i, 2);
    atomicMin(&s->min_i, 1000 - t);
    atomicMax(&s->max_i, t * 3);
    const int prev = atomicExch(&s->exch_hits, t);
    atomicAdd(&exch_seen[prev + 1], 1);
    atomicAdd(&s->add_ull, 1ull << 20);
    atomicAdd(&s->add_f, 0.5f);
    atomicAdd(&s->add_d, 0.25);
    atomicAnd(&s->and_u, ~(1 << (t % 31)));
    atomicOr(&s->or_u, 1 << (t % 29));
    atomicXor(&s->xor_u, 1 << (t % 7));
    atomicInc(&s->inc_u, 100u);
    // A counter and a double updated through compare-and-swap loops.
    int old = s->cas_count, assumed;
    do {
        assumed = old;
        old = atomicCAS(&s->cas_count, assumed, assumed + 1);
    } while (old != assumed);
    unsigned long long *bits = reinterpret_cast<unsigned long long *>(&s->cas_d);
    unsigned long long o = *bits, a;
    do {
        a = o;
        double v;
        std::memcpy(&v, &a, 8);
        v += 1.5;
        unsigned long long nv;
        std::memcpy(&nv, &v, 8);
        o = atomicCAS(bits, a, nv);
    } while (o != a);
}

__global__ void not_atomic(Totals *s) {
    const int v = s->lost;
    atomicAdd(&s->dummy, 1);
    s->lost = v + 1;
}

int main() {
    const int blocks = 5, threads = 96, n = blocks * threads;
    Totals init = {};
    init.min_i = 1 << 30;
    init.max_i = -1;
    init.and_u = -1;
    init.exch_hits = -1;
    Totals *d;
    int *seen;
    cudaMalloc((void **)&d, sizeof(Totals));
    cudaMalloc((void **)&seen, (n + 1) * sizeof(int));
    cudaMemcpy(d, &init, sizeof init, cudaMemcpyHostToDevice);
    cudaMemset(seen, 0, (n + 1) * sizeof(int));
    atomics<<<blocks, threads>>>(d, seen);
    not_atomic<<<blocks, threads>>>(d);
    Totals h;
    int hs[n + 1];
    cudaMemcpy(&h, d, sizeof h, cudaMemcpyDeviceToHost);
    cudaMemcpy(hs, seen, sizeof hs, cudaMemcpyDeviceToHost);
    int wrong = 0;
    wrong += h.add_i != n * (n - 1) / 2;
    wrong += h.sub_i != -2 * n;
    wrong += h.min_i != 1000 - (n - 1);
    wrong += h.max_i != 3 * (n - 1);
    int exch_ok = 1;  // every value but the last exchanged in was seen exactly once
    for (int i = 0; i <= n; ++i) exch_ok &= hs[i] == (i == h.exch_hits + 1 ? 0 : 1);
    wrong += !exch_ok;
    wrong += h.add_ull != (unsigned long long)n << 20;
    wrong += h.add_f != 0.5f * n;
    wrong += h.add_d != 0.25 * n;
    wrong += h.and_u != int(0x80000000u);
    wrong += h.or_u != (1 << 29) - 1;
    int x = 0;
    for (int t = 0; t < n; ++t) x ^= 1 << (t % 7);
    wrong += h.xor_u != x;
    wrong += h.inc_u != unsigned(n % 101);
    wrong += h.cas_count != n;
    wrong += h.cas_d != 1.5 * n;
    std::printf("wrong %d\nlost %d\n", wrong, n - h.lost);
    return 0;
}
