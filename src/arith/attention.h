// Per-element rules of the attention family (Attention, RotaryEmbedding, LinearAttention), shared by the CPU and
// CUDA kernels (docs/arithmetic.md#attention). The geometry structs are plain data, so CUDA kernels take them by value.
#pragma once

#include <cstdint>

#include "arith/hd.h"
#include "arith/math.h"
#include "arith/reduce.h"

namespace lockstep::arith {

/// Where element (b, h, i, d) of a (batch, heads, sequence, head size) view lives: b*sb + h*sh + i*si + d.
/// A 4-D input is that layout; a 3-D input (batch, sequence, heads * head size) interleaves the heads.
struct HeadView {
  int64_t sb = 0, sh = 0, si = 0;
  LOCKSTEP_HD int64_t row(int64_t b, int64_t h, int64_t i) const { return b * sb + h * sh + i * si; }
};

/// An Attention node after validation: sizes, settings and the mask's layout.
struct AttentionGeom {
  int64_t batch = 0, q_heads = 0, kv_heads = 0, q_len = 0, kv_len = 0, past_len = 0, total_len = 0;
  int64_t head = 0, v_head = 0;  // head sizes of Q/K and of V
  float scale_root = 1.0f;       // sqrt(scale), rounded: Q and K are each multiplied by it
  float softcap = 0.0f;          // 0: no soft cap
  bool causal = false, has_past = false, has_nonpad = false;
  int64_t left_window = -1, right_window = -1;  // -1: unbounded
  enum class Mask : int { None, Float, Bool } mask = Mask::None;
  int64_t mask_len = 0;                      // the mask's last dim; keys at or past it get -inf
  int64_t mask_sb = 0, mask_sh = 0, mask_si = 0;  // broadcast strides over (batch, q head, query); key stride 1
  LOCKSTEP_HD int64_t group() const { return q_heads / kv_heads; }
  LOCKSTEP_HD int64_t kv_head_of(int64_t h) const { return h / group(); }
};

/// The inputs the bias reads (device pointers on CUDA).
struct AttentionBiasInputs {
  const float* mask_f = nullptr;
  const uint8_t* mask_b = nullptr;
  const int64_t* nonpad = nullptr;  // nonpad_kv_seqlen, one per batch
};

LOCKSTEP_HD float allowed_term_f32(bool allowed) { return allowed ? 0.0f : -__builtin_huge_valf(); }

/// The additive bias of score (b, h, i, j), as the ONNX function body builds it: the mask's value (a bool mask
/// gives +0 or -inf; keys past a short mask -inf; no mask +0), then + (+0 or -inf) for each restriction that is
/// set: causal, left window, right window, padding. Each + is an IEEE addition (so -0 in a float mask becomes +0
/// once any restriction is added). The query's absolute position is i + offset, offset = past length, else
/// nonpad_kv_seqlen[b] - q_len, else 0.
LOCKSTEP_HD float attention_bias_f32(const AttentionGeom& g, const AttentionBiasInputs& in, int64_t b, int64_t h,
                                     int64_t i, int64_t j) {
  float bias = 0.0f;
  if (g.mask != AttentionGeom::Mask::None) {
    const int64_t at = b * g.mask_sb + h * g.mask_sh + i * g.mask_si + j;
    if (j >= g.mask_len) bias = allowed_term_f32(false);
    else bias = g.mask == AttentionGeom::Mask::Float ? in.mask_f[at] : allowed_term_f32(in.mask_b[at] != 0);
  }
  const int64_t offset = g.has_past ? g.past_len : g.has_nonpad ? in.nonpad[b] - g.q_len : 0;
  const int64_t pos = i + offset;
  if (g.causal) bias = bias + allowed_term_f32(j <= pos);
  if (g.left_window >= 0) bias = bias + allowed_term_f32(pos - j <= g.left_window);
  if (g.right_window >= 0) bias = bias + allowed_term_f32(j - pos <= g.right_window);
  if (g.has_nonpad) bias = bias + allowed_term_f32(j < in.nonpad[b]);
  return bias;
}

/// qk_matmul_output_mode: which stage of the scores the optional fourth output holds.
enum class QkOutput : int { Raw = 0, Softcapped = 1, Biased = 2, Probabilities = 3 };

/// The scores of row (b, h, i) in place: s_j = softcap(s_j) + bias_j, softcap(x) = tanh_f32(x / c) * c when
/// softcap != 0 (Div, Tanh, Mul). Stages 0-2 of qk_matmul_output go to qk (null: not wanted). Returns whether
/// every bias_j is -inf: the row is fully masked and its probabilities become +0.
LOCKSTEP_HD bool attention_row_logits_f32(const AttentionGeom& g, const AttentionBiasInputs& in, int64_t b,
                                          int64_t h, int64_t i, float* s, float* qk, QkOutput mode) {
  bool masked = true;
  for (int64_t j = 0; j < g.total_len; ++j) {
    float v = s[j];
    if (qk && mode == QkOutput::Raw) qk[j] = v;
    if (g.softcap != 0.0f) v = tanh_f32(v / g.softcap) * g.softcap;
    if (qk && mode == QkOutput::Softcapped) qk[j] = v;
    const float bias = attention_bias_f32(g, in, b, h, i, j);
    masked = masked && bias == -__builtin_huge_valf();
    v = v + bias;
    if (qk && mode == QkOutput::Biased) qk[j] = v;
    s[j] = v;
  }
  return masked;
}

/// RotaryEmbedding after validation. x and y have one layout: 4-D (batch, heads, seq, head) or 3-D (batch, seq,
/// heads * head). The cos/sin row of (b, i) is at cache + pos * cache_row, pos = position_ids[b, i] or, without
/// position_ids (caches of shape (batch, seq, cache_row)), b * seq + i.
struct RotaryGeom {
  int64_t batch = 0, heads = 0, seq = 0, head = 0, rotary = 0;  // rotary: the rotated leading part of a head
  bool interleaved = false, has_positions = false, heads_inner = false;  // heads_inner: the 3-D layout
  int64_t cache_row = 0;                                                 // the caches' last dim (>= rotary / 2)
  LOCKSTEP_HD int64_t elements() const { return batch * heads * seq * head; }
};

/// Element `index` of y (memory order). Pairs (x1, x2) with cos c and sin s give c*x1 - s*x2 and s*x1 + c*x2
/// (each product rounded, then the difference or sum; no fma). The pair of dim d is (k, k + rotary/2) or,
/// interleaved, (2k, 2k + 1); dims at or past `rotary` are copied.
LOCKSTEP_HD float rotary_element_f32(const RotaryGeom& g, const float* x, const float* cos_cache,
                                     const float* sin_cache, const int64_t* positions, int64_t index) {
  const int64_t d = index % g.head;
  const int64_t rest = index / g.head;
  const int64_t i = g.heads_inner ? (rest / g.heads) % g.seq : rest % g.seq;
  const int64_t b = rest / (g.heads * g.seq);
  const float* xr = x + (index - d);
  if (d >= g.rotary) return xr[d];
  const int64_t half = g.rotary / 2;
  const int64_t k = g.interleaved ? d / 2 : d % half;
  const int64_t first = g.interleaved ? 2 * k : k, second = g.interleaved ? 2 * k + 1 : k + half;
  const bool real = g.interleaved ? d % 2 == 0 : d < half;
  const int64_t pos = g.has_positions ? positions[b * g.seq + i] : b * g.seq + i;
  const float c = cos_cache[pos * g.cache_row + k], s = sin_cache[pos * g.cache_row + k];
  const float x1 = xr[first], x2 = xr[second];
  return real ? c * x1 - s * x2 : s * x1 + c * x2;
}

/// LinearAttention after validation: query (batch, steps, q_heads * dk), key (.., kv_heads * dk), value
/// (.., kv_heads * dv), decay (.., kv_heads * dk, or kv_heads: one per head), beta (.., kv_heads, or 1).
struct LinearAttentionGeom {
  int64_t batch = 0, steps = 0, q_heads = 0, kv_heads = 0, dk = 0, dv = 0;
  bool gated = false, delta = false;  // update_rule: gated (decay), delta (beta), gated_delta (both)
  int64_t decay_step = 0, beta_step = 0;  // decay values per (b, t): kv_heads * dk or kv_heads; beta: kv_heads or 1
  float scale = 1.0f;
  LOCKSTEP_HD int64_t group() const { return q_heads / kv_heads; }
  LOCKSTEP_HD int64_t columns() const { return batch * kv_heads * dv; }
};

/// Runs the recurrence of one state column: column c of kv head (b, kvh), state[a * dv] for a < dk (in place,
/// holding the initial state on entry and the final one on return). Each column evolves alone, so one thread owns
/// it on either device. Per step t, as the ONNX function body's Scan step (each MatMul a dot_chunked_f32):
///   gated:  S[a] = S[a] * exp_f32(g[a])
///   delta:  r = dot_chunked_f32(dk, +0, S[a], k[a]);  w = beta * (v[c] - r)     else w = v[c]
///           S[a] = S[a] + dot_chunked_f32(1, +0, k[a], w)                        (the outer product k w^T)
///   out[b, t, h, c] = scale * dot_chunked_f32(dk, +0, q_h[a], S[a]) for each q head h of the group.
LOCKSTEP_HD void linear_attention_column_f32(const LinearAttentionGeom& g, const float* q, const float* k,
                                             const float* v, const float* decay, const float* beta, float* state,
                                             float* out, int64_t column) {
  const int64_t c = column % g.dv, bkv = column / g.dv, kvh = bkv % g.kv_heads, b = bkv / g.kv_heads;
  auto s = [&](int64_t a) -> float& { return state[a * g.dv]; };
  for (int64_t t = 0; t < g.steps; ++t) {
    const int64_t bt = b * g.steps + t;
    const float* kt = k + (bt * g.kv_heads + kvh) * g.dk;
    if (g.gated) {
      const bool per_head = g.decay_step == g.kv_heads;
      const float* gt = decay + bt * g.decay_step + (per_head ? kvh : kvh * g.dk);
      for (int64_t a = 0; a < g.dk; ++a) s(a) = s(a) * exp_f32(gt[per_head ? 0 : a]);
    }
    float w = v[(bt * g.kv_heads + kvh) * g.dv + c];
    if (g.delta) {
      const float r = dot_chunked_f32(g.dk, 0.0f, [&](int64_t a) { return s(a); }, [&](int64_t a) { return kt[a]; });
      w = beta[bt * g.beta_step + (g.beta_step == 1 ? 0 : kvh)] * (w - r);
    }
    for (int64_t a = 0; a < g.dk; ++a)
      s(a) = s(a) + dot_chunked_f32(1, 0.0f, [&](int64_t) { return kt[a]; }, [&](int64_t) { return w; });
    for (int64_t h = kvh * g.group(); h < (kvh + 1) * g.group(); ++h) {
      const float* qt = q + (bt * g.q_heads + h) * g.dk;
      const float read = dot_chunked_f32(g.dk, 0.0f, [&](int64_t a) { return qt[a]; }, [&](int64_t a) { return s(a); });
      out[(bt * g.q_heads + h) * g.dv + c] = g.scale * read;
    }
  }
}

}  // namespace lockstep::arith
