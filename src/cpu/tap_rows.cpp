#include "cpu/tap_rows.h"

#include <algorithm>
#include <cstring>

#include "cpu/conv/depthwise.h"
#include "cpu/isa.h"

namespace lockstep::cpu {

void copy_strided_f32(const float* src, int64_t n, int64_t stride, float* d) {
  if (n <= 0) return;
  if (stride == 1) std::memcpy(d, src, static_cast<size_t>(n) * sizeof(float));
  else copy_rows_for(cpu_isa())(src, 0, stride, d, 0, 1, n);
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
