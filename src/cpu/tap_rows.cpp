#include "cpu/tap_rows.h"

#include <algorithm>
#include <cstring>

namespace lockstep::cpu {

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
      if (s == 1) std::memcpy(d + q_begin, src + q_begin - cols.pad, static_cast<size_t>(q_end - q_begin) * sizeof(float));
      else
        for (int64_t q = q_begin; q < q_end; ++q) d[q] = src[q * s + f - cols.pad];
      std::fill(d + q_end, d + phase_len, fill);
    }
  }
}

}  // namespace lockstep::cpu
