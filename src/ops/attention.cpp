// The attention family's definition: attributes per opset, validation, plans, op rows.
#include "ops/attention.h"

#include <string>

#include "ops/reduce.h"
#include "ops/registry.h"

namespace lockstep {

namespace {

using arith::AttentionGeom;
using arith::HeadView;

std::string dims_of(const Tensor& t) { return shape_string(t.shape()); }

/// The heads of a Q, K or V input: 4-D inputs carry them in dim 1; 3-D inputs need the heads attribute.
struct Heads {
  int64_t count, size, len;
  HeadView view;
};
Heads heads_of(const KernelContext& ctx, const Tensor& t, const char* what, const char* attr) {
  const int64_t attr_heads = ctx.node.attr_int(attr, 0);
  if (t.rank() == 4) {
    if (attr_heads != 0 && attr_heads != t.dim(1))
      throw ctx.error(std::string(what) + " " + dims_of(t) + " has " + std::to_string(t.dim(1)) + " heads but " +
                      attr + " = " + std::to_string(attr_heads));
    const int64_t h = t.dim(1), len = t.dim(2), size = t.dim(3);
    return {h, size, len, {h * len * size, len * size, size}};
  }
  if (attr_heads <= 0)
    throw ctx.error(std::string("3-D ") + what + " " + dims_of(t) + " needs the attribute " + attr + " > 0");
  if (t.dim(2) % attr_heads != 0)
    throw ctx.error(std::string(what) + " hidden size " + std::to_string(t.dim(2)) + " is not a multiple of " +
                    attr + " = " + std::to_string(attr_heads));
  const int64_t size = t.dim(2) / attr_heads, len = t.dim(1);
  return {attr_heads, size, len, {len * t.dim(2), size, t.dim(2)}};
}

void require_past(const KernelContext& ctx, int i, const AttentionGeom& g, int64_t head, const char* what) {
  const Tensor& t = ctx.input(i);
  require_dtype(ctx, t.dtype(), {DType::Float});
  if (t.rank() != 4 || t.dim(0) != g.batch || t.dim(1) != g.kv_heads || t.dim(3) != head)
    throw ctx.error(std::string(what) + " has shape " + dims_of(t) + ", expected (" + std::to_string(g.batch) +
                    ", " + std::to_string(g.kv_heads) + ", past_len, " + std::to_string(head) + ")");
}

// attn_mask: bool or float, rank 1..4, broadcast (right-aligned) to (batch, q heads, q_len, keys); its last dim
// is the key count, or shorter when nonpad_kv_seqlen says how many keys are real (the rest get -inf).
void plan_mask(const KernelContext& ctx, AttentionGeom& g) {
  const Tensor& m = ctx.input(3);
  require_dtype(ctx, m.dtype(), {DType::Float, DType::Bool});
  g.mask = m.dtype() == DType::Bool ? AttentionGeom::Mask::Bool : AttentionGeom::Mask::Float;
  if (m.rank() < 1 || m.rank() > 4) throw ctx.error("attn_mask must have rank 1 to 4, got " + dims_of(m));
  g.mask_len = m.dim(m.rank() - 1);
  if (g.mask_len != g.total_len && !(g.has_nonpad && g.mask_len < g.total_len))
    throw ctx.error("attn_mask " + dims_of(m) + " has " + std::to_string(g.mask_len) + " keys, expected " +
                    std::to_string(g.total_len));
  const int64_t want[3] = {g.batch, g.q_heads, g.q_len};
  int64_t* strides[3] = {&g.mask_sb, &g.mask_sh, &g.mask_si};
  int64_t stride = g.mask_len;
  for (int d = 2; d >= 0; --d) {
    const int md = m.rank() - 4 + d;  // the mask dim right-aligned with this one
    const int64_t size = md >= 0 ? m.dim(md) : 1;
    if (size != 1 && size != want[d])
      throw ctx.error("attn_mask " + dims_of(m) + " does not broadcast to (" + std::to_string(g.batch) + ", " +
                      std::to_string(g.q_heads) + ", " + std::to_string(g.q_len) + ", " +
                      std::to_string(g.total_len) + ")");
    *strides[d] = size == 1 ? 0 : stride;
    stride *= size;
  }
}

void plan_nonpad(const KernelContext& ctx, AttentionGeom& g) {
  const Tensor t = ctx.host_input(6);
  require_dtype(ctx, t.dtype(), {DType::Int64});
  if (t.rank() != 1 || t.dim(0) != g.batch)
    throw ctx.error("nonpad_kv_seqlen has shape " + dims_of(t) + ", expected (" + std::to_string(g.batch) + ")");
  if (g.has_past) throw ctx.error("nonpad_kv_seqlen cannot be used with past_key/past_value");
  for (int64_t b = 0; b < g.batch; ++b) {
    const int64_t n = t.data<int64_t>()[b];
    if (n < 0 || n > g.total_len)
      throw ctx.error("nonpad_kv_seqlen[" + std::to_string(b) + "] = " + std::to_string(n) + " is outside [0, " +
                      std::to_string(g.total_len) + "]");
  }
  g.has_nonpad = true;
}

void plan_settings(const KernelContext& ctx, AttentionPlan& p) {
  AttentionGeom& g = p.g;
  const onnx::Node& n = ctx.node;
  const int64_t causal = n.attr_int("is_causal", 0);
  if (causal != 0 && causal != 1) throw ctx.error("is_causal must be 0 or 1, got " + std::to_string(causal));
  g.causal = causal == 1;
  const int64_t mode = n.attr_int("qk_matmul_output_mode", 0);
  if (mode < 0 || mode > 3) throw ctx.error("qk_matmul_output_mode must be 0..3, got " + std::to_string(mode));
  p.qk_mode = static_cast<arith::QkOutput>(mode);
  // softmax_precision: the type the softmax is computed in (the function body casts the scores to it and back).
  const int64_t precision = n.attr_int("softmax_precision", 1);
  if (precision != 1 && precision != 11)
    throw ctx.error("softmax_precision " + std::to_string(precision) +
                        " is not supported (supported: 1, float, and 11, double)",
                    ErrorCode::NotImplemented);
  p.softmax_f64 = precision == 11;
  g.softcap = n.attr_float("softcap", 0.0f);
  g.left_window = n.attr_int("left_window_size", -1);
  g.right_window = n.attr_int("right_window_size", -1);
  if (g.left_window < -1 || g.right_window < -1)
    throw ctx.error("left_window_size and right_window_size must be >= -1");
  // The function body's scale: the attribute, else 1 / sqrt(float(head)); Q and K are each multiplied by its root.
  const float scale = n.has("scale") ? n.attr_float("scale", 1.0f)
                                     : 1.0f / __builtin_sqrtf(static_cast<float>(g.head));
  g.scale_root = __builtin_sqrtf(scale);
}

bool wants_output(const KernelContext& ctx, int i) {
  return ctx.node.outputs.size() > static_cast<size_t>(i) && !ctx.node.outputs[i].empty();
}

}  // namespace

AttentionPlan plan_attention(const KernelContext& ctx) {
  const Tensor &q = ctx.input(0), &k = ctx.input(1), &v = ctx.input(2);
  for (const Tensor* t : {&q, &k, &v}) require_dtype(ctx, t->dtype(), {DType::Float});
  if ((q.rank() != 3 && q.rank() != 4) || k.rank() != q.rank() || v.rank() != q.rank())
    throw ctx.error("Q, K and V must all be 3-D or all 4-D, got " + dims_of(q) + ", " + dims_of(k) + ", " +
                    dims_of(v));
  const Heads qh = heads_of(ctx, q, "Q", "q_num_heads"), kh = heads_of(ctx, k, "K", "kv_num_heads"),
              vh = heads_of(ctx, v, "V", "kv_num_heads");
  if (k.dim(0) != q.dim(0) || v.dim(0) != q.dim(0))
    throw ctx.error("Q, K and V batch sizes differ: " + dims_of(q) + ", " + dims_of(k) + ", " + dims_of(v));
  if (kh.size != qh.size)
    throw ctx.error("K head size " + std::to_string(kh.size) + " differs from Q head size " + std::to_string(qh.size));
  if (vh.len != kh.len || vh.count != kh.count)
    throw ctx.error("V " + dims_of(v) + " does not match K " + dims_of(k) + " in heads or sequence length");
  if (kh.count == 0 || qh.count % kh.count != 0)
    throw ctx.error("q heads (" + std::to_string(qh.count) + ") must be a multiple of kv heads (" +
                    std::to_string(kh.count) + ")");
  AttentionPlan p;
  AttentionGeom& g = p.g;
  g.batch = q.dim(0), g.q_heads = qh.count, g.kv_heads = kh.count, g.q_len = qh.len, g.kv_len = kh.len;
  g.head = qh.size, g.v_head = vh.size;
  p.q = qh.view, p.k = kh.view, p.v = vh.view;
  if (ctx.has_input(4) != ctx.has_input(5)) throw ctx.error("past_key and past_value must be given together");
  g.has_past = ctx.has_input(4);
  if (g.has_past) {
    require_past(ctx, 4, g, g.head, "past_key");
    require_past(ctx, 5, g, g.v_head, "past_value");
    g.past_len = ctx.input(4).dim(2);
    if (ctx.input(5).dim(2) != g.past_len) throw ctx.error("past_key and past_value lengths differ");
  }
  g.total_len = g.past_len + g.kv_len;
  plan_settings(ctx, p);
  if (ctx.has_input(6)) plan_nonpad(ctx, g);
  if (ctx.has_input(3)) plan_mask(ctx, g);
  const bool three_d = q.rank() == 3;
  p.y_shape = three_d ? Shape{g.batch, g.q_len, g.q_heads * g.v_head} : Shape{g.batch, g.q_heads, g.q_len, g.v_head};
  p.y = three_d ? HeadView{g.q_len * g.q_heads * g.v_head, g.v_head, g.q_heads * g.v_head}
                : HeadView{g.q_heads * g.q_len * g.v_head, g.q_len * g.v_head, g.v_head};
  p.present_k_shape = {g.batch, g.kv_heads, g.total_len, g.head};
  p.present_v_shape = {g.batch, g.kv_heads, g.total_len, g.v_head};
  p.qk_shape = {g.batch, g.q_heads, g.q_len, g.total_len};
  return p;
}

AttentionOutputs attention_outputs(KernelContext& ctx, const AttentionPlan& p) {
  AttentionOutputs out;
  out.y = ctx.output(0, DType::Float, p.y_shape).data<float>();
  if (wants_output(ctx, 1)) out.present_k = ctx.output(1, DType::Float, p.present_k_shape).data<float>();
  if (wants_output(ctx, 2)) out.present_v = ctx.output(2, DType::Float, p.present_v_shape).data<float>();
  if (wants_output(ctx, 3)) out.qk = ctx.output(3, DType::Float, p.qk_shape).data<float>();
  return out;
}

arith::AttentionBiasInputs attention_bias_inputs(const KernelContext& ctx, const AttentionPlan& p) {
  arith::AttentionBiasInputs in;
  if (p.g.mask == AttentionGeom::Mask::Float) in.mask_f = ctx.input(3).data<float>();
  if (p.g.mask == AttentionGeom::Mask::Bool) in.mask_b = ctx.input(3).data<uint8_t>();
  if (p.g.has_nonpad) in.nonpad = ctx.input(6).data<int64_t>();
  return in;
}

arith::RotaryGeom plan_rotary(const KernelContext& ctx) {
  const Tensor &x = ctx.input(0), &cos = ctx.input(1), &sin = ctx.input(2);
  for (const Tensor* t : {&x, &cos, &sin}) require_dtype(ctx, t->dtype(), {DType::Float});
  if (x.rank() != 3 && x.rank() != 4) throw ctx.error("input must be 3-D or 4-D, got " + dims_of(x));
  const Heads h = heads_of(ctx, x, "input", "num_heads");
  arith::RotaryGeom g;
  g.batch = x.dim(0), g.heads = h.count, g.seq = h.len, g.head = h.size, g.heads_inner = x.rank() == 3;
  g.interleaved = ctx.node.attr_int("interleaved", 0) != 0;
  g.rotary = ctx.node.attr_int("rotary_embedding_dim", 0);
  if (g.rotary == 0) g.rotary = g.head;
  if (g.rotary < 0 || g.rotary > g.head || g.rotary % 2 != 0)
    throw ctx.error("rotary_embedding_dim " + std::to_string(g.rotary) + " must be even and at most the head size " +
                    std::to_string(g.head));
  g.has_positions = ctx.has_input(3);
  if (cos.shape() != sin.shape())
    throw ctx.error("cos_cache " + dims_of(cos) + " and sin_cache " + dims_of(sin) + " differ in shape");
  const int rank = g.has_positions ? 2 : 3;
  const bool lead_ok = g.has_positions || (cos.rank() == 3 && cos.dim(0) == g.batch && cos.dim(1) == g.seq);
  if (cos.rank() != rank || !lead_ok || cos.dim(rank - 1) < g.rotary / 2)
    throw ctx.error("cos_cache " + dims_of(cos) + " must be " +
                    (g.has_positions ? "(max_positions, " : "(batch, seq, ") + ">= rotary_dim / 2 = " +
                    std::to_string(g.rotary / 2) + ")");
  g.cache_row = cos.dim(rank - 1);
  if (g.has_positions) {
    const Tensor pos = ctx.host_input(3);
    require_dtype(ctx, pos.dtype(), {DType::Int64});
    if (pos.shape() != Shape{g.batch, g.seq})
      throw ctx.error("position_ids has shape " + dims_of(pos) + ", expected (" + std::to_string(g.batch) + ", " +
                      std::to_string(g.seq) + ")");
    for (int64_t i = 0; i < pos.numel(); ++i)
      if (pos.data<int64_t>()[i] < 0 || pos.data<int64_t>()[i] >= cos.dim(0))
        throw ctx.error("position_ids value " + std::to_string(pos.data<int64_t>()[i]) + " is outside [0, " +
                        std::to_string(cos.dim(0)) + ")");
  }
  return g;
}

namespace {

/// A per-step input of LinearAttention: (batch, steps, last), `last` one of two allowed sizes.
void require_step_input(const KernelContext& ctx, int i, const arith::LinearAttentionGeom& g, const char* what,
                        int64_t last_a, int64_t last_b) {
  const Tensor& t = ctx.input(i);
  require_dtype(ctx, t.dtype(), {DType::Float});
  if (t.rank() != 3 || t.dim(0) != g.batch || t.dim(1) != g.steps || (t.dim(2) != last_a && t.dim(2) != last_b))
    throw ctx.error(std::string(what) + " has shape " + dims_of(t) + ", expected (" + std::to_string(g.batch) + ", " +
                    std::to_string(g.steps) + ", " + std::to_string(last_a) +
                    (last_a != last_b ? " or " + std::to_string(last_b) : std::string()) + ")");
}

}  // namespace

arith::LinearAttentionGeom plan_linear_attention(const KernelContext& ctx) {
  const Tensor &q = ctx.input(0), &k = ctx.input(1), &v = ctx.input(2);
  for (const Tensor* t : {&q, &k, &v}) require_dtype(ctx, t->dtype(), {DType::Float});
  if (q.rank() != 3 || k.rank() != 3 || v.rank() != 3)
    throw ctx.error("query, key and value must be 3-D (batch, steps, heads * head), got " + dims_of(q) + ", " +
                    dims_of(k) + ", " + dims_of(v));
  const Heads qh = heads_of(ctx, q, "query", "q_num_heads"), kh = heads_of(ctx, k, "key", "kv_num_heads"),
              vh = heads_of(ctx, v, "value", "kv_num_heads");
  if (qh.count % kh.count != 0)
    throw ctx.error("q_num_heads (" + std::to_string(qh.count) + ") must be a multiple of kv_num_heads (" +
                    std::to_string(kh.count) + ")");
  arith::LinearAttentionGeom g;
  g.batch = q.dim(0), g.steps = q.dim(1), g.q_heads = qh.count, g.kv_heads = kh.count, g.dk = qh.size;
  g.dv = vh.size;
  require_step_input(ctx, 1, g, "key", g.kv_heads * g.dk, g.kv_heads * g.dk);
  require_step_input(ctx, 2, g, "value", g.kv_heads * g.dv, g.kv_heads * g.dv);
  const std::string rule = ctx.node.attr_string("update_rule", "gated_delta");
  if (rule != "linear" && rule != "gated" && rule != "delta" && rule != "gated_delta")
    throw ctx.error("update_rule must be linear, gated, delta or gated_delta, got '" + rule + "'");
  g.gated = rule == "gated" || rule == "gated_delta";
  g.delta = rule == "delta" || rule == "gated_delta";
  if (g.gated && !ctx.has_input(4)) throw ctx.error("update_rule '" + rule + "' needs the decay input");
  if (g.delta && !ctx.has_input(5)) throw ctx.error("update_rule '" + rule + "' needs the beta input");
  if (g.gated) {
    require_step_input(ctx, 4, g, "decay", g.kv_heads * g.dk, g.kv_heads);
    g.decay_step = ctx.input(4).dim(2);
  }
  if (g.delta) {
    require_step_input(ctx, 5, g, "beta", g.kv_heads, 1);
    g.beta_step = ctx.input(5).dim(2);
  }
  if (ctx.has_input(3)) {
    const Tensor& past = ctx.input(3);
    require_dtype(ctx, past.dtype(), {DType::Float});
    if (past.shape() != linear_state_shape(g))
      throw ctx.error("past_state has shape " + dims_of(past) + ", expected " + shape_string(linear_state_shape(g)));
  }
  const float scale = ctx.node.attr_float("scale", 0.0f);
  g.scale = scale != 0.0f ? scale : 1.0f / __builtin_sqrtf(static_cast<float>(g.dk));
  return g;
}

namespace {
const OpEntry kRows[] = {
    {"Attention", 23, kNewestOpset, &cpu::attention, LOCKSTEP_CUDA_KERNEL(attention)},
    {"RotaryEmbedding", 23, kNewestOpset, &cpu::rotary_embedding, LOCKSTEP_CUDA_KERNEL(rotary_embedding)},
    {"LinearAttention", 27, kNewestOpset, &cpu::linear_attention, LOCKSTEP_CUDA_KERNEL(linear_attention)},
};
}  // namespace

std::span<const OpEntry> attention_ops() { return kRows; }

}  // namespace lockstep
