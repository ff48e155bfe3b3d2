// The reduce family (Reduce*, ArgMax/ArgMin, Softmax/LogSoftmax, and the per-line Hardmax, LpNormalization,
// CumSum, CumProd): attribute parsing, validation, output shapes and the iteration plans both devices follow.
// Contract: docs/arithmetic.md#reduce.
#pragma once

#include <cstdint>
#include <optional>

#include "arith/reduce_ops.h"
#include "ops/common.h"
#include "ops/elementwise.h"
#include "ops/registry.h"
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

/// The lines along one (normalized) axis of a tensor of shape s.
AxisPlan plan_line(const Shape& s, int64_t axis);
/// LpNormalization: axis (default -1); p (default 2) must be 1 or 2.
AxisPlan plan_lp_normalization(const KernelContext& ctx, int64_t& p);
/// CumSum/CumProd: the axis from input 1 (a one-element int32/int64 tensor), exclusive and reverse.
AxisPlan plan_scan(const KernelContext& ctx, bool& exclusive, bool& reverse);

/// Rejects dtypes this family does not compute on, naming the dtype.
void require_dtype(const KernelContext& ctx, DType t, std::initializer_list<DType> allowed);

/// Variants of the softmax row: ctx.entry.variant. SoftmaxReplacingNaN is lockstep.SoftmaxReplacingNaN (made by
/// src/graph/fuse.cpp from Softmax -> IsNaN -> Where): Softmax, then each NaN output replaced by attribute `value`.
enum class SoftmaxKind : int { Softmax, LogSoftmax, SoftmaxReplacingNaN };
/// Variants of the per-line kernel (`lines`): each line along an axis is one task (arith's *Row functors).
enum class LineKind : int { Hardmax, LpNormalization, CumSum, CumProd };
/// Variants of arg_reduce.
enum class ArgKind : int { ArgMax, ArgMin };

/// Rejects dtypes Reduce* of this kind does not compute on: float and double for all; int32/int64 for the exact
/// kinds; int8, uint8 and bool also for Max and Min.
void require_reduce_dtype(const KernelContext& ctx, arith::ReduceKind kind, DType t);
/// noop_with_empty_axes copies the input for the kinds whose reduction over one element is the identity.
bool reduce_copies_input(const ReducePlan& p, arith::ReduceKind kind);

/// Calls fn(T{}) with T the storage type of a dtype this family computes on (uint8_t for UInt8 and Bool).
template <class Fn>
void dispatch_reduce_dtype(DType t, Fn&& fn) {
  switch (t) {
    case DType::Float: return fn(float{});
    case DType::Int32: return fn(int32_t{});
    case DType::Int64: return fn(int64_t{});
    case DType::Int8: return fn(int8_t{});
    default: return fn(uint8_t{});
  }
}

// The kernels' drivers, shared by both devices. `Dev` holds only the device's loops:
//   copy(ctx, x, y)                                   y = x (noop_with_empty_axes)
//   reduce<T>(ctx, p, kind, x, y)                     p.n_out > 0
//   arg_reduce<T>(ctx, p, is_max, last, x, y)         y has elements
//   softmax(ctx, p, log, x, y)                        y has elements
template <class Dev>
void run_reduce(KernelContext& ctx) {
  const auto kind = static_cast<arith::ReduceKind>(ctx.entry.variant);
  const Tensor& x = ctx.input(0);
  require_reduce_dtype(ctx, kind, x.dtype());
  Shape out_shape;
  ReducePlan p = plan_reduce(ctx, out_shape);
  Tensor& y = ctx.output(0, x.dtype(), out_shape);
  if (p.n_out == 0) return;
  if (reduce_copies_input(p, kind)) return Dev::copy(ctx, x, y);
  if (x.dtype() == DType::Double)
    return Dev::template reduce<double>(ctx, p, kind, x.data<double>(), y.data<double>());
  dispatch_reduce_dtype(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    Dev::template reduce<T>(ctx, p, kind, x.data<T>(), y.data<T>());
  });
}

template <class Dev>
void run_arg_reduce(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  require_dtype(ctx, x.dtype(), {DType::Float, DType::Int32, DType::Int64, DType::Int8, DType::UInt8});
  Shape out_shape;
  bool last = false;
  AxisPlan p = plan_arg_reduce(ctx, out_shape, last);
  Tensor& y = ctx.output(0, DType::Int64, out_shape);
  if (y.numel() == 0) return;
  const bool is_max = static_cast<ArgKind>(ctx.entry.variant) == ArgKind::ArgMax;
  dispatch_reduce_dtype(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    Dev::template arg_reduce<T>(ctx, p, is_max, last, x.data<T>(), y.data<int64_t>());
  });
}

