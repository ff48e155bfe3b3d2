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
  // Phase f, index q holds input column q*s + f - pad: the same columns [q_begin, q_end) of every row come from
  // the input, so each phase is one copy over all rows (a call per row and phase cost more than the copying).
  const CopyRowsFn copy_rows = copy_rows_for(cpu_isa());
  for (int64_t f = 0; f < s; ++f) {
    const int64_t first = cols.pad - f;
    const int64_t q_begin = std::clamp<int64_t>(first <= 0 ? 0 : (first + s - 1) / s, 0, phase_len);
    const int64_t q_end = std::clamp<int64_t>((cols.in_w + cols.pad - f + s - 1) / s, q_begin, phase_len);
    float* d = data_.data() + f * phase_len;
    for (int64_t ih = 0; ih < rows; ++ih) {
      std::fill(d + ih * row_len_, d + ih * row_len_ + q_begin, fill);
      std::fill(d + ih * row_len_ + q_end, d + ih * row_len_ + phase_len, fill);
    }
    if (q_end > q_begin)
      copy_rows(plane + q_begin * s + f - cols.pad, cols.in_w, s, d + q_begin, row_len_, rows, q_end - q_begin);
  }
}

}  // namespace lockstep::cpu
