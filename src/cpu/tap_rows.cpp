#include "cpu/tap_rows.h"

#include <immintrin.h>

#include <algorithm>
#include <cstring>

#include "cpu/isa.h"

namespace lockstep::cpu {

namespace {

/// d[j] = src[2j] for j < n, sixteen at a time (even lanes of two loads). The loads are masked to src[2j .. 2(n-1)],
/// so they never read past the last element the copy needs.
__attribute__((target("avx512f"))) void copy_stride2_avx512(const float* src, int64_t n, float* d) {
  const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  auto first = [](int64_t lanes) { return static_cast<__mmask16>((1u << lanes) - 1u); };  // lanes <= 16
  for (int64_t j = 0; j < n; j += 16) {
    const int64_t m = std::min<int64_t>(16, n - j), need = 2 * m - 1;
    const __m512 lo = _mm512_maskz_loadu_ps(first(std::min<int64_t>(need, 16)), src + 2 * j);
    const __m512 hi = _mm512_maskz_loadu_ps(first(std::max<int64_t>(need - 16, 0)), src + 2 * j + 16);
    _mm512_mask_storeu_ps(d + j, first(m), _mm512_permutex2var_ps(lo, even, hi));
  }
}

/// d[j] = src[2j] for j < n, eight at a time: the even lanes of src[2j .. 2j+7] and src[2j+7 .. 2j+14] (two full
/// loads that never read past the last element the copy needs), the last n % 8 one by one.
__attribute__((target("avx2"))) void copy_stride2_avx2(const float* src, int64_t n, float* d) {
  int64_t j = 0;
  for (; j + 8 <= n; j += 8) {
    const __m256 lo = _mm256_loadu_ps(src + 2 * j), hi = _mm256_loadu_ps(src + 2 * j + 7);
    const __m256 pairs = _mm256_shuffle_ps(lo, hi, _MM_SHUFFLE(3, 1, 2, 0));
    _mm256_storeu_ps(d + j, _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(pairs), _MM_SHUFFLE(3, 1, 2, 0))));
  }
  for (; j < n; ++j) d[j] = src[2 * j];
}

}  // namespace

void copy_strided_f32(const float* src, int64_t n, int64_t stride, float* d) {
  if (n <= 0) return;
  if (stride == 1) std::memcpy(d, src, static_cast<size_t>(n) * sizeof(float));
  else if (stride == 2 && cpu_isa() == CpuIsa::Avx512) copy_stride2_avx512(src, n, d);
  else if (stride == 2 && cpu_isa() == CpuIsa::Avx2) copy_stride2_avx2(src, n, d);
  else
    for (int64_t j = 0; j < n; ++j) d[j] = src[j * stride];
}

void TapRows::pack(const float* plane, int64_t rows, const TapColumns& cols, float fill) {
  rows_ = rows;
  const int64_t s = cols.stride, phase_len = cols.out_w + kLanePad + (cols.kernel_w - 1) * cols.dilation / s;
  row_len_ = s * phase_len;
  column_offsets_.resize(static_cast<size_t>(cols.kernel_w));
  for (int64_t r = 0; r < cols.kernel_w; ++r)
    column_offsets_[r] = r * cols.dilation % s * phase_len + r * cols.dilation / s;
  data_.resize(static_cast<size_t>((rows + 1) * row_len_));
  std::fill(data_.begin() + rows * row_len_, data_.end(), fill);
  for (int64_t ih = 0; ih < rows; ++ih) {
    const float* src = plane + ih * cols.in_w;
    float* dst = data_.data() + ih * row_len_;
    // Phase f, index q holds input column q*s + f - pad.
    for (int64_t f = 0; f < s; ++f) {
      float* d = dst + f * phase_len;
      // The q whose column lies inside [0, in_w): q_begin <= q < q_end.
      const int64_t first = cols.pad - f;
      const int64_t q_begin = std::clamp<int64_t>(first <= 0 ? 0 : (first + s - 1) / s, 0, phase_len);
      const int64_t q_end = std::clamp<int64_t>((cols.in_w + cols.pad - f + s - 1) / s, q_begin, phase_len);
      std::fill(d, d + q_begin, fill);
      copy_strided_f32(src + q_begin * s + f - cols.pad, q_end - q_begin, s, d + q_begin);
      std::fill(d + q_end, d + phase_len, fill);
    }
  }
}

}  // namespace lockstep::cpu
