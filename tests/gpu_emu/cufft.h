// Emulated cuFFT (tests only): plans of 1, 2 and 3 dimensions (batched in
// 1D) of the types C2C, Z2Z, R2C, D2Z, C2R and Z2D, made with cufftPlan*d
// or cufftCreate and cufftMakePlan*d, executed by cufftExec* (and
// cufftXtExec, cufftXt.h) as queued work on the plan's stream, run on the
// CPU over the emulated device memory (see gpu_emu.h). The transform is
// cuFFT's: unnormalized, exponent sign -1 forward and +1 inverse, row-major
// (the last dimension contiguous), R2C keeping the first n/2 + 1 outputs of
// the last dimension and C2R reading them (the rest Hermitian). Each
// dimension is a direct DFT in long double with the angle reduced exactly
// (k * j mod n), as accurate as cuFFT's. Data must be device memory and the
// type of a call the plan's: a call that breaks this aborts the test with a
// message (cuFFT returns CUFFT_INVALID_VALUE / CUFFT_INVALID_TYPE).
#pragma once
#include <cmath>
#include <complex>
#include <vector>
#include "cuComplex.h"

typedef int cufftHandle;
typedef float cufftReal;
typedef double cufftDoubleReal;
typedef cuComplex cufftComplex;
typedef cuDoubleComplex cufftDoubleComplex;
typedef enum {
    CUFFT_SUCCESS = 0,
    CUFFT_INVALID_PLAN = 1,
    CUFFT_ALLOC_FAILED = 2,
    CUFFT_INVALID_TYPE = 3,
    CUFFT_INVALID_VALUE = 4,
    CUFFT_INTERNAL_ERROR = 5,
    CUFFT_EXEC_FAILED = 6,
    CUFFT_SETUP_FAILED = 7,
    CUFFT_INVALID_SIZE = 8,
} cufftResult;
typedef enum {
    CUFFT_R2C = 0x2a,
    CUFFT_C2R = 0x2c,
    CUFFT_C2C = 0x29,
    CUFFT_D2Z = 0x6a,
    CUFFT_Z2D = 0x6c,
    CUFFT_Z2Z = 0x69,
} cufftType;
#define CUFFT_FORWARD -1
#define CUFFT_INVERSE 1

struct SdfgcEmuFftPlan {
    bool made = false;
    std::vector<int> dims;
    int batch = 1;
    cufftType type = CUFFT_C2C;
    cudaStream_t stream = nullptr;
};
inline std::map<int, SdfgcEmuFftPlan> &sdfgc_emu_fft_plans() {
    static std::map<int, SdfgcEmuFftPlan> m;
    return m;
}
inline cufftResult sdfgc_emu_cufft_fail(const char *what, cufftResult r = CUFFT_INVALID_VALUE) {
    std::fprintf(stderr, "gpu_emu: cuFFT %s\n", what);
    std::abort();
    return r;
}
inline SdfgcEmuFftPlan *sdfgc_emu_fft_plan(cufftHandle h) {
    auto &m = sdfgc_emu_fft_plans();
    auto it = m.find(h);
    return it == m.end() ? nullptr : &it->second;
}

