// The Resize contract in code (docs/arithmetic.md#resize): coordinate transforms, nearest rounding, tap weights and
// the separable interpolation order. Plain C++ on the host, __host__ __device__ under nvcc, so both devices
// run literally the same sequence of float32 operations.
#pragma once

#include <cstdint>

#include "arith/elementwise.h"  // abs_f32, floor_f32, ceil_f32
#include "arith/hd.h"

namespace lockstep::arith {

enum class ResizeCoord : int {
  HalfPixel, HalfPixelSymmetric, PytorchHalfPixel, AlignCorners, Asymmetric, TfHalfPixelForNn, TfCropAndResize
};
// Simple: Resize-10 and Upsample (asymmetric coordinates; trunc when upsampling, ceil when downsampling).
enum class ResizeNearest : int { RoundPreferFloor, RoundPreferCeil, Floor, Ceil, Simple };

/// x_original for output coordinate o on one axis, in float32, one rounding per operation in the written order.
/// scale is the axis's float32 scale; roi_start/roi_end only matter for TfCropAndResize.
LOCKSTEP_HD float resize_coordinate_f32(ResizeCoord mode, int64_t o, float scale, int64_t in_len, int64_t out_len,
                                        float roi_start, float roi_end) {
  float x = static_cast<float>(o);
  switch (mode) {
    case ResizeCoord::HalfPixel: return (x + 0.5f) / scale - 0.5f;
    case ResizeCoord::HalfPixelSymmetric: {
      float in = static_cast<float>(in_len);
      float out_width = scale * in;
      float adjustment = static_cast<float>(out_len) / out_width;
      float center = in / 2.0f;
      float offset = center * (1.0f - adjustment);
      return (offset + (x + 0.5f) / scale) - 0.5f;
    }
    case ResizeCoord::PytorchHalfPixel: return out_len > 1 ? (x + 0.5f) / scale - 0.5f : 0.0f;
    case ResizeCoord::AlignCorners:
      return out_len == 1 ? 0.0f : x * static_cast<float>(in_len - 1) / static_cast<float>(out_len - 1);
    case ResizeCoord::Asymmetric: return x / scale;
    case ResizeCoord::TfHalfPixelForNn: return (x + 0.5f) / scale;
    case ResizeCoord::TfCropAndResize: {
      float in1 = static_cast<float>(in_len - 1);
      if (out_len <= 1) return 0.5f * (roi_start + roi_end) * in1;
      return roi_start * in1 + x * (roi_end - roi_start) * in1 / static_cast<float>(out_len - 1);
    }
  }
  return x;
}

/// The nearest input index for x (before clamping to [0, in_len)).
LOCKSTEP_HD int64_t resize_nearest_index(ResizeNearest mode, float x, bool downsampling) {
  float f = floor_f32(x);
  float r = x - f;  // exact: f is x's floor
  switch (mode) {
    case ResizeNearest::RoundPreferFloor: return static_cast<int64_t>(r <= 0.5f ? f : f + 1.0f);
    case ResizeNearest::RoundPreferCeil: return static_cast<int64_t>(r < 0.5f ? f : f + 1.0f);
    case ResizeNearest::Floor: return static_cast<int64_t>(f);
    case ResizeNearest::Ceil: return static_cast<int64_t>(ceil_f32(x));
    case ResizeNearest::Simple: return static_cast<int64_t>(downsampling ? ceil_f32(x) : (x < 0.0f ? -floor_f32(-x) : f));
  }
  return static_cast<int64_t>(f);
}

/// Keys cubic convolution weights for the taps at floor(x)-1 .. floor(x)+2, s = x - floor(x), coefficient a.
LOCKSTEP_HD void cubic_weights_f32(float s, float a, float w[4]) {
  float s1 = s + 1.0f, t = 1.0f - s, t1 = 2.0f - s;
  w[0] = ((a * s1 - 5.0f * a) * s1 + 8.0f * a) * s1 - 4.0f * a;
  w[1] = ((a + 2.0f) * s - (a + 3.0f)) * s * s + 1.0f;
  w[2] = ((a + 2.0f) * t - (a + 3.0f)) * t * t + 1.0f;
  w[3] = ((a * t1 - 5.0f * a) * t1 + 8.0f * a) * t1 - 4.0f * a;
}

/// One axis's sampling for one output coordinate: n taps (1, 2 or 4) at element offsets off with weights w.
/// An offset below 0 is a tap that reads +0 (GridSample's zeros padding).
/// outside: the coordinate fell outside the input (tf_crop_and_resize): the output is the extrapolation value.
struct ResizeTaps {
  int32_t n = 1;
  int32_t outside = 0;
  int64_t off[4] = {0, 0, 0, 0};
  float w[4] = {1.0f, 0.0f, 0.0f, 0.0f};
};

/// Resize's plan keeps every axis's taps in two pooled tables (offsets, weights), because an antialiased axis has
/// more than four: span (axis, o) owns entries first .. first + n - 1 of both.
struct ResizeSpan {
  int32_t n = 1;
  int32_t outside = 0;
  int64_t first = 0;
};

/// A span's taps as pointers into the device's copy of the tables; resize_separable_f32 reads it like ResizeTaps.
struct ResizeTapView {
  int32_t n;
  int32_t outside;
  const int64_t* off;
  const float* w;
};

LOCKSTEP_HD ResizeTapView resize_tap_view(const ResizeSpan& s, const int64_t* off, const float* w) {
  return {s.n, s.outside, off + s.first, w + s.first};
}

/// Antialiased taps of an axis with scale < 1 (Resize 18+, antialias = 1): the linear (support 1) or cubic
/// (support 2) filter stretched by 1 / scale. `start = floor(-support / scale) + 1`; the axis's taps number
/// `2 - 2 * start` (int64: callers bound it by the input length).
LOCKSTEP_HD int64_t resize_antialias_start(float scale, bool cubic) {
  return static_cast<int64_t>(floor_f32((cubic ? -2.0f : -1.0f) / scale)) + 1;
}

/// The unnormalised filter value at argument u (float32, each operation rounded, no fma): linear
/// `max(1 - |u|, 0)`; cubic with coefficient a, v = |u|: v <= 1: `((a+2)*v - (a+3))*v*v + 1`, 1 < v < 2:
/// `((a*v - 5a)*v + 8a)*v - 4a`, else 0 (the Keys forms of cubic_weights_f32).
LOCKSTEP_HD float resize_antialias_filter_f32(float u, bool cubic, float a) {
  float v = abs_f32(u);
  if (!cubic) {
    float w = 1.0f - v;
    return w > 0.0f ? w : 0.0f;
  }
  if (v <= 1.0f) return ((a + 2.0f) * v - (a + 3.0f)) * v * v + 1.0f;
  if (v < 2.0f) return ((a * v - 5.0f * a) * v + 8.0f * a) * v - 4.0f * a;
  return 0.0f;
}

/// Writes the 2 - 2*start antialiased taps of coordinate x on an axis of in_len elements (element stride `stride`):
/// ratio = x - floor(x), or 1 where x is an integer; left = x - ratio (exact); tap i (i ascending) reads index
/// left + start + i clamped to [0, in_len - 1], with raw weight resize_antialias_filter_f32((float(start + i) -
/// ratio) * scale). exclude_outside zeroes the weight of a tap whose index is outside [0, in_len). Then every
/// weight is divided by the sum ((w_0 + w_1) + ...) + w_{n-1} (kept as is where that sum is 0).
LOCKSTEP_HD void resize_antialias_taps_f32(float x, float scale, bool cubic, float a, bool exclude_outside,
                                           int64_t in_len, int64_t stride, int64_t* off, float* w) {
  const int64_t start = resize_antialias_start(scale, cubic);
  const int64_t n = 2 - 2 * start;
  const float f = floor_f32(x);
  const float ratio = x == f ? 1.0f : x - f;
  const int64_t left = static_cast<int64_t>(x - ratio);
  float sum = 0.0f;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t idx = left + start + i;
    float wi = resize_antialias_filter_f32((static_cast<float>(start + i) - ratio) * scale, cubic, a);
    if (exclude_outside && (idx < 0 || idx >= in_len)) wi = 0.0f;
    off[i] = (idx < 0 ? 0 : (idx >= in_len ? in_len - 1 : idx)) * stride;
    w[i] = wi;
    sum = i == 0 ? wi : sum + wi;
  }
  if (sum != 0.0f)
    for (int64_t i = 0; i < n; ++i) w[i] = w[i] / sum;
}

