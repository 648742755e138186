// A tiny CUDA/HIP runtime emulation on the CPU, for tests only: it lets the
// generated .cu/.hip files be compiled by g++ and run on a machine without a
// GPU, so that kernel index math, launches, copies, memory modes and the
// workspace protocol are checked by running them. Kernels run thread by
// thread. In files with barriers (the test picks the launcher) the threads
// of a block run as fibers (ucontext) on the launching thread, in thread
// order: __syncthreads() switches to the next fiber, and a block goes on
// past a barrier only when every one of its threads has reached it, so
// barrier placement is checked deterministically (a missing barrier shows
// as a wrong result, a barrier some threads skip aborts the launch).
// __shared__ arrays are static: blocks run one after another.
// Device memory (cudaMalloc) is mapped on its own pages, filled with 0xFF
// bytes, and readable only while a kernel, a copy or a memset runs: at any
// other time its pages are PROT_NONE, so host code that dereferences device
// memory crashes (SIGSEGV) instead of passing unnoticed. The emulator
// remembers which pointers came from cudaMalloc, so pointer-attribute
// queries answer correctly.
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cmath>
#include <map>
#include <sys/mman.h>
#include <mutex>
#include <utility>
#include <vector>
#include <ucontext.h>

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __shared__ static
#define __constant__
#define HIP_SYMBOL(X) X

struct dim3 {
    unsigned int x, y, z;
    constexpr dim3(unsigned int x_ = 1, unsigned int y_ = 1, unsigned int z_ = 1) : x(x_), y(y_), z(z_) {}
};
inline thread_local dim3 threadIdx, blockIdx, blockDim, gridDim;

// The fibers of the block being run.
struct SdfgcEmuBlock {
    ucontext_t scheduler;
    std::vector<ucontext_t> fibers;
    std::vector<char> done;
    std::vector<unsigned char> lanes;  // one value per thread, for warp shuffles
    std::size_t current = 0;
    void (*body)(void *) = nullptr;
    void *arg = nullptr;
};
inline thread_local SdfgcEmuBlock *sdfgc_emu_block = nullptr;

inline void sdfgc_emu_fiber_main() {
    SdfgcEmuBlock *b = sdfgc_emu_block;
    b->body(b->arg);
    b->done[b->current] = 1;
    // Returning resumes uc_link (the scheduler).
}

inline void __syncthreads() {
    SdfgcEmuBlock *b = sdfgc_emu_block;
    if (b) swapcontext(&b->fibers[b->current], &b->scheduler);
}

// Warp shuffle (xor of the lane): every thread of the block must call it, as a
// barrier: each publishes its value, all meet, each reads its partner's, all meet again.
template <typename T>
inline T __shfl_xor_sync(unsigned, T v, int mask, int width = 32) {
    SdfgcEmuBlock *b = sdfgc_emu_block;
    if (!b) {
        std::fprintf(stderr, "gpu_emu: warp shuffle in a launch without fibers\n");
        std::abort();
    }
    const std::size_t t = b->current, n = b->fibers.size();
    b->lanes.resize(n * sizeof(T));
    std::memcpy(&b->lanes[t * sizeof(T)], &v, sizeof(T));
    __syncthreads();
    const std::size_t w = std::size_t(width);
    const std::size_t partner = t / w * w + ((t % w) ^ std::size_t(mask));
    T r = v;
    if (partner < n) std::memcpy(&r, &b->lanes[partner * sizeof(T)], sizeof(T));
    __syncthreads();
    return r;
}
template <typename T>
inline T __shfl_xor(T v, int mask, int width = 32) { return __shfl_xor_sync(0xffffffffu, v, mask, width); }

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

// Launch of a kernel without barriers: its threads run one after another.
template <typename F>
inline void sdfgc_emu_launch(dim3 grid, dim3 block, F body) {
    sdfgc_emu_open();
    gridDim = grid;
    blockDim = block;
    for (unsigned bz = 0; bz < grid.z; ++bz)
        for (unsigned by = 0; by < grid.y; ++by)
            for (unsigned bx = 0; bx < grid.x; ++bx)
                for (unsigned tz = 0; tz < block.z; ++tz)
                    for (unsigned ty = 0; ty < block.y; ++ty)
                        for (unsigned tx = 0; tx < block.x; ++tx) {
                            blockIdx = dim3(bx, by, bz);
                            threadIdx = dim3(tx, ty, tz);
                            body();
                        }
    sdfgc_emu_close();
}

