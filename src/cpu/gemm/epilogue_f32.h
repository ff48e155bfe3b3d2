// The GEMM core's epilogue pass on the SIMD ISAs: a fused node's Add and activation (src/ops/epilogue.h) over a block
// of finished outputs, one function per addend kind and activation, compiled with the ISA's flags (CMakeLists.txt)
// from one definition over the ISA's lanes (epilogue_f32.inc). src/cpu/gemm.cpp keeps the tables that pick them.
#pragma once

#include <cstdint>

#include "ops/epilogue.h"

namespace lockstep::cpu {

/// c[i * ldc + j] = absorbed_ops_f32(c[i * ldc + j], kAddend, addend[i * lda + j * step], kAddendFirst, kActivation,
/// k) for i < rows, j < cols (lda = 0: one addend row for all, a per-column addend).
template <bool kAddend, bool kAddendFirst, Activation kActivation>
void epilogue_tile_f32_avx2(float* c, int64_t ldc, int64_t rows, int64_t cols, const float* addend, int64_t lda,
                            int64_t step, const ActivationConstants& k);
template <bool kAddend, bool kAddendFirst, Activation kActivation>
void epilogue_tile_f32_avx512(float* c, int64_t ldc, int64_t rows, int64_t cols, const float* addend, int64_t lda,
                              int64_t step, const ActivationConstants& k);

/// X(kAddend, kAddendFirst, kActivation) for every tile; each ISA file instantiates its tiles for this list.
#define LOCKSTEP_EPILOGUE_TILES_OF(X, kAddend, kAddendFirst) \
  X(kAddend, kAddendFirst, Activation::None)                 \
  X(kAddend, kAddendFirst, Activation::Relu)                 \
  X(kAddend, kAddendFirst, Activation::HardSwish)            \
  X(kAddend, kAddendFirst, Activation::GeluErfChain)         \
  X(kAddend, kAddendFirst, Activation::GeluTanhChain)
#define LOCKSTEP_EPILOGUE_TILES(X)            \
  LOCKSTEP_EPILOGUE_TILES_OF(X, false, false) \
  LOCKSTEP_EPILOGUE_TILES_OF(X, false, true)  \
  LOCKSTEP_EPILOGUE_TILES_OF(X, true, false)  \
  LOCKSTEP_EPILOGUE_TILES_OF(X, true, true)

}  // namespace lockstep::cpu