/// The element offset of a tap below `base`; -1 (reads +0) if either is a zero tap.
LOCKSTEP_HD int64_t tap_offset(int64_t base, int64_t off) { return base < 0 || off < 0 ? -1 : base + off; }

/// Separable interpolation over `rank` axes, innermost axis first: each axis k combines the values of its taps
/// as acc = w_0*v_0, then acc = acc + w_t*v_t for t = 1..n-1 (a one-tap axis multiplies by 1, which is exact).
/// e[k] is axis k's taps for this output element (ResizeTaps, or a ResizeTapView of the plan's tables).
template <int MaxRank, class Taps>
LOCKSTEP_HD float resize_separable_f32(const float* in, int rank, const Taps* const* e) {
  float acc[MaxRank];
  int t[MaxRank];
  int64_t base[MaxRank + 1];
  base[0] = 0;
  for (int k = 0; k < rank; ++k) {
    t[k] = 0;
    base[k + 1] = tap_offset(base[k], e[k]->off[0]);
  }
  for (;;) {
    float v = base[rank] < 0 ? 0.0f : in[base[rank]];
    int k = rank - 1;
    for (;;) {
      float term = e[k]->w[t[k]] * v;
      acc[k] = t[k] == 0 ? term : acc[k] + term;
      if (++t[k] < e[k]->n) break;
      v = acc[k];
      if (k == 0) return v;
      --k;
    }
    base[k + 1] = tap_offset(base[k], e[k]->off[t[k]]);
    for (int j = k + 1; j < rank; ++j) {
      t[j] = 0;
      base[j + 1] = tap_offset(base[j], e[j]->off[0]);
    }
  }
}

}  // namespace lockstep::arith
