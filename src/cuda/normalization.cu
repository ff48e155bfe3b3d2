// CUDA kernels of the normalization family, mirroring src/cpu/normalization.cpp operation by operation.
// Contract: docs/arithmetic.md#normalization. One warp per normalised row (the canonical reduction's 32 lanes).
#include <cstdint>

#include "arith/normalization.h"
#include "arith/reduce.h"
#include "arith/reduce_ops.h"
#include "cuda/common.cuh"
#include "ops/normalization.h"
#include "ops/registry.h"

namespace lockstep::cuda {

namespace {

constexpr int kWarpsPerBlock = kThreadsPerBlock / 32;

/// Scale and bias of a row's elements: per element through a BlockMap (LayerNorm), per channel (InstanceNorm) or
/// per channel or group of the row's (n, group) block (GroupNorm).
struct RowParams {
  const float* scale;
  const float* bias;  // null: no bias (LayerNorm without B)
  BlockMap scale_map, bias_map;
  int64_t channels;   // > 0: InstanceNorm, the parameter index is row % channels
  bool rms;           // RMSNormalization: the mean is +0
  bool grouped = false;  // GroupNorm: the parameter index is group.param_of(row, j)
  GroupNormPlan group{};
};

// Contract: mean = S(x)/n (RMSNormalization: +0), var = S((x-mean)^2)/n, stddev = sqrt(var+eps),
// y = ((x-mean)/stddev)*scale + bias; docs/arithmetic.md#normalization. Lane j takes elements j mod 32.
__global__ void norm_rows_warp(const float* x, float* y, int64_t rows, int64_t n, float eps, RowParams q,
                               float* mean_out, float* inv_out) {
  const int64_t r = static_cast<int64_t>(blockIdx.x) * kWarpsPerBlock + threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  if (r >= rows) return;
  const float* xr = x + r * n;
  float* yr = y + r * n;
  float s = 0.0f;
  for (int64_t j = lane; j < n && !q.rms; j += 32) s = s + xr[j];
  arith::RowStats st;
  st.mean = q.rms ? 0.0f : arith::norm_mean_f32(arith::warp_tree_f32(s, arith::AddF32{}), n);
  float ss = 0.0f;
  for (int64_t j = lane; j < n; j += 32) {
    const float d = xr[j] - st.mean;
    ss = ss + d * d;
  }
  st.stddev = arith::norm_stddev_f32(arith::warp_tree_f32(ss, arith::AddF32{}), n, eps);
  if (lane == 0) {
    if (mean_out) mean_out[r] = st.mean;
    if (inv_out) inv_out[r] = 1.0f / st.stddev;
  }
  for (int64_t j = lane; j < n; j += 32) {
    const int64_t c = q.grouped ? q.group.param_of(r, j) : q.channels > 0 ? r % q.channels : -1;
    const float sc = q.scale[c >= 0 ? c : block_offset(q.scale_map, j)];
    if (q.bias) {
      const float b = q.bias[c >= 0 ? c : block_offset(q.bias_map, j)];
      yr[j] = arith::norm_apply_f32(xr[j], st, sc, b);
    } else {
      yr[j] = arith::norm_apply_nobias_f32(xr[j], st, sc);
    }
  }
}

void launch_rows(KernelContext& ctx, const float* x, float* y, int64_t rows, int64_t n, float eps, const RowParams& q,
                 float* mean_out, float* inv_out) {
  if (rows == 0) return;
  unsigned blocks = static_cast<unsigned>((rows + kWarpsPerBlock - 1) / kWarpsPerBlock);
  norm_rows_warp<<<blocks, kThreadsPerBlock, 0, stream_of(ctx)>>>(x, y, rows, n, eps, q, mean_out, inv_out);
  check_launch(ctx);
}

// Contract: LRN, lrn_output per element (the window's squares in ascending channel order); one thread per element.
__global__ void lrn_thread(const float* x, float* y, LrnPlan p, int64_t total) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= total) return;
  y[i] = lrn_output(p, x, i / p.spatial, i % p.spatial);
}

// Contract: BatchNormalization (inference), s = scale/sqrt(var+eps), y = (x-mean)*s + B; one thread per element.
__global__ void batch_norm_thread(const float* x, float* y, ChannelPlan p, const float* scale, const float* bias,
                                  const float* mean, const float* var) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= p.batch * p.channels * p.spatial) return;
  const int64_t c = (i / p.spatial) % p.channels;
  const int64_t k = p.per_element ? c * p.spatial + i % p.spatial : c;
  const float f = arith::batchnorm_factor_f32(scale[k], var[k], p.epsilon);
  y[i] = arith::batchnorm_apply_f32(x[i], mean[k], f, bias[k]);
}

