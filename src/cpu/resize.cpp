// CPU kernel of the resize family: per output element, the taps of each axis (computed once on the host by
// src/ops/resize.cpp) are combined by arith::resize_separable_f32, or, for nearest, one element is copied.
// GridSample computes its taps per output element (arith::grid_sample_element_f32).
#include "cpu/fill.h"
#include "ops/resize.h"
#include "runtime/thread_pool.h"

namespace lockstep::cpu {

namespace {

// Resolves the taps of output row `row` on every axis but the last into v (e[k] = &v[k]); false if any is outside.
bool row_taps(const ResizePlan& p, int64_t row, arith::ResizeTapView* v, const arith::ResizeTapView** e) {
  bool outside = false;
  for (int k = p.rank - 2; k >= 0; --k) {
    int64_t o = row % p.out_dims[k];
    row /= p.out_dims[k];
    v[k] = arith::resize_tap_view(p.spans[p.axis_start[k] + o], p.tap_off.data(), p.tap_w.data());
    e[k] = &v[k];
    outside |= v[k].outside != 0;
  }
  return !outside;
}

// Calls row_fn(row, inside, v, e) for each output row (all axes but the last), rows split over the pool about
// `elements_per_task` outputs at a time; v[k] (= *e[k]) holds the row's taps on axis k < rank - 1.
template <typename RowFn>
void for_each_row(const ResizePlan& p, int64_t numel, int64_t elements_per_task, ThreadPool* pool, RowFn&& row_fn) {
  int64_t inner = p.out_dims[p.rank - 1];
  pool->parallel_for(numel / inner, [&](int64_t begin, int64_t end) {
    arith::ResizeTapView v[kMaxRank];
    const arith::ResizeTapView* e[kMaxRank];
    for (int64_t row = begin; row < end; ++row) row_fn(row, row_taps(p, row, v, e), v, e);
  }, std::max<int64_t>(1, elements_per_task / inner));
}

// Contract: exact copy of the nearest element; see docs/arithmetic.md#nearest.
template <typename T>
void resize_nearest(const ResizePlan& p, const T* in, T* out, T extra, int64_t numel, ThreadPool* pool) {
  int last = p.rank - 1;
  int64_t inner = p.out_dims[last];
  for_each_row(p, numel, 4096, pool, [&](int64_t row, bool inside, arith::ResizeTapView* v,
                                         const arith::ResizeTapView**) {
    int64_t base = 0;
    for (int k = 0; k < last; ++k) base += v[k].off[0];
    for (int64_t j = 0; j < inner; ++j) {
      const arith::ResizeSpan& t = p.spans[p.axis_start[last] + j];
      out[row * inner + j] = inside && !t.outside ? in[base + p.tap_off[t.first]] : extra;
    }
  });
}

// Contract: arith::resize_separable_f32, innermost axis first; see docs/arithmetic.md#interpolation.
void resize_interpolate_f32(const ResizePlan& p, const float* in, float* out, int64_t numel, ThreadPool* pool) {
  int last = p.rank - 1;
  int64_t inner = p.out_dims[last];
  for_each_row(p, numel, 1024, pool, [&](int64_t row, bool inside, arith::ResizeTapView* v,
                                         const arith::ResizeTapView** e) {
    e[last] = &v[last];
    for (int64_t j = 0; j < inner; ++j) {
      v[last] = arith::resize_tap_view(p.spans[p.axis_start[last] + j], p.tap_off.data(), p.tap_w.data());
      out[row * inner + j] = inside && !v[last].outside ? arith::resize_separable_f32<kMaxRank>(in, p.rank, e)
                                                        : p.extrapolation;
    }
  });
}

struct CpuResize {
  template <typename T>
  static void nearest(KernelContext& ctx, const ResizePlan& p, const T* in, T* out, T extra, int64_t n) {
    resize_nearest(p, in, out, extra, n, ctx.pool);
  }
  static void interpolate_f32(KernelContext& ctx, const ResizePlan& p, const float* in, float* out, int64_t n) {
    resize_interpolate_f32(p, in, out, n, ctx.pool);
  }
};

}  // namespace

// Contract: docs/arithmetic.md#resize (taps from the host plan, then nearest copy or separable interpolation).
void resize(KernelContext& ctx) { run_resize<CpuResize>(ctx); }

// Contract: arith::grid_sample_element_f32 (per-element taps, separable interpolation); see
// docs/arithmetic.md#gridsample.
void grid_sample(KernelContext& ctx) {
  Shape out_shape;
  GridSampleElement element = grid_sample_plan(ctx, &out_shape);
  fill_output_f32(ctx, out_shape, 1024, element);
}

// Contract: arith::affine_grid_element_f32 (theta row times the homogeneous position, as MatMul); see
// docs/arithmetic.md#affinegrid.
void affine_grid(KernelContext& ctx) {
  Shape out_shape;
  AffineGridElement element = affine_grid_plan(ctx, &out_shape);
  fill_output_f32(ctx, out_shape, 1024, element);
}

}  // namespace lockstep::cpu
