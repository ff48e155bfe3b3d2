// The reduce family (Reduce*, ArgMax/ArgMin, Softmax/LogSoftmax): attribute parsing, validation, output shapes
// and the iteration plans both devices follow. Contract: docs/contract/reduce.md.
#pragma once

#include <cstdint>

#include "arith/reduce_ops.h"
#include "ops/common.h"
#include "runtime/kernel.h"

namespace lockstep {

/// How a Reduce* node walks its input. Adjacent dims of the same kind (kept or reduced) are merged and dims of
/// size 1 dropped, so the reduced elements of one output are enumerated in row-major order of the reduced axes
/// by an odometer over red_dims. POD: CUDA kernels take it by value.
struct ReducePlan {
  int64_t n_out = 0;  // output elements
  int64_t n_red = 0;  // reduced elements per output (1 when no axis is reduced)
  bool noop = false;  // noop_with_empty_axes with empty axes: output = input
  int kept_rank = 0, red_rank = 0;
  int64_t kept_dims[kMaxRank], kept_strides[kMaxRank];  // input strides of the kept dims, output order
  int64_t red_dims[kMaxRank], red_strides[kMaxRank];
  /// The reduced elements of an output are contiguous in memory.
  LOCKSTEP_HD bool contiguous() const { return red_rank == 0 || (red_rank == 1 && red_strides[0] == 1); }
};

/// Input offset of output o's first reduced element.
LOCKSTEP_HD int64_t reduce_base_offset(const ReducePlan& p, int64_t o) {
  int64_t off = 0;
  for (int d = p.kept_rank - 1; d >= 0; --d) {
    off += (o % p.kept_dims[d]) * p.kept_strides[d];
    o /= p.kept_dims[d];
  }
  return off;
}
/// Offset of the i-th reduced element (row-major over the reduced axes) from the base.
LOCKSTEP_HD int64_t reduce_term_offset(const ReducePlan& p, int64_t i) {
  int64_t off = 0;
  for (int d = p.red_rank - 1; d >= 0; --d) {
    off += (i % p.red_dims[d]) * p.red_strides[d];
    i /= p.red_dims[d];
  }
  return off;
}

/// Reads axes (attribute or input, per opset), keepdims and noop_with_empty_axes; computes the output shape.
ReducePlan plan_reduce(const KernelContext& ctx, Shape& out_shape);

/// A softmax-like walk: rows of `len` elements, `inner` apart, at offset outer * len * inner + inner_index.
struct AxisPlan {
  int64_t outer = 1, len = 1, inner = 1;
  LOCKSTEP_HD int64_t rows() const { return outer * inner; }
  LOCKSTEP_HD int64_t row_base(int64_t r) const { return (r / inner) * len * inner + r % inner; }
};
/// Softmax/LogSoftmax: opset < 13 flattens at axis (default 1); opset >= 13 uses one axis (default -1).
AxisPlan plan_softmax(const KernelContext& ctx);
/// ArgMax/ArgMin: axis (default 0), keepdims, select_last_index; the output shape.
AxisPlan plan_arg_reduce(const KernelContext& ctx, Shape& out_shape, bool& select_last);

/// Rejects dtypes this family does not compute on, naming the dtype.
void require_dtype(const KernelContext& ctx, DType t, std::initializer_list<DType> allowed);

namespace cpu {
// The canonical reduction over n contiguous floats (AVX2 when the host has it, same bits as the reference);
// defined in src/cpu/reduce.cpp and shared by the normalization and pool CPU kernels.
float sum_contiguous_f32(const float* x, int64_t n);          // sum of x_i
float sum_squares_contiguous_f32(const float* x, int64_t n);  // sum of x_i * x_i
float sum_abs_contiguous_f32(const float* x, int64_t n);      // sum of |x_i|
float product_contiguous_f32(const float* x, int64_t n);      // product of x_i

void reduce(KernelContext& ctx);
void arg_reduce(KernelContext& ctx);
void softmax(KernelContext& ctx);
}  // namespace cpu
namespace cuda {
void reduce(KernelContext& ctx);
void arg_reduce(KernelContext& ctx);
void softmax(KernelContext& ctx);
}  // namespace cuda

/// Variants of the softmax row: ctx.entry.variant.
enum class SoftmaxKind : int { Softmax, LogSoftmax };
/// Variants of arg_reduce.
enum class ArgKind : int { ArgMax, ArgMin };

}  // namespace lockstep
