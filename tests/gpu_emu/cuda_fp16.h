// CUDA's half type (cuda_fp16.h) for the CPU emulation: IEEE binary16,
// conversions rounded to nearest even (from float and from double, each in
// one rounding, as __float2half and __double2half), half to float exact.
// Arithmetic on two halves computes in float and rounds the result to half,
// as __hadd/__hsub/__hmul/__hdiv do (the float result of two halves' sum,
// difference or product is exact, so the one rounding is the same); a half
// mixed with a float or an int is, as in CUDA, ambiguous unless converted.
// Conversions to the integer types and bool, and assignments from them, as
// CUDA's (toward zero, saturated). __half2 is a pair of halves (x low, y
// high) whose arithmetic (__hadd2, __hmul2, ..., and its operators) is each
// lane's half operation: lane by lane, the same rounding.
#pragma once
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include "gpu_emu.h"

inline unsigned short sdfgc_emu_d2h(double x) {
    unsigned short sign = std::signbit(x) ? 0x8000 : 0;
    if (std::isnan(x)) return 0x7fff;
    double a = std::fabs(x);
    if (a >= 65520.0) return sign | 0x7c00;  // rounds to infinity
    if (a < 6.103515625e-05) {  // subnormal: units of 2^-24 (1024 rounds to the least normal)
        return sign | (unsigned short)std::nearbyint(a * 16777216.0);
    }
    int e;
    std::frexp(a, &e);  // a = f * 2^e, f in [0.5, 1)
    double m = std::nearbyint(std::ldexp(a, 11 - e));  // 1024..2048
    int E = e - 1;
    if (m == 2048.0) {
        m = 1024.0;
        ++E;
    }
    if (E > 15) return sign | 0x7c00;
    return sign | (unsigned short)((E + 15) << 10) | (unsigned short)((int)m - 1024);
}

inline float sdfgc_emu_h2f(unsigned short h) {
    uint32_t sign = (uint32_t)(h & 0x8000) << 16, exp = (h >> 10) & 0x1f, mant = h & 0x3ff, out;
    if (exp == 0) {
        float v = std::ldexp((float)mant, -24);
        return sign ? -v : v;
    } else if (exp == 0x1f) {
        out = sign | 0x7f800000u | (mant << 13);
    } else {
        out = sign | ((exp + 112) << 23) | (mant << 13);
    }
    float f;
    std::memcpy(&f, &out, 4);
    return f;
}

struct __half_raw {
    unsigned short x;
};

struct __half {
    unsigned short __x;
    __half() = default;
    __half(const __half_raw &r) : __x(r.x) {}
    __half(float f) : __x(sdfgc_emu_d2h(f)) {}
    __half(double d) : __x(sdfgc_emu_d2h(d)) {}
    __half(short v) : __x(sdfgc_emu_d2h(v)) {}
    __half(unsigned short v) : __x(sdfgc_emu_d2h(v)) {}
    __half(int v) : __x(sdfgc_emu_d2h(v)) {}
    __half(unsigned int v) : __x(sdfgc_emu_d2h(v)) {}
    __half(long v) : __x(sdfgc_emu_d2h((double)v)) {}
    __half(unsigned long v) : __x(sdfgc_emu_d2h((double)v)) {}
    __half(long long v) : __x(sdfgc_emu_d2h((double)v)) {}
    __half(unsigned long long v) : __x(sdfgc_emu_d2h((double)v)) {}
    operator float() const { return sdfgc_emu_h2f(__x); }
    operator __half_raw() const { return __half_raw{__x}; }
    // To the integers as CUDA's __half2*_rz: toward zero, saturated, NaN 0.
    template <typename I>
    I sdfgc_to_int() const {
        float f = sdfgc_emu_h2f(__x);
        if (f != f) return 0;
        f = std::trunc(f);
        if (f <= (float)std::numeric_limits<I>::min()) return std::numeric_limits<I>::min();
        if (f >= (float)std::numeric_limits<I>::max()) return std::numeric_limits<I>::max();
        return (I)f;
    }
    operator signed char() const { return sdfgc_to_int<signed char>(); }
    operator unsigned char() const { return sdfgc_to_int<unsigned char>(); }
    operator char() const { return sdfgc_to_int<char>(); }
    operator short() const { return sdfgc_to_int<short>(); }
    operator unsigned short() const { return sdfgc_to_int<unsigned short>(); }
    operator int() const { return sdfgc_to_int<int>(); }
    operator unsigned int() const { return sdfgc_to_int<unsigned int>(); }
    operator long() const { return sdfgc_to_int<long>(); }
    operator unsigned long() const { return sdfgc_to_int<unsigned long>(); }
    operator long long() const { return sdfgc_to_int<long long>(); }
    operator unsigned long long() const { return sdfgc_to_int<unsigned long long>(); }
    operator bool() const { return (__x & 0x7fff) != 0; }
    __half &operator=(const __half_raw &r) { __x = r.x; return *this; }
    __half &operator=(float f) { __x = sdfgc_emu_d2h(f); return *this; }
    __half &operator=(double d) { __x = sdfgc_emu_d2h(d); return *this; }
    __half &operator=(short v) { __x = sdfgc_emu_d2h(v); return *this; }
    __half &operator=(unsigned short v) { __x = sdfgc_emu_d2h(v); return *this; }
    __half &operator=(int v) { __x = sdfgc_emu_d2h(v); return *this; }
    __half &operator=(unsigned int v) { __x = sdfgc_emu_d2h(v); return *this; }
    __half &operator=(long long v) { __x = sdfgc_emu_d2h((double)v); return *this; }
    __half &operator=(unsigned long long v) { __x = sdfgc_emu_d2h((double)v); return *this; }
};
typedef __half half;

