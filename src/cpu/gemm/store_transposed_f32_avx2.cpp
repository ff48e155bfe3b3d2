// The transposed tile store with AVX2 (compiled with the ISA's flags; see CMakeLists.txt and
// src/cpu/gemm/store_transposed_f32.h).
#if defined(__AVX2__)
#include "cpu/lanes_avx2.h"  // first: see there

#include <immintrin.h>

#include <algorithm>
#include <cstdint>

#include "cpu/gemm/store_transposed_f32.h"

namespace lockstep::cpu {

namespace {
#include "cpu/simd_avx2.inc"
}  // namespace

// Contract: absorbed_ops_f32 per element; see docs/arithmetic.md#graph-rewrites.
void store_tile_transposed_f32_avx2(const float* tile, int64_t tile_pitch, int rows, int64_t cols, float* dst,
                                    int64_t col_step, const float* addend, bool per_column, bool addend_first,
                                    Activation activation) {
  constexpr int kL = Simd::kLanes;
  with_activation(activation, [&](auto kActivation) {
    for (int64_t j0 = 0; j0 < cols; j0 += kL) {
      Simd::V r[kL];
      Simd::load_transposed(tile + j0, tile_pitch, rows, r);  // r[j] holds column j0 + j: its rows in the lanes
      for (int j = 0; j < kL && j0 + j < cols; ++j) {
        const int64_t at = (j0 + j) * col_step;
        const Simd::V a = !addend      ? Simd::zero()
                          : per_column ? Simd::set1(addend[j0 + j])
                                       : Simd::load_first(addend + at, rows);
        Simd::store(dst + at, absorbed_ops_f32(r[j], addend != nullptr, a, addend_first, kActivation(), {}), rows);
      }
    }
  });
}

}  // namespace lockstep::cpu
#endif
