// The normalization family (LayerNormalization, RMSNormalization, BatchNormalization (inference, and training_mode
// = 1), InstanceNormalization, GroupNormalization, LRN):
// attributes, validation, output shapes and the plans both devices follow. Contract: docs/arithmetic.md#normalization.
#pragma once

#include <cstdint>

#include "arith/hd.h"
#include "arith/normalization.h"
#include "ops/common.h"
#include "runtime/kernel.h"

namespace lockstep {

/// Maps the index j of an element within a normalised block (row-major over the normalised dims) to the offset
/// of its Scale/B value, which broadcasts to the block. POD for CUDA kernels.
struct BlockMap {
  int rank = 0;  // 0: the offset is j itself (same shape) when `scalar` is false
  bool scalar = false;
  int64_t dims[kMaxRank], strides[kMaxRank];
};
LOCKSTEP_HD int64_t block_offset(const BlockMap& m, int64_t j) {
  if (m.scalar) return 0;
  if (m.rank == 0) return j;
  int64_t off = 0;
  for (int d = m.rank - 1; d >= 0; --d) {
    off += (j % m.dims[d]) * m.strides[d];
    j /= m.dims[d];
  }
  return off;
}

/// Variants of layer_norm: ctx.entry.variant. RMSNormalization is the LayerNormalization row with the mean fixed
/// at +0 and no bias (x - (+0) = x exactly, so it computes (x / sqrt(S(x*x)/n + eps)) * scale).
enum class RowNormKind : int { Layer, Rms };

/// LayerNormalization and RMSNormalization: rows of n contiguous elements normalised together.
struct LayerNormPlan {
  int64_t rows = 0, n = 0;
  bool rms = false;  // RowNormKind::Rms
  float epsilon = 1e-5f;
  BlockMap scale, bias;
  bool has_bias = false;
  Shape stats_shape;  // shape of the optional Mean and InvStdDev outputs
};
LayerNormPlan plan_layer_norm(const KernelContext& ctx);
/// LayerNormalization's outputs, allocated: Y, and Mean and InvStdDev (null unless the node asks for them).
struct LayerNormOutputs {
  float* y = nullptr;
  float* mean = nullptr;
  float* inv_stddev = nullptr;
};
LayerNormOutputs layer_norm_outputs(KernelContext& ctx, const LayerNormPlan& p);

/// BatchNormalization and InstanceNormalization over X = [N, C, spatial...].
struct ChannelPlan {
  int64_t batch = 0, channels = 0, spatial = 1;
  float epsilon = 1e-5f;
  bool per_element = false;  // BatchNormalization-7 spatial = 0: parameters have shape [C, spatial...]
  bool training = false;     // BatchNormalization-14/15 training_mode = 1: statistics of the batch
  float momentum = 0.9f;     // training: running = input * momentum + current * (1 - momentum)
};
/// BatchNormalization in training mode: Y, and running_mean and running_var ([C]; null unless the node asks).
struct BatchNormTrainingOutputs {
  float* y = nullptr;
  float* running_mean = nullptr;
  float* running_var = nullptr;
};
BatchNormTrainingOutputs batch_norm_training_outputs(KernelContext& ctx, const ChannelPlan& p);
ChannelPlan plan_batch_norm(const KernelContext& ctx);
ChannelPlan plan_instance_norm(const KernelContext& ctx);

/// Variants of group_norm: ctx.entry.variant. Opset 18 gives scale and bias per group, opset 21 per channel.
enum class GroupAffine : int { PerGroup, PerChannel };

/// GroupNormalization over X = [N, C, spatial...]: each (n, group) block of (C/G)*spatial contiguous elements is
/// one row.
struct GroupNormPlan {
  int64_t batch = 0, channels = 0, groups = 1, spatial = 1;
  float epsilon = 1e-5f;
  bool per_channel = true;  // GroupAffine::PerChannel
  LOCKSTEP_HD int64_t row_length() const { return channels / groups * spatial; }
  /// The scale and bias index of element j of row r (both devices): its channel, or its group (opset 18).
  LOCKSTEP_HD int64_t param_of(int64_t r, int64_t j) const {
    const int64_t group = r % groups;
    return per_channel ? group * (channels / groups) + j / spatial : group;
  }
};
GroupNormPlan plan_group_norm(const KernelContext& ctx);

/// LRN over X = [N, C, spatial...]: channel c sums the squares of channels [c - before, c + after].
struct LrnPlan {
  int64_t batch = 0, channels = 0, spatial = 1, before = 0, after = 0;
  float alpha_over_size = 0, beta = 0, bias = 0;  // alpha_over_size = alpha / float(size), one rounding
};

/// LRN's element j of plane r = (n, c), on either device: the squares of channels [c - before, c + after] clipped
/// to [0, C) added in ascending channel order from +0 (arith::lrn_square_sum_step_f32), then arith::lrn_apply_f32.
LOCKSTEP_HD float lrn_output(const LrnPlan& p, const float* x, int64_t r, int64_t j) {
  const int64_t c = r % p.channels;
  const int64_t lo = c - p.before < 0 ? 0 : c - p.before;
  const int64_t hi = c + p.after > p.channels - 1 ? p.channels - 1 : c + p.after;
  const float* plane = x + (r - c) * p.spatial;  // channel 0 of this image
  float sum = 0.0f;
  for (int64_t i = lo; i <= hi; ++i) sum = arith::lrn_square_sum_step_f32(sum, plane[i * p.spatial + j]);
  return arith::lrn_apply_f32(x[r * p.spatial + j], sum, p.alpha_over_size, p.beta, p.bias);
}
LrnPlan plan_lrn(const KernelContext& ctx);

namespace cpu {
void layer_norm(KernelContext& ctx);
void batch_norm(KernelContext& ctx);
void instance_norm(KernelContext& ctx);
void group_norm(KernelContext& ctx);
void lrn(KernelContext& ctx);
}  // namespace cpu
namespace cuda {
void layer_norm(KernelContext& ctx);
void batch_norm(KernelContext& ctx);
void instance_norm(KernelContext& ctx);
void group_norm(KernelContext& ctx);
void lrn(KernelContext& ctx);
}  // namespace cuda

}  // namespace lockstep
