// onnxruntime's attention ops of the com.microsoft domain (MultiHeadAttention, GroupQueryAttention, Attention), run
// as standard ONNX nodes: the projections, splits and head layouts as tensor ops, the masks onnxruntime's CPU provider
// applies built from Range, comparisons and Where, and the attention itself as one opset-23 Attention node
// (docs/arithmetic.md#expanded-ops). What onnxruntime computes was settled by running its CPU provider
// (tests/test_contrib_attention_ops.py compares against it).
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "graph/expand.h"
#include "graph/plan.h"

namespace lockstep {

namespace {

/// The expansion builder with the tensor helpers of the attention expansions. Every node follows default-domain
/// opset 23 (Attention, RotaryEmbedding, Shape's start/end, Split's num_outputs) unless the model's own is newer.
class Builder : public ExpansionBuilder {
 public:
  Builder(onnx::Graph& g, const onnx::Node& op, const std::string& tag, int64_t opset)
      : ExpansionBuilder(g, op, opset, tag, 23) {}

  /// A rank-0 float32 constant converted by CastLike to the element type of the op's first input (query or input,
  /// of the op's type T). CastLike reads a value the graph gives, never one the expansion computes: a half value
  /// that a CastLike reads is rounded to the half type (docs/arithmetic.md#half-precision).
  std::string float_like(const std::string& suffix, float v) {
    graph().initializers[value(suffix + "_f32")] = Tensor::from_bytes(DType::Float, {}, &v);
    return op("CastLike", {value(suffix + "_f32"), source().inputs.at(0)}, suffix);
  }
  /// Dims [start, end) of `x`'s shape, a 1-D int64 tensor.
  std::string dims(const std::string& x, int64_t start, int64_t end, const std::string& suffix) {
    node("Shape", {x}, {value(suffix)});
    set_int(last(), "start", start);
    set_int(last(), "end", end);
    return value(suffix);
  }
  std::string unsqueeze(const std::string& x, const std::vector<int64_t>& axes, const std::string& suffix) {
    return op("Unsqueeze", {x, ints(suffix + "_axes", axes)}, suffix);
  }
  std::string squeeze0(const std::string& x, const std::string& suffix) {
    return op("Squeeze", {x, ints(suffix + "_axes", {0})}, suffix);
  }
  std::string cast(const std::string& x, DType to, const std::string& suffix) {
    node("Cast", {x}, {value(suffix)});
    set_int(last(), "to", static_cast<int64_t>(to));
    return value(suffix);
  }
  std::string transpose(const std::string& x, std::vector<int64_t> perm, const std::string& suffix) {
    node("Transpose", {x}, {value(suffix)});
    set_ints(last(), "perm", std::move(perm));
    return value(suffix);
  }
  /// 0, 1, ..., n - 1 for a 1-element int64 tensor n, as a 1-D int64 tensor.
  std::string range(const std::string& n, const std::string& suffix) {
    return op("Range", {scalar_int(suffix + "_start", 0), squeeze0(n, suffix + "_n"), scalar_int(suffix + "_step", 1)},
              suffix);
  }
  /// (B, L, heads * h) -> (B, heads, L, h). The head size is the last dim divided by `heads`, written out, so that
  /// an input of another rank or a last dim that does not divide fails the Reshape at run time.
  std::string to_heads(const std::string& x, int64_t heads, const std::string& suffix) {
    const std::string lead = dims(x, 0, 2, suffix + "_lead");
    const std::string h = op("Div", {dims(x, 2, 3, suffix + "_width"), ints(suffix + "_heads", {heads})},
                             suffix + "_head_size");
    const std::string shape = op("Concat", {lead, value(suffix + "_heads"), h}, suffix + "_shape");
    set_int(last(), "axis", 0);
    return transpose(op("Reshape", {x, shape}, suffix + "_bsnh"), {0, 2, 1, 3}, suffix);
  }
  /// Packed (B, L, N, parts, H) -> one (B, N, L, H) tensor per name, value(name + "4").
  std::vector<std::string> unpack(const std::string& x, const std::vector<std::string>& names) {
    std::vector<std::string> parts, out;
    for (const std::string& n : names) parts.push_back(value(n + "5"));
    node("Split", {x}, parts);
    set_int(last(), "axis", 3);
    set_int(last(), "num_outputs", static_cast<int64_t>(names.size()));
    for (size_t i = 0; i < names.size(); ++i)
      out.push_back(transpose(op("Squeeze", {parts[i], ints(names[i] + "_axis", {3})}, names[i] + "_bsnh"),
                              {0, 2, 1, 3}, names[i] + "4"));
    return out;
  }
  /// (B, heads, S, h) -> (B, S, heads * h), written to `out`.
  void from_heads(const std::string& y4, const std::string& out) {
    const std::string t = transpose(y4, {0, 2, 1, 3}, "y_bsnh");
    op_to("Reshape", {t, ints("y_shape", {0, 0, -1})}, out);
  }
  std::string concat(std::vector<std::string> in, int64_t axis, const std::string& suffix) {
    node("Concat", std::move(in), {value(suffix)});
    set_int(last(), "axis", axis);
    return value(suffix);
  }

};

bool has_input(const onnx::Node& op, size_t i) { return op.inputs.size() > i && !op.inputs[i].empty(); }
bool has_output(const onnx::Node& op, size_t i) { return op.outputs.size() > i && !op.outputs[i].empty(); }

void refuse_input(const onnx::Node& op, size_t i, const std::string& what) {
  if (has_input(op, i))
    throw op.error(ErrorCode::NotImplemented, "input " + std::to_string(i) + " (" + what + ") is not supported");
}

int64_t positive_attr(const onnx::Node& op, const char* name) {
  const int64_t v = op.attr_int(name, 0);
  if (v <= 0) throw op.error(ErrorCode::InvalidGraph, std::string("attribute ") + name + " must be > 0");
  return v;
}

/// The attention of onnxruntime's MultiHeadAttention and Attention (its AttentionCPUBase): scores Q K^T * scale plus
/// one float mask, softmax, times V. The mask onnxruntime builds, in its order: the key padding mask as 0 (kept) or
/// mask_filter_value (padding); with unidirectional, keys after the query's position set to the float type's
/// lowest value; then attention_bias added.
struct ClassicAttention {
  std::string q4, k4, v4;          // (B, N, S, H), (B, N, L, H), (B, N, L, Hv)
  std::string past_k, past_v;      // (B, N, P, H) or empty
  std::string mask;                // key padding mask / mask_index, or empty
  int mask_rank = 0;               // 1: lengths (B); 2: (B, T); 3: (B, S, T)
  std::string attention_bias;      // (B or 1, N or 1, S, T) or empty
  bool unidirectional = false;
  float filter = -10000.0f;
  float scale = 0.0f;              // 0: 1 / sqrt(H)
  std::string y, present_k, present_v;  // outputs; the presents may be empty
};

void classic_attention(Builder& b, const ClassicAttention& a) {
  std::string mask;
  if (!a.mask.empty() || a.unidirectional || !a.attention_bias.empty()) {
    std::string base;
    if (!a.mask.empty() || a.unidirectional) {
      const std::string kv_len = b.dims(a.k4, 2, 3, "kv_len");
      const std::string past_len = a.past_k.empty() ? b.ints("past_len", {0}) : b.dims(a.past_k, 2, 3, "past_len");
      const std::string total = b.op("Add", {past_len, kv_len}, "total_len");
      const std::string key_pos = b.op("Reshape", {b.range(total, "key_range"), b.ints("key_shape", {1, 1, 1, -1})},
                                       "key_positions");
      const std::string zero = b.float_like("zero", 0.0f);
      if (!a.mask.empty()) {
        const std::string filter = b.float_like("filter", a.filter);
        std::string kept;
        if (a.mask_rank == 1) {  // lengths: keys at or past the length are padding
          const std::string shape = b.concat({b.dims(a.q4, 0, 1, "batch"), b.ints("lengths_tail", {1, 1, 1})}, 0,
                                             "lengths_shape");
          const std::string lengths = b.op("Reshape", {b.cast(a.mask, DType::Int64, "lengths64"), shape}, "lengths");
          kept = b.op("Less", {key_pos, lengths}, "kept");
        } else {  // raw 0/1: (B, T) -> (B, 1, 1, T); (B, S, T) -> (B, 1, S, T)
          const std::string m = b.unsqueeze(a.mask, a.mask_rank == 2 ? std::vector<int64_t>{1, 2}
                                                                     : std::vector<int64_t>{1}, "mask4");
          kept = b.op("Greater", {m, b.op("CastLike", {b.scalar_int("mask_zero_i64", 0), m}, "mask_zero")}, "kept");
        }
        base = b.op("Where", {kept, zero, filter}, "padding_bias");
      } else {
        base = zero;
      }
      if (a.unidirectional) {
        // onnxruntime masks the keys after the position of every query row but the last (whose row it leaves
        // whole, which matters only where there are more keys than past + queries: cross attention).
        const std::string q_len = b.dims(a.q4, 2, 3, "q_len");
        const std::string q_index =
            b.op("Reshape", {b.range(q_len, "query_range"), b.ints("query_shape", {1, 1, -1, 1})}, "query_index");
        const std::string q_pos = b.op("Add", {q_index, past_len}, "query_positions");
        const std::string not_last =
            b.op("Less", {q_index, b.op("Sub", {q_len, b.ints("one", {1})}, "last_row")}, "not_last_row");
        const std::string future =
            b.op("And", {b.op("Greater", {key_pos, q_pos}, "after_query"), not_last}, "future");
        const std::string lowest = b.float_like("lowest", std::numeric_limits<float>::lowest());
        base = b.op("Where", {future, lowest, base}, "causal_bias");
      }
    }
    mask = a.attention_bias.empty() ? base
           : base.empty()           ? a.attention_bias
                                    : b.op("Add", {base, a.attention_bias}, "bias");
  }
  const std::string y4 = b.value("y4");
  std::vector<std::string> outs = {y4};
  if (!a.past_k.empty()) {
    outs.push_back(a.present_k.empty() ? b.value("present_key") : a.present_k);
    outs.push_back(a.present_v.empty() ? b.value("present_value") : a.present_v);
  }
  onnx::Node& att = b.node("Attention", {a.q4, a.k4, a.v4, mask, a.past_k, a.past_v}, outs);
  if (a.scale != 0.0f) set_float(att, "scale", a.scale);
  while (!att.inputs.empty() && att.inputs.back().empty()) att.inputs.pop_back();
  b.from_heads(y4, a.y);
  if (a.past_k.empty()) {  // no past: the presents are K and V themselves
    if (!a.present_k.empty()) b.op_to("Identity", {a.k4}, a.present_k);
    if (!a.present_v.empty()) b.op_to("Identity", {a.v4}, a.present_v);
  }
}

/// The rank of a mask input, from the graph's declarations: the forms differ by rank only.
int mask_rank(const onnx::Graph& g, const onnx::Node& op, size_t i, const char* what) {
  const int r = declared_rank(g, op.inputs[i]);
  if (r < 0)
    throw op.error(ErrorCode::NotImplemented, std::string(what) +
                                                  " needs a declared rank (1: lengths, 2 or 3: a 0/1 mask): the forms "
                                                  "are told apart by rank when the session is created");
  if (r < 1 || r > 3)
    throw op.error(ErrorCode::NotImplemented,
                   std::string(what) + " of rank " + std::to_string(r) +
                       " is not supported (rank 1: lengths (batch); rank 2: (batch, total); rank 3: (batch, "
                       "sequence, total))");
  return r;
}

/// The mask input (at `mask_input`), attention_bias (at `bias_input`), the attributes both ops share and the output.
void read_mask_and_settings(const onnx::Graph& g, const onnx::Node& op, size_t mask_input, const char* mask_name,
                            size_t bias_input, ClassicAttention& a) {
  if (has_input(op, mask_input)) {
    a.mask = op.inputs[mask_input];
    a.mask_rank = mask_rank(g, op, mask_input, mask_name);
  }
  if (has_input(op, bias_input)) a.attention_bias = op.inputs[bias_input];
  a.unidirectional = op.attr_int("unidirectional", 0) != 0;
  a.filter = op.attr_float("mask_filter_value", -10000.0f);
  a.scale = op.attr_float("scale", 0.0f);
  a.y = op.outputs[0];
}

}  // namespace

// com.microsoft MultiHeadAttention: Q, K, V to (batch, heads, len, head) (bias parts added first), then the classic
// attention above through an opset-23 Attention with past_key/past_value.
std::vector<onnx::Node> expand_microsoft_multi_head_attention(onnx::Graph& g, const onnx::Node& op, int64_t opset) {
  if (op.inputs.empty() || op.inputs[0].empty() || op.inputs.size() > 10 || op.outputs.empty() ||
      op.outputs[0].empty() || op.outputs.size() > 4)
    throw op.error(ErrorCode::InvalidGraph, "MultiHeadAttention takes query and up to 9 optional inputs and gives "
                                            "output and up to 3 optional outputs");
  const int64_t heads = positive_attr(op, "num_heads");
  refuse_input(op, 8, "past_sequence_length: past and present sharing one buffer");
  refuse_input(op, 9, "cache_indirection: beam search");
  if (has_output(op, 3)) throw op.error(ErrorCode::NotImplemented, "output 3 (qk) is not supported");
  const bool key = has_input(op, 1), value = has_input(op, 2), bias = has_input(op, 3);
  if (has_input(op, 6) != has_input(op, 7))
    throw op.error(ErrorCode::InvalidGraph, "past_key and past_value must be given together");
  if (value && !key) throw op.error(ErrorCode::InvalidGraph, "value is given without key");
  Builder b(g, op, "mha", opset);
  ClassicAttention a;
  const std::string& q = op.inputs[0];
  if (!key) {  // packed QKV (B, S, N, 3, H)
    if (bias) throw op.error(ErrorCode::NotImplemented, "bias with packed QKV (query without key) is not supported");
    if (has_input(op, 6)) throw op.error(ErrorCode::NotImplemented, "past_key with packed QKV is not supported");
    const std::vector<std::string> qkv = b.unpack(q, {"q", "k", "v"});
    a.q4 = qkv[0], a.k4 = qkv[1], a.v4 = qkv[2];
  } else {
    std::string q3 = q, k3 = op.inputs[1], v3 = value ? op.inputs[2] : std::string();
    const int key_rank = declared_rank(g, op.inputs[1]);
    if (!value) {  // packed KV (B, L, N, 2, H)
      if (bias) throw op.error(ErrorCode::NotImplemented, "bias with packed KV (key without value) is not supported");
      if (has_input(op, 6)) throw op.error(ErrorCode::NotImplemented, "past_key with packed KV is not supported");
      const std::vector<std::string> kv = b.unpack(k3, {"k", "v"});
      a.k4 = kv[0], a.v4 = kv[1];
    } else if (key_rank == 4) {  // key and value already (B, N, L, H)
      if (bias) throw op.error(ErrorCode::NotImplemented, "bias with 4-D key/value is not supported");
      if (has_input(op, 6)) throw op.error(ErrorCode::InvalidGraph, "past_key cannot be used with 4-D key/value");
      a.k4 = k3;
      a.v4 = v3;
    }
    if (bias) {  // (D + D + Dv): split and added to Q, K, V first
      const std::string d = b.dims(q3, 2, 3, "q_width");
      const std::string sizes = b.concat({d, d, b.dims(v3, 2, 3, "v_width")}, 0, "bias_sizes");
      b.node("Split", {op.inputs[3], sizes}, {b.value("bias_q"), b.value("bias_k"), b.value("bias_v")});
      set_int(b.last(), "axis", 0);
      q3 = b.op("Add", {q3, b.value("bias_q")}, "q_biased");
      k3 = b.op("Add", {k3, b.value("bias_k")}, "k_biased");
      v3 = b.op("Add", {v3, b.value("bias_v")}, "v_biased");
    }
    if (a.k4.empty()) {
      a.k4 = b.to_heads(k3, heads, "k4");
      a.v4 = b.to_heads(v3, heads, "v4");
    }
    a.q4 = b.to_heads(q3, heads, "q4");
  }
  if (has_input(op, 6)) {
    a.past_k = op.inputs[6];
    a.past_v = op.inputs[7];
  }
  read_mask_and_settings(g, op, 4, "key_padding_mask", 5, a);
  if (has_output(op, 1)) a.present_k = op.outputs[1];
  if (has_output(op, 2)) a.present_v = op.outputs[2];
  classic_attention(b, a);
  return b.take();
}

// com.microsoft Attention (BERT, GPT-2): input x weights (+ bias) split into Q, K, V, then the classic attention.
std::vector<onnx::Node> expand_microsoft_attention(onnx::Graph& g, const onnx::Node& op, int64_t opset) {
  if (op.inputs.size() < 2 || op.inputs[0].empty() || op.inputs[1].empty() || op.inputs.size() > 7 ||
      op.outputs.empty() || op.outputs[0].empty() || op.outputs.size() > 2)
    throw op.error(ErrorCode::InvalidGraph,
                   "Attention takes input, weights and up to 5 optional inputs and gives output and optionally "
                   "present");
  const int64_t heads = positive_attr(op, "num_heads");
  if (op.attr_int("do_rotary", 0) != 0) throw op.error(ErrorCode::NotImplemented, "do_rotary = 1 is not supported");
  if (op.attr_int("past_present_share_buffer", 0) != 0)
    throw op.error(ErrorCode::NotImplemented, "past_present_share_buffer = 1 is not supported");
  refuse_input(op, 6, "past_sequence_length: past and present sharing one buffer");
  if (has_input(op, 4) && has_input(op, 5))
    throw op.error(ErrorCode::InvalidGraph, "past and attention_bias cannot be used together (onnxruntime refuses "
                                            "them too)");
  const std::vector<int64_t> sizes = op.attr_ints("qkv_hidden_sizes", {});
  if (!sizes.empty() && (sizes.size() != 3 || sizes[0] != sizes[1] || sizes[0] <= 0 || sizes[2] <= 0 ||
                         sizes[0] % heads != 0 || sizes[2] % heads != 0))
    throw op.error(ErrorCode::InvalidGraph, "qkv_hidden_sizes must be 3 positive sizes, the first two equal, each a "
                                            "multiple of num_heads");
  const int w_rank = declared_rank(g, op.inputs[1]);
  if (w_rank >= 0 && w_rank != 2) throw op.error(ErrorCode::InvalidGraph, "weights must be 2-D");
  Builder b(g, op, "attention", opset);
  std::string qkv = b.op("MatMul", {op.inputs[0], op.inputs[1]}, "qkv_product");
  if (has_input(op, 2)) qkv = b.op("Add", {qkv, op.inputs[2]}, "qkv");
  if (sizes.empty()) {
    b.node("Split", {qkv}, {b.value("q"), b.value("k"), b.value("v")});
    set_int(b.last(), "num_outputs", 3);
  } else {
    b.node("Split", {qkv, b.ints("qkv_sizes", sizes)}, {b.value("q"), b.value("k"), b.value("v")});
  }
  set_int(b.last(), "axis", 2);
  ClassicAttention a;
  a.q4 = b.to_heads(b.value("q"), heads, "q4");
  a.k4 = b.to_heads(b.value("k"), heads, "k4");
  a.v4 = b.to_heads(b.value("v"), heads, "v4");
  if (has_input(op, 4)) {  // past (2, B, N, P, H)
    a.past_k = b.op("Gather", {op.inputs[4], b.scalar_int("past_key_index", 0)}, "past_key");
    a.past_v = b.op("Gather", {op.inputs[4], b.scalar_int("past_value_index", 1)}, "past_value");
  }
  read_mask_and_settings(g, op, 3, "mask_index", 5, a);
  if (has_output(op, 1)) {
    if (!has_input(op, 4)) {
      a.present_k = b.value("present_key");
      a.present_v = b.value("present_value");
    }
    classic_attention(b, a);
    const std::string pk = a.past_k.empty() ? a.present_k : b.value("present_key");
    const std::string pv = a.past_k.empty() ? a.present_v : b.value("present_value");
    b.node("Concat", {b.unsqueeze(pk, {0}, "present_key5"), b.unsqueeze(pv, {0}, "present_value5")},
          {op.outputs[1]});
    set_int(b.last(), "axis", 0);
  } else {
    classic_attention(b, a);
  }
  return b.take();
}

// com.microsoft GroupQueryAttention, as onnxruntime's CPU provider runs it with separate past and present buffers.
// Per batch row b: total_b = seqlens_k[b] + 1 and past_b = 0 on a prompt (sequence length == total_sequence_length),
// else total_b - S. The present cache (length max(total_sequence_length, past length)) holds past[b, :, :past_b],
// then the S new keys (rotated with positions past_b + i when do_rotary), then zeros. Query i attends to the present
// keys j <= past_b + i (all with causal = 0), j < total_b (and past_b + i - j < local_window_size when that is > 0);
// head_sink and smooth_softmax add one more logit to each softmax.
std::vector<onnx::Node> expand_microsoft_group_query_attention(onnx::Graph& g, const onnx::Node& op,
                                                               int64_t opset) {
  if (op.inputs.size() < 7 || op.inputs[0].empty() || op.inputs[5].empty() || op.inputs[6].empty() ||
      op.inputs.size() > 16 || op.outputs.empty() || op.outputs[0].empty() || op.outputs.size() > 4)
    throw op.error(ErrorCode::InvalidGraph,
                   "GroupQueryAttention takes query, key, value, past_key, past_value, seqlens_k, "
                   "total_sequence_length and up to 9 optional inputs, and gives output and up to 3 optional outputs");
  const int64_t heads = positive_attr(op, "num_heads"), kv_heads = positive_attr(op, "kv_num_heads");
  if (heads % kv_heads != 0)
    throw op.error(ErrorCode::InvalidGraph, "num_heads (" + std::to_string(heads) +
                                                ") must be a multiple of kv_num_heads (" + std::to_string(kv_heads) +
                                                ")");
  const bool key = has_input(op, 1), value = has_input(op, 2), past = has_input(op, 3);
  if (key != value)
    throw op.error(ErrorCode::InvalidGraph, "key and value must both be given, or both be absent (packed QKV)");
  if (past != has_input(op, 4))
    throw op.error(ErrorCode::InvalidGraph, "past_key and past_value must be given together");
  const bool rotary = op.attr_int("do_rotary", 0) == 1;
  if (rotary && (!has_input(op, 7) || !has_input(op, 8)))
    throw op.error(ErrorCode::InvalidGraph, "do_rotary = 1 needs cos_cache and sin_cache");
  refuse_input(op, 12, "k_scale: quantized KV cache");
  refuse_input(op, 13, "v_scale: quantized KV cache");
  refuse_input(op, 14, "q_norm_weight");
  refuse_input(op, 15, "k_norm_weight");
  if (has_output(op, 3) || op.attr_int("qk_output", 0) != 0)
    throw op.error(ErrorCode::NotImplemented, "output_qk (qk_output) is not supported");
  const int64_t causal = op.attr_int("causal", 1);
  if (causal != 0 && causal != 1) throw op.error(ErrorCode::InvalidGraph, "causal must be 0 or 1");
  if (op.attr_int("sliding_window_cache", 0) != 0)
    throw op.error(ErrorCode::NotImplemented, "sliding_window_cache = 1 is not supported");
  for (const char* q : {"k_quant_type", "v_quant_type"})
    if (op.attr_string(q, "NONE") != "NONE")
      throw op.error(ErrorCode::NotImplemented, std::string(q) + " other than NONE (a quantized KV cache) is not "
                                                                 "supported");
  const int64_t window = op.attr_int("local_window_size", -1);
  if (causal == 0 && window > 0) throw op.error(ErrorCode::InvalidGraph, "local_window_size needs causal = 1");
  const float softcap = op.attr_float("softcap", 0.0f);
  const float scale = op.attr_float("scale", 0.0f);

  Builder b(g, op, "gqa", opset);
  std::string q3 = op.inputs[0], k3, v3;
  if (key) {
    k3 = op.inputs[1];
    v3 = op.inputs[2];
  } else {  // packed (B, S, (N + 2 KV) H)
    const std::string h = b.op(
        "Div", {b.dims(q3, 2, 3, "packed_width"), b.ints("packed_heads", {heads + 2 * kv_heads})}, "head_size");
    const std::string sizes =
        b.concat({b.op("Mul", {h, b.ints("q_heads", {heads})}, "q_width"),
                  b.op("Mul", {h, b.ints("kv_heads", {kv_heads})}, "kv_width"), b.value("kv_width")},
                 0, "packed_sizes");
    b.node("Split", {q3, sizes}, {b.value("q3"), b.value("k3"), b.value("v3")});
    set_int(b.last(), "axis", 2);
    q3 = b.value("q3"), k3 = b.value("k3"), v3 = b.value("v3");
  }
  std::string q4 = b.to_heads(q3, heads, "q4"), k4 = b.to_heads(k3, kv_heads, "k4");
  const std::string v4 = b.to_heads(v3, kv_heads, "v4");

  // Lengths: S, total, per-row past_b and total_b (int64).
  const std::string s_len = b.dims(q3, 1, 2, "q_len");
  const std::string total = b.op("Reshape", {b.cast(op.inputs[6], DType::Int64, "total64"), b.ints("one", {1})},
                                 "total");
  const std::string seqlens = b.cast(op.inputs[5], DType::Int64, "seqlens");
  const std::string total_b = b.op("Add", {seqlens, b.ints("one_i64", {1})}, "row_total");
  const std::string prompt = b.op("Equal", {s_len, total}, "prompt");
  const std::string past_b =
      b.op("Where", {prompt, b.ints("zero_i64", {0}), b.op("Sub", {total_b, s_len}, "row_past0")}, "row_past");
  const std::string q_index = b.range(s_len, "q_range");  // 0 .. S - 1

  if (rotary) {
    // Positions past_b + i; with position_ids, those of a step, and on a prompt position_ids[0, 0] + i for every
    // row (onnxruntime reads only the first element then).
    std::string positions =
        b.op("Add", {b.unsqueeze(past_b, {1}, "row_past_col"), b.unsqueeze(q_index, {0}, "q_row")},
             "positions");
    if (has_input(op, 9)) {
      const std::string first = b.op(
          "Slice", {b.op("Reshape", {op.inputs[9], b.ints("flat", {-1})}, "position_ids_flat"),
                    b.value("zero_i64"), b.value("one_i64")},
          "first_position");
      positions = b.op("Where", {prompt, b.op("Add", {first, b.unsqueeze(q_index, {0}, "q_row_from_first")},
                                              "prompt_positions"),
                                 op.inputs[9]},
                       "given_positions");
    }
    const int64_t half = declared_dim(g, op.inputs[7], 1);
    const bool interleaved = op.attr_int("rotary_interleaved", 0) != 0;
    // The rotated dims are 2 * cos_cache's second dim: an attribute where the graph declares that dim, else the
    // head is sliced at run time and the part rotated whole (RotaryEmbedding copies the dims past the rotary ones,
    // so both give the same bits).
    const std::string rotary_end =
        half > 0 ? std::string() : b.op("Mul", {b.dims(op.inputs[7], 1, 2, "cache_width"), b.ints("two", {2})},
                                        "rotary_width");
    for (std::string* x : {&q4, &k4}) {
      const std::string name = (x == &q4 ? "q" : "k") + std::string("4_rotated");
      if (half > 0) {
        b.node("RotaryEmbedding", {*x, op.inputs[7], op.inputs[8], positions}, {b.value(name)});
        set_int(b.last(), "rotary_embedding_dim", 2 * half);
        if (interleaved) set_int(b.last(), "interleaved", 1);
      } else {
        const std::string axis = b.ints(name + "_axis", {3});
        const std::string part =
            b.op("Slice", {*x, b.ints(name + "_start", {0}), rotary_end, axis}, name + "_rotary_part");
        const std::string rest =
            b.op("Slice", {*x, rotary_end, b.dims(*x, 3, 4, name + "_head"), axis}, name + "_rest");
        b.node("RotaryEmbedding", {part, op.inputs[7], op.inputs[8], positions}, {b.value(name + "_part")});
        if (interleaved) set_int(b.last(), "interleaved", 1);
        b.concat({b.value(name + "_part"), rest}, 3, name);
      }
      *x = b.value(name);
    }
  }

  // The present caches: gathered from concat(past, new, one zero row) along the sequence.
  const std::string past_len = past ? b.dims(op.inputs[3], 2, 3, "past_len") : b.ints("past_len", {0});
  const std::string zero_shape =
      b.concat({b.dims(k4, 0, 2, "kv_lead"), b.ints("one_row", {1}), b.dims(k4, 3, 4, "kv_head")}, 0, "zero_shape");
  const std::string zero_row = b.op("Expand", {b.float_like("zero", 0.0f), zero_shape}, "zero_row");
  const std::string present_len = b.op("Max", {total, past_len}, "present_len");
  const std::string t = b.unsqueeze(b.range(present_len, "present_range"), {0}, "present_index");  // (1, Tp)
  const std::string pb = b.unsqueeze(past_b, {1}, "row_past_2d");                                  // (B, 1)
  const std::string new_end = b.op("Add", {past_len, s_len}, "zero_row_index");                     // P + S
  const std::string beyond = b.op("Add", {new_end, b.value("one_i64")}, "invalid_index");          // out of range
  // Rows of the past that the buffer lacks, and seqlens_k outside [0, total), read an index out of range: the Gather
  // fails (onnxruntime refuses both) rather than returning other numbers.
  const std::string from_past = b.op("Where", {b.op("Less", {t, past_len}, "in_buffer"), t, beyond}, "past_index");
  const std::string from_new = b.op("Add", {b.op("Sub", {t, pb}, "new_offset"), past_len}, "new_index");
  std::string index = b.op(
      "Where",
      {b.op("Less", {t, pb}, "is_past"), from_past,
       b.op("Where", {b.op("Less", {t, b.op("Add", {pb, s_len}, "new_end")}, "is_new"), from_new, new_end},
            "new_or_zero")},
      "row_index");
  const std::string valid = b.op("And", {b.op("GreaterOrEqual", {seqlens, b.value("zero_i64")}, "seqlens_nonneg"),
                                         b.op("Less", {seqlens, total}, "seqlens_below_total")},
                                 "seqlens_valid");
  index = b.op("Where", {b.unsqueeze(valid, {1}, "seqlens_valid_2d"), index, beyond}, "checked_index");
  const std::string gather_shape =
      b.concat({b.value("kv_lead"), present_len, b.value("kv_head")}, 0, "present_shape");
  const std::string index4 =
      b.op("Expand", {b.unsqueeze(index, {1, 3}, "index4"), gather_shape}, "present_gather_index");
  std::string present[2];
  const std::string* news[2] = {&k4, &v4};
  for (int i = 0; i < 2; ++i) {
    const std::string part = i == 0 ? "key" : "value";
    std::vector<std::string> parts;
    if (past) parts.push_back(op.inputs[3 + i]);
    parts.push_back(*news[i]);
    parts.push_back(zero_row);
    const std::string joined = b.concat(parts, 2, "joined_" + part);
    present[i] = has_output(op, 1 + i) ? op.outputs[1 + i] : b.value("present_" + part);
    b.node("GatherElements", {joined, index4}, {present[i]});
    set_int(b.last(), "axis", 2);
  }

  // Keys [0, total) of the present caches, and the mask of the keys each query row sees.
  const std::string starts = b.ints("slice_start", {0}), axes = b.ints("slice_axis", {2});
  std::string keys = b.op("Slice", {present[0], starts, total, axes}, "keys");
  std::string values = b.op("Slice", {present[1], starts, total, axes}, "values");
  const std::string key_pos =
      b.op("Reshape", {b.range(total, "key_range"), b.ints("key_shape", {1, 1, 1, -1})}, "key_positions");
  const std::string col = b.ints("column_shape", {-1, 1, 1, 1});
  const std::string q_pos =
      b.op("Add", {b.op("Reshape", {past_b, col}, "row_past_4d"),
                   b.op("Reshape", {q_index, b.ints("query_shape", {1, 1, -1, 1})}, "query_index")},
           "query_positions");
  const std::string in_row = b.op("Less", {key_pos, b.op("Reshape", {total_b, col}, "row_total_4d")}, "in_row");
  std::string seen =
      causal ? b.op("And", {b.op("LessOrEqual", {key_pos, q_pos}, "causal"), in_row}, "seen") : in_row;
  const bool sink = has_input(op, 11), smooth = op.attr_int("smooth_softmax", 0) != 0;
  if (window > 0) {
    // With a sink (head_sink or smooth_softmax) onnxruntime measures the window of a padded prompt row (i >= total_b)
    // from the row's last key, total_b - 1; without one, from i (measured: tests/test_contrib_attention_ops.py).
    const std::string from = (sink || smooth) ? b.op("Min", {q_pos, b.op("Sub", {b.value("row_total_4d"),
                                                                                 b.value("one_i64")},
                                                                          "row_last_key")},
                                                     "window_position")
                                              : q_pos;
    seen = b.op("And", {seen, b.op("Less", {b.op("Sub", {from, key_pos}, "distance"), b.ints("window", {window})},
                                   "in_window")},
                "seen_in_window");
  }
  std::string mask = seen;
  if (has_input(op, 10) || sink || smooth) {
    const std::string minus_inf = b.float_like("minus_inf", -std::numeric_limits<float>::infinity());
    mask = b.op("Where", {seen, has_input(op, 10) ? op.inputs[10] : b.float_like("zero_bias", 0.0f), minus_inf},
                "bias");
  }
  if (sink || smooth) {
    // The softmax's extra term (head_sink[h], or 0 for smooth_softmax) as one more key: a zero key (its score is +0,
    // softcap keeps it +0) whose bias is that logit, and a zero value (it adds nothing to the output).
    keys = b.concat({keys, zero_row}, 2, "keys_with_sink");
    values = b.concat({values, zero_row}, 2, "values_with_sink");
    const std::string rows = b.dims(q4, 0, 3, "score_rows");  // (B, N, S)
    const std::string full = b.op("Expand", {mask, b.concat({rows, total}, 0, "scores_shape")}, "bias_rows");
    const std::string logit =
        sink ? b.op("Reshape", {op.inputs[11], b.ints("sink_shape", {1, -1, 1, 1})}, "sink_logit")
             : b.float_like("smooth_logit", 0.0f);
    const std::string column =
        b.op("Expand", {logit, b.concat({rows, b.value("one_row")}, 0, "sink_shape_full")}, "sink_column");
    mask = b.concat({full, column}, 3, "bias_with_sink");
  }
  const std::string y4 = b.value("y4");
  onnx::Node& att = b.node("Attention", {q4, keys, values, mask}, {y4});
  if (scale != 0.0f) set_float(att, "scale", scale);
  if (softcap > 0.0f) set_float(att, "softcap", softcap);
  b.from_heads(y4, op.outputs[0]);
  return b.take();
}

}  // namespace lockstep
