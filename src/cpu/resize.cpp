// CPU kernel of the resize family: per output element, the taps of each axis (computed once on the host by
// src/ops/resize.cpp) are combined by arith::resize_separable_f32, or, for nearest, one element is copied.
#include <cstring>

#include "ops/resize.h"
#include "runtime/thread_pool.h"

namespace lockstep::cpu {

namespace {

// Resolves the per-axis tap pointers of output row `row` (every axis but the last); false if any is outside.
bool row_taps(const ResizePlan& p, int64_t row, const arith::ResizeTaps** e) {
  bool outside = false;
  for (int k = p.rank - 2; k >= 0; --k) {
    int64_t o = row % p.out_dims[k];
    row /= p.out_dims[k];
    e[k] = &p.taps[p.axis_start[k] + o];
    outside |= e[k]->outside != 0;
  }
  return !outside;
}

// Contract: exact copy of the nearest element; see docs/arithmetic.md#nearest.
template <typename T>
void resize_nearest(const ResizePlan& p, const T* in, T* out, int64_t rows, ThreadPool* pool) {
  int last = p.rank - 1;
  int64_t inner = p.out_dims[last];
  T extra;
  std::memcpy(&extra, &p.extrapolation_bits, sizeof(T));
  pool->parallel_for(rows, [&](int64_t begin, int64_t end) {
    const arith::ResizeTaps* e[kMaxRank];
    for (int64_t row = begin; row < end; ++row) {
      bool inside = row_taps(p, row, e);
      int64_t base = 0;
      for (int k = 0; k < last; ++k) base += e[k]->off[0];
      for (int64_t j = 0; j < inner; ++j) {
        const arith::ResizeTaps& t = p.taps[p.axis_start[last] + j];
        out[row * inner + j] = inside && !t.outside ? in[base + t.off[0]] : extra;
      }
    }
  }, std::max<int64_t>(1, 4096 / inner));
}

// Contract: arith::resize_separable_f32, innermost axis first; see docs/arithmetic.md#interpolation.
void resize_interpolate_f32(const ResizePlan& p, const float* in, float* out, int64_t rows, ThreadPool* pool) {
  int last = p.rank - 1;
  int64_t inner = p.out_dims[last];
  pool->parallel_for(rows, [&](int64_t begin, int64_t end) {
    const arith::ResizeTaps* e[kMaxRank];
    for (int64_t row = begin; row < end; ++row) {
      bool inside = row_taps(p, row, e);
      for (int64_t j = 0; j < inner; ++j) {
        e[last] = &p.taps[p.axis_start[last] + j];
        out[row * inner + j] = inside && !e[last]->outside ? arith::resize_separable_f32<kMaxRank>(in, p.rank, e)
                                                           : p.extrapolation;
      }
    }
  }, std::max<int64_t>(1, 1024 / inner));
}

}  // namespace

// Contract: docs/arithmetic.md#resize (taps from the host plan, then nearest copy or separable interpolation).
void resize(KernelContext& ctx) {
  ResizePlan p = resize_plan(ctx);
  const Tensor& x = ctx.input(0);
  Tensor& out = ctx.output(0, p.dtype, p.out_shape);
  if (out.numel() == 0) return;
  int64_t rows = out.numel() / p.out_dims[p.rank - 1];
  if (!p.nearest) return resize_interpolate_f32(p, x.data<float>(), out.data<float>(), rows, ctx.pool);
  switch (dtype_size(p.dtype)) {
    case 1: return resize_nearest(p, x.data<uint8_t>(), out.data<uint8_t>(), rows, ctx.pool);
    case 2: return resize_nearest(p, x.data<uint16_t>(), out.data<uint16_t>(), rows, ctx.pool);
    case 4: return resize_nearest(p, x.data<uint32_t>(), out.data<uint32_t>(), rows, ctx.pool);
    default: return resize_nearest(p, x.data<uint64_t>(), out.data<uint64_t>(), rows, ctx.pool);
  }
}

}  // namespace lockstep::cpu
