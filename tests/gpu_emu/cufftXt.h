// Emulated cufftXt.h (tests only): cufftXtExec, the type-generic execution
// of a plan (see cufft.h): the data types are the plan's.
#pragma once
#include "cufft.h"

inline cufftResult cufftXtExec(cufftHandle h, void *in, void *out, int direction) {
    SdfgcEmuFftPlan *p = sdfgc_emu_fft_plan(h);
    if (!p || !p->made) return sdfgc_emu_cufft_fail("cufftXtExec: not a plan that was made", CUFFT_INVALID_PLAN);
    switch (p->type) {
        case CUFFT_C2C: return cufftExecC2C(h, static_cast<cufftComplex *>(in), static_cast<cufftComplex *>(out), direction);
        case CUFFT_Z2Z:
            return cufftExecZ2Z(h, static_cast<cufftDoubleComplex *>(in), static_cast<cufftDoubleComplex *>(out), direction);
        case CUFFT_R2C: return cufftExecR2C(h, static_cast<cufftReal *>(in), static_cast<cufftComplex *>(out));
        case CUFFT_D2Z: return cufftExecD2Z(h, static_cast<cufftDoubleReal *>(in), static_cast<cufftDoubleComplex *>(out));
        case CUFFT_C2R: return cufftExecC2R(h, static_cast<cufftComplex *>(in), static_cast<cufftReal *>(out));
        case CUFFT_Z2D: return cufftExecZ2D(h, static_cast<cufftDoubleComplex *>(in), static_cast<cufftDoubleReal *>(out));
    }
    return sdfgc_emu_cufft_fail("cufftXtExec: unknown plan type", CUFFT_INVALID_TYPE);
}
