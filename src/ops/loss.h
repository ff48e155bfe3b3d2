// The loss family (NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss): targets read and validated on the host,
// per-element terms, then the canonical sums. Contract: docs/arithmetic.md#loss.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "arith/hd.h"
#include "ops/reduce.h"

namespace lockstep {

enum class LossReduction : int { None, Sum, Mean };

/// A negative log-likelihood over x = (N, C, d...): one element e per entry of (N, d...), in row-major order.
struct NllPlan {
  int64_t classes = 0, inner = 1;     // C and prod(d...)
  LossReduction reduction = LossReduction::Mean;
  std::vector<int64_t> target;        // per element: its class, or -1 where the target is ignore_index
  Shape loss_shape;                   // (N, d...) for reduction none, a scalar otherwise
};

/// Validates input 0 (N, C, d...), the target (input 1, int32/int64, (N, d...), each value in [0, C) or
/// ignore_index), the optional weight (input 2, float (C)) and `reduction`.
NllPlan plan_nll(const KernelContext& ctx);

/// Element e's loss term and weight w: -(x[n, t, d] * weight[t]) (-x[n, t, d] without weights, w = 1); an ignored
/// element gives +0 and w = +0.
LOCKSTEP_HD float nll_term_f32(const float* x, const float* weight, int64_t classes, int64_t inner, int64_t e,
                               int64_t t, float& w) {
  w = 0.0f;
  if (t < 0) return 0.0f;
  const float v = x[((e / inner) * classes + t) * inner + e % inner];
  if (!weight) {
    w = 1.0f;
    return -v;
  }
  w = weight[t];
  return -(v * w);
}

/// The reduced loss from the canonical sums of the terms and of the weights: the sum, or sum / weights (mean).
LOCKSTEP_HD float nll_finish_f32(float terms, float weights, LossReduction r) {
  return r == LossReduction::Mean ? terms / weights : terms;
}

// The kernels' drivers, shared by both devices. `Dev` holds only the device's loops:
//   nll(ctx, plan, x, weight, y)                   weight null when absent; y has loss_shape
//   softmax_rows(ctx, axis_plan, log, x, y)        the reduce family's Softmax/LogSoftmax rows
template <class Dev>
void nll_of(KernelContext& ctx, const NllPlan& p, const float* x) {
  const float* weight = ctx.has_input(2) ? ctx.input(2).data<float>() : nullptr;
  Tensor& y = ctx.output(0, DType::Float, p.loss_shape);
  Dev::nll(ctx, p, x, weight, y.data<float>());
}

template <class Dev>
void run_nll(KernelContext& ctx) {
  require_dtype(ctx, ctx.input(0).dtype(), {DType::Float});
  NllPlan p = plan_nll(ctx);
  nll_of<Dev>(ctx, p, ctx.input(0).data<float>());
}

/// SoftmaxCrossEntropyLoss: log_prob = LogSoftmax over C (the reduce family's rows), then the NLL of log_prob.
template <class Dev>
void run_softmax_cross_entropy(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  require_dtype(ctx, x.dtype(), {DType::Float});
  NllPlan p = plan_nll(ctx);
  const bool keep = ctx.node.outputs.size() > 1 && !ctx.node.outputs[1].empty();
  Tensor log_prob = keep ? ctx.output(1, DType::Float, x.shape())
                         : Tensor::over(DType::Float, x.shape(), ctx.allocator->allocate(x.bytes() ? x.bytes() : 4));
  if (x.numel() > 0) {
    AxisPlan rows;
    rows.outer = x.dim(0);
    rows.len = p.classes;
    rows.inner = p.inner;
    Dev::softmax_rows(ctx, rows, true, x.data<float>(), log_prob.data<float>());
  }
  nll_of<Dev>(ctx, p, log_prob.data<float>());
}

namespace cpu {
void nll(KernelContext& ctx);
void softmax_cross_entropy(KernelContext& ctx);
}  // namespace cpu
namespace cuda {
void nll(KernelContext& ctx);
void softmax_cross_entropy(KernelContext& ctx);
}  // namespace cuda

}  // namespace lockstep
