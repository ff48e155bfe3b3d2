// Stride-phase planes of an input plane, shared by the depthwise kernels and Conv's grid GEMM. The plane is split
// into stride_h x stride_w phases (+0 in the padding) whose rows share one pitch, so that an output plane becomes a
// flat run of "grid pixels" v = oh * pitch + ow: for every kernel tap, the inputs of consecutive grid pixels are
// consecutive floats. Packing only copies values (and writes +0 for padding taps, real +0 terms of the chain).
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <vector>

#include "cpu/conv/depthwise.h"
#include "cpu/conv/plane_border.h"
#include "cpu/isa.h"
#include "ops/conv.h"
#include "runtime/kernel.h"

namespace lockstep::cpu {

/// One spatial axis of the phase planes: output o, tap r reads padded position o*stride + r*dil, which is index
/// o + (r*dil) / stride of phase (r*dil) % stride; phase f, index i holds input position i*stride + f - pad.
struct PhaseAxis {
  int64_t in, out, stride, pad, kernel, dil, len;  // len: indices per phase, out + ((kernel-1)*dil) / stride
  PhaseAxis(const ConvGeom& g, int a)
      : in(g.in[a]), out(g.out[a]), stride(g.stride[a]), pad(g.pad[a]), kernel(g.kernel[a]), dil(g.dilation[a]),
        len(g.out[a] + (g.kernel[a] - 1) * g.dilation[a] / g.stride[a]) {}
  /// Whether a tap reads phase f (a 1x1 stride-2 conv reads one phase of four).
  bool used(int64_t f) const {
    for (int64_t r = 0; r < kernel; ++r)
      if (r * dil % stride == f) return true;
    return false;
  }
  /// The indices of phase f whose input position lies inside [0, in): [begin, end).
  int64_t begin(int64_t f) const { return std::clamp<int64_t>(pad - f <= 0 ? 0 : (pad - f + stride - 1) / stride, 0, len); }
  int64_t end(int64_t f) const { return std::clamp<int64_t>((in + pad - f + stride - 1) / stride, begin(f), len); }
};

/// `count` input planes (2-D: axes 1 and 2 of the geometry), each as (up to) stride_h x stride_w phase planes of
/// rows.len x cols.len floats (+0 outside the input), each phase followed by enough +0 that a block of `block` grid
/// pixels can be read from any grid pixel below pixels() rounded up to `block`: grid pixel v = oh*pitch + ow and
/// tap offset (kh*dil_h / s_h) * pitch + kw*dil_w / s_w stay below rows.len*pitch + pitch - out_w + block. All of
/// them lie in one buffer from the allocator (uninitialized: pack writes every float of a plane it packs), so
/// that a Conv over many channels neither zero-fills nor allocates per channel before its threads start.
class PhasePlanes {
 public:
  PhasePlanes(const ConvGeom& g, int64_t block, int64_t count, Allocator* scratch) : rows_(g, 1), cols_(g, 2) {
    phase_len_ = (rows_.len * cols_.len + cols_.len + block + block - 1) / block * block;
    for (int64_t fh = 0; fh < rows_.stride; ++fh)
      for (int64_t fw = 0; fw < cols_.stride; ++fw)
        slot_.push_back(rows_.used(fh) && cols_.used(fw) ? phases_++ : -1);
    buffer_ = scratch->allocate(static_cast<size_t>(count * phases_ * phase_len_) * sizeof(float));
    framed_.assign(static_cast<size_t>(count), 0);
  }
  int64_t pitch() const { return cols_.len; }
  /// The grid pixels of one output plane: out_h * pitch.
  int64_t pixels() const { return rows_.out * cols_.len; }

  /// Where tap (kh, kw) of plane c reads for grid pixel 0.
  const float* tap(const ConvGeom& g, int64_t kh, int64_t kw, int64_t c = 0) const {
    const int64_t uh = kh * g.dilation[1], uw = kw * g.dilation[2];
    const int64_t phase = slot_[uh % rows_.stride * cols_.stride + uw % cols_.stride];
    return data() + (c * phases_ + phase) * phase_len_ + uh / rows_.stride * cols_.len + uw / cols_.stride;
  }

  /// Packs the input plane x (in_h x in_w) into plane c's phases that taps read: the inside copied, +0 around it
  /// (written by the plane's first pack only: later ones rewrite the inside alone). Different threads may pack
  /// different planes at once.
  void pack(int64_t c, const float* x, CopyRowsFn copy_rows) {
    const bool framed = framed_[c];
    framed_[c] = 1;
    for (int64_t fh = 0; fh < rows_.stride; ++fh)
      for (int64_t fw = 0; fw < cols_.stride; ++fw) {
        const int64_t slot = slot_[fh * cols_.stride + fw];
        if (slot < 0) continue;
        float* phase = data() + (c * phases_ + slot) * phase_len_;
        const int64_t r0 = rows_.begin(fh), r1 = rows_.end(fh), c0 = cols_.begin(fw), c1 = cols_.end(fw);
        if (!framed) zero_outside(phase, phase_len_, cols_.len, r0, r1, c0, c1);
        const float* src = x + (r0 * rows_.stride + fh - rows_.pad) * cols_.in + c0 * cols_.stride + fw - cols_.pad;
        copy_rows(src, rows_.stride * cols_.in, cols_.stride, phase + r0 * cols_.len + c0, cols_.len, r1 - r0,
                  c1 - c0);
      }
  }

 private:
  float* data() const { return static_cast<float*>(buffer_->data); }
  PhaseAxis rows_, cols_;
  int64_t phase_len_ = 0, phases_ = 0;  // floats a phase takes; phases a plane has (those some tap reads)
  std::vector<int64_t> slot_;  // phase fh * stride_w + fw -> its index among the plane's phases, or -1 when no tap reads it
  std::shared_ptr<Buffer> buffer_;
  std::vector<uint8_t> framed_;  // per plane: its +0 around the inside is written (bytes: threads set their own)
};

/// Whether the conv is 2-D (or 1-D): its leading padded axis is trivial, so phase planes cover it.
inline bool is_planar(const ConvGeom& g) {
  return g.in[0] == 1 && g.kernel[0] == 1 && g.out[0] == 1 && g.pad[0] == 0;
}

}  // namespace lockstep::cpu
