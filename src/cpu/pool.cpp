// CPU kernels of the pool family. Contract: docs/contract/pool.md.
#include <algorithm>
#include <limits>

#include "arith/reduce_ops.h"
#include "ops/pool.h"
#include "ops/reduce.h"
#include "ops/registry.h"
#include "runtime/thread_pool.h"

namespace lockstep::cpu {

namespace {

int64_t grain_for(int64_t n) { return std::max<int64_t>(1, 16384 / std::max<int64_t>(1, n)); }

int64_t window_size(const arith::PoolGeom& g) { return g.kernel[0] * g.kernel[1] * g.kernel[2]; }

// Contract: MaxPool, sequential rule over the taps inside the input; docs/contract/pool.md#maxpool.
template <typename T>
void max_pool_typed(KernelContext& ctx, const arith::PoolGeom& g, const T* x, T* y, int64_t* indices) {
  const T lowest = std::numeric_limits<T>::has_infinity ? -std::numeric_limits<T>::infinity()
                                                        : std::numeric_limits<T>::lowest();
  ctx.pool->parallel_for(
      g.planes * g.out_plane,
      [&](int64_t begin, int64_t end) {
        for (int64_t o = begin; o < end; ++o) {
          const int64_t plane = o / g.out_plane;
          int64_t at = -1;
          y[o] = arith::maxpool_window(g, x + plane * g.in_plane, o % g.out_plane, lowest, &at);
          if (indices) indices[o] = at < 0 ? -1 : plane * g.in_plane + at;
        }
      },
      grain_for(window_size(g)));
}

}  // namespace

void max_pool(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  require_dtype(ctx, x.dtype(), {DType::Float, DType::Int8, DType::UInt8});
  Shape out_shape;
  arith::PoolGeom g = plan_pool(ctx, true, out_shape);
  Tensor& y = ctx.output(0, x.dtype(), out_shape);
  int64_t* indices = nullptr;
  if (ctx.node.outputs.size() > 1 && !ctx.node.outputs[1].empty())
    indices = ctx.output(1, DType::Int64, out_shape).data<int64_t>();
  if (y.numel() == 0) return;
  switch (x.dtype()) {
    case DType::Float: max_pool_typed(ctx, g, x.data<float>(), y.data<float>(), indices); break;
    case DType::Int8: max_pool_typed(ctx, g, x.data<int8_t>(), y.data<int8_t>(), indices); break;
    default: max_pool_typed(ctx, g, x.data<uint8_t>(), y.data<uint8_t>(), indices); break;
  }
}

// Contract: AveragePool, canonical sum of the window's terms / their count; docs/contract/pool.md#averagepool.
void average_pool(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  require_dtype(ctx, x.dtype(), {DType::Float});
  Shape out_shape;
  arith::PoolGeom g = plan_pool(ctx, false, out_shape);
  Tensor& y = ctx.output(0, DType::Float, out_shape);
  if (y.numel() == 0) return;
  const float* xd = x.data<float>();
  float* yd = y.data<float>();
  ctx.pool->parallel_for(
      g.planes * g.out_plane,
      [&](int64_t begin, int64_t end) {
        for (int64_t o = begin; o < end; ++o)
          yd[o] = arith::avgpool_window_f32(g, xd + (o / g.out_plane) * g.in_plane, o % g.out_plane);
      },
      grain_for(window_size(g)));
}

// Contract: GlobalAveragePool = S(plane) / spatial, GlobalMaxPool = sequential max; docs/contract/pool.md#global.
void global_pool(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const bool is_max = static_cast<GlobalKind>(ctx.entry.variant) == GlobalKind::Max;
  require_dtype(ctx, x.dtype(), {DType::Float});
  Shape out_shape;
  GlobalPlan p = plan_global_pool(ctx, out_shape);
  Tensor& y = ctx.output(0, DType::Float, out_shape);
  if (y.numel() == 0) return;
  const float* xd = x.data<float>();
  float* yd = y.data<float>();
  const float ninf = -std::numeric_limits<float>::infinity();
  ctx.pool->parallel_for(
      p.planes,
      [&](int64_t begin, int64_t end) {
        for (int64_t r = begin; r < end; ++r) {
          const float* plane = xd + r * p.spatial;
          yd[r] = is_max ? arith::extreme_seq_f32<true>(p.spatial, ninf, [plane](int64_t i) { return plane[i]; })
                         : sum_contiguous_f32(plane, p.spatial) / static_cast<float>(p.spatial);
        }
      },
      grain_for(p.spatial));
}

}  // namespace lockstep::cpu