// Launch of a kernel that may call __syncthreads(): each thread is a fiber.
template <typename F>
inline void sdfgc_emu_launch_fibers(dim3 grid, dim3 block, F body) {
    sdfgc_emu_open();
    gridDim = grid;
    blockDim = block;
    const std::size_t n = std::size_t(block.x) * block.y * block.z;
    const std::size_t stack = 256 * 1024;
    // Not value-initialized: untouched stack pages are never committed.
    char *stacks = static_cast<char *>(std::malloc(n * stack));
    if (!stacks) std::abort();
    SdfgcEmuBlock b;
    b.fibers.resize(n);
    b.body = [](void *f) { (*static_cast<F *>(f))(); };
    b.arg = &body;
    SdfgcEmuBlock *outer = sdfgc_emu_block;
    sdfgc_emu_block = &b;
    for (unsigned bz = 0; bz < grid.z; ++bz)
        for (unsigned by = 0; by < grid.y; ++by)
            for (unsigned bx = 0; bx < grid.x; ++bx) {
                blockIdx = dim3(bx, by, bz);
                b.done.assign(n, 0);
                for (std::size_t t = 0; t < n; ++t) {
                    getcontext(&b.fibers[t]);
                    b.fibers[t].uc_stack.ss_sp = stacks + t * stack;
                    b.fibers[t].uc_stack.ss_size = stack;
                    b.fibers[t].uc_link = &b.scheduler;
                    makecontext(&b.fibers[t], sdfgc_emu_fiber_main, 0);
                }
                // Rounds: every live thread runs to its next barrier or its end.
                for (;;) {
                    std::size_t live = 0, finished = 0;
                    for (std::size_t t = 0; t < n; ++t) {
                        if (b.done[t]) continue;
                        ++live;
                        b.current = t;
                        threadIdx = dim3(unsigned(t % block.x), unsigned(t / block.x % block.y),
                                         unsigned(t / (std::size_t(block.x) * block.y)));
                        swapcontext(&b.scheduler, &b.fibers[t]);
                        finished += b.done[t];
                    }
                    if (live == 0) break;
                    if (finished != 0 && finished != live) {
                        std::fprintf(stderr, "gpu_emu: some threads of a block passed a __syncthreads() that others skipped\n");
                        std::abort();
                    }
                }
            }
    sdfgc_emu_block = outer;
    std::free(stacks);
    sdfgc_emu_close();
}

