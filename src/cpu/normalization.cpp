// CPU kernels of the normalization family. Contract: docs/arithmetic.md#normalization.
#include <algorithm>
#include <vector>

#include "arith/normalization.h"
#include "ops/normalization.h"
#include "ops/reduce.h"
#include "ops/registry.h"
#include "runtime/thread_pool.h"

namespace lockstep::cpu {

namespace {

int64_t grain_for(int64_t n) { return std::max<int64_t>(1, 16384 / std::max<int64_t>(1, n)); }

// Contract: mean = S(x)/n (RMSNormalization: +0), var = S((x-mean)^2)/n, stddev = sqrt(var + eps);
// docs/arithmetic.md#normalization. The deviations are stored in y first so that the canonical sum of their
// squares runs contiguous.
arith::RowStats row_stats(const float* x, float* y, int64_t n, float epsilon, bool rms = false) {
  arith::RowStats s;
  s.mean = rms ? 0.0f : arith::norm_mean_f32(sum_contiguous_f32(x, n), n);
  for (int64_t j = 0; j < n; ++j) y[j] = x[j] - s.mean;
  s.stddev = arith::norm_stddev_f32(sum_squares_contiguous_f32(y, n), n, epsilon);
  return s;
}

// arith::norm_apply_f32 (or _nobias_f32 when bias is null) along a row whose scale and bias are laid out along it
// (their usual shape, [n]): loops without a branch or an index computation, which the compiler vectorises; each
// lane performs the element's own operations.
void apply_row(const float* x, float* y, int64_t n, arith::RowStats s, const float* scale, const float* bias) {
  if (bias)
    for (int64_t j = 0; j < n; ++j) y[j] = arith::norm_apply_f32(x[j], s, scale[j], bias[j]);
  else
    for (int64_t j = 0; j < n; ++j) y[j] = arith::norm_apply_nobias_f32(x[j], s, scale[j]);
}

}  // namespace

// Contract: LayerNormalization and RMSNormalization, docs/arithmetic.md#normalization.
void layer_norm(KernelContext& ctx) {
  LayerNormPlan p = plan_layer_norm(ctx);
  const LayerNormOutputs out = layer_norm_outputs(ctx, p);
  float* mean_out = out.mean;
  float* inv_out = out.inv_stddev;
  const float* xd = ctx.input(0).data<float>();
  const float* scale = ctx.input(1).data<float>();
  const float* bias = p.has_bias ? ctx.input(2).data<float>() : nullptr;
  float* yd = out.y;
  const bool along_row = !p.scale.scalar && p.scale.rank == 0 && (!bias || (!p.bias.scalar && p.bias.rank == 0));
  ctx.pool->parallel_for(
      p.rows,
      [&](int64_t begin, int64_t end) {
        for (int64_t r = begin; r < end; ++r) {
          const float* xr = xd + r * p.n;
          float* yr = yd + r * p.n;
          arith::RowStats s = row_stats(xr, yr, p.n, p.epsilon, p.rms);
          if (mean_out) mean_out[r] = s.mean;
          if (inv_out) inv_out[r] = 1.0f / s.stddev;
          if (along_row) {
            apply_row(xr, yr, p.n, s, scale, bias);
            continue;
          }
          for (int64_t j = 0; j < p.n; ++j) {
            float sc = scale[block_offset(p.scale, j)];
            yr[j] = bias ? arith::norm_apply_f32(xr[j], s, sc, bias[block_offset(p.bias, j)])
                         : arith::norm_apply_nobias_f32(xr[j], s, sc);
          }
        }
      },
      grain_for(p.n * 4));
}

namespace {

// Rows of n contiguous elements of input 0, each normalised into output 0 with the row statistics; element j of row
// r takes scale (input 1) and bias (input 2) at param_of(r, j).
template <class ParamOf>
void normalize_rows(KernelContext& ctx, int64_t rows, int64_t n, float epsilon, ParamOf param_of) {
  const Tensor& x = ctx.input(0);
  Tensor& y = ctx.output(0, DType::Float, x.shape());
  const float* xd = x.data<float>();
  const float* scale = ctx.input(1).data<float>();
  const float* bias = ctx.input(2).data<float>();
  float* yd = y.data<float>();
  ctx.pool->parallel_for(
      rows,
      [&](int64_t begin, int64_t end) {
        for (int64_t r = begin; r < end; ++r) {
          const float* xr = xd + r * n;
          float* yr = yd + r * n;
          arith::RowStats s = row_stats(xr, yr, n, epsilon);
          for (int64_t j = 0; j < n; ++j) {
            const int64_t k = param_of(r, j);
            yr[j] = arith::norm_apply_f32(xr[j], s, scale[k], bias[k]);
          }
        }
      },
      grain_for(n * 4));
}

}  // namespace

// Contract: InstanceNormalization, docs/arithmetic.md#normalization.
void instance_norm(KernelContext& ctx) {
  const ChannelPlan p = plan_instance_norm(ctx);
  normalize_rows(ctx, p.batch * p.channels, p.spatial, p.epsilon, [&](int64_t r, int64_t) { return r % p.channels; });
}

// Contract: GroupNormalization, docs/arithmetic.md#normalization (each (n, group) block is one row).
void group_norm(KernelContext& ctx) {
  const GroupNormPlan p = plan_group_norm(ctx);
  normalize_rows(ctx, p.batch * p.groups, p.row_length(), p.epsilon,
                 [&](int64_t r, int64_t j) { return p.param_of(r, j); });
}

// Contract: LRN, docs/arithmetic.md#normalization: the window's squares added in ascending channel order.
void lrn(KernelContext& ctx) {
  LrnPlan p = plan_lrn(ctx);
  const Tensor& x = ctx.input(0);
  Tensor& y = ctx.output(0, DType::Float, x.shape());
  const float* xd = x.data<float>();
  float* yd = y.data<float>();
  ctx.pool->parallel_for(
      p.batch * p.channels,
      [&](int64_t begin, int64_t end) {
        for (int64_t r = begin; r < end; ++r)
          for (int64_t j = 0; j < p.spatial; ++j) yd[r * p.spatial + j] = lrn_output(p, xd, r, j);
      },
      grain_for(p.spatial * (p.before + p.after + 1)));
}

namespace {

// Contract: BatchNormalization (training_mode = 1), docs/arithmetic.md#normalization: channel c's N * spatial
// elements, in (n, position) order, are one row of the row statistics (copied contiguous, so that the canonical
// sums run as LayerNormalization's); y = ((x - mean) / stddev) * scale + B; running = input * momentum + current *
// (1 - momentum) with the biased variance.
void batch_norm_training(KernelContext& ctx, const ChannelPlan& p) {
  const BatchNormTrainingOutputs out = batch_norm_training_outputs(ctx, p);
  const float* xd = ctx.input(0).data<float>();
  const float* scale = ctx.input(1).data<float>();
  const float* bias = ctx.input(2).data<float>();
  const float* mean_in = ctx.input(3).data<float>();
  const float* var_in = ctx.input(4).data<float>();
  const int64_t n = p.batch * p.spatial, plane = p.channels * p.spatial;
  ctx.pool->parallel_for(
      p.channels,
      [&](int64_t begin, int64_t end) {
        std::vector<float> row(n);
        for (int64_t c = begin; c < end; ++c) {
          for (int64_t b = 0; b < p.batch; ++b)
            std::copy(xd + b * plane + c * p.spatial, xd + b * plane + (c + 1) * p.spatial, row.data() + b * p.spatial);
          arith::RowStats s;
          s.mean = arith::norm_mean_f32(sum_contiguous_f32(row.data(), n), n);
          for (int64_t j = 0; j < n; ++j) row[j] = row[j] - s.mean;
          const float var = arith::norm_var_f32(sum_squares_contiguous_f32(row.data(), n), n);
          s.stddev = arith::norm_stddev_of_var_f32(var, p.epsilon);
          for (int64_t b = 0; b < p.batch; ++b) {
            const float* xr = xd + b * plane + c * p.spatial;
            float* yr = out.y + b * plane + c * p.spatial;
            for (int64_t j = 0; j < p.spatial; ++j) yr[j] = arith::norm_apply_f32(xr[j], s, scale[c], bias[c]);
          }
          if (out.running_mean) out.running_mean[c] = arith::batchnorm_running_f32(mean_in[c], s.mean, p.momentum);
          if (out.running_var) out.running_var[c] = arith::batchnorm_running_f32(var_in[c], var, p.momentum);
        }
      },
      grain_for(n * 4));
}

}  // namespace

// Contract: BatchNormalization (inference; training_mode = 1 above), docs/arithmetic.md#normalization.
void batch_norm(KernelContext& ctx) {
  ChannelPlan p = plan_batch_norm(ctx);
  if (p.training) return batch_norm_training(ctx, p);
  const Tensor& x = ctx.input(0);
  Tensor& y = ctx.output(0, DType::Float, x.shape());
  const float* xd = x.data<float>();
  const float* scale = ctx.input(1).data<float>();
  const float* bias = ctx.input(2).data<float>();
  const float* mean = ctx.input(3).data<float>();
  const float* var = ctx.input(4).data<float>();
  float* yd = y.data<float>();
  ctx.pool->parallel_for(
      p.batch * p.channels,
      [&](int64_t begin, int64_t end) {
        for (int64_t r = begin; r < end; ++r) {
          const int64_t c = r % p.channels;
          const float* xr = xd + r * p.spatial;
          float* yr = yd + r * p.spatial;
          if (p.per_element) {
            for (int64_t j = 0; j < p.spatial; ++j) {
              int64_t k = c * p.spatial + j;
              float f = arith::batchnorm_factor_f32(scale[k], var[k], p.epsilon);
              yr[j] = arith::batchnorm_apply_f32(xr[j], mean[k], f, bias[k]);
            }
          } else {
            float f = arith::batchnorm_factor_f32(scale[c], var[c], p.epsilon);
            for (int64_t j = 0; j < p.spatial; ++j) yr[j] = arith::batchnorm_apply_f32(xr[j], mean[c], f, bias[c]);
          }
        }
      },
      grain_for(p.spatial));
}

}  // namespace lockstep::cpu