template <class Dev>
void run_softmax(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const auto kind = static_cast<SoftmaxKind>(ctx.entry.variant);
  require_dtype(ctx, x.dtype(), {DType::Float, DType::Double});
  AxisPlan p = plan_softmax(ctx);
  Tensor& y = ctx.output(0, x.dtype(), x.shape());
  if (y.numel() == 0) return;
  if (x.dtype() == DType::Double) {  // one row per CPU task or CUDA thread: arith::softmax_row_f64
    if (kind == SoftmaxKind::SoftmaxReplacingNaN)
      throw ctx.error("SoftmaxReplacingNaN on double is not supported", ErrorCode::NotImplemented);
    return Dev::lines(ctx, p, arith::SoftmaxRowF64{kind == SoftmaxKind::LogSoftmax}, x.data<double>(),
                      y.data<double>());
  }
  // SoftmaxReplacingNaN: then its selection, arith::nan_replaced_f32 per element (the devices may do both in one pass).
  const std::optional<float> nan_value =
      kind == SoftmaxKind::SoftmaxReplacingNaN ? std::optional<float>(ctx.node.attr_float("value", 0.0f)) : std::nullopt;
  Dev::softmax(ctx, p, kind == SoftmaxKind::LogSoftmax, x.data<float>(), y.data<float>(), nan_value);
}

/// Hardmax, LpNormalization (float32) and CumSum/CumProd (float, double, int32, int64, uint32, uint64): one
/// arith row functor per line; `Dev::lines(ctx, p, row, x, y)` runs it over p.rows() lines.
template <class Dev>
void run_lines(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const auto kind = static_cast<LineKind>(ctx.entry.variant);
  if (kind == LineKind::Hardmax || kind == LineKind::LpNormalization) {
    require_dtype(ctx, x.dtype(), {DType::Float});
    int64_t p = 2;
    AxisPlan plan = kind == LineKind::Hardmax ? plan_softmax(ctx) : plan_lp_normalization(ctx, p);
    Tensor& y = ctx.output(0, DType::Float, x.shape());
    if (y.numel() == 0) return;
    if (kind == LineKind::Hardmax) Dev::lines(ctx, plan, arith::HardmaxRowF32{}, x.data<float>(), y.data<float>());
    else Dev::lines(ctx, plan, arith::LpNormalizeRowF32{p}, x.data<float>(), y.data<float>());
    return;
  }
  bool exclusive = false, reverse = false;
  AxisPlan plan = plan_scan(ctx, exclusive, reverse);
  using namespace arith;
  dispatch_dtype<kFloats | kI32 | kI64 | kU32 | kU64>(ctx, x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    Tensor& y = ctx.output(0, x.dtype(), x.shape());
    if (y.numel() == 0) return;
    Dev::lines(ctx, plan, ScanRow<T>{kind == LineKind::CumProd, exclusive, reverse}, x.data<T>(), y.data<T>());
  });
}

namespace cpu {
// The canonical reduction over n contiguous floats (AVX2 when the host has it, same bits as the reference);
// defined in src/cpu/reduce.cpp and shared by the normalization and pool CPU kernels.
float sum_contiguous_f32(const float* x, int64_t n);          // sum of x_i
float sum_squares_contiguous_f32(const float* x, int64_t n);  // sum of x_i * x_i
float sum_abs_contiguous_f32(const float* x, int64_t n);      // sum of |x_i|
float product_contiguous_f32(const float* x, int64_t n);      // product of x_i
// The sequential max/min rule over n >= 0 contiguous floats (0 when n == 0), the bits of arith::extreme_seq_f32.
float max_contiguous_f32(const float* x, int64_t n);
float min_contiguous_f32(const float* x, int64_t n);

/// Softmax of one contiguous row of len >= 1 (the Softmax op's row, so Attention's probabilities are its bits).
void softmax_row_f32(const float* x, float* y, int64_t len);

void reduce(KernelContext& ctx);
void arg_reduce(KernelContext& ctx);
void softmax(KernelContext& ctx);
void lines(KernelContext& ctx);
/// Softmax/LogSoftmax over the rows of p (the loss family's log-probabilities).
void softmax_rows(KernelContext& ctx, const AxisPlan& p, bool log, const float* x, float* y);
}  // namespace cpu
namespace cuda {
void reduce(KernelContext& ctx);
void arg_reduce(KernelContext& ctx);
void softmax(KernelContext& ctx);
void lines(KernelContext& ctx);
/// The Softmax/LogSoftmax kernel over device rows (the loss family's log-probabilities, Attention's probabilities);
/// with nan_value, each NaN output replaced by it (SoftmaxReplacingNaN).
void softmax_rows(KernelContext& ctx, const AxisPlan& p, bool log, const float* x, float* y,
                  std::optional<float> nan_value = std::nullopt);
}  // namespace cuda

}  // namespace lockstep
