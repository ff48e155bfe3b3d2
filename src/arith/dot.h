// Per-element formulas of the conv and gemm families, shared literally by both devices
// (docs/arithmetic.md#gemm, docs/arithmetic.md#convtranspose, docs/arithmetic.md#causalconvwithstate).
#pragma once

#include <cstdint>

#include "arith/math.h"
#include "arith/hd.h"
#include "arith/reduce.h"

namespace lockstep::arith {

/// Gemm's epilogue: y = alpha*t + beta*c, each product rounded, then the sum rounded. Without C: y = alpha*t.
/// alpha = 1 and beta = 0 are not special-cased (alpha*t is exact for alpha = 1; beta*c is computed for beta = 0).
LOCKSTEP_HD float gemm_epilogue_f32(float t, float alpha, bool has_c, float c, float beta) {
  float at = alpha * t;
  if (!has_c) return at;
  float bc = beta * c;
  return at + bc;
}

/// Floor division and modulo for a positive divisor (ConvTranspose pads may be negative).
LOCKSTEP_HD int64_t floor_div(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }
LOCKSTEP_HD int64_t floor_mod(int64_t a, int64_t b) { return a - floor_div(a, b) * b; }

/// Conv / ConvTranspose geometry, padded to 3 spatial dims (leading unused dims have size 1, stride 1, pad 0).
/// Plain data, so CUDA kernels take it by value.
struct ConvDims {
  int64_t batch, c_in, c_out, group, cin_g, cout_g;
  int64_t in[3], out[3], kernel[3], stride[3], dilation[3], pad[3];  // pad: begin pads (may be negative)
};

/// One ConvTranspose output element, gather form. Canonical k order: c (input channel in the group) ascending,
/// then the kernel taps (rd, rh, rw) ascending that are *aligned* with this output, i.e. per spatial dim
/// (o + pad - r*dil) is a multiple of stride. Aligned taps whose input position i = (o + pad - r*dil)/stride falls
/// outside [0, in) are terms with input +0 (the fma is performed), like Conv's padding taps. Unaligned taps
/// (stride holes) are not terms. Then dot_chunked_f32 with init = bias.
/// x: input (N, C_in, in...), w: weights (C_in, C_out/group, kernel...), index: flat output index.
// Contract: dot_chunked_f32 over (c, aligned taps) ascending; see docs/arithmetic.md#convtranspose.
LOCKSTEP_HD float conv_transpose_element_f32(const ConvDims& g, const float* x, const float* w,
                                             const float* bias, int64_t index) {
  int64_t o[3];
  int64_t rest = index;
  for (int d = 2; d >= 0; --d) {
    o[d] = rest % g.out[d];
    rest /= g.out[d];
  }
  int64_t oc = rest % g.c_out;
  int64_t n = rest / g.c_out;
  int64_t grp = oc / g.cout_g, m = oc % g.cout_g;
  // Per dim: the first aligned tap r0, the tap step, and the matching input position of r0 (i decreases by
  // step*dil/stride for each further tap).
  int64_t r0[3], rstep[3], i0[3], istep[3], count[3];
  int64_t taps = 1;
  for (int d = 0; d < 3; ++d) {
    int64_t base = o[d] + g.pad[d];
    // r*dil = base (mod stride); the aligned taps are r0, r0 + rstep, ... with rstep = stride / gcd(dil, stride).
    int64_t a = g.dilation[d] % g.stride[d], s = g.stride[d];
    int64_t gcd_v = s, t = a;
    while (t != 0) {
      int64_t u = gcd_v % t;
      gcd_v = t;
      t = u;
    }
    rstep[d] = s / gcd_v;
    r0[d] = -1;
    for (int64_t r = 0; r < rstep[d] && r < g.kernel[d]; ++r)
      if (floor_mod(base - r * g.dilation[d], s) == 0) {
        r0[d] = r;
        break;
      }
    count[d] = r0[d] < 0 ? 0 : (g.kernel[d] - r0[d] + rstep[d] - 1) / rstep[d];
    i0[d] = r0[d] < 0 ? 0 : floor_div(base - r0[d] * g.dilation[d], s);
    istep[d] = rstep[d] * g.dilation[d] / s;
    taps *= count[d];
  }
  int64_t K = g.cin_g * taps;
  const float* xg = x + (n * g.c_in + grp * g.cin_g) * g.in[0] * g.in[1] * g.in[2];
  const float* wg = w + (grp * g.cin_g * g.cout_g + m) * g.kernel[0] * g.kernel[1] * g.kernel[2];
  int64_t in_plane = g.in[0] * g.in[1] * g.in[2];
  int64_t w_plane = g.cout_g * g.kernel[0] * g.kernel[1] * g.kernel[2];
  auto a_of = [&](int64_t k) -> float {
    int64_t tw = k % count[2], th = (k / count[2]) % count[1], td = (k / (count[2] * count[1])) % count[0];
    int64_t c = k / taps;
    int64_t id = i0[0] - td * istep[0], ih = i0[1] - th * istep[1], iw = i0[2] - tw * istep[2];
    if (id < 0 || id >= g.in[0] || ih < 0 || ih >= g.in[1] || iw < 0 || iw >= g.in[2]) return 0.0f;
    return xg[c * in_plane + (id * g.in[1] + ih) * g.in[2] + iw];
  };
  auto b_of = [&](int64_t k) -> float {
    int64_t tw = k % count[2], th = (k / count[2]) % count[1], td = (k / (count[2] * count[1])) % count[0];
    int64_t c = k / taps;
    int64_t rd = r0[0] + td * rstep[0], rh = r0[1] + th * rstep[1], rw = r0[2] + tw * rstep[2];
    return wg[c * w_plane + (rd * g.kernel[1] + rh) * g.kernel[2] + rw];
  };
  return dot_chunked_f32(K, bias ? bias[oc] : 0.0f, a_of, b_of);
}

/// CausalConvWithState's geometry: x (batch, channels, length), w (channels, 1, kernel), optional bias (channels)
/// and past state (batch, channels, kernel - 1). The sequence it convolves is the state followed by x.
struct CausalConvGeometry {
  const float* x;
  const float* w;
  const float* bias;   // nullptr: +0
  const float* state;  // nullptr: +0
  int64_t channels, length, kernel;
  bool silu;

