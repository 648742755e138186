// A CUDA/HIP runtime emulation on the CPU, for tests only: it lets the
// generated .cu/.hip files be compiled by g++ and run on a machine without a
// GPU, and it is meant to be faithful enough that code which is wrong on a
// GPU is wrong here too (docs/gpu.md, "The emulated runtime"):
//
// * Threads: every thread of a block is a fiber (a stack of its own) on the
//   launching host thread. The threads of a block run concurrently: they
//   switch at __syncthreads(), at every warp intrinsic (shuffles, votes,
//   __syncwarp) and after every atomic, and each round runs the ready
//   threads in a seeded random order (SDFGC_EMU_SEED; 0 is thread order),
//   so code that depends on thread order shows up. Blocks run one after
//   another, in a seeded random order too.
// * __syncthreads() is a barrier: a block goes on only when every one of its
//   threads has reached it; a barrier that some threads skip (or exit
//   before) aborts the launch with a message.
// * Warp intrinsics (__shfl*_sync, __ballot_sync, __any_sync, __all_sync,
//   __syncwarp; HIP's __shfl*, __ballot, __any, __all): the lanes the mask
//   names meet (a warp is 32 lanes for CUDA's intrinsics, 64 for HIP's),
//   with PTX's source-lane rules for width and out-of-range lanes; a lane
//   that calls with a mask not naming itself, lanes that meet with different
//   intrinsics or masks, or a read of a lane not taking part abort.
// * __shared__ arrays: the launch rewriting (tests/common/emu.rs,
//   scripts/emu-nvcc) turns `__shared__ T a[N];` into an array of the block
//   (fresh for each block, filled with 0xFF bytes) whose elements are
//   checked: out-of-bounds indices abort, and so does a data race: an
//   element written by one thread and read or written by another with no
//   __syncthreads() between them (atomics excepted). `extern __shared__`
//   arrays get the launch's dynamic size per block (unchecked). Code that
//   is not rewritten gets one static array.
// * Atomics are exact (fibers switch only between operations) and are
//   switch points.
// * Streams: kernels, copies, memsets, frees and event records are queued
//   on their stream and run only when the host synchronizes
//   (cudaStreamSynchronize, cudaEventSynchronize, cudaDeviceSynchronize,
//   synchronous cudaMemcpy, cudaFree, a stream's destruction, or
//   sdfgc_emu_synchronize()). A stream's work runs in order; a
//   cudaStreamWaitEvent orders it after the work recorded before the event;
//   the legacy null stream waits for blocking streams and they for it. A
//   device-wide synchronization runs the latest queued work first, so a
//   missing wait or synchronization shows as wrong data.
//   SDFGC_EMU_STREAMS=eager (or -DSDFGC_EMU_EAGER_STREAMS) runs every
//   operation when it is queued instead.
// * Device memory (cudaMalloc) is mapped on its own pages, filled with 0xFF
//   bytes, and readable only while a kernel, a copy or a memset runs: at
//   any other time its pages are PROT_NONE, so host code that dereferences
//   device memory crashes (SIGSEGV) instead of passing unnoticed. The
//   emulator remembers which pointers came from cudaMalloc, so
//   pointer-attribute queries answer correctly.
#pragma once
#include <cstdarg>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cmath>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>
#include <sys/mman.h>
#include <ucontext.h>

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __launch_bounds__(...)
// Only for code the launch rewriting did not see (hand-written tests that
// call the launchers directly): one static array shared by every block.
#define __shared__ static
#define __constant__
#define HIP_SYMBOL(X) X

struct dim3 {
    unsigned int x, y, z;
    constexpr dim3(unsigned int x_ = 1, unsigned int y_ = 1, unsigned int z_ = 1) : x(x_), y(y_), z(z_) {}
};
inline thread_local dim3 threadIdx, blockIdx, blockDim, gridDim;

[[noreturn]] __attribute__((format(printf, 1, 2))) inline void sdfgc_emu_fail(const char *fmt, ...) {
    std::fflush(stdout);
    std::fputs("gpu_emu: ", stderr);
    va_list ap;
    va_start(ap, fmt);
    std::vfprintf(stderr, fmt, ap);
    va_end(ap);
    std::fputc('\n', stderr);
    std::fflush(stderr);
    std::abort();
}

// ---- Configuration ----

// The scheduling seed (SDFGC_EMU_SEED; 0: threads and blocks in order).
inline unsigned long long sdfgc_emu_seed() {
    static const unsigned long long seed = [] {
        const char *e = std::getenv("SDFGC_EMU_SEED");
        return e ? std::strtoull(e, nullptr, 0) : 0x5DF6C0DEull;
    }();
    return seed;
}

// True if stream operations run when queued (SDFGC_EMU_STREAMS=eager).
inline bool sdfgc_emu_eager_streams() {
    static const bool eager = [] {
        const char *e = std::getenv("SDFGC_EMU_STREAMS");
        if (e) return std::strcmp(e, "eager") == 0;
#ifdef SDFGC_EMU_EAGER_STREAMS
        return true;
#else
        return false;
#endif
    }();
    return eager;
}

