// CPU kernels of the conv family. Conv runs as one GEMM per (image, group) on the shared core (src/cpu/gemm.cpp):
// A = the group's weights (cout_g x K, ONNX layout, so k = (c, kd, kh, kw) ascending), B = the image's taps
// gathered panel by panel (im2col without the full matrix), padding taps packed as +0 and fma'd like any other.
#include <algorithm>

#include "arith/dot.h"
#include "cpu/conv/depthwise.h"
#include "ops/conv.h"
#include "ops/gemm.h"
#include "runtime/thread_pool.h"

namespace lockstep::cpu {

namespace {

/// The B panels of one image and group: B(k, n) = x[c][o*stride - pad + r*dil] with k = (c, kd, kh, kw), or +0
/// where the tap falls in the padding.
PanelFn conv_tap_panels(const ConvGeom& g, const float* xg) {
  return [&g, xg](int64_t n0, int64_t count, int width, float* dst) {
    int64_t base[3][64];
    for (int64_t j = 0; j < count; ++j) {
      int64_t n = n0 + j;
      int64_t o2 = n % g.out[2], o1 = (n / g.out[2]) % g.out[1], o0 = n / (g.out[2] * g.out[1]);
      base[0][j] = o0 * g.stride[0] - g.pad[0];
      base[1][j] = o1 * g.stride[1] - g.pad[1];
      base[2][j] = o2 * g.stride[2] - g.pad[2];
    }
    const int64_t D = g.in[0], H = g.in[1], W = g.in[2];
    float* d = dst;
    for (int64_t c = 0; c < g.cin_g; ++c) {
      const float* xc = xg + c * g.in_pixels();
      for (int64_t kd = 0; kd < g.kernel[0]; ++kd)
        for (int64_t kh = 0; kh < g.kernel[1]; ++kh)
          for (int64_t kw = 0; kw < g.kernel[2]; ++kw) {
            const int64_t td = kd * g.dilation[0], th = kh * g.dilation[1], tw = kw * g.dilation[2];
            for (int64_t j = 0; j < count; ++j) {
              int64_t id = base[0][j] + td, ih = base[1][j] + th, iw = base[2][j] + tw;
              bool inside = static_cast<uint64_t>(id) < static_cast<uint64_t>(D) &&
                            static_cast<uint64_t>(ih) < static_cast<uint64_t>(H) &&
                            static_cast<uint64_t>(iw) < static_cast<uint64_t>(W);
              d[j] = inside ? xc[(id * H + ih) * W + iw] : 0.0f;
            }
            for (int64_t j = count; j < width; ++j) d[j] = 0.0f;
            d += width;
          }
    }
  };
}

bool is_pointwise(const ConvGeom& g) {
  for (int i = 0; i < 3; ++i)
    if (g.kernel[i] != 1 || g.stride[i] != 1 || g.pad[i] != 0 || g.out[i] != g.in[i]) return false;
  return true;
}

}  // namespace

// Contract: dot_chunked_f32 over k = (c_in, kd, kh, kw) ascending, init = bias; see docs/arithmetic.md#conv.
void conv(KernelContext& ctx) {
  const ConvGeom g = conv_geometry(ctx);
  Tensor& y = ctx.output(0, DType::Float, g.out_shape);
  if (y.numel() == 0) return;
  const float* x = ctx.input(0).data<float>();
  const float* w = ctx.input(1).data<float>();
  const float* bias = g.has_bias ? ctx.input(2).data<float>() : nullptr;
  float* yd = y.data<float>();
  if (is_depthwise(g)) return depthwise_conv_f32(ctx, g, yd);
  const int64_t K = g.K(), P = g.out_pixels();
  const bool pointwise = is_pointwise(g);
  auto one = [&](ThreadPool* pool, int64_t item) {
    const int64_t img = item / g.group, grp = item % g.group;
    const float* xg = x + (img * g.c_in + grp * g.cin_g) * g.in_pixels();
    const float* wg = w + grp * g.cout_g * K;
    GemmOut out{yd + (img * g.c_out + grp * g.cout_g) * P, P, 1, bias ? bias + grp * g.cout_g : nullptr};
    PanelFn b = pointwise ? strided_panels({xg, 1, g.in_pixels()}, K) : conv_tap_panels(g, xg);
    gemm_f32(pool, g.cout_g, P, K, strided_panels({wg, K, 1}, K), b, out);
  };
  const int64_t items = g.batch * g.group;
  if (items >= 2 * ctx.pool->size()) {
    ctx.pool->parallel_for(items, [&](int64_t i0, int64_t i1) {
      for (int64_t i = i0; i < i1; ++i) one(nullptr, i);
    }, 1);
  } else {
    for (int64_t i = 0; i < items; ++i) one(ctx.pool, i);
  }
}

// Contract: conv_transpose_element_f32 (dot_chunked_f32 over (c, aligned taps)); see docs/arithmetic.md#convtranspose.
void conv_transpose(KernelContext& ctx) {
  Shape out_shape;
  const arith::ConvDims g = conv_transpose_geometry(ctx, &out_shape);
  Tensor& y = ctx.output(0, DType::Float, out_shape);
  if (y.numel() == 0) return;
  const float* x = ctx.input(0).data<float>();
  const float* w = ctx.input(1).data<float>();
  const float* bias = ctx.has_input(2) ? ctx.input(2).data<float>() : nullptr;
  float* yd = y.data<float>();
  ctx.pool->parallel_for(y.numel(), [&](int64_t i0, int64_t i1) {
    for (int64_t i = i0; i < i1; ++i) yd[i] = arith::conv_transpose_element_f32(g, x, w, bias, i);
  }, 256);
}

}  // namespace lockstep::cpu