inline cufftResult cufftCreate(cufftHandle *h) {
    static int next = 1;
    *h = next++;
    sdfgc_emu_fft_plans()[*h] = SdfgcEmuFftPlan();
    return CUFFT_SUCCESS;
}
inline cufftResult cufftDestroy(cufftHandle h) {
    if (!sdfgc_emu_fft_plans().erase(h)) return CUFFT_INVALID_PLAN;
    return CUFFT_SUCCESS;
}
inline cufftResult cufftSetStream(cufftHandle h, cudaStream_t s) {
    SdfgcEmuFftPlan *p = sdfgc_emu_fft_plan(h);
    if (!p) return CUFFT_INVALID_PLAN;
    p->stream = s;
    return CUFFT_SUCCESS;
}
inline bool sdfgc_emu_fft_real_in(cufftType t) { return t == CUFFT_R2C || t == CUFFT_D2Z; }
inline bool sdfgc_emu_fft_real_out(cufftType t) { return t == CUFFT_C2R || t == CUFFT_Z2D; }
inline cufftResult sdfgc_emu_fft_make(cufftHandle h, std::vector<int> dims, cufftType type, int batch, size_t *work) {
    SdfgcEmuFftPlan *p = sdfgc_emu_fft_plan(h);
    if (!p) return CUFFT_INVALID_PLAN;
    for (int d : dims)
        if (d < 1) return sdfgc_emu_cufft_fail("cufftMakePlan: a size below 1", CUFFT_INVALID_SIZE);
    if (batch < 1) return sdfgc_emu_cufft_fail("cufftMakePlan: a batch below 1", CUFFT_INVALID_SIZE);
    switch (type) {
        case CUFFT_R2C: case CUFFT_C2R: case CUFFT_C2C: case CUFFT_D2Z: case CUFFT_Z2D: case CUFFT_Z2Z: break;
        default: return sdfgc_emu_cufft_fail("cufftMakePlan: unknown type", CUFFT_INVALID_TYPE);
    }
    p->made = true;
    p->dims = std::move(dims);
    p->type = type;
    p->batch = batch;
    if (work) *work = 0;
    return CUFFT_SUCCESS;
}
inline cufftResult cufftMakePlan1d(cufftHandle h, int nx, cufftType type, int batch, size_t *work) {
    return sdfgc_emu_fft_make(h, {nx}, type, batch, work);
}
inline cufftResult cufftMakePlan2d(cufftHandle h, int nx, int ny, cufftType type, size_t *work) {
    return sdfgc_emu_fft_make(h, {nx, ny}, type, 1, work);
}
inline cufftResult cufftMakePlan3d(cufftHandle h, int nx, int ny, int nz, cufftType type, size_t *work) {
    return sdfgc_emu_fft_make(h, {nx, ny, nz}, type, 1, work);
}
inline cufftResult cufftPlan1d(cufftHandle *h, int nx, cufftType type, int batch) {
    cufftCreate(h);
    return cufftMakePlan1d(*h, nx, type, batch, nullptr);
}
inline cufftResult cufftPlan2d(cufftHandle *h, int nx, int ny, cufftType type) {
    cufftCreate(h);
    return cufftMakePlan2d(*h, nx, ny, type, nullptr);
}
inline cufftResult cufftPlan3d(cufftHandle *h, int nx, int ny, int nz, cufftType type) {
    cufftCreate(h);
    return cufftMakePlan3d(*h, nx, ny, nz, type, nullptr);
}

// One dimension of a row-major complex array in place: `count` lines of
// `n` elements, `stride` apart within a line; line `l` starts at
// (l / inner) * n * inner + l % inner.
inline void sdfgc_emu_dft_axis(std::vector<std::complex<long double>> &a, int n, std::size_t inner, int sign) {
    const long double pi = 3.141592653589793238462643383279502884L;
    std::vector<std::complex<long double>> tw(n), line(n);
    for (int k = 0; k < n; ++k) tw[k] = std::polar(1.0L, sign * 2 * pi * k / n);
    const std::size_t lines = a.size() / n;
    for (std::size_t l = 0; l < lines; ++l) {
        const std::size_t start = (l / inner) * n * inner + l % inner;
        for (int k = 0; k < n; ++k) {
            std::complex<long double> s = 0;
            for (int j = 0; j < n; ++j) s += tw[(std::size_t)k * j % n] * a[start + (std::size_t)j * inner];
            line[k] = s;
        }
        for (int k = 0; k < n; ++k) a[start + (std::size_t)k * inner] = line[k];
    }
}

// A transform's value stored as an element of the output's type.
template <typename T> inline void sdfgc_emu_fft_store(T &y, std::complex<long double> v) { y = T(v.real()); }
template <typename T> inline void sdfgc_emu_fft_store(std::complex<T> &y, std::complex<long double> v) {
    y = std::complex<T>(v);
}

