// Per-element rules of the normalization family, shared by the CPU and CUDA kernels
// (docs/arithmetic.md#normalization).
#pragma once

#include <cstdint>

#include "arith/hd.h"
#include "arith/math.h"

namespace lockstep::arith {

/// Statistics of one normalised row (LayerNormalization, InstanceNormalization, GroupNormalization):
/// mean = S(x) / n; var = S((x - mean)^2) / n; stddev = sqrt(var + epsilon), S the canonical sum.
struct RowStats {
  float mean;
  float stddev;
};

LOCKSTEP_HD float norm_mean_f32(float sum, int64_t n) { return sum / static_cast<float>(n); }
/// The biased (population) variance S((x - mean)^2) / n.
LOCKSTEP_HD float norm_var_f32(float sum_sq_dev, int64_t n) { return sum_sq_dev / static_cast<float>(n); }
/// stddev = sqrt(var + epsilon): the addition rounded, then IEEE sqrt.
LOCKSTEP_HD float norm_stddev_of_var_f32(float var, float epsilon) {
#if defined(__CUDA_ARCH__)
  return __fsqrt_rn(var + epsilon);
#else
  return __builtin_sqrtf(var + epsilon);
#endif
}
LOCKSTEP_HD float norm_stddev_f32(float sum_sq_dev, int64_t n, float epsilon) {
  return norm_stddev_of_var_f32(norm_var_f32(sum_sq_dev, n), epsilon);
}

/// y = ((x - mean) / stddev) * scale + bias: one subtraction, one division, one multiplication, one addition.
LOCKSTEP_HD float norm_apply_f32(float x, RowStats s, float scale, float bias) {
  return ((x - s.mean) / s.stddev) * scale + bias;
}
/// Without a bias input (LayerNormalization's B absent) the addition is not performed, so -0 stays -0.
LOCKSTEP_HD float norm_apply_nobias_f32(float x, RowStats s, float scale) { return ((x - s.mean) / s.stddev) * scale; }

/// BatchNormalization (inference): s = scale / sqrt(var + epsilon); y = (x - mean) * s + bias.
LOCKSTEP_HD float batchnorm_factor_f32(float scale, float var, float epsilon) {
#if defined(__CUDA_ARCH__)
  return scale / __fsqrt_rn(var + epsilon);
#else
  return scale / __builtin_sqrtf(var + epsilon);
#endif
}
LOCKSTEP_HD float batchnorm_apply_f32(float x, float mean, float factor, float bias) { return (x - mean) * factor + bias; }
/// BatchNormalization (training_mode = 1): running = input * momentum + current * (1 - momentum), four roundings
/// in this order (the product, 1 - momentum, the second product, the sum; no fma).
LOCKSTEP_HD float batchnorm_running_f32(float input, float current, float momentum) {
  return input * momentum + current * (1.0f - momentum);
}

/// LRN: square_sum = x_lo*x_lo + ... + x_hi*x_hi, added in ascending channel order from +0 (no fma);
/// y = x / pow(bias + alpha_over_size * square_sum, beta).
LOCKSTEP_HD float lrn_square_sum_step_f32(float sum, float x) { return sum + x * x; }
LOCKSTEP_HD float lrn_apply_f32(float x, float square_sum, float alpha_over_size, float beta, float bias) {
  return x / pow_f32(bias + alpha_over_size * square_sum, beta);
}

}  // namespace lockstep::arith
