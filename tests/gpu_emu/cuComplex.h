// Emulated cuComplex.h (tests only): CUDA's complex element types, laid out
// as std::complex (real, imaginary), and the arithmetic type the emulated
// libraries compute them in.
#pragma once
#include <complex>
#include "gpu_emu.h"

struct cuComplex { float x, y; };
struct cuDoubleComplex { double x, y; };
typedef cuComplex cuFloatComplex;
inline cuComplex make_cuComplex(float r, float i) { return {r, i}; }
inline cuFloatComplex make_cuFloatComplex(float r, float i) { return {r, i}; }
inline cuDoubleComplex make_cuDoubleComplex(double r, double i) { return {r, i}; }
// The arithmetic type of a library element type.
template <typename T> struct SdfgcEmuMath { typedef T type; };
template <> struct SdfgcEmuMath<cuComplex> { typedef std::complex<float> type; };
template <> struct SdfgcEmuMath<cuDoubleComplex> { typedef std::complex<double> type; };
template <typename T> inline T sdfgc_emu_conj(T x) { return x; }
template <typename T> inline std::complex<T> sdfgc_emu_conj(std::complex<T> x) { return std::conj(x); }