  /// Position p of plane bc's sequence (p < kernel - 1: the state).
  LOCKSTEP_HD float sequence(int64_t bc, int64_t p) const {
    const int64_t carried = kernel - 1;
    if (p >= carried) return x[bc * length + p - carried];
    return state ? state[bc * carried + p] : 0.0f;
  }
};

/// Output element (b, c, t) at flat index e.
// Contract: dot_chunked_f32 over the taps ascending, init = bias; then silu y * sigmoid(y); see
// docs/arithmetic.md#causalconvwithstate.
LOCKSTEP_HD float causal_conv_element_f32(const CausalConvGeometry& g, int64_t e) {
  const int64_t t = e % g.length, bc = e / g.length, c = bc % g.channels;
  const float* wc = g.w + c * g.kernel;
  const float y = dot_chunked_f32(
      g.kernel, g.bias ? g.bias[c] : 0.0f, [&](int64_t j) { return g.sequence(bc, t + j); },
      [&](int64_t j) { return wc[j]; });
  return g.silu ? y * sigmoid_f32(y) : y;
}

/// Present-state element (b, c, j) at flat index e: the sequence's position length + j (its last kernel - 1).
LOCKSTEP_HD float causal_conv_state_element_f32(const CausalConvGeometry& g, int64_t e) {
  const int64_t carried = g.kernel - 1;
  return g.sequence(e / carried, g.length + e % carried);
}

/// The determinant of the n x n row-major matrix `a`, which it overwrites (Det).
// Contract: Gaussian elimination with partial pivoting (the first row of largest |a[i][k]|), each update
// a[i][j] - (a[i][k] / pivot) * a[k][j] (three roundings, no fma), det = the pivots' product in order, negated per
// row swap, +0 at the first zero pivot; see docs/arithmetic.md#det.
LOCKSTEP_HD float det_in_place_f32(float* a, int64_t n) {
  float det = 1.0f;
  bool negate = false;
  for (int64_t k = 0; k < n; ++k) {
    int64_t p = k;
    float best = a[k * n + k] < 0.0f ? -a[k * n + k] : a[k * n + k];
    for (int64_t i = k + 1; i < n; ++i) {
      const float v = a[i * n + k] < 0.0f ? -a[i * n + k] : a[i * n + k];
      if (v > best) best = v, p = i;
    }
    if (p != k) {
      for (int64_t j = k; j < n; ++j) {
        const float t = a[k * n + j];
        a[k * n + j] = a[p * n + j];
        a[p * n + j] = t;
      }
      negate = !negate;
    }
    const float pivot = a[k * n + k];
    if (pivot == 0.0f) return 0.0f;
    det = det * pivot;
    for (int64_t i = k + 1; i < n; ++i) {
      const float l = a[i * n + k] / pivot;
      for (int64_t j = k + 1; j < n; ++j) a[i * n + j] = a[i * n + j] - l * a[k * n + j];
    }
  }
  return negate ? -det : det;
}

}  // namespace lockstep::arith