inline __half __float2half(float f) { return __half(f); }
inline __half __float2half_rn(float f) { return __half(f); }
inline __half __double2half(double d) { return __half(d); }
inline __half __int2half_rn(int i) { return __half(i); }
inline float __half2float(__half h) { return (float)h; }
inline __half __hadd(__half a, __half b) { return __half((float)a + (float)b); }
inline __half __hsub(__half a, __half b) { return __half((float)a - (float)b); }
inline __half __hmul(__half a, __half b) { return __half((float)a * (float)b); }
inline __half __hdiv(__half a, __half b) { return __half((float)a / (float)b); }
inline __half __hfma(__half a, __half b, __half c) { return __half(std::fma((double)a, (double)b, (double)c)); }
inline __half __hneg(__half a) { __half r; r.__x = a.__x ^ 0x8000; return r; }
inline __half __habs(__half a) { __half r; r.__x = a.__x & 0x7fff; return r; }
inline bool __heq(__half a, __half b) { return (float)a == (float)b; }
// __hne is ordered (false for a NaN), __hneu unordered; operator!= is __hneu.
inline bool __hne(__half a, __half b) { return (float)a < (float)b || (float)a > (float)b; }
inline bool __hneu(__half a, __half b) { return (float)a != (float)b; }
inline bool __hlt(__half a, __half b) { return (float)a < (float)b; }
inline bool __hle(__half a, __half b) { return (float)a <= (float)b; }
inline bool __hgt(__half a, __half b) { return (float)a > (float)b; }
inline bool __hge(__half a, __half b) { return (float)a >= (float)b; }
inline bool __hisnan(__half a) { return (a.__x & 0x7fff) > 0x7c00; }
inline bool __hisinf(__half a) { return (a.__x & 0x7fff) == 0x7c00; }
inline __half __hmax(__half a, __half b) { return __hisnan(a) ? b : __hisnan(b) ? a : __hgt(a, b) ? a : b; }
inline __half __hmin(__half a, __half b) { return __hisnan(a) ? b : __hisnan(b) ? a : __hlt(a, b) ? a : b; }
inline __half hsqrt(__half a) { return __half(std::sqrt((float)a)); }
inline __half hexp(__half a) { return __half(std::exp((float)a)); }
inline __half hlog(__half a) { return __half(std::log((float)a)); }

inline __half operator+(const __half &a, const __half &b) { return __hadd(a, b); }
inline __half operator-(const __half &a, const __half &b) { return __hsub(a, b); }
inline __half operator*(const __half &a, const __half &b) { return __hmul(a, b); }
inline __half operator/(const __half &a, const __half &b) { return __hdiv(a, b); }
inline __half &operator+=(__half &a, const __half &b) { return a = __hadd(a, b); }
inline __half &operator-=(__half &a, const __half &b) { return a = __hsub(a, b); }
inline __half &operator*=(__half &a, const __half &b) { return a = __hmul(a, b); }
inline __half &operator/=(__half &a, const __half &b) { return a = __hdiv(a, b); }
inline __half operator+(const __half &a) { return a; }
inline __half operator-(const __half &a) { return __hneg(a); }
inline bool operator==(const __half &a, const __half &b) { return __heq(a, b); }
inline bool operator!=(const __half &a, const __half &b) { return __hneu(a, b); }
inline bool operator<(const __half &a, const __half &b) { return __hlt(a, b); }
inline bool operator<=(const __half &a, const __half &b) { return __hle(a, b); }
inline bool operator>(const __half &a, const __half &b) { return __hgt(a, b); }
inline bool operator>=(const __half &a, const __half &b) { return __hge(a, b); }

