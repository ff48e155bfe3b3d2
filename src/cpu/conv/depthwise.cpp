// Depthwise Conv on the CPU: geometry, packing, threading and the per-ISA choice of the plane kernel. Each
// (image, input channel) packs its input plane once into stride-phase planes (padding taps read +0) and computes
// its channel-multiplier output planes from it on the grid of depthwise.h.
#include "cpu/conv/depthwise.h"

#include <algorithm>
#include <vector>

#include "arith/dot.h"
#include "cpu/isa.h"
#include "ops/conv.h"
#include "runtime/thread_pool.h"

namespace lockstep::cpu {

static_assert(kTapChunk == arith::kDotChunk, "the depthwise chain must chunk like dot_chunked_f32");

namespace {

/// One ISA's kernels: the plane kernel and the row copy that packs phase planes and unpacks the grid.
struct DepthwiseKernels {
  void (*plane)(const DepthwisePlane&);
  CopyRowsFn copy_rows;
};

DepthwiseKernels kernels_for(CpuIsa isa) {
#if defined(__x86_64__) || defined(__i386__)
  if (isa == CpuIsa::Avx512) return {depthwise_plane_f32_avx512, copy_rows_f32_avx512};
  if (isa == CpuIsa::Avx2) return {depthwise_plane_f32_avx2, copy_rows_f32_avx2};
#endif
  return {depthwise_plane_f32_scalar, copy_rows_f32_scalar};
}

int64_t round_up(int64_t n, int64_t m) { return (n + m - 1) / m * m; }

/// One spatial axis of the phase planes: output o, tap r reads padded position o*stride + r*dil, which is index
/// o + (r*dil) / stride of phase (r*dil) % stride; phase f, index i holds input position i*stride + f - pad.
struct PhaseAxis {
  int64_t in, out, stride, pad, len;  // len: indices per phase, out + ((kernel-1)*dil) / stride
  PhaseAxis(const ConvGeom& g, int a)
      : in(g.in[a]), out(g.out[a]), stride(g.stride[a]), pad(g.pad[a]),
        len(g.out[a] + (g.kernel[a] - 1) * g.dilation[a] / g.stride[a]) {}
  /// The indices of phase f whose input position lies inside [0, in): [begin, end).
  int64_t begin(int64_t f) const { return std::clamp<int64_t>(pad - f <= 0 ? 0 : (pad - f + stride - 1) / stride, 0, len); }
  int64_t end(int64_t f) const { return std::clamp<int64_t>((in + pad - f + stride - 1) / stride, begin(f), len); }
};

/// An input plane as stride_h x stride_w phase planes of rows.len x cols.len floats (+0 outside the input), each
/// followed by enough +0 for a grid block read from any grid pixel (depthwise.h): grid pixel v = oh*pitch + ow
/// and tap offset (kh*dil_h / s_h) * pitch + kw*dil_w / s_w stay below rows.len*pitch + pitch - out_w + kGridBlock.
class PhasePlanes {
 public:
  explicit PhasePlanes(const ConvGeom& g) : rows_(g, 1), cols_(g, 2) {
    plane_len_ = round_up(rows_.len * cols_.len + cols_.len + kGridBlock, kGridBlock);
    data_.assign(static_cast<size_t>(rows_.stride * cols_.stride * plane_len_), 0.0f);
  }
  int64_t pitch() const { return cols_.len; }

  /// Where tap (kh, kw) reads for grid pixel 0.
  const float* tap(const ConvGeom& g, int64_t kh, int64_t kw) const {
    const int64_t uh = kh * g.dilation[1], uw = kw * g.dilation[2];
    const int64_t plane = uh % rows_.stride * cols_.stride + uw % cols_.stride;
    return data_.data() + plane * plane_len_ + uh / rows_.stride * cols_.len + uw / cols_.stride;
  }