template <typename In, typename Out>
inline cufftResult sdfgc_emu_fft_exec(cufftHandle h, const In *in, Out *out, int direction, bool real_in, bool real_out,
                                      bool dbl, const char *name) {
    SdfgcEmuFftPlan *p = sdfgc_emu_fft_plan(h);
    if (!p || !p->made) return sdfgc_emu_cufft_fail("exec: not a plan that was made", CUFFT_INVALID_PLAN);
    const bool plan_dbl = p->type == CUFFT_Z2Z || p->type == CUFFT_D2Z || p->type == CUFFT_Z2D;
    if (real_in != sdfgc_emu_fft_real_in(p->type) || real_out != sdfgc_emu_fft_real_out(p->type) || dbl != plan_dbl) {
        std::fprintf(stderr, "gpu_emu: cuFFT %s on a plan of another type\n", name);
        std::abort();
    }
    if (!real_in && !real_out && direction != CUFFT_FORWARD && direction != CUFFT_INVERSE)
        return sdfgc_emu_cufft_fail("exec: direction is neither CUFFT_FORWARD nor CUFFT_INVERSE");
    if (!sdfgc_emu_is_device(in) || !sdfgc_emu_is_device(out))
        return sdfgc_emu_cufft_fail("exec: data not device memory");
    const SdfgcEmuFftPlan plan = *p;
    const int sign = real_in ? -1 : real_out ? 1 : direction;
    sdfgc_emu_enqueue(plan.stream, [=] { sdfgc_emu_on_device([&] {
        std::size_t total = 1;
        for (int d : plan.dims) total *= (std::size_t)d;
        const int last = plan.dims.back();
        const std::size_t half = (std::size_t)(last / 2 + 1), rows = total / last;
        // Elements of one transform in memory: complex sides of R2C/C2R hold half of the last dimension.
        const std::size_t n_in = real_out ? rows * half : total, n_out = real_in ? rows * half : total;
        typedef typename SdfgcEmuMath<In>::type InT;
        typedef typename SdfgcEmuMath<Out>::type OutT;
        const InT *src = reinterpret_cast<const InT *>(in);
        OutT *dst = reinterpret_cast<OutT *>(out);
        std::vector<std::complex<long double>> a(total);
        for (int b = 0; b < plan.batch; ++b) {
            const InT *x = src + (std::size_t)b * n_in;
            if (real_out) {  // Hermitian: the rest from the conjugates
                for (std::size_t r = 0; r < rows; ++r)
                    for (int k = 0; k < last; ++k) {
                        if ((std::size_t)k < half) {
                            a[r * last + k] = std::complex<long double>(x[r * half + k]);
                        } else {
                            // the element at the negated indices of every dimension
                            std::size_t rr = 0, rem = r, scale = 1;
                            for (int d = (int)plan.dims.size() - 2; d >= 0; --d) {
                                const std::size_t n = plan.dims[d], i = rem % n;
                                rem /= n;
                                rr += ((n - i) % n) * scale;
                                scale *= n;
                            }
                            a[r * last + k] = std::conj(std::complex<long double>(x[rr * half + (last - k)]));
                        }
                    }
            } else {
                for (std::size_t i = 0; i < total; ++i) a[i] = std::complex<long double>(x[i]);
            }
            std::size_t inner = 1;
            for (int d = (int)plan.dims.size() - 1; d >= 0; --d) {
                sdfgc_emu_dft_axis(a, plan.dims[d], inner, sign);
                inner *= (std::size_t)plan.dims[d];
            }
            OutT *y = dst + (std::size_t)b * n_out;
            if (real_in) {
                for (std::size_t r = 0; r < rows; ++r)
                    for (std::size_t k = 0; k < half; ++k) sdfgc_emu_fft_store(y[r * half + k], a[r * last + k]);
            } else {  // C2C, or C2R's real parts
                for (std::size_t i = 0; i < total; ++i) sdfgc_emu_fft_store(y[i], a[i]);
            }
        }
    }); });
    return CUFFT_SUCCESS;
}

inline cufftResult cufftExecC2C(cufftHandle h, cufftComplex *in, cufftComplex *out, int direction) {
    return sdfgc_emu_fft_exec(h, in, out, direction, false, false, false, "cufftExecC2C");
}
inline cufftResult cufftExecZ2Z(cufftHandle h, cufftDoubleComplex *in, cufftDoubleComplex *out, int direction) {
    return sdfgc_emu_fft_exec(h, in, out, direction, false, false, true, "cufftExecZ2Z");
}
inline cufftResult cufftExecR2C(cufftHandle h, cufftReal *in, cufftComplex *out) {
    return sdfgc_emu_fft_exec(h, in, out, CUFFT_FORWARD, true, false, false, "cufftExecR2C");
}
inline cufftResult cufftExecD2Z(cufftHandle h, cufftDoubleReal *in, cufftDoubleComplex *out) {
    return sdfgc_emu_fft_exec(h, in, out, CUFFT_FORWARD, true, false, true, "cufftExecD2Z");
}
inline cufftResult cufftExecC2R(cufftHandle h, cufftComplex *in, cufftReal *out) {
    return sdfgc_emu_fft_exec(h, in, out, CUFFT_INVERSE, false, true, false, "cufftExecC2R");
}
inline cufftResult cufftExecZ2D(cufftHandle h, cufftDoubleComplex *in, cufftDoubleReal *out) {
    return sdfgc_emu_fft_exec(h, in, out, CUFFT_INVERSE, false, true, true, "cufftExecZ2D");
}