// splitmix64 over one process-wide state: the same program and seed give the same schedule.
inline unsigned long long sdfgc_emu_random() {
    static unsigned long long state = sdfgc_emu_seed();
    unsigned long long z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

// `v` in a random order (thread order when the seed is 0).
template <typename T>
inline void sdfgc_emu_shuffle(std::vector<T> &v) {
    if (sdfgc_emu_seed() == 0) return;
    for (std::size_t i = v.size(); i > 1; --i)
        std::swap(v[i - 1], v[std::size_t((unsigned __int128)sdfgc_emu_random() * i >> 64)]);
}

// ---- Fibers ----

#if defined(__x86_64__) && !defined(SDFGC_EMU_UCONTEXT)
#define SDFGC_EMU_ASM_SWITCH 1
// Saves the callee-saved registers on the current stack, stores the stack
// pointer in *save and resumes the stack `load` (a context saved by this
// function or made by sdfgc_emu_context_make). The floating-point control
// state is not switched (kernels do not change it).
extern "C" void sdfgc_emu_switch_x86(void **save, void *load);
// A new fiber's first return lands here: calls r13(r12) (never returns).
extern "C" void sdfgc_emu_start_x86();
__asm__(
    ".pushsection .text.sdfgc_emu_switch_x86,\"axG\",@progbits,sdfgc_emu_switch_x86,comdat\n"
    ".weak sdfgc_emu_switch_x86\n"
    ".type sdfgc_emu_switch_x86,@function\n"
    "sdfgc_emu_switch_x86:\n"
    "    pushq %rbp\n"
    "    pushq %rbx\n"
    "    pushq %r12\n"
    "    pushq %r13\n"
    "    pushq %r14\n"
    "    pushq %r15\n"
    "    movq %rsp, (%rdi)\n"
    "    movq %rsi, %rsp\n"
    "    popq %r15\n"
    "    popq %r14\n"
    "    popq %r13\n"
    "    popq %r12\n"
    "    popq %rbx\n"
    "    popq %rbp\n"
    "    ret\n"
    ".size sdfgc_emu_switch_x86, .-sdfgc_emu_switch_x86\n"
    ".popsection\n"
    ".pushsection .text.sdfgc_emu_start_x86,\"axG\",@progbits,sdfgc_emu_start_x86,comdat\n"
    ".weak sdfgc_emu_start_x86\n"
    ".type sdfgc_emu_start_x86,@function\n"
    "sdfgc_emu_start_x86:\n"
    "    movq %r12, %rdi\n"
    "    callq *%r13\n"
    "    ud2\n"
    ".size sdfgc_emu_start_x86, .-sdfgc_emu_start_x86\n"
    ".popsection\n");
struct SdfgcEmuContext {
    void *sp = nullptr;
};
inline void sdfgc_emu_context_make(SdfgcEmuContext &c, char *stack, std::size_t size, void (*entry)(void *)) {
    std::uint64_t *top = reinterpret_cast<std::uint64_t *>(reinterpret_cast<std::uintptr_t>(stack + size) & ~std::uintptr_t(15));
    top[-1] = reinterpret_cast<std::uint64_t>(&sdfgc_emu_start_x86);  // return address
    top[-2] = 0;                                                        // rbp
    top[-3] = 0;                                                        // rbx
    top[-4] = 0;                                                        // r12: the argument
    top[-5] = reinterpret_cast<std::uint64_t>(entry);                   // r13
    top[-6] = 0;                                                        // r14
    top[-7] = 0;                                                        // r15
    c.sp = &top[-7];
}
inline void sdfgc_emu_context_swap(SdfgcEmuContext &from, SdfgcEmuContext &to) { sdfgc_emu_switch_x86(&from.sp, to.sp); }
#else
struct SdfgcEmuContext {
    ucontext_t uc;
};
inline void sdfgc_emu_context_make(SdfgcEmuContext &c, char *stack, std::size_t size, void (*entry)(void *)) {
    getcontext(&c.uc);
    c.uc.uc_stack.ss_sp = stack;
    c.uc.uc_stack.ss_size = size;
    c.uc.uc_link = nullptr;
    makecontext(&c.uc, reinterpret_cast<void (*)()>(entry), 0);
}
inline void sdfgc_emu_context_swap(SdfgcEmuContext &from, SdfgcEmuContext &to) { swapcontext(&from.uc, &to.uc); }
#endif

// A fiber: its context and, with the x86-64 switch, where its stack is kept
// while another fiber runs. All fibers of a launch share one stack there:
// a thread that runs to its end without switching costs no copy, and one
// that switches has its used stack copied out only when another fiber needs
// the stack (the stack is back at the same address when it resumes).
// Elsewhere (ucontext) every fiber has a stack of its own.
struct SdfgcEmuFiber {
    SdfgcEmuContext ctx;
    bool started = false;
    std::vector<char> saved;
};

// Fiber stacks below guard pages: with the x86-64 switch one (index 0),
// else one per thread of the block, reused by every launch.
constexpr std::size_t sdfgc_emu_stack_size = 1024 * 1024;
inline char *sdfgc_emu_stack(std::size_t i, std::size_t count) {
    static char *base = nullptr;
    static std::size_t have = 0;
    constexpr std::size_t guard = 4096, step = guard + sdfgc_emu_stack_size;
    if (count > have) {
        if (base) munmap(base, have * step);
        void *p = mmap(nullptr, count * step, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (p == MAP_FAILED) sdfgc_emu_fail("cannot map %zu fiber stacks", count);
        base = static_cast<char *>(p);
        have = count;
        for (std::size_t k = 0; k < count; ++k) mprotect(base + k * step, guard, PROT_NONE);
    }
    return base + i * step + guard;
}

// ---- Blocks ----

enum : unsigned char { SDFGC_EMU_READY, SDFGC_EMU_AT_BARRIER, SDFGC_EMU_AT_WARP, SDFGC_EMU_DONE };

// One thread's operands and result of a warp intrinsic.
struct SdfgcEmuLane {
    alignas(16) unsigned char value[32];
    alignas(16) unsigned char result[32];
    int arg = 0, width = 0, pred = 0;
    unsigned long long bits = 0, members = 0;  // the vote's bits, the lanes that took part
};

// A warp intrinsic some lanes of a warp are meeting at (disjoint groups of
// lanes may meet at different ones at the same time).
struct SdfgcEmuWarpOp {
    std::size_t warp = 0;
    int kind = 0;
    const char *name = nullptr;
    bool dynamic = false;  // HIP's non-sync forms: every lane still running
    unsigned long long mask = 0, arrived = 0;
};

// Who wrote and read an element of a __shared__ array in the current
// barrier interval, and whether a write in it changed the element's value.
struct SdfgcEmuShadow {
    unsigned write_epoch = 0, read_epoch = 0;
    int writer = -1, reader = -1;  // -2: several threads
    bool changed = false;
};

struct SdfgcEmuSharedArray {
    void *data = nullptr;
    std::size_t count = 0;
    const char *name = "";
    std::vector<SdfgcEmuShadow> shadow;
};

struct SdfgcEmuBlock {
    SdfgcEmuContext scheduler;
    std::vector<SdfgcEmuFiber> fibers;
    std::size_t owner = SIZE_MAX;  // the fiber whose stack is on the shared stack
    std::vector<unsigned char> state;
    std::vector<SdfgcEmuLane> lanes;
    std::vector<SdfgcEmuWarpOp> pending;  // warp intrinsics not every lane has reached
    unsigned warp_size = 0;
    std::size_t n = 0, current = 0, at_barrier = 0, done = 0;
    bool direct = false;   // threads run as plain calls (the kernel has no barriers or warp intrinsics)
    bool blocked = false;  // a thread met a barrier or a warp intrinsic
    unsigned epoch = 1;  // barrier intervals passed, plus one
    int barrier_count = 0, barrier_result = 0;
    std::map<const void *, SdfgcEmuSharedArray> shared;
    void *dynamic_shared = nullptr;
    void (*body)(void *) = nullptr;
    void *arg = nullptr;
};
inline thread_local SdfgcEmuBlock *sdfgc_emu_block = nullptr;

// "(x,y,z)" of linear thread index t of the current block.
struct SdfgcEmuName {
    char text[48];
};
inline SdfgcEmuName sdfgc_emu_thread_name(std::size_t t) {
    SdfgcEmuName n;
    const std::size_t bx = blockDim.x, by = blockDim.y;
    std::snprintf(n.text, sizeof n.text, "(%zu,%zu,%zu)", t % bx, t / bx % by, t / (bx * by));
    return n;
}
inline SdfgcEmuName sdfgc_emu_block_name() {
    SdfgcEmuName n;
    std::snprintf(n.text, sizeof n.text, "(%u,%u,%u)", blockIdx.x, blockIdx.y, blockIdx.z);
    return n;
}

// Back to the scheduler (the thread runs on when the scheduler picks it again).
inline void sdfgc_emu_switch_out() {
    SdfgcEmuBlock *b = sdfgc_emu_block;
    sdfgc_emu_context_swap(b->fibers[b->current].ctx, b->scheduler);
}

// A switch point: other threads of the block may run before this one goes on.
inline void sdfgc_emu_yield() {
    if (sdfgc_emu_block && !sdfgc_emu_block->direct) sdfgc_emu_switch_out();
}

// A barrier or warp intrinsic: the threads must be fibers.
inline void sdfgc_emu_blocking(const char *what) {
    SdfgcEmuBlock *b = sdfgc_emu_block;
    if (b->direct) sdfgc_emu_fail("a thread reached %s in a launch run without fibers (the launch rewriting saw none in the source)", what);
    b->blocked = true;
}

inline void sdfgc_emu_warp_try_complete(SdfgcEmuBlock *b, std::size_t warp);

inline void sdfgc_emu_fiber_main(void *) {
    SdfgcEmuBlock *b = sdfgc_emu_block;
    b->body(b->arg);
    b = sdfgc_emu_block;
    b->state[b->current] = SDFGC_EMU_DONE;
    ++b->done;
    if (b->warp_size) sdfgc_emu_warp_try_complete(b, b->current / b->warp_size);
    sdfgc_emu_switch_out();  // never resumed
    std::abort();
}

inline void __syncthreads() {
    SdfgcEmuBlock *b = sdfgc_emu_block;
    if (!b) return;
    sdfgc_emu_blocking("__syncthreads()");
    b->state[b->current] = SDFGC_EMU_AT_BARRIER;
    if (++b->at_barrier == b->n) {
        for (auto &s : b->state) s = SDFGC_EMU_READY;
        b->at_barrier = 0;
        ++b->epoch;
        b->barrier_result = b->barrier_count;
        b->barrier_count = 0;
    }
    sdfgc_emu_switch_out();
}
inline int __syncthreads_count(int pred) {
    if (sdfgc_emu_block) sdfgc_emu_block->barrier_count += pred != 0;
    __syncthreads();
    return sdfgc_emu_block ? sdfgc_emu_block->barrier_result : pred != 0;
}
inline int __syncthreads_and(int pred) {
    const std::size_t n = sdfgc_emu_block ? sdfgc_emu_block->n : 1;
    return std::size_t(__syncthreads_count(pred)) == n;
}
inline int __syncthreads_or(int pred) { return __syncthreads_count(pred) != 0; }
inline void __threadfence() {}
inline void __threadfence_block() {}
inline void __threadfence_system() {}

// ---- Warp intrinsics ----

enum {
    SDFGC_EMU_SHFL_IDX = 1,
    SDFGC_EMU_SHFL_UP,
    SDFGC_EMU_SHFL_DOWN,
    SDFGC_EMU_SHFL_XOR,
    SDFGC_EMU_HIP_SHFL_IDX,
    SDFGC_EMU_HIP_SHFL_UP,
    SDFGC_EMU_HIP_SHFL_DOWN,
    SDFGC_EMU_HIP_SHFL_XOR,
    SDFGC_EMU_VOTE,
    SDFGC_EMU_SYNCWARP,
};

// The lanes of warp `warp` that exist in this block.
inline unsigned long long sdfgc_emu_warp_lanes(const SdfgcEmuBlock *b, std::size_t warp) {
    const std::size_t base = warp * b->warp_size, count = b->n - base < b->warp_size ? b->n - base : b->warp_size;
    return count >= 64 ? ~0ull : (1ull << count) - 1;
}

// The lanes of warp `warp` that have not exited.
inline unsigned long long sdfgc_emu_warp_running(const SdfgcEmuBlock *b, std::size_t warp) {
    unsigned long long m = 0;
    const std::size_t base = warp * b->warp_size;
    for (std::size_t l = 0; l < b->warp_size && base + l < b->n; ++l)
        if (b->state[base + l] != SDFGC_EMU_DONE) m |= 1ull << l;
    return m;
}

// If every lane pending intrinsic `k` waits for has arrived: computes the
// results, releases the lanes and drops the intrinsic (true).
inline bool sdfgc_emu_warp_complete(SdfgcEmuBlock *b, std::size_t k) {
    const SdfgcEmuWarpOp op = b->pending[k];
    const std::size_t warp = op.warp;
    const unsigned long long running = sdfgc_emu_warp_running(b, warp);
    const unsigned long long required = op.dynamic ? running : op.mask & sdfgc_emu_warp_lanes(b, warp) & running;
    if ((op.arrived & required) != required) return false;
    const std::size_t base = warp * b->warp_size;
    const int W = int(b->warp_size);
    unsigned long long votes = 0;
    for (int l = 0; l < W; ++l)
        if (op.arrived >> l & 1 && b->lanes[base + l].pred) votes |= 1ull << l;
    for (int l = 0; l < W; ++l) {
        if (!(op.arrived >> l & 1)) continue;
        SdfgcEmuLane &me = b->lanes[base + l];
        me.bits = votes;
        me.members = op.arrived;
        if (op.kind == SDFGC_EMU_VOTE || op.kind == SDFGC_EMU_SYNCWARP) continue;
        const int width = me.width;
        if (width <= 0 || width > W || (width & (width - 1)) != 0)
            sdfgc_emu_fail("%s: width %d is not a power of two of at most %d (thread %s of block %s)", op.name, width, W,
                           sdfgc_emu_thread_name(base + l).text, sdfgc_emu_block_name().text);
        const int seg = l & ~(width - 1);  // the first lane of the lane's segment
        int j = l;
        switch (op.kind) {
        case SDFGC_EMU_SHFL_IDX: j = seg + (me.arg & (width - 1)); break;  // PTX shfl.idx
        case SDFGC_EMU_SHFL_UP: j = l - (me.arg & 31); if (j < seg) j = l; break;
        case SDFGC_EMU_SHFL_DOWN: j = l + (me.arg & 31); if (j > seg + width - 1) j = l; break;
        case SDFGC_EMU_SHFL_XOR: j = l ^ (me.arg & 31); if (j > seg + width - 1) j = l; break;
        case SDFGC_EMU_HIP_SHFL_IDX: j = (me.arg + seg) & (W - 1); break;  // HIP's amd_warp_functions.h
        case SDFGC_EMU_HIP_SHFL_UP: j = l - me.arg; if (j < seg) j = l; break;
        case SDFGC_EMU_HIP_SHFL_DOWN: j = (l & (width - 1)) + me.arg >= width ? l : l + me.arg; break;
        case SDFGC_EMU_HIP_SHFL_XOR: j = l ^ me.arg; if (j >= ((l + width) & ~(width - 1))) j = l; break;
        }
        if (j < 0 || j >= W || !(op.arrived >> j & 1))
            sdfgc_emu_fail("%s: thread %s of block %s (lane %d) reads lane %d, which does not take part (mask 0x%llx)",
                           op.name, sdfgc_emu_thread_name(base + l).text, sdfgc_emu_block_name().text, l, j,
                           op.dynamic ? running : op.mask);
        std::memcpy(me.result, b->lanes[base + j].value, sizeof me.result);
    }
    for (int l = 0; l < W; ++l)
        if (op.arrived >> l & 1) b->state[base + l] = SDFGC_EMU_READY;
    b->pending.erase(b->pending.begin() + std::ptrdiff_t(k));
    return true;
}

// A lane of `warp` exited: the intrinsics its other lanes wait at may be complete.
inline void sdfgc_emu_warp_try_complete(SdfgcEmuBlock *b, std::size_t warp) {
    for (std::size_t k = 0; k < b->pending.size();)
        if (b->pending[k].warp != warp || !sdfgc_emu_warp_complete(b, k)) ++k;
}



// The calling thread meets the lanes of its warp at a warp intrinsic; its
// operands are in its lane record, which holds its result on return.
inline SdfgcEmuLane &sdfgc_emu_warp_meet(int kind, const char *name, unsigned W, unsigned long long mask, bool dynamic) {
    SdfgcEmuBlock *b = sdfgc_emu_block;
    if (!b) sdfgc_emu_fail("%s outside a kernel", name);
    sdfgc_emu_blocking(name);
    if (b->warp_size == 0) {
        b->warp_size = W;
    } else if (b->warp_size != W) {
        sdfgc_emu_fail("%s: a kernel uses warps of %u and of %u lanes", name, b->warp_size, W);
    }
    const std::size_t t = b->current, warp = t / W;
    const unsigned lane = unsigned(t % W);
    if (W == 32) mask &= 0xffffffffull;
    if (!dynamic && !(mask >> lane & 1))
        sdfgc_emu_fail("%s: thread %s of block %s (lane %u) calls it with the mask 0x%llx, which does not name it", name,
                       sdfgc_emu_thread_name(t).text, sdfgc_emu_block_name().text, lane, mask);
    // Join the lanes waiting at the same intrinsic with the same mask, or wait for them.
    std::size_t k = 0;
    while (k < b->pending.size() && !(b->pending[k].warp == warp && b->pending[k].kind == kind &&
                                      b->pending[k].dynamic == dynamic && b->pending[k].mask == mask))
        ++k;
    if (k == b->pending.size()) {
        SdfgcEmuWarpOp op;
        op.warp = warp;
        op.kind = kind;
        op.name = name;
        op.dynamic = dynamic;
        op.mask = mask;
        b->pending.push_back(op);
    }
    b->pending[k].arrived |= 1ull << lane;
    b->state[t] = SDFGC_EMU_AT_WARP;
    sdfgc_emu_warp_complete(b, k);
    sdfgc_emu_switch_out();
    return sdfgc_emu_block->lanes[t];
}

template <typename T>
inline T sdfgc_emu_shuffle_op(int kind, const char *name, unsigned W, unsigned long long mask, bool dynamic, T v, int arg, int width) {
    static_assert(sizeof(T) <= 32 && std::is_trivially_copyable<T>::value, "gpu_emu: shuffle of an unsupported type");
    SdfgcEmuBlock *b = sdfgc_emu_block;
    if (!b) sdfgc_emu_fail("%s outside a kernel", name);
    SdfgcEmuLane &me = b->lanes[b->current];
    std::memcpy(me.value, &v, sizeof(T));
    me.arg = arg;
    me.width = width;
    me.pred = 0;
    SdfgcEmuLane &r = sdfgc_emu_warp_meet(kind, name, W, mask, dynamic);
    T out;
    std::memcpy(&out, r.result, sizeof(T));
    return out;
}

// The lanes taking part whose `pred` is non-zero; `all`: whether that is every lane taking part.
inline unsigned long long sdfgc_emu_vote(const char *name, unsigned W, unsigned long long mask, bool dynamic, int pred,
                                         bool *all = nullptr) {
    SdfgcEmuBlock *b = sdfgc_emu_block;
    if (!b) sdfgc_emu_fail("%s outside a kernel", name);
    b->lanes[b->current].pred = pred != 0;
    const SdfgcEmuLane &r = sdfgc_emu_warp_meet(SDFGC_EMU_VOTE, name, W, mask, dynamic);
    if (all) *all = r.bits == r.members;
    return r.bits;
}

// CUDA (32 lanes).
template <typename T>
inline T __shfl_sync(unsigned mask, T v, int src, int width = 32) {
    return sdfgc_emu_shuffle_op(SDFGC_EMU_SHFL_IDX, "__shfl_sync", 32, mask, false, v, src, width);
}
template <typename T>
inline T __shfl_up_sync(unsigned mask, T v, unsigned delta, int width = 32) {
    return sdfgc_emu_shuffle_op(SDFGC_EMU_SHFL_UP, "__shfl_up_sync", 32, mask, false, v, int(delta), width);
}
template <typename T>
inline T __shfl_down_sync(unsigned mask, T v, unsigned delta, int width = 32) {
    return sdfgc_emu_shuffle_op(SDFGC_EMU_SHFL_DOWN, "__shfl_down_sync", 32, mask, false, v, int(delta), width);
}
template <typename T>
inline T __shfl_xor_sync(unsigned mask, T v, int lane_mask, int width = 32) {
    return sdfgc_emu_shuffle_op(SDFGC_EMU_SHFL_XOR, "__shfl_xor_sync", 32, mask, false, v, lane_mask, width);
}
inline unsigned __ballot_sync(unsigned mask, int pred) { return unsigned(sdfgc_emu_vote("__ballot_sync", 32, mask, false, pred)); }
inline int __any_sync(unsigned mask, int pred) { return sdfgc_emu_vote("__any_sync", 32, mask, false, pred) != 0; }
inline int __all_sync(unsigned mask, int pred) {
    bool all = false;
    sdfgc_emu_vote("__all_sync", 32, mask, false, pred, &all);
    return all;
}
inline void __syncwarp(unsigned mask = 0xffffffffu) {
    if (!sdfgc_emu_block) return;
    sdfgc_emu_block->lanes[sdfgc_emu_block->current].pred = 0;
    sdfgc_emu_warp_meet(SDFGC_EMU_SYNCWARP, "__syncwarp", 32, mask, false);
}
// The lanes of the caller's warp that have not exited.
inline unsigned __activemask() {
    SdfgcEmuBlock *b = sdfgc_emu_block;
    if (!b) sdfgc_emu_fail("__activemask outside a kernel");
    if (b->warp_size && b->warp_size != 32) sdfgc_emu_fail("__activemask: a kernel uses warps of %u and of 32 lanes", b->warp_size);
    const unsigned saved = b->warp_size;
    b->warp_size = 32;
    const unsigned m = unsigned(sdfgc_emu_warp_running(b, b->current / 32));
    b->warp_size = saved;
    return m;
}

// HIP (warpSize 64; the non-sync forms take every lane still running).
inline unsigned __lane_id() { return sdfgc_emu_block ? unsigned(sdfgc_emu_block->current % 64) : 0; }
template <typename T>
inline T __shfl(T v, int src, int width = 64) {
    return sdfgc_emu_shuffle_op(SDFGC_EMU_HIP_SHFL_IDX, "__shfl", 64, ~0ull, true, v, src, width);
}
template <typename T>
inline T __shfl_up(T v, unsigned delta, int width = 64) {
    return sdfgc_emu_shuffle_op(SDFGC_EMU_HIP_SHFL_UP, "__shfl_up", 64, ~0ull, true, v, int(delta), width);
}
template <typename T>
inline T __shfl_down(T v, unsigned delta, int width = 64) {
    return sdfgc_emu_shuffle_op(SDFGC_EMU_HIP_SHFL_DOWN, "__shfl_down", 64, ~0ull, true, v, int(delta), width);
}
template <typename T>
inline T __shfl_xor(T v, int lane_mask, int width = 64) {
    return sdfgc_emu_shuffle_op(SDFGC_EMU_HIP_SHFL_XOR, "__shfl_xor", 64, ~0ull, true, v, lane_mask, width);
}
inline unsigned long long __ballot(int pred) { return sdfgc_emu_vote("__ballot", 64, ~0ull, true, pred); }
inline int __any(int pred) { return __ballot(pred) != 0; }
inline int __all(int pred) {
    bool all = false;
    sdfgc_emu_vote("__all", 64, ~0ull, true, pred, &all);
    return all;
}

// ---- Shared memory ----

// A __shared__ array of the running block: created (filled with 0xFF bytes) by the first thread that declares it.
inline SdfgcEmuSharedArray *sdfgc_emu_shared_array(const void *key, const char *name, std::size_t count, std::size_t elem) {
    SdfgcEmuBlock *b = sdfgc_emu_block;
    if (!b) sdfgc_emu_fail("__shared__ %s outside a kernel", name);
    auto it = b->shared.find(key);
    if (it != b->shared.end()) return &it->second;
    SdfgcEmuSharedArray &a = b->shared[key];
    const std::size_t bytes = (count * elem + 63) / 64 * 64 + 64;
    a.data = std::aligned_alloc(64, bytes);
    if (!a.data) sdfgc_emu_fail("cannot allocate __shared__ %s", name);
    std::memset(a.data, 0xFF, bytes);
    a.count = count;
    a.name = name;
    a.shadow.assign(count, SdfgcEmuShadow());
    return &a;
}

[[noreturn]] inline void sdfgc_emu_race(const SdfgcEmuSharedArray *a, std::size_t i, int first, const char *did, const char *does) {
    const SdfgcEmuBlock *b = sdfgc_emu_block;
    sdfgc_emu_fail("data race on __shared__ %s[%zu] in block %s: thread %s %s it and thread %s %s it with no __syncthreads() between",
                   a->name, i, sdfgc_emu_block_name().text, first == -2 ? "(several)" : sdfgc_emu_thread_name(std::size_t(first)).text,
                   did, sdfgc_emu_thread_name(b->current).text, does);
}

// Checks and records an access of element i by the running thread (a
// write: `changes` if it stores a value other than the element's). As
// compute-sanitizer's racecheck, only accesses whose order can change a
// result are races: a read and a write that changes the value, or two
// writes of different values, by two threads with no barrier between.
inline void sdfgc_emu_shared_access(SdfgcEmuSharedArray *a, std::size_t i, bool write, bool changes = false) {
    const SdfgcEmuBlock *b = sdfgc_emu_block;
    const int t = int(b->current);
    const unsigned e = b->epoch;
    SdfgcEmuShadow &s = a->shadow[i];
    const bool written = s.write_epoch == e && s.writer != t, read = s.read_epoch == e && s.reader != t;
    if (!write) {
        if (written && s.changed) sdfgc_emu_race(a, i, s.writer, "wrote", "reads");
        if (s.read_epoch != e) s.reader = t;
        else if (s.reader != t) s.reader = -2;
        s.read_epoch = e;
        return;
    }
    if (written && changes) sdfgc_emu_race(a, i, s.writer, "wrote", "writes another value into");
    if (read && changes) sdfgc_emu_race(a, i, s.reader, "read", "writes");
    if (s.write_epoch != e) {
        s.writer = t;
        s.changed = changes;
    } else {
        if (s.writer != t) s.writer = -2;
        s.changed = s.changed || changes;
    }
    s.write_epoch = e;
}

// An element of a checked __shared__ array.
template <typename T>
struct SdfgcEmuSharedRef {
    SdfgcEmuSharedArray *a;
    std::size_t i;
    SdfgcEmuSharedRef(SdfgcEmuSharedArray *a_, std::size_t i_) : a(a_), i(i_) {}
    // Declared, as the assignment below is (-Wextra's deprecated-copy).
    SdfgcEmuSharedRef(const SdfgcEmuSharedRef &) = default;
    T *p() const { return static_cast<T *>(a->data) + i; }
    operator T() const {
        sdfgc_emu_shared_access(a, i, false);
        return *p();
    }
    const SdfgcEmuSharedRef &operator=(const T &v) const {
        sdfgc_emu_shared_access(a, i, true, std::memcmp(p(), &v, sizeof(T)) != 0);
        *p() = v;
        return *this;
    }
    const SdfgcEmuSharedRef &operator=(const SdfgcEmuSharedRef &o) const { return *this = T(o); }
    // Atomics and pointers to an element are not checked.
    T *operator&() const { return p(); }
    template <typename U> const SdfgcEmuSharedRef &operator+=(const U &v) const { return *this = T(T(*this) + v); }
    template <typename U> const SdfgcEmuSharedRef &operator-=(const U &v) const { return *this = T(T(*this) - v); }
    template <typename U> const SdfgcEmuSharedRef &operator*=(const U &v) const { return *this = T(T(*this) * v); }
    template <typename U> const SdfgcEmuSharedRef &operator/=(const U &v) const { return *this = T(T(*this) / v); }
    template <typename U> const SdfgcEmuSharedRef &operator%=(const U &v) const { return *this = T(T(*this) % v); }
    template <typename U> const SdfgcEmuSharedRef &operator&=(const U &v) const { return *this = T(T(*this) & v); }
    template <typename U> const SdfgcEmuSharedRef &operator|=(const U &v) const { return *this = T(T(*this) | v); }
    template <typename U> const SdfgcEmuSharedRef &operator^=(const U &v) const { return *this = T(T(*this) ^ v); }
    const SdfgcEmuSharedRef &operator++() const { return *this = T(T(*this) + 1); }
    const SdfgcEmuSharedRef &operator--() const { return *this = T(T(*this) - 1); }
    T operator++(int) const { T old = *this; *this = T(old + 1); return old; }
    T operator--(int) const { T old = *this; *this = T(old - 1); return old; }
};

// A checked __shared__ array of the running block (what `__shared__ T name[N];` becomes).
template <typename T, std::size_t N>
struct SdfgcEmuShared {
    SdfgcEmuSharedArray *a;
    SdfgcEmuShared(const void *key, const char *name) : a(sdfgc_emu_shared_array(key, name, N, sizeof(T))) {}
    template <typename I>
    SdfgcEmuSharedRef<T> operator[](I i) const {
        bool negative = false;
        if constexpr (std::is_signed<I>::value) negative = i < 0;
        if (negative || std::size_t(i) >= N)
            sdfgc_emu_fail("__shared__ %s[%lld] is out of bounds (%zu elements), thread %s of block %s", a->name, (long long)i, N,
                           sdfgc_emu_thread_name(sdfgc_emu_block->current).text, sdfgc_emu_block_name().text);
        return SdfgcEmuSharedRef<T>{a, std::size_t(i)};
    }
    // The array as a pointer (unchecked accesses).
    operator T *() const { return static_cast<T *>(a->data); }
};

// The launch's dynamic shared memory (`extern __shared__`), per block.
inline void *sdfgc_emu_dynamic_shared() {
    if (!sdfgc_emu_block) sdfgc_emu_fail("extern __shared__ outside a kernel");
    return sdfgc_emu_block->dynamic_shared;
}

// ---- Device memory ----

// Device allocations: base pointer -> mapped bytes.
inline std::map<void *, std::size_t> &sdfgc_emu_device_pointers() {
    static std::map<void *, std::size_t> s;
    return s;
}

// How many kernels, copies or memsets are running (device memory is readable while > 0).
inline int &sdfgc_emu_open_depth() {
    static int depth = 0;
    return depth;
}

inline void sdfgc_emu_protect_all(int prot) {
    for (auto &[p, n] : sdfgc_emu_device_pointers())
        if (mprotect(p, n, prot) != 0) {
            std::perror("gpu_emu: mprotect");
            std::abort();
        }
}

// Device memory becomes readable and writable (a kernel, copy or memset starts).
inline void sdfgc_emu_open() {
    if (sdfgc_emu_open_depth()++ == 0) sdfgc_emu_protect_all(PROT_READ | PROT_WRITE);
}

// Device memory becomes inaccessible again (back in host code).
inline void sdfgc_emu_close() {
    if (--sdfgc_emu_open_depth() == 0) sdfgc_emu_protect_all(PROT_NONE);
}

// Runs `f` with device memory accessible.
template <typename F>
inline void sdfgc_emu_on_device(F f) {
    sdfgc_emu_open();
    f();
    sdfgc_emu_close();
}

inline void *sdfgc_emu_device_alloc(std::size_t n) {
    const std::size_t page = 4096;
    const std::size_t bytes = (n + page - 1) / page * page + page;
    void *p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return nullptr;
    std::memset(p, 0xFF, bytes);
    if (sdfgc_emu_open_depth() == 0 && mprotect(p, bytes, PROT_NONE) != 0) std::abort();
    sdfgc_emu_device_pointers()[p] = bytes;
    return p;
}

inline bool sdfgc_emu_device_free(void *p) {
    auto &m = sdfgc_emu_device_pointers();
    auto it = m.find(p);
    if (it == m.end()) return false;
    munmap(p, it->second);
    m.erase(it);
    return true;
}

// Host memory the test harness hands a program as its GPU workspace
// (External mode, registered through sdfgc_emu_register_workspace): device
// memory for the emulated libraries' pointer checks, though not protected.
inline std::map<void *, std::size_t> &sdfgc_emu_workspaces() {
    static std::map<void *, std::size_t> m;
    return m;
}
extern "C" __attribute__((used, visibility("default"))) inline void sdfgc_emu_register_workspace(void *p, std::size_t n) {
    sdfgc_emu_workspaces()[p] = n;
}

// True if `p` lies in emulated device memory (or a registered workspace).
inline bool sdfgc_emu_is_device(const void *p) {
    for (auto *m : {&sdfgc_emu_device_pointers(), &sdfgc_emu_workspaces()}) {
        auto it = m->upper_bound(const_cast<void *>(p));
        if (it == m->begin()) continue;
        --it;
        if (static_cast<const char *>(p) < static_cast<const char *>(it->first) + it->second) return true;
    }
    return false;
}

// ---- Kernels ----

// Kernels launched before (their first launch runs as fibers).
inline std::map<const void *, bool> &sdfgc_emu_kernels_seen() {
    static std::map<const void *, bool> m;
    return m;
}
inline bool sdfgc_emu_always_fibers() {
    static const bool always = [] {
        const char *e = std::getenv("SDFGC_EMU_FIBERS");
        return e && std::strcmp(e, "1") == 0;
    }();
    return always;
}

// Runs a launch of kernel `key`: every block (in a random order), each
// block's threads as described at the top of this file. The threads are
// fibers if `may_block` (the source has barriers or warp intrinsics), in a
// kernel's first launch, or always with SDFGC_EMU_FIBERS=1; else each runs
// as a plain call, in a random order: a schedule of a kernel without
// barriers and warp intrinsics is an order of whole threads, and fibers
// cost about 50 ns per thread (a plain call 5).
inline void sdfgc_emu_run_grid(const void *key, bool may_block, dim3 grid, dim3 block, std::size_t shmem, void (*body)(void *),
                               void *arg) {
    const std::size_t n = std::size_t(block.x) * block.y * block.z;
    const std::size_t blocks = std::size_t(grid.x) * grid.y * grid.z;
    if (n == 0 || blocks == 0) return;
    if (sdfgc_emu_block) sdfgc_emu_fail("a launch inside a kernel");
    sdfgc_emu_open();
    const dim3 outer_grid = gridDim, outer_block = blockDim;
    gridDim = grid;
    blockDim = block;
    std::vector<std::size_t> order(blocks);
    for (std::size_t i = 0; i < blocks; ++i) order[i] = i;
    sdfgc_emu_shuffle(order);
    const bool direct = !may_block && !sdfgc_emu_always_fibers() && sdfgc_emu_kernels_seen().count(key);
    sdfgc_emu_kernels_seen()[key] = true;
    SdfgcEmuBlock b;
    b.direct = direct;
    b.n = n;
    b.fibers.resize(n);
    b.state.resize(n);
    b.lanes.resize(n);
    b.body = body;
    b.arg = arg;
#ifdef SDFGC_EMU_ASM_SWITCH
    char *const stack = sdfgc_emu_stack(0, 1), *const top = stack + sdfgc_emu_stack_size;
#else
    sdfgc_emu_stack(0, n);
#endif
    std::vector<unsigned char> dynamic;
    std::vector<dim3> tids(n);
    for (std::size_t t = 0; t < n; ++t)
        tids[t] = dim3(unsigned(t % block.x), unsigned(t / block.x % block.y), unsigned(t / (std::size_t(block.x) * block.y)));
    std::vector<std::size_t> ready;
    ready.reserve(n);
    sdfgc_emu_block = &b;
    for (std::size_t k : order) {
        blockIdx = dim3(unsigned(k % grid.x), unsigned(k / grid.x % grid.y), unsigned(k / (std::size_t(grid.x) * grid.y)));
        b.done = b.at_barrier = 0;
        b.epoch = 1;
        b.barrier_count = 0;
        b.warp_size = 0;
        b.pending.clear();
        if (shmem) dynamic.assign(shmem + 64, 0xFF);
        b.dynamic_shared = shmem ? dynamic.data() : nullptr;
        b.owner = SIZE_MAX;
        for (std::size_t t = 0; t < n; ++t) {
            b.state[t] = SDFGC_EMU_READY;
            b.fibers[t].started = false;
        }
        if (direct) {
            ready.resize(n);
            for (std::size_t t = 0; t < n; ++t) ready[t] = t;
            sdfgc_emu_shuffle(ready);
            for (std::size_t t : ready) {
                b.current = t;
                threadIdx = tids[t];
                body(arg);
                b.state[t] = SDFGC_EMU_DONE;
            }
            b.done = n;
        }
        while (b.done < n) {
            ready.clear();
            for (std::size_t t = 0; t < n; ++t)
                if (b.state[t] == SDFGC_EMU_READY) ready.push_back(t);
            if (ready.empty()) {
                std::size_t at_warp = 0;
                for (std::size_t t = 0; t < n; ++t) at_warp += b.state[t] == SDFGC_EMU_AT_WARP;
                if (at_warp && !b.pending.empty())
                    sdfgc_emu_fail("block %s cannot go on: lanes 0x%llx of warp %zu wait at %s (mask 0x%llx) for lanes that wait "
                                   "elsewhere (at __syncthreads() or another warp intrinsic); %zu threads wait at "
                                   "__syncthreads(), %zu exited",
                                   sdfgc_emu_block_name().text, b.pending[0].arrived, b.pending[0].warp, b.pending[0].name,
                                   b.pending[0].mask, b.at_barrier, b.done);
                sdfgc_emu_fail("some threads of a block passed a __syncthreads() that others skipped: in block %s %zu threads wait "
                               "at __syncthreads() and %zu have exited",
                               sdfgc_emu_block_name().text, b.at_barrier, b.done);
            }
            sdfgc_emu_shuffle(ready);
            for (std::size_t t : ready) {
                if (b.state[t] != SDFGC_EMU_READY) continue;
                b.current = t;
                threadIdx = tids[t];
                SdfgcEmuFiber &f = b.fibers[t];
#ifdef SDFGC_EMU_ASM_SWITCH
                if (b.owner != t) {
                    if (b.owner != SIZE_MAX && b.state[b.owner] != SDFGC_EMU_DONE) {
                        char *sp = static_cast<char *>(b.fibers[b.owner].ctx.sp);
                        b.fibers[b.owner].saved.assign(sp, top);
                    }
                    if (f.started) std::memcpy(top - f.saved.size(), f.saved.data(), f.saved.size());
                    b.owner = t;
                }
                if (!f.started) sdfgc_emu_context_make(f.ctx, stack, sdfgc_emu_stack_size, sdfgc_emu_fiber_main);
#else
                if (!f.started) sdfgc_emu_context_make(f.ctx, sdfgc_emu_stack(t, n), sdfgc_emu_stack_size, sdfgc_emu_fiber_main);
#endif
                f.started = true;
                sdfgc_emu_context_swap(b.scheduler, f.ctx);
            }
        }
        for (auto &[key, a] : b.shared) std::free(a.data);
        b.shared.clear();
    }
    sdfgc_emu_block = nullptr;
    gridDim = outer_grid;
    blockDim = outer_block;
    sdfgc_emu_close();
}

// Runs `body` (one thread of a kernel) as a launch, now.
template <typename F>
inline void sdfgc_emu_launch(dim3 grid, dim3 block, F body) {
    void (*thunk)(void *) = [](void *f) { (*static_cast<F *>(f))(); };
    sdfgc_emu_run_grid(reinterpret_cast<const void *>(thunk), true, grid, block, 0, thunk, &body);
}
// The same (the name of the launcher of files with barriers in earlier emulators).
template <typename F>
inline void sdfgc_emu_launch_fibers(dim3 grid, dim3 block, F body) {
    sdfgc_emu_launch(grid, block, body);
}

// ---- Streams ----

struct SdfgcEmuStream;
struct SdfgcEmuWait {
    SdfgcEmuStream *stream;
    unsigned long long target;  // the stream's operations that must have run
};
struct SdfgcEmuOp {
    std::function<void()> run;
    std::vector<SdfgcEmuWait> waits;
    unsigned long long seq = 0;  // host issue order
};
struct SdfgcEmuStream {
    std::deque<SdfgcEmuOp> ops;
    unsigned long long issued = 0, done = 0;
    bool blocking = true, destroyed = false, is_null = false;
};
struct SdfgcEmuEventState {
    SdfgcEmuStream *stream = nullptr;
    unsigned long long target = 0;
};
struct SdfgcEmuQueues {
    std::recursive_mutex mutex;
    SdfgcEmuStream null_stream;
    std::vector<SdfgcEmuStream *> streams;
    unsigned long long seq = 0;
    int last_error = 0;
};
inline SdfgcEmuQueues &sdfgc_emu_queues() {
    static SdfgcEmuQueues *q = [] {
        auto *q = new SdfgcEmuQueues();  // never destroyed: programs may free at exit
        q->null_stream.is_null = true;
        q->streams.push_back(&q->null_stream);
        return q;
    }();
    return *q;
}
inline SdfgcEmuStream *sdfgc_emu_stream(const void *s) {
    return s ? static_cast<SdfgcEmuStream *>(const_cast<void *>(s)) : &sdfgc_emu_queues().null_stream;
}

inline void sdfgc_emu_run_until(SdfgcEmuStream *s, unsigned long long target);

// Runs the first operation queued on `s` (after what it waits for).
inline void sdfgc_emu_run_head(SdfgcEmuStream *s) {
    SdfgcEmuOp op = std::move(s->ops.front());
    s->ops.pop_front();
    for (const SdfgcEmuWait &w : op.waits) sdfgc_emu_run_until(w.stream, w.target);
    if (op.run) op.run();
    ++s->done;
}

// Runs `s` until `target` of its operations have run.
inline void sdfgc_emu_run_until(SdfgcEmuStream *s, unsigned long long target) {
    std::lock_guard<std::recursive_mutex> lock(sdfgc_emu_queues().mutex);
    while (s->done < target) sdfgc_emu_run_head(s);
}

// Runs every queued operation, the most recently queued runnable one first.
inline void sdfgc_emu_run_all() {
    SdfgcEmuQueues &q = sdfgc_emu_queues();
    std::lock_guard<std::recursive_mutex> lock(q.mutex);
    for (;;) {
        SdfgcEmuStream *pick = nullptr;
        for (SdfgcEmuStream *s : q.streams)
            if (!s->ops.empty() && (!pick || s->ops.front().seq > pick->ops.front().seq)) pick = s;
        if (!pick) return;
        sdfgc_emu_run_head(pick);
    }
}

// Queues `run` on `stream` after `waits` (and the legacy null stream's implicit order).
inline void sdfgc_emu_enqueue(const void *stream, std::function<void()> run, std::vector<SdfgcEmuWait> waits = {}) {
    SdfgcEmuQueues &q = sdfgc_emu_queues();
    std::lock_guard<std::recursive_mutex> lock(q.mutex);
    SdfgcEmuStream *s = sdfgc_emu_stream(stream);
    if (s->destroyed) sdfgc_emu_fail("work queued on a destroyed stream");
    if (s->is_null) {
        for (SdfgcEmuStream *o : q.streams)
            if (o != s && o->blocking && !o->destroyed && o->issued > o->done) waits.push_back({o, o->issued});
    } else if (s->blocking && q.null_stream.issued > q.null_stream.done) {
        waits.push_back({&q.null_stream, q.null_stream.issued});
    }
    SdfgcEmuOp op;
    op.run = std::move(run);
    op.waits = std::move(waits);
    op.seq = ++q.seq;
    s->ops.push_back(std::move(op));
    ++s->issued;
    if (sdfgc_emu_eager_streams()) sdfgc_emu_run_until(s, s->issued);
}

inline void sdfgc_emu_stream_synchronize(const void *stream) {
    SdfgcEmuStream *s = sdfgc_emu_stream(stream);
    sdfgc_emu_run_until(s, s->issued);
}

// What a caller that reads a program's device outputs in place does first
// (the test harness, for libraries whose "device" arguments are host memory).
extern "C" __attribute__((used, visibility("default"))) inline void sdfgc_emu_synchronize() { sdfgc_emu_run_all(); }

inline bool sdfgc_emu_launch_ok(dim3 g, dim3 b) {
    const unsigned long long threads = (unsigned long long)b.x * b.y * b.z;
    return g.x && g.y && g.z && b.x && b.y && b.z && threads <= 1024 && b.z <= 64 && g.y <= 65535 && g.z <= 65535;
}

// A kernel launch on a stream: the arguments are evaluated now (as the
// kernel's parameter types), the kernel runs when the stream gets there.
// `may_block`: the source has barriers or warp intrinsics (see sdfgc_emu_run_grid).
template <typename... P, typename... A>
inline void sdfgc_emu_launch_async(const void *stream, dim3 grid, dim3 block, std::size_t shmem, bool may_block, void (*kernel)(P...),
                                   A &&...args) {
    if (!sdfgc_emu_launch_ok(grid, block)) {
        std::fprintf(stderr, "gpu_emu: invalid launch configuration: grid (%u,%u,%u), block (%u,%u,%u)\n", grid.x, grid.y, grid.z,
                     block.x, block.y, block.z);
        sdfgc_emu_queues().last_error = 9;
        return;
    }
    using Call = std::pair<void (*)(P...), std::tuple<std::decay_t<P>...>>;
    auto call = std::make_shared<Call>(kernel, std::tuple<std::decay_t<P>...>(std::forward<A>(args)...));
    sdfgc_emu_enqueue(stream, [grid, block, shmem, may_block, call] {
        sdfgc_emu_run_grid(reinterpret_cast<const void *>(call->first), may_block, grid, block, shmem, [](void *c) { std::apply(static_cast<Call *>(c)->first, static_cast<Call *>(c)->second); },
                           call.get());
    });
}

#define SDFGC_EMU_API(P)                                                                           \
    typedef int P##Error_t;                                                                        \
    enum { P##Success = 0, P##ErrorInvalidValue = 1, P##ErrorInvalidConfiguration = 9,             \
           P##ErrorNotReady = 600 };                                                               \
    typedef struct P##EmuStream *P##Stream_t;                                                      \
    typedef struct P##EmuEvent *P##Event_t;                                                        \
    typedef struct P##EmuPool *P##MemPool_t;                                                       \
    enum P##MemcpyKind { P##MemcpyHostToHost, P##MemcpyHostToDevice, P##MemcpyDeviceToHost,        \
                         P##MemcpyDeviceToDevice, P##MemcpyDefault };                              \
    static constexpr std::nullptr_t P##StreamDefault = nullptr;                                    \
    enum { P##StreamNonBlocking = 1, P##EventDisableTiming = 2 };                                  \
    enum P##MemPoolAttr { P##MemPoolAttrReleaseThreshold };                                        \
    enum P##MemoryType { P##MemoryTypeUnregistered, P##MemoryTypeHost, P##MemoryTypeDevice,        \
                         P##MemoryTypeManaged };                                                   \
    inline const char *P##GetErrorString(P##Error_t e) {                                           \
        return e == 9 ? "invalid configuration argument (emulated)" : "emulated error";            \
    }                                                                                              \
    inline P##Error_t P##GetLastError() {                                                          \
        int e = sdfgc_emu_queues().last_error;                                                     \
        sdfgc_emu_queues().last_error = 0;                                                         \
        return e;                                                                                  \
    }                                                                                              \
    inline P##Error_t P##PeekAtLastError() { return sdfgc_emu_queues().last_error; }               \
    inline P##Error_t P##Malloc(void **p, size_t n) {                                              \
        *p = sdfgc_emu_device_alloc(n);                                                            \
        return *p ? P##Success : P##ErrorInvalidValue;                                             \
    }                                                                                              \
    inline P##Error_t P##Free(void *p) {                                                           \
        if (!p) return P##Success;                                                                 \
        if (!sdfgc_emu_device_pointers().count(p)) return P##ErrorInvalidValue;                    \
        sdfgc_emu_run_all();                                                                       \
        sdfgc_emu_device_free(p);                                                                  \
        return P##Success;                                                                         \
    }                                                                                              \
    inline P##Error_t P##MallocAsync(void **p, size_t n, P##Stream_t) { return P##Malloc(p, n); }  \
    inline P##Error_t P##FreeAsync(void *p, P##Stream_t s) {                                       \
        if (!p) return P##Success;                                                                 \
        if (!sdfgc_emu_device_pointers().count(p)) return P##ErrorInvalidValue;                    \
        sdfgc_emu_enqueue(s, [p] { sdfgc_emu_device_free(p); });                                   \
        return P##Success;                                                                         \
    }                                                                                              \
    inline P##Error_t P##MemcpyAsync(void *d, const void *s, size_t n, P##MemcpyKind, P##Stream_t st) { \
        sdfgc_emu_enqueue(st, [=] { sdfgc_emu_on_device([&] { std::memmove(d, s, n); }); });       \
        return P##Success;                                                                         \
    }                                                                                              \
    inline P##Error_t P##Memcpy2DAsync(void *d, size_t dp, const void *s, size_t sp, size_t w, size_t h, P##MemcpyKind, P##Stream_t st) { \
        sdfgc_emu_enqueue(st, [=] { sdfgc_emu_on_device([&] { for (size_t r = 0; r < h; ++r) std::memmove(static_cast<char *>(d) + r * dp, static_cast<const char *>(s) + r * sp, w); }); }); \
        return P##Success;                                                                         \
    }                                                                                              \
    inline P##Error_t P##Memcpy2D(void *d, size_t dp, const void *s, size_t sp, size_t w, size_t h, P##MemcpyKind k) { \
        P##Memcpy2DAsync(d, dp, s, sp, w, h, k, nullptr);                                          \
        sdfgc_emu_stream_synchronize(nullptr);                                                     \
        return P##Success;                                                                         \
    }                                                                                              \
    inline P##Error_t P##Memcpy(void *d, const void *s, size_t n, P##MemcpyKind k) {               \
        P##MemcpyAsync(d, s, n, k, nullptr);                                                       \
        sdfgc_emu_stream_synchronize(nullptr);                                                     \
        return P##Success;                                                                         \
    }                                                                                              \
    template <typename T>                                                                          \
    inline P##Error_t P##MemcpyToSymbol(T &sym, const void *s, size_t n, size_t off, P##MemcpyKind) { \
        if (off + n > sizeof(T)) return P##ErrorInvalidValue;                                      \
        sdfgc_emu_stream_synchronize(nullptr);                                                     \
        std::memcpy(reinterpret_cast<char *>(&sym) + off, s, n);                                   \
        return P##Success;                                                                         \
    }                                                                                              \
    inline P##Error_t P##MemsetAsync(void *d, int v, size_t n, P##Stream_t st) {                  \
        sdfgc_emu_enqueue(st, [=] { sdfgc_emu_on_device([&] { std::memset(d, v, n); }); });        \
        return P##Success;                                                                         \
    }                                                                                              \
    inline P##Error_t P##Memset(void *d, int v, size_t n) { return P##MemsetAsync(d, v, n, nullptr); } \
    inline P##Error_t P##StreamSynchronize(P##Stream_t s) {                                        \
        sdfgc_emu_stream_synchronize(s);                                                           \
        return P##Success;                                                                         \
    }                                                                                              \
    inline P##Error_t P##StreamQuery(P##Stream_t s) { return P##StreamSynchronize(s); }            \
    inline P##Error_t P##DeviceSynchronize() {                                                     \
        sdfgc_emu_run_all();                                                                       \
        return sdfgc_emu_queues().last_error;                                                      \
    }                                                                                              \
    inline P##Error_t P##GetDevice(int *d) { *d = 0; return P##Success; }                          \
    inline P##Error_t P##SetDevice(int) { return P##Success; }                                     \
    inline P##Error_t P##DeviceGetDefaultMemPool(P##MemPool_t *p, int) {                           \
        *p = nullptr;                                                                              \
        return P##Success;                                                                         \
    }                                                                                              \
    inline P##Error_t P##MemPoolSetAttribute(P##MemPool_t, P##MemPoolAttr, void *) { return P##Success; } \
    inline P##Error_t P##StreamCreateWithFlags(P##Stream_t *s, unsigned flags) {                   \
        SdfgcEmuQueues &q = sdfgc_emu_queues();                                                    \
        std::lock_guard<std::recursive_mutex> lock(q.mutex);                                       \
        auto *st = new SdfgcEmuStream();                                                           \
        st->blocking = !(flags & P##StreamNonBlocking);                                            \
        q.streams.push_back(st);                                                                   \
        *s = reinterpret_cast<P##Stream_t>(st);                                                    \
        return P##Success;                                                                         \
    }                                                                                              \
    inline P##Error_t P##StreamCreate(P##Stream_t *s) { return P##StreamCreateWithFlags(s, 0); }   \
    inline P##Error_t P##StreamDestroy(P##Stream_t s) {                                            \
        if (!s) return P##ErrorInvalidValue;                                                       \
        sdfgc_emu_stream_synchronize(s);                                                           \
        sdfgc_emu_stream(s)->destroyed = true; /* kept: waits queued elsewhere may name it */      \
        return P##Success;                                                                         \
    }                                                                                              \
    inline P##Error_t P##EventCreateWithFlags(P##Event_t *e, unsigned) {                           \
        *e = reinterpret_cast<P##Event_t>(new SdfgcEmuEventState());                               \
        return P##Success;                                                                         \
    }                                                                                              \
    inline P##Error_t P##EventCreate(P##Event_t *e) { return P##EventCreateWithFlags(e, 0); }      \
    inline P##Error_t P##EventDestroy(P##Event_t e) {                                              \
        delete reinterpret_cast<SdfgcEmuEventState *>(e);                                          \
        return P##Success;                                                                         \
    }                                                                                              \
    inline P##Error_t P##EventRecord(P##Event_t e, P##Stream_t s = nullptr) {                      \
        SdfgcEmuQueues &q = sdfgc_emu_queues();                                                    \
        std::lock_guard<std::recursive_mutex> lock(q.mutex);                                       \
        sdfgc_emu_enqueue(s, nullptr);                                                             \
        auto *ev = reinterpret_cast<SdfgcEmuEventState *>(e);                                      \
        ev->stream = sdfgc_emu_stream(s);                                                          \
        ev->target = ev->stream->issued;                                                           \
        return P##Success;                                                                         \
    }                                                                                              \
    inline P##Error_t P##StreamWaitEvent(P##Stream_t s, P##Event_t e, unsigned) {                  \
        auto *ev = reinterpret_cast<SdfgcEmuEventState *>(e);                                      \
        std::vector<SdfgcEmuWait> waits;                                                           \
        if (ev->stream) waits.push_back({ev->stream, ev->target});                                 \
        sdfgc_emu_enqueue(s, nullptr, std::move(waits));                                           \
        return P##Success;                                                                         \
    }                                                                                              \
    inline P##Error_t P##EventSynchronize(P##Event_t e) {                                          \
        auto *ev = reinterpret_cast<SdfgcEmuEventState *>(e);                                      \
        if (ev->stream) sdfgc_emu_run_until(ev->stream, ev->target);                               \
        return P##Success;                                                                         \
    }                                                                                              \
    inline P##Error_t P##EventQuery(P##Event_t e) { return P##EventSynchronize(e); }

