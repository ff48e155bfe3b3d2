// The GEMM core's epilogue tiles for AVX-512 (compiled with the ISA's flags; see CMakeLists.txt and
// src/cpu/gemm/epilogue_f32.h).
#if defined(__AVX512F__)
#include "cpu/lanes_avx512.h"  // first: see there

#include <immintrin.h>

#include <cstdint>

#include "cpu/gemm/epilogue_f32.h"

namespace lockstep::cpu {

namespace {
#include "cpu/simd_avx512.inc"
#include "cpu/gemm/epilogue_f32.inc"
}  // namespace

// Contract: absorbed_ops_f32 per element; see docs/arithmetic.md#graph-rewrites.
template <bool kAddend, bool kAddendFirst, Activation kActivation>
void epilogue_tile_f32_avx512(float* c, int64_t ldc, int64_t rows, int64_t cols, const float* addend, int64_t lda,
                              int64_t step, const ActivationConstants& k) {
  epilogue_tile<kAddend, kAddendFirst, kActivation>(c, ldc, rows, cols, addend, lda, step, k);
}

#define LOCKSTEP_INSTANTIATE(kAddend, kAddendFirst, kActivation)                                      \
  template void epilogue_tile_f32_avx512<kAddend, kAddendFirst, kActivation>(                         \
      float*, int64_t, int64_t, int64_t, const float*, int64_t, int64_t, const ActivationConstants&);
LOCKSTEP_EPILOGUE_TILES(LOCKSTEP_INSTANTIATE)
#undef LOCKSTEP_INSTANTIATE

}  // namespace lockstep::cpu
#endif
