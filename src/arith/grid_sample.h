// The GridSample contract in code (docs/arithmetic.md#gridsample): grid coordinates to input coordinates, the
// padding rules, and per output element the taps of each spatial axis, combined by the separable interpolation
// of Resize (arith::resize_separable_f32). Then AffineGrid's, which makes such grids (docs/arithmetic.md#affinegrid).
// Plain C++ on the host, __host__ __device__ under nvcc.
#pragma once

#include <cstdint>

#include "arith/elementwise.h"  // floor_f32, rint_f32, isnan_f32
#include "arith/hd.h"
#include "arith/reduce.h"  // dot_chunked_f32
#include "arith/resize.h"

namespace lockstep::arith {

enum class GridMode : int { Nearest, Linear, Cubic };
enum class GridPadding : int { Zeros, Border, Reflection };

/// The most spatial axes GridSample handles (4-D and 5-D inputs, and 3-D).
constexpr int kGridMaxAxes = 3;

/// Everything one output element needs, passed by value to CUDA kernels. Axis k = 0 is the outermost spatial axis;
/// the grid's last dimension lists the axes innermost first (x, y, z), so axis k reads grid entry axes - 1 - k.
struct GridSampleGeometry {
  int axes = 0;
  GridMode mode = GridMode::Linear;
  GridPadding padding = GridPadding::Zeros;
  bool align_corners = false;
  int64_t channels = 0;
  int64_t in_dims[kGridMaxAxes] = {1, 1, 1};
  int64_t out_dims[kGridMaxAxes] = {1, 1, 1};
  int64_t in_plane = 1;   // elements of one (n, c) input plane
  int64_t out_plane = 1;  // output elements per (n, c): grid points per image
};

/// x limited to [lo, hi]; NaN stays NaN.
LOCKSTEP_HD float clamp_f32(float x, float lo, float hi) { return x < lo ? lo : (x > hi ? hi : x); }

/// The reflection borders of an axis of length len: [-0.5, len - 0.5], or [0, len - 1] with align_corners.
LOCKSTEP_HD float grid_low(bool align) { return align ? 0.0f : -0.5f; }
LOCKSTEP_HD float grid_high(int64_t len, bool align) {
  return align ? static_cast<float>(len - 1) : static_cast<float>(len) - 0.5f;
}

/// x reflected into [lo, hi] off the near border until it lands inside: d = distance past the border,
/// k = floor(d / (hi - lo)), r = d - k * (hi - lo); even k lands r inside that border, odd k r inside the other.
/// Rounding of a far x can leave the result outside, so it is clamped to [lo, hi] (NaN stays NaN).
LOCKSTEP_HD float grid_reflect_f32(float x, float lo, float hi) {
  float range = hi - lo;
  if (!(x < lo) && !(x > hi)) return x;
  if (range == 0.0f) return lo;
  bool below = x < lo;
  float d = below ? lo - x : x - hi;
  float k = floor_f32(d / range);
  float r = d - k * range;
  bool even = floor_f32(k * 0.5f) * 2.0f == k;
  return clamp_f32(below == even ? lo + r : hi - r, lo, hi);
}

/// The input coordinate of grid value g on an axis of length len, after the padding rule: unnormalize
/// ((g + 1) / 2 * (len - 1) with align_corners, else ((g + 1) * len - 1) / 2), round half to even for nearest,
/// then, outside [lo, hi], clamp to [0, len - 1] (border) or reflect (reflection).
LOCKSTEP_HD float grid_coordinate_f32(const GridSampleGeometry& g, float v, int64_t len) {
  float x = g.align_corners ? (v + 1.0f) / 2.0f * static_cast<float>(len - 1)
                            : ((v + 1.0f) * static_cast<float>(len) - 1.0f) / 2.0f;
  if (g.mode == GridMode::Nearest) x = rint_f32(x);
  float lo = grid_low(g.align_corners), hi = grid_high(len, g.align_corners);
  if (!(x < lo) && !(x > hi)) return x;
  if (g.padding == GridPadding::Border) return clamp_f32(x, 0.0f, static_cast<float>(len - 1));
  if (g.padding == GridPadding::Reflection) return grid_reflect_f32(x, lo, hi);
  return x;
}

/// The input index that integer tap i reads: itself inside [0, len); outside, -1 (+0: zeros), the clamped index
/// (border) or the reflected one (reflection, truncated, then clamped).
LOCKSTEP_HD int64_t grid_tap_index(const GridSampleGeometry& g, int64_t i, int64_t len) {
  if (i >= 0 && i < len) return i;
  if (g.padding == GridPadding::Zeros) return -1;
  int64_t j = i;
  if (g.padding == GridPadding::Reflection)
    j = static_cast<int64_t>(grid_reflect_f32(static_cast<float>(i), grid_low(g.align_corners),
                                              grid_high(len, g.align_corners)));
  return j < 0 ? 0 : (j >= len ? len - 1 : j);
}

/// One axis's taps at coordinate x: nearest one (weight 1), linear floor(x), floor(x) + 1 with 1 - d, d, cubic
/// floor(x) - 1 .. floor(x) + 2 with the Keys weights of d (a = -0.75), where d = x - floor(x) (exact).
LOCKSTEP_HD ResizeTaps grid_axis_taps(const GridSampleGeometry& g, float x, int64_t len, int64_t stride) {
  ResizeTaps t;
  float f = g.mode == GridMode::Nearest ? x : floor_f32(x);
  float d = x - f;
  int64_t first = static_cast<int64_t>(f);
  if (g.mode == GridMode::Linear) {
    t.n = 2;
    t.w[0] = 1.0f - d;
    t.w[1] = d;
  } else if (g.mode == GridMode::Cubic) {
    t.n = 4;
    first -= 1;
    cubic_weights_f32(d, -0.75f, t.w);
  }
  for (int k = 0; k < t.n; ++k) {
    int64_t i = grid_tap_index(g, first + k, len);
    t.off[k] = i < 0 ? -1 : i * stride;
  }
  return t;
}

/// Output element e (row-major over (n, c, out_dims)) of GridSample: x is the input, grid the (N, out..., axes)
/// grid. A NaN coordinate gives NaN; with zeros padding a coordinate outside [-4, len + 3] (every tap outside)
/// gives +0.
LOCKSTEP_HD float grid_sample_element_f32(const GridSampleGeometry& g, const float* x, const float* grid, int64_t e) {
  int64_t point = e % g.out_plane;
  int64_t image = e / g.out_plane;  // n * channels + c
  int64_t n = image / g.channels;
  const float* coords = grid + (n * g.out_plane + point) * g.axes;
  ResizeTaps taps[kGridMaxAxes];
  const ResizeTaps* e_taps[kGridMaxAxes];
  int64_t stride = g.in_plane;
  for (int k = 0; k < g.axes; ++k) {
    int64_t len = g.in_dims[k];
    stride /= len;
    float c = grid_coordinate_f32(g, coords[g.axes - 1 - k], len);
    if (isnan_f32(c)) return c;
    if (g.padding == GridPadding::Zeros && (c < -4.0f || c > static_cast<float>(len + 3))) return 0.0f;
    taps[k] = grid_axis_taps(g, c, len, stride);
    e_taps[k] = &taps[k];
  }
  return resize_separable_f32<kGridMaxAxes>(x + image * g.in_plane, g.axes, e_taps);
}

/// AffineGrid's geometry: theta (N, 2, 3) or (N, 3, 4) and the output's spatial sizes (depth 1 in 2-D).
struct AffineGridGeometry {
  const float* theta;
  int64_t depth, height, width;
  bool three_d, align_corners;
};

/// Position i of `size` evenly spaced positions in [-1, 1]: start + float(i) * step, as ONNX's function body has
/// it (step = 2 / size and start = -1 + step / 2 without align_corners; with it step = 2 / (size - 1), or 0 for
/// one position, and start = -1).
LOCKSTEP_HD float affine_grid_position_f32(int64_t i, int64_t size, bool align_corners) {
  const float step = align_corners ? (size == 1 ? 0.0f : 2.0f / static_cast<float>(size - 1))
                                   : 2.0f / static_cast<float>(size);
  const float start = align_corners ? -1.0f : -1.0f + step / 2.0f;
  return start + static_cast<float>(i) * step;
}

/// Output element e of (N, [D,] H, W, 2 or 3): component c of theta's row c times (x, y, z, 1).
// Contract: dot_chunked_f32 over the 4 homogeneous terms (2-D: theta row (r0, r1, 0, t)), as MatMul; see
// docs/arithmetic.md#affinegrid.
LOCKSTEP_HD float affine_grid_element_f32(const AffineGridGeometry& g, int64_t e) {
  const int64_t components = g.three_d ? 3 : 2;
  const int64_t c = e % components;
  int64_t rest = e / components;
  const int64_t x = rest % g.width;
  rest /= g.width;
  const int64_t y = rest % g.height;
  rest /= g.height;
  const int64_t z = rest % g.depth, n = rest / g.depth;
  const float position[4] = {affine_grid_position_f32(x, g.width, g.align_corners),
                             affine_grid_position_f32(y, g.height, g.align_corners),
                             affine_grid_position_f32(z, g.depth, g.align_corners), 1.0f};
  const float* t = g.theta + (n * components + c) * (components + 1);
  const float row[4] = {t[0], t[1], g.three_d ? t[2] : 0.0f, g.three_d ? t[3] : t[2]};
  return dot_chunked_f32(4, 0.0f, [&](int64_t k) { return row[k]; }, [&](int64_t k) { return position[k]; });
}

}  // namespace lockstep::arith
