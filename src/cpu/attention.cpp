// CPU kernels of the attention family. Contract: docs/arithmetic.md#attention. Attention runs, per (batch, q head),
// the unfused graph's steps with the ops' own kernels: the MatMul core for both products, the Softmax row.
#include <algorithm>
#include <vector>

#include "arith/attention.h"
#include "arith/reduce_ops.h"
#include "ops/attention.h"
#include "ops/gemm.h"
#include "ops/reduce.h"
#include "ops/registry.h"
#include "runtime/thread_pool.h"

namespace lockstep::cpu {

namespace {

int64_t grain_for(int64_t work) { return std::max<int64_t>(1, 16384 / std::max<int64_t>(1, work)); }

/// The present key or value (B, kv heads, total_len, head): into the output when asked for, else into `own`.
float* present_of(KernelContext& ctx, const AttentionPlan& p, int input, const arith::HeadView& view, int64_t head,
                  float* out, std::vector<float>& own) {
  const arith::AttentionGeom& g = p.g;
  const int64_t n = g.batch * g.kv_heads * g.total_len * head;
  if (!out) {
    own.resize(n);
    out = own.data();
  }
  const float* past = g.has_past ? ctx.input(input + 3).data<float>() : nullptr;  // K, V: 1, 2; past: 4, 5
  const float* x = ctx.input(input).data<float>();
  ctx.pool->parallel_for(n, [&](int64_t begin, int64_t end) {
    for (int64_t e = begin; e < end; ++e) out[e] = present_element_f32(g, past, x, view, head, e);
  }, 16384);
  return out;
}

}  // namespace

// Contract: Attention, docs/arithmetic.md#attention: Q*r and K*r (r = sqrt(scale)), scores by the MatMul core
// (dot_chunked_f32 over the head), softcap and bias per element, the Softmax row, the fully-masked guard, then
// the MatMul core over the keys.
void attention(KernelContext& ctx) {
  const AttentionPlan p = plan_attention(ctx);
  const AttentionOutputs out = attention_outputs(ctx, p);
  const arith::AttentionGeom& g = p.g;
  const arith::AttentionBiasInputs bias_in = attention_bias_inputs(ctx, p);
  std::vector<float> own_k, own_v;
  const float* pk = present_of(ctx, p, 1, p.k, g.head, out.present_k, own_k);
  const float* pv = present_of(ctx, p, 2, p.v, g.v_head, out.present_v, own_v);
  const int64_t T = g.total_len, D = g.head, Dv = g.v_head;
  std::vector<float> keys(g.batch * g.kv_heads * T * D);  // K * sqrt(scale)
  ctx.pool->parallel_for(static_cast<int64_t>(keys.size()), [&](int64_t begin, int64_t end) {
    for (int64_t e = begin; e < end; ++e) keys[e] = pk[e] * g.scale_root;
  }, 16384);
  const float* q = ctx.input(0).data<float>();
  ctx.pool->parallel_for(g.batch * g.q_heads, [&](int64_t begin, int64_t end) {
    std::vector<float> qs(g.q_len * D), scores(g.q_len * T);
    for (int64_t bh = begin; bh < end; ++bh) {
      const int64_t b = bh / g.q_heads, h = bh % g.q_heads, kvh = b * g.kv_heads + g.kv_head_of(h);
      for (int64_t i = 0; i < g.q_len; ++i)
        for (int64_t d = 0; d < D; ++d) qs[i * D + d] = q[p.q.row(b, h, i) + d] * g.scale_root;
      gemm_f32_strided(nullptr, g.q_len, T, D, qs.data(), D, 1, keys.data() + kvh * T * D, 1, D,
                       GemmOut{scores.data(), T, 1});
      for (int64_t i = 0; i < g.q_len && T > 0; ++i) {
        float* s = scores.data() + i * T;
        float* qk = out.qk ? out.qk + (bh * g.q_len + i) * T : nullptr;
        const bool masked = arith::attention_row_logits_f32(g, bias_in, b, h, i, s, qk, p.qk_mode);
        if (p.softmax_f64)  // softmax_precision = 11: Cast to double, Softmax on double, Cast to float
          arith::softmax_row_f64(T, false, [&](int64_t j) { return static_cast<double>(s[j]); },
                                 [&](int64_t j, double v) { s[j] = static_cast<float>(v); });
        else
          softmax_row_f32(s, s, T);
        if (masked) std::fill(s, s + T, 0.0f);
        if (qk && p.qk_mode == arith::QkOutput::Probabilities) std::copy(s, s + T, qk);
      }
      gemm_f32_strided(nullptr, g.q_len, Dv, T, scores.data(), T, 1, pv + kvh * T * Dv, Dv, 1,
                       GemmOut{out.y + p.y.row(b, h, 0), p.y.si, 1});
    }
  }, grain_for(g.q_len * T * (D + Dv)));
}

// Contract: RotaryEmbedding, docs/arithmetic.md#rotaryembedding (rotary_element_f32 per element).
void rotary_embedding(KernelContext& ctx) {
  const arith::RotaryGeom g = plan_rotary(ctx);
  float* y = ctx.output(0, DType::Float, ctx.input(0).shape()).data<float>();
  const float* x = ctx.input(0).data<float>();
  const float* cos = ctx.input(1).data<float>();
  const float* sin = ctx.input(2).data<float>();
  const int64_t* pos = g.has_positions ? ctx.input(3).data<int64_t>() : nullptr;
  ctx.pool->parallel_for(g.elements(), [&](int64_t begin, int64_t end) {
    for (int64_t e = begin; e < end; ++e) y[e] = arith::rotary_element_f32(g, x, cos, sin, pos, e);
  }, 16384);
}

// Contract: LinearAttention, docs/arithmetic.md#linearattention (linear_attention_column_f32 per state column).
void linear_attention(KernelContext& ctx) {
  const arith::LinearAttentionGeom g = plan_linear_attention(ctx);
  float* out = ctx.output(0, DType::Float, {g.batch, g.steps, g.q_heads * g.dv}).data<float>();
  const bool wants_state = ctx.node.outputs.size() > 1 && !ctx.node.outputs[1].empty();
  std::vector<float> own;
  float* state = wants_state ? ctx.output(1, DType::Float, linear_state_shape(g)).data<float>() : nullptr;
  const int64_t n = shape_numel(linear_state_shape(g));
  if (!state) {
    own.resize(n);
    state = own.data();
  }
  if (ctx.has_input(3)) std::copy(ctx.input(3).data<float>(), ctx.input(3).data<float>() + n, state);
  else std::fill(state, state + n, 0.0f);
  const float* decay = g.gated ? ctx.input(4).data<float>() : nullptr;
  const float* beta = g.delta ? ctx.input(5).data<float>() : nullptr;
  const float *q = ctx.input(0).data<float>(), *k = ctx.input(1).data<float>(), *v = ctx.input(2).data<float>();
  ctx.pool->parallel_for(g.columns(), [&](int64_t begin, int64_t end) {
    for (int64_t col = begin; col < end; ++col) {
      float* column = state + (col / g.dv) * g.dk * g.dv + col % g.dv;
      arith::linear_attention_column_f32(g, q, k, v, decay, beta, column, out, col);
    }
  }, grain_for(g.steps * g.dk * 4));
}

}  // namespace lockstep::cpu
