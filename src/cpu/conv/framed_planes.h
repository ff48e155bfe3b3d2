// Input planes copied into frames of +0, shared by Conv's transposed product and the stride-2 depthwise kernels.
// The frame holds +0 on every side the taps reach, so kernels read every tap, padding taps included, without a
// bounds check; +0 is the padding taps' value, and each padding tap stays a real +0 term of the chain
// (docs/arithmetic.md#conv). Packing only copies values. Unlike stride-phase planes (phase_planes.h), each input
// row is one plain copy: a kernel that reads strided taps picks them out itself.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <vector>

#include "cpu/conv/plane_border.h"
#include "ops/conv.h"
#include "runtime/kernel.h"

namespace lockstep::cpu {

/// `count` input planes (2-D: axes 1 and 2 of the geometry), each in its own frame of rows() x pitch() floats, +0
/// around the input: tap (kh, kw) of output pixel (oh, ow) reads frame row oh*s_h + kh*d_h, column ow*s_w + kw*d_w.
/// The frames lie one after another in one scratch buffer from the allocator, uninitialized until packed.
class FramedPlanes {
 public:
  /// Frames for `count` planes. The pitch is the span of columns the taps reach, or min_pitch when that is more (a
  /// kernel that reads whole vectors past the last output column).
  FramedPlanes(const ConvGeom& g, int64_t count, int64_t min_pitch, Allocator* scratch)
      : in_h_(g.in[1]), in_w_(g.in[2]), top_(g.pad[1]), left_(g.pad[2]),
        rows_((g.out[1] - 1) * g.stride[1] + (g.kernel[1] - 1) * g.dilation[1] + 1),
        pitch_(std::max(min_pitch, (g.out[2] - 1) * g.stride[2] + (g.kernel[2] - 1) * g.dilation[2] + 1)),
        buffer_(scratch->allocate(static_cast<size_t>(count * rows_ * pitch_) * sizeof(float))),
        framed_(static_cast<size_t>(count), 0) {}
  int64_t pitch() const { return pitch_; }
  /// Frame c: row 0 is the first row a tap reaches (pad_h above the input).
  const float* plane(int64_t c) const { return static_cast<const float*>(buffer_->data) + c * rows_ * pitch_; }

  /// Copies the input plane x (in_h x in_w) inside frame c. The frame's +0 border is written by its first pack
  /// only, so that a frame can be packed again with the next plane. Different threads may pack different frames.
  void pack(int64_t c, const float* x) {
    float* frame = static_cast<float*>(buffer_->data) + c * rows_ * pitch_;
    const int64_t h = std::clamp<int64_t>(rows_ - top_, 0, in_h_), w = std::clamp<int64_t>(pitch_ - left_, 0, in_w_);
    if (!framed_[c]) zero_outside(frame, rows_ * pitch_, pitch_, top_, top_ + h, left_, left_ + w);
    framed_[c] = 1;
    for (int64_t i = 0; i < h; ++i) std::copy_n(x + i * in_w_, w, frame + (top_ + i) * pitch_ + left_);
  }

 private:
  int64_t in_h_, in_w_, top_, left_, rows_, pitch_;
  std::shared_ptr<Buffer> buffer_;
  std::vector<uint8_t> framed_;  // per frame: its +0 border is written (bytes: threads set their own)
};

}  // namespace lockstep::cpu