struct __half2_raw {
    unsigned short x, y;
};

struct __half2 {
    __half x, y;
    __half2() = default;
    __half2(const __half &a, const __half &b) : x(a), y(b) {}
    __half2(const __half2_raw &r) : x(__half_raw{r.x}), y(__half_raw{r.y}) {}
    operator __half2_raw() const { return __half2_raw{x.__x, y.__x}; }
};
typedef __half2 half2;

inline __half2 make_half2(__half x, __half y) { return __half2(x, y); }
inline __half2 __halves2half2(__half a, __half b) { return __half2(a, b); }
inline __half2 __half2half2(__half a) { return __half2(a, a); }
inline __half2 __float2half2_rn(float f) { return __half2half2(__half(f)); }
inline __half2 __floats2half2_rn(float a, float b) { return __half2(__half(a), __half(b)); }
inline __half __low2half(__half2 a) { return a.x; }
inline __half __high2half(__half2 a) { return a.y; }
inline float __low2float(__half2 a) { return (float)a.x; }
inline float __high2float(__half2 a) { return (float)a.y; }
inline __half2 __lows2half2(__half2 a, __half2 b) { return __half2(a.x, b.x); }
inline __half2 __highs2half2(__half2 a, __half2 b) { return __half2(a.y, b.y); }
inline __half2 __lowhigh2highlow(__half2 a) { return __half2(a.y, a.x); }
inline __half2 __hadd2(__half2 a, __half2 b) { return __half2(__hadd(a.x, b.x), __hadd(a.y, b.y)); }
inline __half2 __hsub2(__half2 a, __half2 b) { return __half2(__hsub(a.x, b.x), __hsub(a.y, b.y)); }
inline __half2 __hmul2(__half2 a, __half2 b) { return __half2(__hmul(a.x, b.x), __hmul(a.y, b.y)); }
inline __half2 __h2div(__half2 a, __half2 b) { return __half2(__hdiv(a.x, b.x), __hdiv(a.y, b.y)); }
inline __half2 __hfma2(__half2 a, __half2 b, __half2 c) {
    return __half2(__hfma(a.x, b.x, c.x), __hfma(a.y, b.y, c.y));
}
inline __half2 __hneg2(__half2 a) { return __half2(__hneg(a.x), __hneg(a.y)); }
inline __half2 __habs2(__half2 a) { return __half2(__habs(a.x), __habs(a.y)); }
inline __half2 __hmax2(__half2 a, __half2 b) { return __half2(__hmax(a.x, b.x), __hmax(a.y, b.y)); }
inline __half2 __hmin2(__half2 a, __half2 b) { return __half2(__hmin(a.x, b.x), __hmin(a.y, b.y)); }
inline __half2 h2sqrt(__half2 a) { return __half2(hsqrt(a.x), hsqrt(a.y)); }
inline __half2 h2exp(__half2 a) { return __half2(hexp(a.x), hexp(a.y)); }
inline __half2 h2log(__half2 a) { return __half2(hlog(a.x), hlog(a.y)); }
inline bool __hbeq2(__half2 a, __half2 b) { return __heq(a.x, b.x) && __heq(a.y, b.y); }
inline bool __hbne2(__half2 a, __half2 b) { return __hne(a.x, b.x) && __hne(a.y, b.y); }
inline bool __hbneu2(__half2 a, __half2 b) { return __hneu(a.x, b.x) && __hneu(a.y, b.y); }

inline __half2 operator+(const __half2 &a, const __half2 &b) { return __hadd2(a, b); }
inline __half2 operator-(const __half2 &a, const __half2 &b) { return __hsub2(a, b); }
inline __half2 operator*(const __half2 &a, const __half2 &b) { return __hmul2(a, b); }
inline __half2 operator/(const __half2 &a, const __half2 &b) { return __h2div(a, b); }
inline __half2 &operator+=(__half2 &a, const __half2 &b) { return a = __hadd2(a, b); }
inline __half2 &operator-=(__half2 &a, const __half2 &b) { return a = __hsub2(a, b); }
inline __half2 &operator*=(__half2 &a, const __half2 &b) { return a = __hmul2(a, b); }
inline __half2 &operator/=(__half2 &a, const __half2 &b) { return a = __h2div(a, b); }
inline __half2 operator+(const __half2 &a) { return a; }
inline __half2 operator-(const __half2 &a) { return __hneg2(a); }
inline bool operator==(const __half2 &a, const __half2 &b) { return __hbeq2(a, b); }
inline bool operator!=(const __half2 &a, const __half2 &b) { return __hbneu2(a, b); }