#define SDFGC_EMU_API(P)                                                                           \
    typedef int P##Error_t;                                                                        \
    enum { P##Success = 0, P##ErrorInvalidValue = 1 };                                             \
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
    inline const char *P##GetErrorString(P##Error_t) { return "emulated error"; }                  \
    inline P##Error_t P##GetLastError() { return P##Success; }                                     \
    inline P##Error_t P##Malloc(void **p, size_t n) {                                              \
        *p = sdfgc_emu_device_alloc(n);                                                            \
        return *p ? P##Success : P##ErrorInvalidValue;                                             \
    }                                                                                              \
    inline P##Error_t P##Free(void *p) {                                                           \
        if (p && !sdfgc_emu_device_free(p)) return P##ErrorInvalidValue;                           \
        return P##Success;                                                                         \
    }                                                                                              \
    inline P##Error_t P##MallocAsync(void **p, size_t n, P##Stream_t) { return P##Malloc(p, n); }  \
    inline P##Error_t P##FreeAsync(void *p, P##Stream_t) { return P##Free(p); }                    \
    inline P##Error_t P##MemcpyAsync(void *d, const void *s, size_t n, P##MemcpyKind, P##Stream_t) { \
        sdfgc_emu_on_device([&] { std::memmove(d, s, n); });                                                                   \
        return P##Success;                                                                         \
    }                                                                                              \
    inline P##Error_t P##Memcpy2DAsync(void *d, size_t dp, const void *s, size_t sp, size_t w, size_t h, P##MemcpyKind, P##Stream_t) { \
        sdfgc_emu_on_device([&] { for (size_t r = 0; r < h; ++r) std::memmove(static_cast<char *>(d) + r * dp, static_cast<const char *>(s) + r * sp, w); }); \
        return P##Success;                                                                         \
    }                                                                                              \
    inline P##Error_t P##Memcpy(void *d, const void *s, size_t n, P##MemcpyKind) {                 \
        sdfgc_emu_on_device([&] { std::memmove(d, s, n); });                                                                   \
        return P##Success;                                                                         \
    }                                                                                              \
    template <typename T>                                                                          \
    inline P##Error_t P##MemcpyToSymbol(T &sym, const void *s, size_t n, size_t off, P##MemcpyKind) { \
        if (off + n > sizeof(T)) return P##ErrorInvalidValue;                                      \
        std::memcpy(reinterpret_cast<char *>(&sym) + off, s, n);                                   \
        return P##Success;                                                                         \
    }                                                                                              \
    inline P##Error_t P##Memset(void *d, int v, size_t n) {                                       \
        sdfgc_emu_on_device([&] { std::memset(d, v, n); });                                                                    \
        return P##Success;                                                                         \
    }                                                                                              \
    inline P##Error_t P##MemsetAsync(void *d, int v, size_t n, P##Stream_t) {                      \
        sdfgc_emu_on_device([&] { std::memset(d, v, n); });                                                                    \
        return P##Success;                                                                         \
    }                                                                                              \
    inline P##Error_t P##StreamSynchronize(P##Stream_t) { return P##Success; }                     \
    inline P##Error_t P##DeviceSynchronize() { return P##Success; }                                \
    inline P##Error_t P##GetDevice(int *d) { *d = 0; return P##Success; }                          \
    inline P##Error_t P##DeviceGetDefaultMemPool(P##MemPool_t *p, int) {                           \
        *p = nullptr;                                                                              \
        return P##Success;                                                                         \
    }                                                                                              \
    inline P##Error_t P##MemPoolSetAttribute(P##MemPool_t, P##MemPoolAttr, void *) { return P##Success; } \
    inline P##Error_t P##StreamCreateWithFlags(P##Stream_t *s, unsigned) {                         \
        *s = reinterpret_cast<P##Stream_t>(new char[1]);                                           \
        return P##Success;                                                                         \
    }                                                                                              \
    inline P##Error_t P##StreamDestroy(P##Stream_t s) {                                            \
        delete[] reinterpret_cast<char *>(s);                                                      \
        return P##Success;                                                                         \
    }                                                                                              \
    inline P##Error_t P##EventCreateWithFlags(P##Event_t *e, unsigned) {                           \
        *e = reinterpret_cast<P##Event_t>(new char[1]);                                            \
        return P##Success;                                                                         \
    }                                                                                              \
    inline P##Error_t P##EventDestroy(P##Event_t e) {                                              \
        delete[] reinterpret_cast<char *>(e);                                                      \
        return P##Success;                                                                         \
    }                                                                                              \
    inline P##Error_t P##EventRecord(P##Event_t, P##Stream_t) { return P##Success; }               \
    inline P##Error_t P##StreamWaitEvent(P##Stream_t, P##Event_t, unsigned) { return P##Success; }

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

// Atomics: threads are fibers that switch only at barriers, so plain updates are exact.
template <typename T> inline T atomicAdd(T *p, T v) { T old = *p; *p = old + v; return old; }
template <typename T> inline T atomicMin(T *p, T v) { T old = *p; *p = v < old ? v : old; return old; }
template <typename T> inline T atomicMax(T *p, T v) { T old = *p; *p = old < v ? v : old; return old; }
template <typename T> inline T atomicCAS(T *p, T cmp, T v) { T old = *p; if (old == cmp) *p = v; return old; }
