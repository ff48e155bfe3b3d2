// The pool family (MaxPool, AveragePool, GlobalAveragePool, GlobalMaxPool): attributes per opset, output shapes
// and the window geometry both devices follow. Contract: docs/arithmetic.md#pool.
#pragma once

#include <cstdint>
#include <string>

#include "arith/reduce_ops.h"
#include "ops/common.h"
#include "ops/registry.h"
#include "runtime/kernel.h"

namespace lockstep {

/// MaxPool / AveragePool: kernel_shape, strides, dilations, pads, auto_pad, ceil_mode (and count_include_pad,
/// storage_order). Computes the output shape; 1-D and 2-D pools are padded in front to three spatial dims.
arith::PoolGeom plan_pool(const KernelContext& ctx, bool is_max, Shape& out_shape);

/// Global pools: planes = N*C, each of `spatial` contiguous elements; out_shape = [N, C, 1, ...].
struct GlobalPlan {
  int64_t planes = 0, spatial = 1;
};
GlobalPlan plan_global_pool(const KernelContext& ctx, Shape& out_shape);

/// Variants of the global pool kernel.
enum class GlobalKind : int { Average, Max };

/// Throws unless the pool's input has one of the allowed dtypes (MaxPool: float, int8, uint8; others: float).
void require_pool_dtype(const KernelContext& ctx, DType t, bool is_max);

// The kernels' drivers, shared by both devices. `Dev` holds only the device's loops, called when y has elements:
//   max_pool<T>(ctx, g, x, y, indices)    indices is null unless the node asks for them
//   average_pool(ctx, g, x, y)
//   lp_pool(ctx, g, p, x, y)
//   global_pool(ctx, p, is_max, x, y)
template <class Dev>
void run_max_pool(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  require_pool_dtype(ctx, x.dtype(), true);
  Shape out_shape;
  arith::PoolGeom g = plan_pool(ctx, true, out_shape);
  Tensor& y = ctx.output(0, x.dtype(), out_shape);
  int64_t* indices = nullptr;
  if (ctx.node.outputs.size() > 1 && !ctx.node.outputs[1].empty())
    indices = ctx.output(1, DType::Int64, out_shape).data<int64_t>();
  if (y.numel() == 0) return;
  auto run = [&](auto tag) {
    using T = decltype(tag);
    Dev::template max_pool<T>(ctx, g, x.data<T>(), y.data<T>(), indices);
  };
  switch (x.dtype()) {
    case DType::Float: return run(float{});
    case DType::Int8: return run(int8_t{});
    default: return run(uint8_t{});
  }
}

template <class Dev>
void run_average_pool(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  require_pool_dtype(ctx, x.dtype(), false);
  Shape out_shape;
  arith::PoolGeom g = plan_pool(ctx, false, out_shape);
  Tensor& y = ctx.output(0, DType::Float, out_shape);
  if (y.numel() > 0) Dev::average_pool(ctx, g, x.data<float>(), y.data<float>());
}

/// LpPool: the AveragePool geometry with every padding tap a +0 term (the spec pads with zeros); p >= 1.
template <class Dev>
void run_lp_pool(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  require_pool_dtype(ctx, x.dtype(), false);
  Shape out_shape;
  arith::PoolGeom g = plan_pool(ctx, false, out_shape);
  g.count_include_pad = true;
  const int64_t p = ctx.node.attr_int("p", 2);
  if (p < 1) throw ctx.error("p must be at least 1, got " + std::to_string(p));
  Tensor& y = ctx.output(0, DType::Float, out_shape);
  if (y.numel() > 0) Dev::lp_pool(ctx, g, p, x.data<float>(), y.data<float>());
}

template <class Dev>
void run_global_pool(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  require_pool_dtype(ctx, x.dtype(), false);
  Shape out_shape;
  GlobalPlan p = plan_global_pool(ctx, out_shape);
  Tensor& y = ctx.output(0, DType::Float, out_shape);
  if (y.numel() == 0) return;
  const bool is_max = static_cast<GlobalKind>(ctx.entry.variant) == GlobalKind::Max;
  Dev::global_pool(ctx, p, is_max, x.data<float>(), y.data<float>());
}

namespace cpu {
void max_pool(KernelContext& ctx);
void average_pool(KernelContext& ctx);
void lp_pool(KernelContext& ctx);
void global_pool(KernelContext& ctx);
}  // namespace cpu
namespace cuda {
void max_pool(KernelContext& ctx);
void average_pool(KernelContext& ctx);
void lp_pool(KernelContext& ctx);
void global_pool(KernelContext& ctx);
}  // namespace cuda

}  // namespace lockstep