  /// Packs the input plane x (in_h x in_w). Only the inside of each phase is rewritten: the +0 around it stays.
  void pack(const float* x, const DepthwiseKernels& ker) {
    for (int64_t fh = 0; fh < rows_.stride; ++fh)
      for (int64_t fw = 0; fw < cols_.stride; ++fw) {
        float* plane = data_.data() + (fh * cols_.stride + fw) * plane_len_;
        const int64_t r0 = rows_.begin(fh), r1 = rows_.end(fh), c0 = cols_.begin(fw), c1 = cols_.end(fw);
        const float* src = x + (r0 * rows_.stride + fh - rows_.pad) * cols_.in + c0 * cols_.stride + fw - cols_.pad;
        ker.copy_rows(src, rows_.stride * cols_.in, cols_.stride, plane + r0 * cols_.len + c0, cols_.len, r1 - r0,
                      c1 - c0);
      }
  }

 private:
  PhaseAxis rows_, cols_;
  int64_t plane_len_ = 0;
  std::vector<float> data_;
};

}  // namespace

// Contract: dot_chunked_f32 over the taps (kh, kw) ascending, init = bias; see docs/arithmetic.md#conv.
void depthwise_plane_f32_scalar(const DepthwisePlane& p) {
  for (int64_t v = 0; v < p.pixels; ++v)
    p.out[v] = arith::dot_chunked_f32(
        p.taps, p.init, [&](int64_t t) { return p.tap_src[t][v]; }, [&](int64_t t) { return p.weights[t]; });
}

void copy_rows_f32_scalar(const float* src, int64_t src_pitch, int64_t step, float* dst, int64_t dst_pitch,
                          int64_t rows, int64_t n) {
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < n; ++j) dst[r * dst_pitch + j] = src[r * src_pitch + j * step];
}

bool is_depthwise(const ConvGeom& g) {
  // A 2-D (or 1-D) conv: the leading padded dim is trivial. Large channel multipliers stay on the GEMM,
  // which shares one tap panel among the output channels.
  const bool planar = g.in[0] == 1 && g.kernel[0] == 1 && g.out[0] == 1 && g.pad[0] == 0;
  return planar && g.cin_g == 1 && g.group == g.c_in && g.cout_g <= 8;
}

// Contract: dot_chunked_f32 over the taps (kh, kw) ascending, init = bias; see docs/arithmetic.md#conv.
void depthwise_conv_f32(KernelContext& ctx, const ConvGeom& g, float* y) {
  const float* x = ctx.input(0).data<float>();
  const float* w = ctx.input(1).data<float>();
  const float* bias = g.has_bias ? ctx.input(2).data<float>() : nullptr;
  const DepthwiseKernels ker = kernels_for(cpu_isa());
  const int64_t taps = g.taps(), out_h = g.out[1], out_w = g.out[2];
  // Item = (image, input channel) = one input plane; c_in == group, so item is also the plane's index in x.
  ctx.pool->parallel_for(g.batch * g.group, [&](int64_t i0, int64_t i1) {
    PhasePlanes planes(g);
    const int64_t pitch = planes.pitch(), pixels = out_h * pitch;
    std::vector<const float*> tap_src;
    for (int64_t kh = 0; kh < g.kernel[1]; ++kh)
      for (int64_t kw = 0; kw < g.kernel[2]; ++kw) tap_src.push_back(planes.tap(g, kh, kw));
    std::vector<float> grid(static_cast<size_t>(round_up(pixels, kGridBlock)));
    for (int64_t item = i0; item < i1; ++item) {
      planes.pack(x + item * g.in_pixels(), ker);
      for (int64_t m = 0; m < g.cout_g; ++m) {
        const int64_t oc = item % g.group * g.cout_g + m;
        ker.plane({tap_src.data(), w + oc * taps, taps, bias ? bias[oc] : 0.0f, pixels, grid.data()});
        ker.copy_rows(grid.data(), pitch, 1, y + (item * g.cout_g + m) * out_h * out_w, out_w, out_h, out_w);
      }
    }
  }, 1);
}

}  // namespace lockstep::cpu
