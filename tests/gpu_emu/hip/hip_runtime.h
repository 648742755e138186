#include "../gpu_emu.h"