SDFGC_EMU_API(cuda)
SDFGC_EMU_API(hip)

struct cudaPointerAttributes {
    cudaMemoryType type;
};
inline cudaError_t cudaPointerGetAttributes(cudaPointerAttributes *a, const void *p) {
    a->type = sdfgc_emu_device_pointers().count(const_cast<void *>(p)) ? cudaMemoryTypeDevice : cudaMemoryTypeUnregistered;
    return cudaSuccess;
}
#define HIP_VERSION_MAJOR 5
struct hipPointerAttribute_t {
    hipMemoryType memoryType;
};
inline hipError_t hipPointerGetAttributes(hipPointerAttribute_t *a, const void *p) {
    a->memoryType = sdfgc_emu_device_pointers().count(const_cast<void *>(p)) ? hipMemoryTypeDevice : hipMemoryTypeUnregistered;
    return hipSuccess;
}

// ---- Atomics ----
// Exact: a fiber runs alone between switch points. Each is a switch point
// (other threads may run before the caller goes on).
template <typename T, typename U> inline T atomicAdd(T *p, U v) { T old = *p; *p = T(old + T(v)); sdfgc_emu_yield(); return old; }
template <typename T, typename U> inline T atomicSub(T *p, U v) { T old = *p; *p = T(old - T(v)); sdfgc_emu_yield(); return old; }
template <typename T, typename U> inline T atomicExch(T *p, U v) { T old = *p; *p = T(v); sdfgc_emu_yield(); return old; }
template <typename T, typename U> inline T atomicMin(T *p, U v) { T old = *p; *p = T(v) < old ? T(v) : old; sdfgc_emu_yield(); return old; }
template <typename T, typename U> inline T atomicMax(T *p, U v) { T old = *p; *p = old < T(v) ? T(v) : old; sdfgc_emu_yield(); return old; }
template <typename T, typename U> inline T atomicAnd(T *p, U v) { T old = *p; *p = T(old & T(v)); sdfgc_emu_yield(); return old; }
template <typename T, typename U> inline T atomicOr(T *p, U v) { T old = *p; *p = T(old | T(v)); sdfgc_emu_yield(); return old; }
template <typename T, typename U> inline T atomicXor(T *p, U v) { T old = *p; *p = T(old ^ T(v)); sdfgc_emu_yield(); return old; }
template <typename T, typename U, typename V> inline T atomicCAS(T *p, U cmp, V v) {
    T old = *p;
    if (old == T(cmp)) *p = T(v);
    sdfgc_emu_yield();
    return old;
}
inline unsigned atomicInc(unsigned *p, unsigned v) { unsigned old = *p; *p = old >= v ? 0 : old + 1; sdfgc_emu_yield(); return old; }
inline unsigned atomicDec(unsigned *p, unsigned v) { unsigned old = *p; *p = (old == 0 || old > v) ? v : old - 1; sdfgc_emu_yield(); return old; }
