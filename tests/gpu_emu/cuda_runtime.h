#include "gpu_emu.h"
#ifndef SDFGC_EMU_WARP_SIZE
#define SDFGC_EMU_WARP_SIZE 32
static constexpr int warpSize = 32;
#endif
