// Depthwise Conv on the CPU: geometry, packing, threading and the per-ISA choice of the plane kernel. Each
// (image, input channel) packs its input plane once (src/cpu/tap_rows.h: padding taps read +0) and computes
// its channel-multiplier output planes from it.
#include "cpu/conv/depthwise.h"

#include <vector>

#include "arith/dot.h"
#include "cpu/isa.h"
#include "cpu/tap_rows.h"
#include "ops/conv.h"
#include "runtime/thread_pool.h"

namespace lockstep::cpu {

static_assert(kTapChunk == arith::kDotChunk, "the depthwise chain must chunk like dot_chunked_f32");

namespace {

using PlaneFn = void (*)(const DepthwisePlane&);

PlaneFn plane_kernel(CpuIsa isa) {
#if defined(__x86_64__) || defined(__i386__)
  if (isa == CpuIsa::Avx512) return depthwise_plane_f32_avx512;
  if (isa == CpuIsa::Avx2) return depthwise_plane_f32_avx2;
#endif
  return depthwise_plane_f32_scalar;
}

/// Points tap_src[oh * taps + (kh, kw)] at the packed inputs of every tap of every output row.
void point_taps(const ConvGeom& g, const TapRows& rows, std::vector<const float*>& tap_src) {
  const int64_t kh_n = g.kernel[1], kw_n = g.kernel[2];
  tap_src.resize(static_cast<size_t>(g.out[1] * kh_n * kw_n));
  const float** dst = tap_src.data();
  for (int64_t oh = 0; oh < g.out[1]; ++oh)
    for (int64_t kh = 0; kh < kh_n; ++kh) {
      const float* row = rows.row(oh * g.stride[1] - g.pad[1] + kh * g.dilation[1]);
      for (int64_t kw = 0; kw < kw_n; ++kw) *dst++ = row + rows.column_offset(kw);
    }
}

}  // namespace

// Contract: dot_chunked_f32 over the taps (kh, kw) ascending, init = bias; see docs/arithmetic.md#conv.
void depthwise_plane_f32_scalar(const DepthwisePlane& p) {
  for (int64_t oh = 0; oh < p.out_h; ++oh) {
    const float* const* taps = p.tap_src + oh * p.taps;
    for (int64_t ow = 0; ow < p.out_w; ++ow)
      p.out[oh * p.out_w + ow] = arith::dot_chunked_f32(
          p.taps, p.init, [&](int64_t t) { return taps[t][ow]; }, [&](int64_t t) { return p.weights[t]; });
  }
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
  const PlaneFn kernel = plane_kernel(cpu_isa());
  const TapColumns cols{g.in[2], g.out[2], g.kernel[2], g.stride[2], g.dilation[2], g.pad[2]};
  const int64_t taps = g.taps(), out_pixels = g.out_pixels();
  // Item = (image, input channel) = one input plane; c_in == group, so item is also the plane's index in x.
  ctx.pool->parallel_for(g.batch * g.group, [&](int64_t i0, int64_t i1) {
    TapRows rows;
    std::vector<const float*> tap_src;
    const float* pointed_at = nullptr;  // the packed rows tap_src points into (the same for every plane)
    for (int64_t item = i0; item < i1; ++item) {
      rows.pack(x + item * g.in_pixels(), g.in[1], cols, 0.0f);
      if (rows.row(0) != pointed_at) point_taps(g, rows, tap_src);
      pointed_at = rows.row(0);
      for (int64_t m = 0; m < g.cout_g; ++m) {
        const int64_t oc = item % g.group * g.cout_g + m;
        kernel({tap_src.data(), w + oc * taps, taps, bias ? bias[oc] : 0.0f, g.out[1], g.out[2],
                y + (item * g.cout_g + m) * out_pixels});
      }
    }
  }, 1);
}

}  // namespace lockstep::cpu
