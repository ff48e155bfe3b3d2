// The resize family (Resize 10-23, Upsample 7-9): parsing of every opset's inputs and attributes into one plan
// of per-axis taps, shared by the CPU and CUDA kernels (docs/arithmetic.md#resize).
#pragma once

#include <cstring>
#include <vector>

#include "arith/grid_sample.h"
#include "arith/resize.h"
#include "ops/common.h"
#include "ops/tensor.h"
#include "runtime/kernel.h"

namespace lockstep {

struct ResizePlan {
  Shape out_shape;
  DType dtype = DType::Undefined;
  bool nearest = true;          // nearest: pure data movement (any dtype); else float32 interpolation
  float extrapolation = 0.0f;   // output where a tap is outside (tf_crop_and_resize)
  uint64_t extrapolation_bits = 0;  // the same value converted to the data type, as its bytes (nearest)
  int rank = 0;
  int64_t out_dims[kMaxRank];
  int64_t axis_start[kMaxRank];             // axis k's taps are spans[axis_start[k] + o_k]
  // Computed once on the host, identical for both devices: span (axis, o) owns tap_off/tap_w[first .. first+n-1].
  std::vector<arith::ResizeSpan> spans;
  std::vector<int64_t> tap_off;
  std::vector<float> tap_w;
};

/// Reads inputs/attributes of Resize or Upsample at ctx.opset, validates, and builds the taps.
ResizePlan resize_plan(const KernelContext& ctx);

// The kernel's driver, shared by both devices: plan, output allocation and element-size dispatch. `Dev` holds
// only the device's loops, each called with n > 0 output elements:
//   nearest<T>(ctx, plan, in, out, extra, n)    T: the element's unsigned word; extra: the extrapolation value
//   interpolate_f32(ctx, plan, in, out, n)
template <class Dev>
void run_resize(KernelContext& ctx) {
  ResizePlan p = resize_plan(ctx);
  const Tensor& x = ctx.input(0);
  Tensor& out = ctx.output(0, p.dtype, p.out_shape);
  const int64_t n = out.numel();
  if (n == 0) return;
  if (!p.nearest) return Dev::interpolate_f32(ctx, p, x.data<float>(), out.data<float>(), n);
  by_element_size(static_cast<int>(dtype_size(p.dtype)), [&](auto w) {
    using T = decltype(w);
    T extra;
    std::memcpy(&extra, &p.extrapolation_bits, sizeof(T));
    Dev::template nearest<T>(ctx, p, x.data<T>(), out.data<T>(), extra, n);
  });
}

/// GridSample's output element e, for either device's fill (x and grid are the device's pointers).
struct GridSampleElement {
  arith::GridSampleGeometry g;
  const float* x;
  const float* grid;
  LOCKSTEP_HD float operator()(int64_t e) const { return arith::grid_sample_element_f32(g, x, grid, e); }
};
/// Validates a GridSample node (X: N, C, spatial...; grid: N, out..., axes) and returns its element and shape.
GridSampleElement grid_sample_plan(const KernelContext& ctx, Shape* out_shape);

/// AffineGrid's output element e, for either device's fill (theta is the device's pointer).
struct AffineGridElement {
  arith::AffineGridGeometry g;
  LOCKSTEP_HD float operator()(int64_t e) const { return arith::affine_grid_element_f32(g, e); }
};
/// Validates an AffineGrid node (theta: N, 2, 3 or N, 3, 4; size: N, C, [D,] H, W) and returns its element and
/// output shape (N, [D,] H, W, 2 or 3).
AffineGridElement affine_grid_plan(const KernelContext& ctx, Shape* out_shape);

namespace cpu {
void resize(KernelContext& ctx);
void grid_sample(KernelContext& ctx);
void affine_grid(KernelContext& ctx);
}
namespace cuda {
void resize(KernelContext& ctx);
void grid_sample(KernelContext& ctx);
void affine_grid(KernelContext& ctx);
}

}  // namespace lockstep
