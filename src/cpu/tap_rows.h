// One input plane repacked for the windowed kernels that run across the output width (the pools; depthwise Conv
// has its own phase planes, src/cpu/conv/depthwise.cpp): every input row is split into `stride` phases, each a
// zero- (or fill-) padded array, so that for any kernel tap the inputs of consecutive output columns are
// consecutive floats. A SIMD kernel then loads 8 or 16 output columns' tap values with one plain load, whatever
// the stride, dilation or padding; positions outside the input read `fill` (+0 for AveragePool, -inf for
// MaxPool, where -inf never replaces the running max).
#pragma once

#include <cstdint>
#include <vector>

namespace lockstep::cpu {

/// d[j] = src[j * stride] for j < n (one copy for stride 1, the ISA's row copy otherwise: CopyRowsFn of
/// cpu/conv/depthwise.h). Only copies, and reads no element past src[(n-1) * stride].
void copy_strided_f32(const float* src, int64_t n, int64_t stride, float* d);

/// Column geometry of a windowed op along the width: output column o, kernel column r reads input column
/// o*stride - pad + r*dilation.
struct TapColumns {
  int64_t in_w, out_w, kernel_w, stride, dilation, pad;
};

class TapRows {
 public:
  /// Each packed phase is readable for kLanePad floats from any output column below out_w, so a full-width
  /// vector load of a row's last (partial) block stays inside it.
  static constexpr int64_t kLanePad = 16;

  /// Packs `rows` input rows of `plane` (row stride cols.in_w).
  void pack(const float* plane, int64_t rows, const TapColumns& cols, float fill);

  /// Where tap column r of output column 0 lies in a packed row; add the output column for the others.
  int64_t column_offset(int64_t r) const { return column_offsets_[r]; }
  /// Packed input row ih, or a row of `fill` when ih is outside the input.
  const float* row(int64_t ih) const {
    return data_.data() + (ih >= 0 && ih < rows_ ? ih : rows_) * row_len_;
  }

 private:
  int64_t rows_ = 0, row_len_ = 0;
  std::vector<int64_t> column_offsets_;  // per kernel column r: (r*dil) % stride * phase_len + (r*dil) / stride
  std::vector<float> data_;               // rows_ packed rows, then one row of fill
};

}  // namespace lockstep::cpu
