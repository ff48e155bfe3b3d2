// The resize family: Resize (opsets 10, 11, 13, 18, 19) and Upsample (7, 9) parsed into one ResizePlan;
// GridSample (16, 20, 22) validated into its geometry; AffineGrid (20) likewise.
#include "ops/resize.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

#include "ops/registry.h"

namespace lockstep {

namespace {

using arith::ResizeCoord;
using arith::ResizeNearest;
using arith::ResizeTaps;

enum class Mode { Nearest, Linear, Cubic };

struct Settings {
  Mode mode = Mode::Nearest;
  ResizeCoord coord = ResizeCoord::HalfPixel;
  ResizeNearest nearest = ResizeNearest::RoundPreferFloor;
  float cubic_a = -0.75f;
  bool exclude_outside = false;
  float extrapolation = 0.0f;
};

template <typename E>
E lookup(const KernelContext& ctx, const char* attr, const std::string& value,
         std::initializer_list<std::pair<const char*, E>> table) {
  for (const auto& [name, e] : table)
    if (value == name) return e;
  throw ctx.error(std::string("unsupported ") + attr + " '" + value + "'", ErrorCode::NotImplemented);
}

Settings read_settings(const KernelContext& ctx, bool legacy) {
  Settings s;
  std::string mode = ctx.node.attr_string("mode", "nearest");
  s.mode = lookup<Mode>(ctx, "mode", mode,
                        {{"nearest", Mode::Nearest}, {"linear", Mode::Linear}, {"bilinear", Mode::Linear},
                         {"cubic", Mode::Cubic}});
  if (legacy) {  // Upsample and Resize-10: asymmetric, ORT's "simple" nearest rounding
    if (s.mode == Mode::Cubic) throw ctx.error("cubic needs Resize-11 or later", ErrorCode::NotImplemented);
    s.coord = ResizeCoord::Asymmetric;
    s.nearest = ResizeNearest::Simple;
    return s;
  }
  s.coord = lookup<ResizeCoord>(ctx, "coordinate_transformation_mode",
                                ctx.node.attr_string("coordinate_transformation_mode", "half_pixel"),
                                {{"half_pixel", ResizeCoord::HalfPixel},
                                 {"half_pixel_symmetric", ResizeCoord::HalfPixelSymmetric},
                                 {"pytorch_half_pixel", ResizeCoord::PytorchHalfPixel},
                                 {"align_corners", ResizeCoord::AlignCorners},
                                 {"asymmetric", ResizeCoord::Asymmetric},
                                 {"tf_half_pixel_for_nn", ResizeCoord::TfHalfPixelForNn},
                                 {"tf_crop_and_resize", ResizeCoord::TfCropAndResize}});
  s.nearest = lookup<ResizeNearest>(ctx, "nearest_mode", ctx.node.attr_string("nearest_mode", "round_prefer_floor"),
                                    {{"round_prefer_floor", ResizeNearest::RoundPreferFloor},
                                     {"round_prefer_ceil", ResizeNearest::RoundPreferCeil},
                                     {"floor", ResizeNearest::Floor},
                                     {"ceil", ResizeNearest::Ceil}});
  s.cubic_a = ctx.node.attr_float("cubic_coeff_a", -0.75f);
  s.exclude_outside = ctx.node.attr_int("exclude_outside", 0) != 0;
  s.extrapolation = ctx.node.attr_float("extrapolation_value", 0.0f);
  return s;
}

std::vector<float> floats_of(const KernelContext& ctx, int input) {
  Tensor t = ctx.host_input(input);
  std::vector<float> v(static_cast<size_t>(t.numel()));
  for (int64_t i = 0; i < t.numel(); ++i) {
    if (t.dtype() == DType::Float) v[i] = t.data<float>()[i];
    else if (t.dtype() == DType::Double) v[i] = static_cast<float>(t.data<double>()[i]);
    else throw ctx.error(std::string("input ") + std::to_string(input) + " must be float, got " + dtype_name(t.dtype()),
                         ErrorCode::NotImplemented);
  }
  return v;
}

bool present(const KernelContext& ctx, int input) { return ctx.has_input(input) && ctx.input(input).numel() > 0; }

// Per-axis (all rank axes) scale, output size and roi, from whichever inputs this opset has.
struct Geometry {
  std::vector<float> scale, roi_start, roi_end;
  Shape out;
};

Geometry read_geometry(const KernelContext& ctx, const Shape& in, const Settings& s) {
  int64_t r = static_cast<int64_t>(in.size());
  const std::string& op = ctx.node.op_type;
  Geometry g{std::vector<float>(r, 1.0f), std::vector<float>(r, 0.0f), std::vector<float>(r, 1.0f), in};
  std::vector<int64_t> axes;
  if (op == "Resize" && ctx.opset >= 18 && ctx.node.has("axes")) {
    for (int64_t a : ctx.node.attr_ints("axes")) axes.push_back(normalize_axis(ctx.node, a, r));
  } else {
    for (int64_t i = 0; i < r; ++i) axes.push_back(i);
  }
  size_t na = axes.size();
  std::vector<float> scales;
  std::vector<int64_t> sizes;
  if (op == "Upsample") {
    scales = ctx.opset < 9 ? ctx.node.attr_floats("scales") : floats_of(ctx, 1);
  } else if (ctx.opset < 11) {
    scales = floats_of(ctx, 1);
  } else {
    if (present(ctx, 1) && s.coord == ResizeCoord::TfCropAndResize) {
      std::vector<float> roi = floats_of(ctx, 1);
      if (roi.size() != 2 * na) throw ctx.error("roi has " + std::to_string(roi.size()) + " entries, expected " + std::to_string(2 * na));
      for (size_t i = 0; i < na; ++i) {
        g.roi_start[axes[i]] = roi[i];
        g.roi_end[axes[i]] = roi[i + na];
      }
    }
    if (present(ctx, 2)) scales = floats_of(ctx, 2);
    if (present(ctx, 3)) {
      if (!scales.empty()) throw ctx.error("only one of scales and sizes may be given");
      Tensor t = ctx.host_input(3);
      if (t.dtype() != DType::Int64) throw ctx.error("sizes must be int64");
      sizes = t.to_ints();
    }
    if (scales.empty() && sizes.empty()) throw ctx.error("one of scales and sizes is required");
  }
  if (!scales.empty()) {
    if (scales.size() != na) throw ctx.error("scales has " + std::to_string(scales.size()) + " entries, expected " + std::to_string(na));
    for (size_t i = 0; i < na; ++i) {
      float sc = scales[i];
      if (!(sc > 0.0f) || !std::isfinite(sc)) throw ctx.error("scale " + std::to_string(sc) + " must be positive and finite");
      int64_t a = axes[i];
      g.scale[a] = sc;
      float len = static_cast<float>(in[a]);
      if (s.coord == ResizeCoord::TfCropAndResize) len = len * (g.roi_end[a] - g.roi_start[a]);
      g.out[a] = static_cast<int64_t>(std::floor(len * sc));
    }
    return g;
  }
  if (sizes.size() != na) throw ctx.error("sizes has " + std::to_string(sizes.size()) + " entries, expected " + std::to_string(na));
  std::string policy = ctx.opset >= 18 ? ctx.node.attr_string("keep_aspect_ratio_policy", "stretch") : "stretch";
  for (size_t i = 0; i < na; ++i) {
    if (sizes[i] < 0) throw ctx.error("negative size " + std::to_string(sizes[i]));
    if (in[axes[i]] == 0) throw ctx.error("cannot resize an empty axis");
  }
  if (policy == "stretch") {
    for (size_t i = 0; i < na; ++i) {
      int64_t a = axes[i];
      g.out[a] = sizes[i];
      g.scale[a] = static_cast<float>(sizes[i]) / static_cast<float>(in[a]);
    }
  } else if (policy == "not_larger" || policy == "not_smaller") {
    bool larger = policy == "not_smaller";
    float sc = 0.0f;
    for (size_t i = 0; i < na; ++i) {
      float si = static_cast<float>(sizes[i]) / static_cast<float>(in[axes[i]]);
      sc = i == 0 ? si : (larger ? std::max(sc, si) : std::min(sc, si));
    }
    for (size_t i = 0; i < na; ++i) {
      int64_t a = axes[i];
      g.scale[a] = sc;
      g.out[a] = static_cast<int64_t>(std::floor(sc * static_cast<float>(in[a]) + 0.5f));
    }
  } else {
    throw ctx.error("unknown keep_aspect_ratio_policy '" + policy + "'");
  }
  for (int64_t a = 0; a < r; ++a)
    if (g.out[a] > 0 && !(g.scale[a] > 0.0f)) throw ctx.error("scale for axis " + std::to_string(a) + " is 0");
  return g;
}

// Contract: docs/arithmetic.md#resize. One output coordinate o of an axis of length n (input), m (output).
ResizeTaps axis_taps(const Settings& s, int64_t o, float scale, int64_t n, int64_t m, float roi0, float roi1,
                     int64_t stride) {
  ResizeTaps t;
  float x = arith::resize_coordinate_f32(s.coord, o, scale, n, m, roi0, roi1);
  float last = static_cast<float>(n - 1);
  if (s.coord == ResizeCoord::TfCropAndResize && (x < 0.0f || x > last)) {
    t.outside = 1;
    return t;
  }
  if (s.mode == Mode::Nearest) {
    int64_t i = arith::resize_nearest_index(s.nearest, x, scale < 1.0f);
    t.off[0] = std::clamp<int64_t>(i, 0, n - 1) * stride;
    return t;
  }
  if (s.mode == Mode::Linear) {
    float xc = x < 0.0f ? 0.0f : (x > last ? last : x);
    float f = arith::floor_f32(xc);
    float d = xc - f;
    int64_t i0 = static_cast<int64_t>(f);
    t.off[0] = i0 * stride;
    if (d == 0.0f) return t;
    t.n = 2;
    t.off[1] = std::min<int64_t>(i0 + 1, n - 1) * stride;
    t.w[0] = 1.0f - d;
    t.w[1] = d;
    return t;
  }
  float f = arith::floor_f32(x);
  arith::cubic_weights_f32(x - f, s.cubic_a, t.w);
  int64_t i0 = static_cast<int64_t>(f) - 1;
  t.n = 4;
  for (int k = 0; k < 4; ++k) {
    int64_t i = i0 + k;
    if (s.exclude_outside && (i < 0 || i >= n)) t.w[k] = 0.0f;
    t.off[k] = std::clamp<int64_t>(i, 0, n - 1) * stride;
  }
  if (s.exclude_outside) {
    float sum = ((t.w[0] + t.w[1]) + t.w[2]) + t.w[3];
    for (float& w : t.w) w = w / sum;
  }
  return t;
}

template <typename T>
uint64_t bits_of(double v) {
  T t = static_cast<T>(v);
  uint64_t b = 0;
  std::memcpy(&b, &t, sizeof(T));
  return b;
}

// extrapolation_value converted to the data type (nearest Resize moves any dtype).
uint64_t extrapolation_bits(DType t, float v) {
  switch (t) {
    case DType::Float: return bits_of<float>(v);
    case DType::Double: return bits_of<double>(v);
    case DType::Int8: return bits_of<int8_t>(v);
    case DType::UInt8: return bits_of<uint8_t>(v);
    case DType::Int16: return bits_of<int16_t>(v);
    case DType::UInt16: return bits_of<uint16_t>(v);
    case DType::Int32: return bits_of<int32_t>(v);
    case DType::UInt32: return bits_of<uint32_t>(v);
    case DType::Int64: return bits_of<int64_t>(v);
    case DType::UInt64: return bits_of<uint64_t>(v);
    case DType::Bool: return v != 0.0f;
    default: return 0;
  }
}

}  // namespace

ResizePlan resize_plan(const KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  bool legacy = ctx.node.op_type == "Upsample" || ctx.opset < 11;
  Settings s = read_settings(ctx, legacy);
  int64_t r = x.rank();
  if (r == 0 || r > kMaxRank) throw ctx.error("Resize of rank " + std::to_string(r), ErrorCode::NotImplemented);
  if (s.mode != Mode::Nearest && x.dtype() != DType::Float)
    throw ctx.error(std::string("linear/cubic Resize of type ") + dtype_name(x.dtype()), ErrorCode::NotImplemented);
  if (dtype_size(x.dtype()) == 0 || dtype_size(x.dtype()) == 16)
    throw ctx.error(std::string("Resize of type ") + dtype_name(x.dtype()), ErrorCode::NotImplemented);
  Geometry g = read_geometry(ctx, x.shape(), s);
  const bool antialias = ctx.opset >= 18 && ctx.node.attr_int("antialias", 0) != 0 && s.mode != Mode::Nearest;
  ResizePlan p;
  p.out_shape = g.out;
  p.dtype = x.dtype();
  p.nearest = s.mode == Mode::Nearest;
  p.extrapolation = s.extrapolation;
  p.extrapolation_bits = extrapolation_bits(x.dtype(), s.extrapolation);
  p.rank = static_cast<int>(r);
  std::vector<int64_t> strides = strides_of(x.shape());
  bool empty_out = shape_numel(g.out) == 0;
  if (!empty_out && x.numel() == 0) throw ctx.error("cannot resize an empty input to a non-empty output");
  for (int64_t a = 0; a < r; ++a) {
    p.out_dims[a] = g.out[a];
    p.axis_start[a] = static_cast<int64_t>(p.spans.size());
    if (empty_out) continue;
    const int64_t n = x.shape()[a];
    // Antialias stretches the filter on the axes that shrink; elsewhere it is the plain filter.
    const bool wide = antialias && g.scale[a] < 1.0f;
    for (int64_t o = 0; o < g.out[a]; ++o) {
      if (!wide) {
        ResizeTaps t = axis_taps(s, o, g.scale[a], n, g.out[a], g.roi_start[a], g.roi_end[a], strides[a]);
        p.spans.push_back({t.n, t.outside, static_cast<int64_t>(p.tap_off.size())});
        p.tap_off.insert(p.tap_off.end(), t.off, t.off + t.n);
        p.tap_w.insert(p.tap_w.end(), t.w, t.w + t.n);
        continue;
      }
      float xo = arith::resize_coordinate_f32(s.coord, o, g.scale[a], n, g.out[a], g.roi_start[a], g.roi_end[a]);
      if (s.coord == ResizeCoord::TfCropAndResize && (xo < 0.0f || xo > static_cast<float>(n - 1))) {
        p.spans.push_back({1, 1, static_cast<int64_t>(p.tap_off.size())});
        p.tap_off.push_back(0);
        p.tap_w.push_back(1.0f);
        continue;
      }
      const int64_t taps = 2 - 2 * arith::resize_antialias_start(g.scale[a], s.mode == Mode::Cubic);
      if (taps > (int64_t{1} << 24))
        throw ctx.error("antialias with scale " + std::to_string(g.scale[a]) + " on axis " + std::to_string(a) +
                        " would read " + std::to_string(taps) + " taps per output element",
                        ErrorCode::NotImplemented);
      const size_t first = p.tap_off.size();
      p.spans.push_back({static_cast<int32_t>(taps), 0, static_cast<int64_t>(first)});
      p.tap_off.resize(first + taps);
      p.tap_w.resize(first + taps);
      arith::resize_antialias_taps_f32(xo, g.scale[a], s.mode == Mode::Cubic, s.cubic_a, s.exclude_outside, n,
                                       strides[a], &p.tap_off[first], &p.tap_w[first]);
    }
  }
  return p;
}

namespace {

// Opset 16 spells the modes bilinear and bicubic, 20 and later linear and cubic; both are taken at every opset.
arith::GridMode grid_mode(const KernelContext& ctx) {
  return lookup<arith::GridMode>(ctx, "mode", ctx.node.attr_string("mode", ctx.opset < 20 ? "bilinear" : "linear"),
                                 {{"nearest", arith::GridMode::Nearest}, {"linear", arith::GridMode::Linear},
                                  {"bilinear", arith::GridMode::Linear}, {"cubic", arith::GridMode::Cubic},
                                  {"bicubic", arith::GridMode::Cubic}});
}

}  // namespace

GridSampleElement grid_sample_plan(const KernelContext& ctx, Shape* out_shape) {
  require_float(ctx, ctx.input(0), "X");
  require_float(ctx, ctx.input(1), "grid");
  const Shape& x = ctx.input(0).shape();
  const Shape& grid = ctx.input(1).shape();
  int64_t axes = static_cast<int64_t>(x.size()) - 2;
  if (axes < 1 || axes > arith::kGridMaxAxes)
    throw ctx.error("GridSample input X has rank " + std::to_string(x.size()) + "; ranks 3 to 5 are supported",
                    ErrorCode::NotImplemented);
  if (grid.size() != x.size() || grid[0] != x[0] || grid.back() != axes)
    throw ctx.error("GridSample input grid has shape " + shape_string(grid) + "; expected (" + std::to_string(x[0]) +
                    ", ..., " + std::to_string(axes) + ") of rank " + std::to_string(x.size()) + " for X " +
                    shape_string(x));
  arith::GridSampleGeometry g;
  g.axes = static_cast<int>(axes);
  g.mode = grid_mode(ctx);
  g.padding = lookup<arith::GridPadding>(ctx, "padding_mode", ctx.node.attr_string("padding_mode", "zeros"),
                                         {{"zeros", arith::GridPadding::Zeros},
                                          {"border", arith::GridPadding::Border},
                                          {"reflection", arith::GridPadding::Reflection}});
  g.align_corners = ctx.node.attr_int("align_corners", 0) != 0;
  g.channels = x[1];
  *out_shape = {x[0], x[1]};
  for (int k = 0; k < g.axes; ++k) {
    g.in_dims[k] = x[2 + k];
    g.out_dims[k] = grid[1 + k];
    g.in_plane *= x[2 + k];
    g.out_plane *= grid[1 + k];
    out_shape->push_back(grid[1 + k]);
  }
  if (g.in_plane == 0 && shape_numel(*out_shape) > 0)
    throw ctx.error("GridSample input X " + shape_string(x) + " has an empty spatial axis to sample from");
  return {g, ctx.input(0).data<float>(), ctx.input(1).data<float>()};
}

AffineGridElement affine_grid_plan(const KernelContext& ctx, Shape* out_shape) {
  const Tensor& theta = ctx.input(0);
  require_float(ctx, theta, "theta");
  const std::vector<int64_t> size = ctx.host_input(1).to_ints();
  if (size.size() != 4 && size.size() != 5)
    throw ctx.error("size " + shape_string(size) + " must have 4 entries (N, C, H, W) or 5 (N, C, D, H, W)");
  for (int64_t d : size)
    if (d < 0) throw ctx.error("size " + shape_string(size) + " has a negative entry");
  const bool three_d = size.size() == 5;
  const Shape want = three_d ? Shape{size[0], 3, 4} : Shape{size[0], 2, 3};
  if (theta.shape() != want)
    throw ctx.error("theta " + shape_string(theta.shape()) + " must be " + shape_string(want) + " for size " +
                    shape_string(size));
  const int64_t depth = three_d ? size[2] : 1, height = size[size.size() - 2], width = size.back();
  *out_shape = three_d ? Shape{size[0], depth, height, width, 3} : Shape{size[0], height, width, 2};
  const bool align = ctx.node.attr_int("align_corners", 0) != 0;
  return {{theta.data<float>(), depth, height, width, three_d, align}};
}

namespace {
const OpEntry kRows[] = {
    {"Upsample", 7, 9, &cpu::resize, LOCKSTEP_CUDA_KERNEL(resize)},
    {"Resize", 10, kNewestOpset, &cpu::resize, LOCKSTEP_CUDA_KERNEL(resize)},
    {"GridSample", 16, kNewestOpset, &cpu::grid_sample, LOCKSTEP_CUDA_KERNEL(grid_sample)},
    {"AffineGrid", 20, kNewestOpset, &cpu::affine_grid, LOCKSTEP_CUDA_KERNEL(affine_grid)},
};
}  // namespace

std::span<const OpEntry> resize_ops() { return kRows; }

}  // namespace lockstep
