// MaxPool / AveragePool row kernels for AVX512 (compiled with the ISA's flags; see CMakeLists.txt). Lane j of a
// vector holds one output column and runs that output's canonical sequence; see pool_simd.inc.
#if defined(__AVX512F__)
#include <immintrin.h>

#include <cstdint>

#include "cpu/pool/window_pool.h"

namespace lockstep::cpu {

namespace {
#include "cpu/simd_avx512.inc"
#include "cpu/pool/pool_simd.inc"
}  // namespace

// Contract: MaxPool = MAX(taps) with the sequential rule, row-major kernel order; docs/arithmetic.md#pool.
void max_pool_row_f32_avx512(const float* const* tap_src, int64_t taps, int64_t out_w, float* out) {
  max_pool_row(tap_src, taps, out_w, out);
}

namespace {

/// Input row ih's columns 2ow - 1, 2ow, 2ow + 1 for the 16 outputs from ow0 (-inf outside the row), in tap order.
struct ThreeColumns {
  __m512 left, middle, right;
};
ThreeColumns three_columns(const float* row, int64_t in_w, int64_t ow0) {
  const __m512 ninf = _mm512_set1_ps(-__builtin_huge_valf());
  const int64_t c0 = 2 * ow0;  // columns c0 .. c0 + 31: the even ones are the middle taps, the odd ones the right
  auto load = [&](int64_t c) {
    const int64_t n = in_w - c;
    if (n >= 16) return _mm512_loadu_ps(row + c);
    const __mmask16 inside = static_cast<__mmask16>(n > 0 ? (1u << n) - 1 : 0);
    return _mm512_mask_loadu_ps(ninf, inside, row + c);
  };
  const __m512 lo = load(c0), hi = load(c0 + 16);
  const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  const __m512i odd = _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31);
  const __m512 middle = _mm512_permutex2var_ps(lo, even, hi), right = _mm512_permutex2var_ps(lo, odd, hi);
  // The left taps, columns c0 - 1 .. c0 + 29: the right ones moved up a lane, column c0 - 1 (-inf at the edge) first.
  const float before = c0 > 0 ? row[c0 - 1] : -__builtin_huge_valf();
  const __m512 left = _mm512_castsi512_ps(_mm512_alignr_epi32(_mm512_castps_si512(right),
                                                              _mm512_castps_si512(_mm512_set1_ps(before)), 15));
  return {left, middle, right};
}

}  // namespace

// Contract: MaxPool = MAX(taps) with the sequential rule, row-major kernel order (taps outside the input -inf, which
// never takes); docs/arithmetic.md#pool.
void max_pool_3x3_stride2_plane_f32_avx512(const MaxPool3x3Stride2Plane& p) {
  for (int64_t oh = 0; oh < p.out_h; ++oh)
    for (int64_t ow0 = 0; ow0 < p.out_w; ow0 += Simd::kLanes) {
      Simd::V m = Simd::set1(-__builtin_huge_valf());
      for (int64_t ih = 2 * oh - 1; ih <= 2 * oh + 1; ++ih) {
        if (ih < 0 || ih >= p.in_h) continue;  // -inf taps: the maximum stays
        const ThreeColumns t = three_columns(p.x + ih * p.in_w, p.in_w, ow0);
        m = Simd::max_step(Simd::max_step(Simd::max_step(m, t.left), t.middle), t.right);
      }
      Simd::store(p.y + oh * p.out_w + ow0, m, p.out_w - ow0);
    }
}

// Contract: AveragePool = S(terms) / float(count); docs/arithmetic.md#pool.
void average_pool_row_f32_avx512(const float* const* tap_src, int64_t terms, int64_t ow_begin, int64_t ow_end,
                               float* out) {
  average_pool_row(tap_src, terms, ow_begin, ow_end, out);
}

}  // namespace lockstep::cpu
#endif
