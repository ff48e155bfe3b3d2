// The transposition's 32-bit tiles with AVX2 (compiled with the ISA's flags; see CMakeLists.txt and
// src/cpu/tensor/transpose.h).
#if defined(__AVX2__)
#include <immintrin.h>

#include <cstdint>

#include "cpu/tensor/transpose.h"

namespace lockstep::cpu {

namespace {
#include "cpu/simd_avx2.inc"
}  // namespace

// Contract: exact copy; see docs/arithmetic.md#strided-copy.
void transpose_tile_b32_avx2(const uint32_t* src, int64_t src_row, uint32_t* dst, int64_t dst_row, int64_t rows,
                             int64_t cols) {
  constexpr int kL = Simd::kLanes;
  const int64_t full_rows = rows / kL * kL, full_cols = cols / kL * kL;
  for (int64_t i = 0; i < full_rows; i += kL)
    for (int64_t j = 0; j < full_cols; j += kL) {
      // Float loads and stores only move the bits (no arithmetic), so any 32-bit word passes unchanged.
      Simd::V r[kL];
      Simd::load_transposed(reinterpret_cast<const float*>(src + i + j * src_row), src_row, kL, r);
      for (int a = 0; a < kL; ++a) Simd::store(reinterpret_cast<float*>(dst + (i + a) * dst_row + j), r[a], kL);
    }
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = i < full_rows ? full_cols : 0; j < cols; ++j) dst[i * dst_row + j] = src[i + j * src_row];
}

}  // namespace lockstep::cpu
#endif
