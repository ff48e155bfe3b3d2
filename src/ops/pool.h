// The pool family (MaxPool, AveragePool, GlobalAveragePool, GlobalMaxPool): attributes per opset, output shapes
// and the window geometry both devices follow. Contract: docs/contract/pool.md.
#pragma once

#include <cstdint>

#include "arith/reduce_ops.h"
#include "ops/common.h"
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

namespace cpu {
void max_pool(KernelContext& ctx);
void average_pool(KernelContext& ctx);
void global_pool(KernelContext& ctx);
}  // namespace cpu
namespace cuda {
void max_pool(KernelContext& ctx);
void average_pool(KernelContext& ctx);
void global_pool(KernelContext& ctx);
}  // namespace cuda

}  // namespace lockstep
