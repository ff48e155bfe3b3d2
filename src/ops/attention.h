// The attention family (Attention, RotaryEmbedding, LinearAttention): attributes, validation, output shapes and
// the plans both devices follow. Contract: docs/arithmetic.md#attention.
#pragma once

#include <cstdint>

#include "arith/attention.h"
#include "ops/common.h"
#include "runtime/kernel.h"

namespace lockstep {

/// An Attention node's plan. past_key/past_value and the present outputs are 4-D (batch, kv heads, len, head).
struct AttentionPlan {
  arith::AttentionGeom g;
  arith::HeadView q, k, v, y;  // Q, K, V and Y as (batch, heads, sequence, head) views
  arith::QkOutput qk_mode = arith::QkOutput::Raw;
  bool softmax_f64 = false;  // softmax_precision = 11: the scores widened to double, arith::softmax_row_f64, rounded
  Shape y_shape, present_k_shape, present_v_shape, qk_shape;
};
AttentionPlan plan_attention(const KernelContext& ctx);

/// Attention's outputs, allocated: Y, and present_key, present_value and qk_matmul_output (null unless asked for).
struct AttentionOutputs {
  float* y = nullptr;
  float* present_k = nullptr;
  float* present_v = nullptr;
  float* qk = nullptr;
};
AttentionOutputs attention_outputs(KernelContext& ctx, const AttentionPlan& p);
/// The mask and nonpad_kv_seqlen inputs as the bias reads them, on the kernel's device.
arith::AttentionBiasInputs attention_bias_inputs(const KernelContext& ctx, const AttentionPlan& p);

/// Element (b, kh, t, d) of the present key or value: past[b, kh, t, d] for t < past_len, else the new K/V row.
LOCKSTEP_HD float present_element_f32(const arith::AttentionGeom& g, const float* past, const float* x,
                                      const arith::HeadView& view, int64_t head, int64_t index) {
  const int64_t d = index % head, t = (index / head) % g.total_len, bh = index / (head * g.total_len);
  if (t < g.past_len) return past[(bh * g.past_len + t) * head + d];
  return x[view.row(bh / g.kv_heads, bh % g.kv_heads, t - g.past_len) + d];
}

arith::RotaryGeom plan_rotary(const KernelContext& ctx);

/// LinearAttention's plan; `state` is the present_state output, or device scratch when the node does not ask for it.
arith::LinearAttentionGeom plan_linear_attention(const KernelContext& ctx);
/// The state's shape (batch, kv heads, dk, dv).
inline Shape linear_state_shape(const arith::LinearAttentionGeom& g) { return {g.batch, g.kv_heads, g.dk, g.dv}; }

namespace cpu {
void attention(KernelContext& ctx);
void rotary_embedding(KernelContext& ctx);
void linear_attention(KernelContext& ctx);
}  // namespace cpu
namespace cuda {
void attention(KernelContext& ctx);
void rotary_embedding(KernelContext& ctx);
void linear_attention(KernelContext& ctx);
}  // namespace cuda

}  // namespace lockstep
