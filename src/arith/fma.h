// fma_f32 (the contract's one fused multiply-add) is defined in math.h; this name is kept for kernel includes.
#pragma once
#include "arith/math.h"