// Contract: BatchNormalization (training_mode = 1), one warp per channel: lane j takes the channel's elements
// j mod 32 in (n, position) order for both canonical sums (the CPU's contiguous copy, same terms, same lanes);
// y = ((x - mean) / stddev) * scale + B; lane 0 writes the running statistics.
__global__ void batch_norm_training_warp(const float* x, float* y, ChannelPlan p, const float* scale,
                                         const float* bias, const float* mean_in, const float* var_in,
                                         float* running_mean, float* running_var) {
  const int64_t c = static_cast<int64_t>(blockIdx.x) * kWarpsPerBlock + threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  if (c >= p.channels) return;
  const int64_t n = p.batch * p.spatial, plane = p.channels * p.spatial;
  auto at = [&](int64_t i) { return (i / p.spatial) * plane + c * p.spatial + i % p.spatial; };
  float s = 0.0f;
  for (int64_t i = lane; i < n; i += 32) s = s + x[at(i)];
  arith::RowStats st;
  st.mean = arith::norm_mean_f32(arith::warp_tree_f32(s, arith::AddF32{}), n);
  float ss = 0.0f;
  for (int64_t i = lane; i < n; i += 32) {
    const float d = x[at(i)] - st.mean;
    ss = ss + d * d;
  }
  const float var = arith::norm_var_f32(arith::warp_tree_f32(ss, arith::AddF32{}), n);
  st.stddev = arith::norm_stddev_of_var_f32(var, p.epsilon);
  for (int64_t i = lane; i < n; i += 32) y[at(i)] = arith::norm_apply_f32(x[at(i)], st, scale[c], bias[c]);
  if (lane == 0) {
    if (running_mean) running_mean[c] = arith::batchnorm_running_f32(mean_in[c], st.mean, p.momentum);
    if (running_var) running_var[c] = arith::batchnorm_running_f32(var_in[c], var, p.momentum);
  }
}

}  // namespace

// Contract: LayerNormalization and RMSNormalization, docs/arithmetic.md#normalization.
void layer_norm(KernelContext& ctx) {
  LayerNormPlan p = plan_layer_norm(ctx);
  const LayerNormOutputs out = layer_norm_outputs(ctx, p);
  RowParams q{ctx.input(1).data<float>(), p.has_bias ? ctx.input(2).data<float>() : nullptr, p.scale, p.bias, 0,
              p.rms};
  launch_rows(ctx, ctx.input(0).data<float>(), out.y, p.rows, p.n, p.epsilon, q, out.mean, out.inv_stddev);
}

// Contract: InstanceNormalization, docs/arithmetic.md#normalization.
void instance_norm(KernelContext& ctx) {
  ChannelPlan p = plan_instance_norm(ctx);
  const Tensor& x = ctx.input(0);
  Tensor& y = ctx.output(0, DType::Float, x.shape());
  RowParams q{ctx.input(1).data<float>(), ctx.input(2).data<float>(), BlockMap{}, BlockMap{}, p.channels, false};
  launch_rows(ctx, x.data<float>(), y.data<float>(), p.batch * p.channels, p.spatial, p.epsilon, q, nullptr, nullptr);
}

// Contract: GroupNormalization, docs/arithmetic.md#normalization (each (n, group) block is one row).
void group_norm(KernelContext& ctx) {
  const GroupNormPlan p = plan_group_norm(ctx);
  const Tensor& x = ctx.input(0);
  Tensor& y = ctx.output(0, DType::Float, x.shape());
  RowParams q{ctx.input(1).data<float>(), ctx.input(2).data<float>(), BlockMap{}, BlockMap{}, 0, false, true, p};
  launch_rows(ctx, x.data<float>(), y.data<float>(), p.batch * p.groups, p.row_length(), p.epsilon, q, nullptr,
              nullptr);
}

// Contract: LRN, docs/arithmetic.md#normalization: the window's squares added in ascending channel order.
void lrn(KernelContext& ctx) {
  const LrnPlan p = plan_lrn(ctx);
  const Tensor& x = ctx.input(0);
  Tensor& y = ctx.output(0, DType::Float, x.shape());
  const int64_t n = x.numel();
  if (n == 0) return;
  lrn_thread<<<blocks_for(n), kThreadsPerBlock, 0, stream_of(ctx)>>>(x.data<float>(), y.data<float>(), p, n);
  check_launch(ctx);
}

// Contract: BatchNormalization (training_mode = 1: batch_norm_training_warp), docs/arithmetic.md#normalization.
void batch_norm(KernelContext& ctx) {
  ChannelPlan p = plan_batch_norm(ctx);
  if (p.training) {
    const BatchNormTrainingOutputs out = batch_norm_training_outputs(ctx, p);
    if (p.channels == 0) return;
    const unsigned blocks = static_cast<unsigned>((p.channels + kWarpsPerBlock - 1) / kWarpsPerBlock);
    batch_norm_training_warp<<<blocks, kThreadsPerBlock, 0, stream_of(ctx)>>>(
        ctx.input(0).data<float>(), out.y, p, ctx.input(1).data<float>(), ctx.input(2).data<float>(),
        ctx.input(3).data<float>(), ctx.input(4).data<float>(), out.running_mean, out.running_var);
    check_launch(ctx);
    return;
  }
  const Tensor& x = ctx.input(0);
  Tensor& y = ctx.output(0, DType::Float, x.shape());
  const int64_t n = x.numel();
  if (n == 0) return;
  batch_norm_thread<<<blocks_for(n), kThreadsPerBlock, 0, stream_of(ctx)>>>(
      x.data<float>(), y.data<float>(), p, ctx.input(1).data<float>(), ctx.input(2).data<float>(),
      ctx.input(3).data<float>(), ctx.input(4).data<float>());
  check_launch(ctx);
}

}  // namespace lockstep::cuda
