// GEMM operand packing with AVX2 (compiled with the ISA's flags; see CMakeLists.txt and src/cpu/gemm/pack_f32.h).
#if defined(__AVX2__)
#include <immintrin.h>

#include <algorithm>
#include <cstdint>

#include "cpu/gemm/pack_f32.h"

namespace lockstep::cpu {

namespace {
#include "cpu/simd_avx2.inc"
}  // namespace

void pack_rows_along_k_f32_avx2(const float* src, int64_t row_stride, int64_t count, int64_t K, int width,
                                float* dst) {
  constexpr int kL = Simd::kLanes;
  // Rows in groups of 8: each group's block of 8 k is transposed so that one store writes one k's 8 rows.
  for (int i0 = 0; i0 < width; i0 += kL) {
    const int lanes = std::min(kL, width - i0);
    const int64_t rows = std::clamp<int64_t>(count - i0, 0, kL);
    const float* s = src + i0 * row_stride;
    int64_t k0 = 0;
    for (; k0 + kL <= K; k0 += kL) {
      Simd::V r[kL];
      Simd::load_transposed(s + k0, row_stride, rows, r);
      for (int j = 0; j < kL; ++j) Simd::store(dst + (k0 + j) * width + i0, r[j], lanes);
    }
    for (; k0 < K; ++k0)
      for (int i = 0; i < lanes; ++i) dst[k0 * width + i0 + i] = i < rows ? s[i * row_stride + k0] : 0.0f;
  }
}

}  // namespace lockstep::cpu
#endif
