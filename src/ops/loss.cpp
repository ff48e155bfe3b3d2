// The loss family's definition: shapes, attributes, target validation, op rows.
#include "ops/loss.h"

#include "ops/registry.h"

namespace lockstep {

namespace {
LossReduction reduction_of(const KernelContext& ctx) {
  const std::string r = ctx.node.attr_string("reduction", "mean");
  if (r == "none") return LossReduction::None;
  if (r == "sum") return LossReduction::Sum;
  if (r == "mean") return LossReduction::Mean;
  throw ctx.error("reduction must be none, sum or mean, got '" + r + "'");
}
}  // namespace

NllPlan plan_nll(const KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  if (x.rank() < 2) throw ctx.error("input must have rank >= 2 (N, C, d...), got " + shape_string(x.shape()));
  NllPlan p;
  p.classes = x.dim(1);
  for (int d = 2; d < x.rank(); ++d) p.inner *= x.dim(d);
  Shape per_element = x.shape();
  per_element.erase(per_element.begin() + 1);
  const Tensor& target = ctx.input(1);
  if (target.dtype() != DType::Int32 && target.dtype() != DType::Int64)
    throw ctx.error(std::string("target must be int32 or int64, got ") + dtype_name(target.dtype()));
  if (target.shape() != per_element)
    throw ctx.error("target shape " + shape_string(target.shape()) + ", expected " + shape_string(per_element));
  if (ctx.has_input(2) && (ctx.input(2).dtype() != DType::Float || ctx.input(2).shape() != Shape{p.classes}))
    throw ctx.error("weight must be float of shape " + shape_string(Shape{p.classes}) + ", got " +
                    shape_string(ctx.input(2).shape()));
  p.reduction = reduction_of(ctx);
  p.loss_shape = p.reduction == LossReduction::None ? per_element : Shape{};
  const bool has_ignore = ctx.node.has("ignore_index");
  const int64_t ignore = ctx.node.attr_int("ignore_index", 0);
  Tensor t = ctx.host_input(1);
  p.target.resize(static_cast<size_t>(t.numel()));
  for (int64_t e = 0; e < t.numel(); ++e) {
    const int64_t v = t.int_at(e);
    if (has_ignore && v == ignore) {
      p.target[e] = -1;
      continue;
    }
    if (v < 0 || v >= p.classes)
      throw ctx.error("target " + std::to_string(v) + " at element " + std::to_string(e) + " is outside [0, " +
                      std::to_string(p.classes) + ")");
    p.target[e] = v;
  }
  return p;
}

namespace {
const OpEntry kRows[] = {
    {"NegativeLogLikelihoodLoss", 12, kNewestOpset, &cpu::nll, LOCKSTEP_CUDA_KERNEL(nll)},
    {"SoftmaxCrossEntropyLoss", 12, kNewestOpset, &cpu::softmax_cross_entropy,
     LOCKSTEP_CUDA_KERNEL(softmax_cross_entropy)},
};
}  // namespace

std::span<const OpEntry> loss_ops() { return kRows; }

}  // namespace lockstep
