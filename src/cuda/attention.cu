// CUDA kernels of the attention family, mirroring src/cpu/attention.cpp step by step.
// Contract: docs/arithmetic.md#attention. Attention runs the unfused graph's steps with the ops' own kernels (the
// MatMul core for both products, the Softmax warp rows) and one thread per element or row for the rest.
#include <cstdint>

#include "arith/attention.h"
#include "arith/reduce_ops.h"
#include "cuda/common.cuh"
#include "ops/attention.h"
#include "ops/gemm.h"
#include "ops/reduce.h"
#include "ops/registry.h"

namespace lockstep::cuda {

namespace {

// Contract: present[e] = past or new row (present_element_f32); scaled[e] = present[e] * sqrt(scale) (keys only).
__global__ void present_kernel(arith::AttentionGeom g, const float* past, const float* x, arith::HeadView view,
                               int64_t head, float* present, float* scaled, int64_t n) {
  const int64_t e = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (e >= n) return;
  const float v = present_element_f32(g, past, x, view, head, e);
  present[e] = v;
  if (scaled) scaled[e] = v * g.scale_root;
}

// Contract: qs[(b, h, i, d)] = Q(b, h, i, d) * sqrt(scale), contiguous (batch, q heads, q_len, head).
__global__ void scale_queries(arith::AttentionGeom g, const float* q, arith::HeadView view, float* qs, int64_t n) {
  const int64_t e = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (e >= n) return;
  const int64_t d = e % g.head, i = (e / g.head) % g.q_len, bh = e / (g.head * g.q_len);
  qs[e] = q[view.row(bh / g.q_heads, bh % g.q_heads, i) + d] * g.scale_root;
}

// Contract: one thread per score row: softcap and bias (attention_row_logits_f32), the row's fully-masked flag.
__global__ void row_logits(arith::AttentionGeom g, arith::AttentionBiasInputs in, float* scores, float* qk,
                           arith::QkOutput mode, uint8_t* masked) {
  const int64_t r = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (r >= g.batch * g.q_heads * g.q_len) return;
  const int64_t i = r % g.q_len, h = (r / g.q_len) % g.q_heads, b = r / (g.q_len * g.q_heads);
  masked[r] = arith::attention_row_logits_f32(g, in, b, h, i, scores + r * g.total_len,
                                              qk ? qk + r * g.total_len : nullptr, mode);
}

// Contract: softmax_precision = 11, one thread per score row: arith::softmax_row_f64 over the row widened to double,
// each probability rounded to float (the CPU kernel's call).
__global__ void softmax_rows_f64(const float* scores, float* probs, int64_t rows, int64_t len) {
  const int64_t r = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (r >= rows) return;
  const float* s = scores + r * len;
  float* y = probs + r * len;
  arith::softmax_row_f64(len, false, [&](int64_t j) { return static_cast<double>(s[j]); },
                         [&](int64_t j, double v) { y[j] = static_cast<float>(v); });
}

// Contract: a fully-masked row's probabilities become +0; mode 3 copies the probabilities to qk_matmul_output.
__global__ void guard_rows(const uint8_t* masked, float* probs, float* qk, int64_t len, int64_t n) {
  const int64_t e = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (e >= n) return;
  if (masked[e / len]) probs[e] = 0.0f;
  if (qk) qk[e] = probs[e];
}

// Y's 3-D layout: (b, h, i, d) of the contiguous product goes to y at view.row(b, h, i) + d.
__global__ void scatter_heads(const float* src, float* y, arith::HeadView view, int64_t heads, int64_t len,
                              int64_t head, int64_t n) {
  const int64_t e = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (e >= n) return;
  const int64_t d = e % head, i = (e / head) % len, bh = e / (head * len);
  y[view.row(bh / heads, bh % heads, i) + d] = src[e];
}

/// Device scratch of n floats (at least one, so that pointers are valid).
struct Scratch {
  std::shared_ptr<Buffer> buffer;
  Scratch(const KernelContext& ctx, int64_t n) : buffer(ctx.allocator->allocate(sizeof(float) * (n > 0 ? n : 1))) {}
  float* data() const { return static_cast<float*>(buffer->data); }
};

/// The product over (batch, kv head, group) batches: A (contiguous M x K per q head) of q head (b, kvh * group +
/// gi), B of kv head (b, kvh), b_step floats per kv head; y contiguous per q head.
BatchedProduct grouped_product(const arith::AttentionGeom& g, int64_t M, int64_t N, int64_t K, const float* a,
                               const float* b, int64_t b_rs, int64_t b_cs, int64_t b_step, float* y) {
  const int64_t a_step = M * K;
  return {M, N, K, a, K, 1, b, b_rs, b_cs, y, {g.batch, g.kv_heads, g.group()},
          {g.q_heads * a_step, g.group() * a_step, a_step}, {g.kv_heads * b_step, b_step, 0}};
}

void launch_present(KernelContext& ctx, const AttentionPlan& p, int input, const arith::HeadView& view,
                    int64_t head, float* present, float* scaled) {
  const arith::AttentionGeom& g = p.g;
  const int64_t n = g.batch * g.kv_heads * g.total_len * head;
  if (n == 0) return;
  const float* past = g.has_past ? ctx.input(input + 3).data<float>() : nullptr;  // K, V: 1, 2; past: 4, 5
  present_kernel<<<blocks_for(n), kThreadsPerBlock, 0, stream_of(ctx)>>>(g, past, ctx.input(input).data<float>(),
                                                                         view, head, present, scaled, n);
  check_launch(ctx);
}

// Contract: RotaryEmbedding, docs/arithmetic.md#rotaryembedding (rotary_element_f32, one thread per element).
__global__ void rotary_kernel(arith::RotaryGeom g, const float* x, const float* cos, const float* sin,
                              const int64_t* pos, float* y) {
  const int64_t e = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (e >= g.elements()) return;
  y[e] = arith::rotary_element_f32(g, x, cos, sin, pos, e);
}

// Contract: LinearAttention, one thread per state column (linear_attention_column_f32).
__global__ void linear_attention_kernel(arith::LinearAttentionGeom g, const float* q, const float* k, const float* v,
                                        const float* decay, const float* beta, float* state, float* out) {
  const int64_t col = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (col >= g.columns()) return;
  float* column = state + (col / g.dv) * g.dk * g.dv + col % g.dv;
  arith::linear_attention_column_f32(g, q, k, v, decay, beta, column, out, col);
}

}  // namespace

// Contract: Attention, docs/arithmetic.md#attention (the same steps as cpu::attention).
void attention(KernelContext& ctx) {
  const AttentionPlan p = plan_attention(ctx);
  const AttentionOutputs out = attention_outputs(ctx, p);
  const arith::AttentionGeom& g = p.g;
  const int64_t T = g.total_len, D = g.head, Dv = g.v_head, rows = g.batch * g.q_heads * g.q_len;
  Scratch own_k(ctx, out.present_k ? 0 : g.batch * g.kv_heads * T * D);
  Scratch own_v(ctx, out.present_v ? 0 : g.batch * g.kv_heads * T * Dv);
  Scratch keys(ctx, g.batch * g.kv_heads * T * D), queries(ctx, rows * D), scores(ctx, rows * T),
      probs(ctx, rows * T), y4(ctx, rows * Dv);
  float* pv = out.present_v ? out.present_v : own_v.data();
  launch_present(ctx, p, 1, p.k, D, out.present_k ? out.present_k : own_k.data(), keys.data());
  launch_present(ctx, p, 2, p.v, Dv, pv, nullptr);
  if (rows == 0) return;
  if (rows * D > 0) {
    scale_queries<<<blocks_for(rows * D), kThreadsPerBlock, 0, stream_of(ctx)>>>(g, ctx.input(0).data<float>(), p.q,
                                                                                queries.data(), rows * D);
    check_launch(ctx);
  }
  if (T > 0) {
    batched_product_f32(ctx,
                        grouped_product(g, g.q_len, T, D, queries.data(), keys.data(), 1, D, T * D, scores.data()));
    auto masked = ctx.allocator->allocate(static_cast<size_t>(rows));
    uint8_t* masked_rows = static_cast<uint8_t*>(masked->data);
    row_logits<<<blocks_for(rows), kThreadsPerBlock, 0, stream_of(ctx)>>>(
        g, attention_bias_inputs(ctx, p), scores.data(), p.qk_mode == arith::QkOutput::Probabilities ? nullptr : out.qk,
        p.qk_mode, masked_rows);
    check_launch(ctx);
    AxisPlan rows_plan;
    rows_plan.outer = rows, rows_plan.len = T, rows_plan.inner = 1;
    if (p.softmax_f64) {
      softmax_rows_f64<<<blocks_for(rows), kThreadsPerBlock, 0, stream_of(ctx)>>>(scores.data(), probs.data(), rows, T);
      check_launch(ctx);
    } else {
      softmax_rows(ctx, rows_plan, false, scores.data(), probs.data());
    }
    guard_rows<<<blocks_for(rows * T), kThreadsPerBlock, 0, stream_of(ctx)>>>(
        masked_rows, probs.data(), p.qk_mode == arith::QkOutput::Probabilities ? out.qk : nullptr, T, rows * T);
    check_launch(ctx);
  }
  const bool four_d = p.y_shape.size() == 4;
  float* y = four_d ? out.y : y4.data();
  batched_product_f32(ctx, grouped_product(g, g.q_len, Dv, T, probs.data(), pv, Dv, 1, T * Dv, y));
  if (!four_d && rows * Dv > 0) {
    scatter_heads<<<blocks_for(rows * Dv), kThreadsPerBlock, 0, stream_of(ctx)>>>(y4.data(), out.y, p.y, g.q_heads,
                                                                                 g.q_len, Dv, rows * Dv);
    check_launch(ctx);
  }
}

// Contract: RotaryEmbedding, docs/arithmetic.md#rotaryembedding.
void rotary_embedding(KernelContext& ctx) {
  const arith::RotaryGeom g = plan_rotary(ctx);
  float* y = ctx.output(0, DType::Float, ctx.input(0).shape()).data<float>();
  if (g.elements() == 0) return;
  rotary_kernel<<<blocks_for(g.elements()), kThreadsPerBlock, 0, stream_of(ctx)>>>(
      g, ctx.input(0).data<float>(), ctx.input(1).data<float>(), ctx.input(2).data<float>(),
      g.has_positions ? ctx.input(3).data<int64_t>() : nullptr, y);
  check_launch(ctx);
}

// Contract: LinearAttention, docs/arithmetic.md#linearattention.
void linear_attention(KernelContext& ctx) {
  const arith::LinearAttentionGeom g = plan_linear_attention(ctx);
  float* out = ctx.output(0, DType::Float, {g.batch, g.steps, g.q_heads * g.dv}).data<float>();
  const bool wants_state = ctx.node.outputs.size() > 1 && !ctx.node.outputs[1].empty();
  const int64_t n = shape_numel(linear_state_shape(g));
  Scratch own(ctx, wants_state ? 0 : n);
  float* state = wants_state ? ctx.output(1, DType::Float, linear_state_shape(g)).data<float>() : own.data();
  if (n == 0) return;
  const size_t bytes = sizeof(float) * static_cast<size_t>(n);
  if (ctx.has_input(3))
    check(ctx, cudaMemcpyAsync(state, ctx.input(3).data<float>(), bytes, cudaMemcpyDeviceToDevice, stream_of(ctx)),
          "copy past_state");
  else
    check(ctx, cudaMemsetAsync(state, 0, bytes, stream_of(ctx)), "clear state");
  linear_attention_kernel<<<blocks_for(g.columns()), kThreadsPerBlock, 0, stream_of(ctx)>>>(
      g, ctx.input(0).data<float>(), ctx.input(1).data<float>(), ctx.input(2).data<float>(),
      g.gated ? ctx.input(4).data<float>() : nullptr, g.delta ? ctx.input(5).data<float>() : nullptr, state, out);
  check_launch(ctx);
}

}  // namespace lockstep::cuda
