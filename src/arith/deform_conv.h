// The DeformConv contract in code (docs/arithmetic.md#deformconv): each kernel tap reads the input at its shifted
// position through one bilinear sample (four products added in a fixed order, +0 outside the image), scaled by the
// mask, and the terms over (c, kh, kw) form Conv's chunked dot product with the weights. Plain C++ on the host,
// __host__ __device__ under nvcc, so both devices run the same operations in the same order.
#pragma once

#include <cstdint>

#include "arith/elementwise.h"  // floor_f32
#include "arith/hd.h"
#include "arith/reduce.h"       // dot_chunked_f32

namespace lockstep::arith {

/// A 2-D DeformConv node, passed by value to CUDA kernels (pointers are the device's). X (N, C, in_h, in_w), W (M,
/// C/group, k_h, k_w), offset (N, offset_groups * k_h * k_w * 2, out_h, out_w), optional bias (M) and mask (N,
/// offset_groups * k_h * k_w, out_h, out_w).
struct DeformConvGeometry {
  const float* x;
  const float* w;
  const float* offset;
  const float* bias;  // nullptr: the init is +0
  const float* mask;  // nullptr: no scaling
  int64_t channels, c_out, cin_g, cout_g, cin_og;  // cin_og: input channels per offset group
  int64_t in_h, in_w, out_h, out_w, k_h, k_w;
  int64_t stride_h, stride_w, dil_h, dil_w, pad_h, pad_w;  // pad: begin pads
};

/// The bilinear sample of the in_h x in_w plane at (y, x), every corner outside the plane reading +0:
/// NaN if y or x is NaN; +0 if y <= -1, y >= in_h, x <= -1 or x >= in_w (every corner outside, infinities too);
/// otherwise, with y0 = floor(y), x0 = floor(x), ly = y - y0 and lx = x - x0 (both exact), hy = 1 - ly, hx = 1 - lx:
///   s = (hy*hx)*v(y0, x0); s = s + (hy*lx)*v(y0, x0+1); s = s + (ly*hx)*v(y0+1, x0); s = s + (ly*lx)*v(y0+1, x0+1)
/// each product and sum rounded to float32 (no fma).
LOCKSTEP_HD float deform_bilinear_f32(const float* plane, int64_t in_h, int64_t in_w, float y, float x) {
  if (y != y || x != x) return y + x;
  if (!(y > -1.0f && y < static_cast<float>(in_h) && x > -1.0f && x < static_cast<float>(in_w))) return 0.0f;
  const float y0 = floor_f32(y), x0 = floor_f32(x);
  const float ly = y - y0, lx = x - x0;
  const float hy = 1.0f - ly, hx = 1.0f - lx;
  const int64_t iy = static_cast<int64_t>(y0), ix = static_cast<int64_t>(x0);
  auto at = [&](int64_t r, int64_t c) -> float {
    return r >= 0 && r < in_h && c >= 0 && c < in_w ? plane[r * in_w + c] : 0.0f;
  };
  const float w00 = hy * hx, w01 = hy * lx, w10 = ly * hx, w11 = ly * lx;
  float s = w00 * at(iy, ix);
  s = s + w01 * at(iy, ix + 1);
  s = s + w10 * at(iy + 1, ix);
  s = s + w11 * at(iy + 1, ix + 1);
  return s;
}

/// Output element e (row-major over (n, oc, oh, ow)).
// Contract: dot_chunked_f32 over k = (c, kh, kw) ascending, init = bias or +0, a_k = bilinear sample at
// (oh*s_h - pad_h + kh*d_h + offset_h, ow*s_w - pad_w + kw*d_w + offset_w) times the mask (one product),
// b_k = W[oc][c][kh][kw]; see docs/arithmetic.md#deformconv.
LOCKSTEP_HD float deform_conv_element_f32(const DeformConvGeometry& g, int64_t e) {
  const int64_t plane = g.out_h * g.out_w, pixel = e % plane;
  const int64_t oh = pixel / g.out_w, ow = pixel % g.out_w;
  const int64_t oc = (e / plane) % g.c_out, n = e / plane / g.c_out;
  const int64_t taps = g.k_h * g.k_w, group = oc / g.cout_g;
  const int64_t offset_groups = g.channels / g.cin_og;
  const float* w = g.w + oc * g.cin_g * taps;
  auto a_of = [&](int64_t k) -> float {
    const int64_t c = group * g.cin_g + k / taps, t = k % taps, og = c / g.cin_og;
    const int64_t kh = t / g.k_w, kw = t % g.k_w;
    const float* off = g.offset + ((n * offset_groups + og) * taps + t) * 2 * plane + pixel;
    const float y = static_cast<float>(oh * g.stride_h - g.pad_h + kh * g.dil_h) + off[0];
    const float x = static_cast<float>(ow * g.stride_w - g.pad_w + kw * g.dil_w) + off[plane];
    const float v = deform_bilinear_f32(g.x + (n * g.channels + c) * g.in_h * g.in_w, g.in_h, g.in_w, y, x);
    if (!g.mask) return v;
    return v * g.mask[((n * offset_groups + og) * taps + t) * plane + pixel];
  };
  return dot_chunked_f32(g.cin_g * taps, g.bias ? g.bias[oc] : 0.0f, a_of, [&](int64_t k) { return w[k]; });
}

}  // namespace lockstep::arith
