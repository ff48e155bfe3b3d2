// The transposed tile store with AVX2 (compiled with the ISA's flags; see CMakeLists.txt and
// src/cpu/gemm/store_transposed_f32.h).
#if defined(__AVX2__)
#include <immintrin.h>

#include <algorithm>
#include <cstdint>

#include "cpu/gemm/store_transposed_f32.h"

namespace lockstep::cpu {

namespace {
#include "cpu/simd_avx2.inc"
}  // namespace

// Contract: absorbed_ops_f32 per element (one add in the node's operand order, then x < 0 ? +0 : x); see
// docs/arithmetic.md#graph-rewrites.
void store_tile_transposed_f32_avx2(const float* tile, int64_t tile_pitch, int rows, int64_t cols, float* dst,
                                    int64_t col_step, const float* addend, bool per_column, bool addend_first,
                                    bool relu) {
  constexpr int kL = Simd::kLanes;
  for (int64_t j0 = 0; j0 < cols; j0 += kL) {
    Simd::V r[kL];
    Simd::load_transposed(tile + j0, tile_pitch, rows, r);  // r[j] holds column j0 + j: its rows in the lanes
    for (int j = 0; j < kL && j0 + j < cols; ++j) {
      const int64_t at = (j0 + j) * col_step;
      Simd::V v = r[j];
      if (addend) {
        const Simd::V a = per_column ? Simd::set1(addend[j0 + j]) : Simd::load_first(addend + at, rows);
        v = addend_first ? Simd::add(a, v) : Simd::add(v, a);
      }
      if (relu) v = Simd::relu(v);
      Simd::store(dst + at, v, rows);
    }
  }
}

}  // namespace lockstep::cpu
#endif
