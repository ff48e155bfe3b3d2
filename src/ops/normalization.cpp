// The normalization family's definition: attributes per opset, validation, plans, op rows.
#include "ops/normalization.h"

#include <string>

#include "ops/reduce.h"
#include "ops/registry.h"

namespace lockstep {

namespace {

void require_float(const KernelContext& ctx, int i) {
  if (ctx.has_input(i)) require_dtype(ctx, ctx.input(i).dtype(), {DType::Float});
}

// Scale/B must broadcast (unidirectionally) to the normalised block's shape.
BlockMap block_map(const KernelContext& ctx, const Tensor& t, const Shape& block, const char* what) {
  if (t.rank() > static_cast<int>(block.size()) + 0) {
    for (int d = 0; d < t.rank() - static_cast<int>(block.size()); ++d)
      if (t.dim(d) != 1) throw ctx.error(std::string(what) + " of shape " + shape_string(t.shape()) +
                                         " does not broadcast to " + shape_string(block));
  }
  Shape trimmed(t.shape().end() - std::min<size_t>(t.shape().size(), block.size()), t.shape().end());
  for (size_t i = 0; i < trimmed.size(); ++i) {
    int64_t want = block[block.size() - trimmed.size() + i];
    if (trimmed[i] != want && trimmed[i] != 1)
      throw ctx.error(std::string(what) + " of shape " + shape_string(t.shape()) + " does not broadcast to " +
                      shape_string(block));
  }
  BlockMap m;
  if (t.numel() == 1) {
    m.scalar = true;
    return m;
  }
  if (t.numel() == shape_numel(block)) return m;
  if (block.size() > static_cast<size_t>(kMaxRank)) throw ctx.error("rank too large", ErrorCode::NotImplemented);
  std::vector<int64_t> s = broadcast_strides(trimmed, block);
  m.rank = static_cast<int>(block.size());
  for (int d = 0; d < m.rank; ++d) {
    m.dims[d] = block[d];
    m.strides[d] = s[d];
  }
  return m;
}

void require_channel_param(const KernelContext& ctx, int i, int64_t want, const char* what) {
  const Tensor& t = ctx.input(i);
  if (t.numel() != want)
    throw ctx.error(std::string(what) + " has shape " + shape_string(t.shape()) + ", expected " +
                    std::to_string(want) + " elements");
}

}  // namespace

LayerNormPlan plan_layer_norm(const KernelContext& ctx) {
  for (int i = 0; i < 3; ++i) require_float(ctx, i);
  const Tensor& x = ctx.input(0);
  const Tensor& scale = ctx.input(1);
  if (ctx.node.attr_int("stash_type", 1) != 1)
    throw ctx.error("stash_type other than 1 (float) is not supported", ErrorCode::NotImplemented);
  const int64_t rank = x.rank();
  const int64_t axis = normalize_axis(ctx.node, ctx.node.attr_int("axis", -1), rank);
  LayerNormPlan p;
  p.rms = static_cast<RowNormKind>(ctx.entry.variant) == RowNormKind::Rms;
  p.epsilon = ctx.node.attr_float("epsilon", 1e-5f);
  Shape block(x.shape().begin() + axis, x.shape().end());
  p.n = shape_numel(block);
  p.rows = 1;
  for (int64_t d = 0; d < axis; ++d) p.rows *= x.dim(d);
  p.scale = block_map(ctx, scale, block, "Scale");
  p.has_bias = ctx.has_input(2);
  if (p.has_bias) p.bias = block_map(ctx, ctx.input(2), block, "B");
  p.stats_shape = x.shape();
  for (int64_t d = axis; d < rank; ++d) p.stats_shape[d] = 1;
  return p;
}

LayerNormOutputs layer_norm_outputs(KernelContext& ctx, const LayerNormPlan& p) {
  LayerNormOutputs out;
  out.y = ctx.output(0, DType::Float, ctx.input(0).shape()).data<float>();
  if (ctx.node.outputs.size() > 1 && !ctx.node.outputs[1].empty())
    out.mean = ctx.output(1, DType::Float, p.stats_shape).data<float>();
  if (ctx.node.outputs.size() > 2 && !ctx.node.outputs[2].empty())
    out.inv_stddev = ctx.output(2, DType::Float, p.stats_shape).data<float>();
  return out;
}

ChannelPlan plan_batch_norm(const KernelContext& ctx) {
  for (int i = 0; i < 5; ++i) require_float(ctx, i);
  const Tensor& x = ctx.input(0);
  if (x.rank() < 2) throw ctx.error("X must have rank >= 2, got " + shape_string(x.shape()));
  ChannelPlan p;
  const int64_t training = ctx.opset >= 14 ? ctx.node.attr_int("training_mode", 0) : 0;
  if (training != 0 && training != 1) throw ctx.error("training_mode must be 0 or 1, got " + std::to_string(training));
  p.training = training == 1;
  p.momentum = ctx.node.attr_float("momentum", 0.9f);
  if (p.training && ctx.node.outputs.size() != 3)  // ONNX's shape inference refuses other counts
    throw ctx.error("training_mode = 1 needs the three outputs Y, running_mean, running_var (the last two may be "
                    "left unnamed), got " + std::to_string(ctx.node.outputs.size()), ErrorCode::InvalidGraph);
  // Opset 14's outputs 1 and 2 (running_mean, running_var) exist in training mode only; the saved statistics of
  // opsets < 14 (outputs 1..4) are not computed.
  for (size_t i = 1; i < ctx.node.outputs.size(); ++i)
    if (!ctx.node.outputs[i].empty() && !p.training)
      throw ctx.error(ctx.opset >= 14 ? "running_mean and running_var are outputs of training_mode = 1 only"
                                      : "training-mode outputs (mean, var, saved statistics) of opsets < 14 are not "
                                        "supported",
                      ctx.opset >= 14 ? ErrorCode::InvalidGraph : ErrorCode::NotImplemented);
  p.batch = x.dim(0);
  p.channels = x.dim(1);
  for (int d = 2; d < x.rank(); ++d) p.spatial *= x.dim(d);
  p.epsilon = ctx.node.attr_float("epsilon", 1e-5f);
  p.per_element = ctx.opset < 9 && ctx.node.attr_int("spatial", 1) == 0;
  const int64_t want = p.per_element ? p.channels * p.spatial : p.channels;
  const char* names[] = {"scale", "B", "input_mean", "input_var"};
  for (int i = 1; i < 5; ++i) require_channel_param(ctx, i, want, names[i - 1]);
  return p;
}

BatchNormTrainingOutputs batch_norm_training_outputs(KernelContext& ctx, const ChannelPlan& p) {
  BatchNormTrainingOutputs out;
  out.y = ctx.output(0, DType::Float, ctx.input(0).shape()).data<float>();
  const auto wants = [&](size_t i) { return ctx.node.outputs.size() > i && !ctx.node.outputs[i].empty(); };
  if (wants(1)) out.running_mean = ctx.output(1, DType::Float, {p.channels}).data<float>();
  if (wants(2)) out.running_var = ctx.output(2, DType::Float, {p.channels}).data<float>();
  return out;
}

ChannelPlan plan_instance_norm(const KernelContext& ctx) {
  for (int i = 0; i < 3; ++i) require_float(ctx, i);
  const Tensor& x = ctx.input(0);
  if (x.rank() < 2) throw ctx.error("input must have rank >= 2, got " + shape_string(x.shape()));
  ChannelPlan p;
  p.batch = x.dim(0);
  p.channels = x.dim(1);
  for (int d = 2; d < x.rank(); ++d) p.spatial *= x.dim(d);
  p.epsilon = ctx.node.attr_float("epsilon", 1e-5f);
  require_channel_param(ctx, 1, p.channels, "scale");
  require_channel_param(ctx, 2, p.channels, "B");
  return p;
}

GroupNormPlan plan_group_norm(const KernelContext& ctx) {
  for (int i = 0; i < 3; ++i) require_float(ctx, i);
  const Tensor& x = ctx.input(0);
  if (x.rank() < 2) throw ctx.error("X must have rank >= 2, got " + shape_string(x.shape()));
  if (!ctx.node.has("num_groups")) throw ctx.error("the attribute num_groups is required");
  if (ctx.node.attr_int("stash_type", 1) != 1)
    throw ctx.error("stash_type other than 1 (float) is not supported", ErrorCode::NotImplemented);
  GroupNormPlan p;
  p.batch = x.dim(0);
  p.channels = x.dim(1);
  for (int d = 2; d < x.rank(); ++d) p.spatial *= x.dim(d);
  p.groups = ctx.node.attr_int("num_groups", 1);
  if (p.groups < 1 || p.channels % p.groups != 0)
    throw ctx.error("num_groups " + std::to_string(p.groups) + " does not divide the " + std::to_string(p.channels) +
                    " channels of X " + shape_string(x.shape()));
  p.epsilon = ctx.node.attr_float("epsilon", 1e-5f);
  p.per_channel = static_cast<GroupAffine>(ctx.entry.variant) == GroupAffine::PerChannel;
  const int64_t want = p.per_channel ? p.channels : p.groups;
  require_channel_param(ctx, 1, want, "scale");
  require_channel_param(ctx, 2, want, "bias");
  return p;
}

LrnPlan plan_lrn(const KernelContext& ctx) {
  require_float(ctx, 0);
  const Tensor& x = ctx.input(0);
  if (x.rank() < 2) throw ctx.error("X must have rank >= 2, got " + shape_string(x.shape()));
  if (!ctx.node.has("size")) throw ctx.error("the attribute size is required");
  const int64_t size = ctx.node.attr_int("size", 1);
  if (size < 1) throw ctx.error("size must be >= 1, got " + std::to_string(size));
  LrnPlan p;
  p.batch = x.dim(0);
  p.channels = x.dim(1);
  for (int d = 2; d < x.rank(); ++d) p.spatial *= x.dim(d);
  p.before = (size - 1) / 2;
  p.after = size / 2;  // ceil((size - 1) / 2)
  p.alpha_over_size = ctx.node.attr_float("alpha", 1e-4f) / static_cast<float>(size);
  p.beta = ctx.node.attr_float("beta", 0.75f);
  p.bias = ctx.node.attr_float("bias", 1.0f);
  return p;
}

namespace {
const OpEntry kRows[] = {
    {"LayerNormalization", 17, kNewestOpset, &cpu::layer_norm, LOCKSTEP_CUDA_KERNEL(layer_norm)},
    {"RMSNormalization", 23, kNewestOpset, &cpu::layer_norm, LOCKSTEP_CUDA_KERNEL(layer_norm), int(RowNormKind::Rms)},
    {"BatchNormalization", 7, kNewestOpset, &cpu::batch_norm, LOCKSTEP_CUDA_KERNEL(batch_norm)},
    {"InstanceNormalization", 7, kNewestOpset, &cpu::instance_norm, LOCKSTEP_CUDA_KERNEL(instance_norm)},
    {"GroupNormalization", 18, 20, &cpu::group_norm, LOCKSTEP_CUDA_KERNEL(group_norm),
     int(GroupAffine::PerGroup)},
    {"GroupNormalization", 21, kNewestOpset, &cpu::group_norm, LOCKSTEP_CUDA_KERNEL(group_norm),
     int(GroupAffine::PerChannel)},
    {"LRN", 1, kNewestOpset, &cpu::lrn, LOCKSTEP_CUDA_KERNEL(lrn)},
};
}  // namespace

std::span<const OpEntry> normalization_ops() { return kRows; }

}  // namespace lockstep
