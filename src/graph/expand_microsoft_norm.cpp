// onnxruntime's normalization and rotary contrib ops, run as standard ONNX nodes (docs/arithmetic.md#expanded-ops):
// SkipLayerNormalization, SkipSimplifiedLayerNormalization, EmbedLayerNormalization and RotaryEmbedding of the
// com.microsoft domain, and SimplifiedLayerNormalization, which onnxruntime registers in the default domain. The
// orders of the additions are onnxruntime's CPU kernels' (tests/test_contrib_norm_ops.py checks them against it).
#include <string>
#include <vector>

#include "graph/expand.h"
#include "graph/plan.h"

namespace lockstep {

namespace {

// onnx TensorProto element type codes, for Cast's `to`.
constexpr int64_t kOnnxInt32 = 6, kOnnxInt64 = 7;

// Input and output counts, and the inputs that may not be absent.
void require_arity(const onnx::Node& op, size_t min_in, size_t max_in, size_t max_out, std::vector<size_t> required) {
  if (op.inputs.size() < min_in || op.inputs.size() > max_in || op.outputs.empty() || op.outputs.size() > max_out ||
      op.outputs[0].empty())
    throw op.error(ErrorCode::InvalidGraph,
                   "takes " + std::to_string(min_in) + (max_in > min_in ? " to " + std::to_string(max_in) : "") +
                       " inputs and gives 1 to " + std::to_string(max_out) + " outputs (the first present), got " +
                       std::to_string(op.inputs.size()) + " and " + std::to_string(op.outputs.size()));
  for (size_t i : required)
    if (op.inputs[i].empty()) throw op.error(ErrorCode::InvalidGraph, "input " + std::to_string(i) + " is required");
}

void refuse_output(const onnx::Node& op, size_t i, const char* what, const char* why) {
  if (!output_or_empty(op, i).empty())
    throw op.error(ErrorCode::NotImplemented,
                   std::string("the optional output ") + what + " (" + why + ") is not supported: leave it empty");
}

// A sum the normalization reads and the op may also output (input_skip_bias_sum, embedding_sum). In float32 one
// value serves both. In a half type the output is rounded to it, while onnxruntime's kernels normalise the float32
// sum: the output then gets its own copy of the additions, so that the value the normalization reads stays in
// float32 (docs/arithmetic.md#half-precision). `add(name, tag)` makes the additions writing `name`, naming what they
// make in between after `tag`; returns the value to normalise.
template <typename AddFn>
std::string shared_sum(ExpansionBuilder& e, const onnx::Graph& g, const std::string& wanted, const std::string& data,
                       AddFn add) {
  if (wanted.empty()) return add(e.value("sum"), "sum");
  add(wanted, "output");
  return declared_dtype(g, data) == DType::Float ? wanted : add(e.value("sum"), "sum");
}

// s = (input + skip) + bias, onnxruntime's order; skip broadcasts as Add broadcasts ((1, S, H) and (S, H) as
// onnxruntime allows).
std::string skip_sum(ExpansionBuilder& e, const onnx::Graph& g, const onnx::Node& op, size_t bias_index) {
  const std::string& bias = input_or_empty(op, bias_index);
  auto add = [&](const std::string& sum, const std::string& tag) {
    if (bias.empty()) {
      e.node("Add", {op.inputs[0], op.inputs[1]}, {sum});
    } else {
      e.node("Add", {op.inputs[0], op.inputs[1]}, {e.value(tag + "_input_plus_skip")});
      e.node("Add", {e.value(tag + "_input_plus_skip"), bias}, {sum});
    }
    return sum;
  };
  return shared_sum(e, g, output_or_empty(op, 3), op.inputs[0], add);
}

}  // namespace

// SkipLayerNormalization: s = (input + skip) + bias; output, mean, inv_std_var = LayerNormalization(s, gamma, beta,
// axis = -1, epsilon (default 1e-12)), whose Mean and InvStdDev have onnxruntime's shapes (the hidden dim set to 1).
std::vector<onnx::Node> expand_skip_layer_normalization(onnx::Graph& g, const onnx::Node& op, int64_t opset) {
  require_arity(op, 3, 5, 4, {0, 1, 2});
  ExpansionBuilder e(g, op, opset, "skip_ln");
  const std::string sum = skip_sum(e, g, op, 4);
  onnx::Node& ln = e.node("LayerNormalization", {sum, op.inputs[2], input_or_empty(op, 3)},
                          {op.outputs[0], output_or_empty(op, 1), output_or_empty(op, 2)}, 17);
  while (!ln.inputs.empty() && ln.inputs.back().empty()) ln.inputs.pop_back();
  set_int(ln, "axis", -1);
  set_float(ln, "epsilon", op.attr_float("epsilon", 1e-12f));
  return e.take();
}

// SkipSimplifiedLayerNormalization: s = (input + skip) + bias; output = RMSNormalization(s, gamma, axis = -1,
// epsilon (default 1e-12)) at opset 23. RMSNormalization has no statistics outputs: mean and inv_std_var are refused.
std::vector<onnx::Node> expand_skip_simplified_layer_normalization(onnx::Graph& g, const onnx::Node& op,
                                                                   int64_t opset) {
  require_arity(op, 3, 4, 4, {0, 1, 2});
  refuse_output(op, 1, "mean", "RMSNormalization gives no statistics");
  refuse_output(op, 2, "inv_std_var", "RMSNormalization gives no statistics");
  ExpansionBuilder e(g, op, opset, "skip_rms");
  const std::string sum = skip_sum(e, g, op, 3);
  onnx::Node& rms = e.node("RMSNormalization", {sum, op.inputs[2]}, {op.outputs[0]}, 23);
  set_int(rms, "axis", -1);
  set_float(rms, "epsilon", op.attr_float("epsilon", 1e-12f));
  return e.take();
}

// SimplifiedLayerNormalization (onnxruntime's, default domain): Y = RMSNormalization(X, scale) at opset 23 with the
// node's axis (-1), epsilon (1e-5) and stash_type (1), the same attributes with the same defaults.
std::vector<onnx::Node> expand_simplified_layer_normalization(onnx::Graph& g, const onnx::Node& op, int64_t opset) {
  require_arity(op, 2, 2, 2, {0, 1});
  refuse_output(op, 1, "inv_std_var", "RMSNormalization gives no statistics");
  ExpansionBuilder e(g, op, opset, "rms");
  onnx::Node& rms = e.node("RMSNormalization", {op.inputs[0], op.inputs[1]}, {op.outputs[0]}, 23);
  for (const char* name : {"axis", "epsilon", "stash_type"})
    if (const onnx::Attribute* a = op.find(name)) rms.attributes[name] = *a;
  return e.take();
}

// EmbedLayerNormalization: e = (word_embedding[input_ids] + position_embedding[positions]) +
// segment_embedding[segment_ids], onnxruntime's order, positions being position_ids (broadcast from (1, S)) or
// 0..S-1; output = LayerNormalization(e, gamma, beta, axis = -1, epsilon (default 1e-12)); embedding_sum = e;
// mask_index[b] = the number of elements equal to 1 in mask[b] (int32; 0 without a mask).
std::vector<onnx::Node> expand_embed_layer_normalization(onnx::Graph& g, const onnx::Node& op, int64_t opset) {
  require_arity(op, 7, 9, 3, {0, 2, 3, 5, 6});
  const std::string &ids = op.inputs[0], &segment_ids = op.inputs[1], &segment_table = op.inputs[4];
  if (segment_ids.empty() != segment_table.empty())
    throw op.error(ErrorCode::InvalidGraph, "segment_ids and segment_embedding must both be given or both be absent");
  ExpansionBuilder e(g, op, opset, "embed_ln");
  e.node("Gather", {op.inputs[2], ids}, {e.value("word")});
  std::string positions = input_or_empty(op, 8);
  const bool counted_positions = positions.empty();
  if (counted_positions) {  // 0 .. S-1, S = input_ids.shape[1]
    e.node("Shape", {ids}, {e.value("ids_shape")});
    e.node("Gather", {e.value("ids_shape"), e.scalar_int("one", 1)}, {e.value("seq_len")});
    e.node("Range", {e.scalar_int("zero", 0), e.value("seq_len"), e.value("one")}, {e.value("positions")}, 11);
    positions = e.value("positions");
  }
  e.node("Gather", {op.inputs[3], positions}, {e.value("position")});
  if (!segment_ids.empty()) e.node("Gather", {segment_table, segment_ids}, {e.value("segment")});
  auto add = [&](const std::string& sum, const std::string& tag) {
    if (segment_ids.empty()) {
      e.node("Add", {e.value("word"), e.value("position")}, {sum});
    } else {
      e.node("Add", {e.value("word"), e.value("position")}, {e.value(tag + "_word_plus_position")});
      e.node("Add", {e.value(tag + "_word_plus_position"), e.value("segment")}, {sum});
    }
    return sum;
  };
  const std::string sum = shared_sum(e, g, output_or_empty(op, 2), op.inputs[2], add);
  onnx::Node& ln = e.node("LayerNormalization", {sum, op.inputs[5], op.inputs[6]}, {op.outputs[0]}, 17);
  set_int(ln, "axis", -1);
  set_float(ln, "epsilon", op.attr_float("epsilon", 1e-12f));
  if (const std::string& mask_index = output_or_empty(op, 1); !mask_index.empty()) {
    const std::string& mask = input_or_empty(op, 7);
    if (mask.empty()) {  // zeros of shape (batch)
      if (!counted_positions) e.node("Shape", {ids}, {e.value("ids_shape")});
      e.node("Gather", {e.value("ids_shape"), e.ints("batch_index", {0})}, {e.value("batch")});
      onnx::Node& zeros = e.node("ConstantOfShape", {e.value("batch")}, {mask_index}, 9);
      const int32_t zero = 0;
      (zeros.attributes["value"] = attribute("value", onnx::Attribute::TensorT)).t =
          Tensor::from_bytes(DType::Int32, {1}, &zero);
    } else {
      const int32_t one = 1;
      g.initializers[e.value("mask_one")] = Tensor::from_bytes(DType::Int32, {}, &one);
      e.node("Equal", {mask, e.value("mask_one")}, {e.value("mask_is_one")});
      set_int(e.node("Cast", {e.value("mask_is_one")}, {e.value("mask_ones")}), "to", kOnnxInt32);
      // ReduceSum takes its axes as an input from opset 13, as an attribute before.
      onnx::Node& count = e.node("ReduceSum", {e.value("mask_ones")}, {mask_index});
      if (opset >= 13) {
        count.inputs.push_back(e.ints("mask_axes", {1}));
      } else {
        (count.attributes["axes"] = attribute("axes", onnx::Attribute::Ints)).ints = {1};
      }
      set_int(count, "keepdims", 0);
    }
  }
  return e.take();
}

// RotaryEmbedding (com.microsoft): the opset-23 RotaryEmbedding(input, cos, sin, positions) with the same
// interleaved, num_heads and rotary_embedding_dim. Both definitions lay a 4-D input out as (batch, heads, seq,
// head) and a 3-D one as (batch, seq, heads * head). Differences bridged:
// - position_ids of one element is an offset: positions = offset + 0..S-1, for every batch row;
// - with rotary_embedding_dim > 0 onnxruntime reads the caches as rows of rotary_embedding_dim / 2 values, whatever
//   their declared width: the caches are reshaped to (-1, rotary_embedding_dim / 2) (no change for the usual
//   (max_positions, rotary_embedding_dim / 2));
// - without num_heads onnxruntime's head size is 2 * cos_cache.shape[1]; unless the input is declared 4-D (where the
//   opset-23 op takes its heads from the shape), the input, viewed as (P, S, Q) with S, Q its last two dims, is
//   reshaped to (P, S, Q / head, head) and transposed to the 4-D layout, each of the P rows taking the positions of
//   its batch row, and turned back afterwards. This holds for either rank, so the rank need not be declared.
// scale only rescales a cache onnxruntime would grow, which its CPU kernel refuses to do: it changes nothing here.
// is_packed_batching = 1 is NotImplemented.
std::vector<onnx::Node> expand_microsoft_rotary_embedding(onnx::Graph& g, const onnx::Node& op, int64_t opset) {
  require_arity(op, 4, 4, 1, {0, 1, 2, 3});
  if (op.attr_int("is_packed_batching", 0) != 0)
    throw op.error(ErrorCode::NotImplemented, "is_packed_batching = 1 (ragged batches) is not supported");
  const int64_t heads = op.attr_int("num_heads", 0), rotary = op.attr_int("rotary_embedding_dim", 0);
  if (heads < 0 || rotary < 0)
    throw op.error(ErrorCode::InvalidGraph, "num_heads and rotary_embedding_dim must not be negative");
  if (rotary > 0 && heads == 0)
    throw op.error(ErrorCode::InvalidGraph, "rotary_embedding_dim needs num_heads (as onnxruntime requires)");
  const std::string &x = op.inputs[0], &pos = op.inputs[1];
  const int64_t rank = declared_rank(g, x);
  if (rank != -1 && rank != 3 && rank != 4)
    throw op.error(ErrorCode::InvalidGraph, "input must be 3-D or 4-D, declared with rank " + std::to_string(rank));
  const bool heads_from_cache = heads == 0 && rank != 4;
  ExpansionBuilder e(g, op, opset, "rotary");
  auto transpose = [&](const std::string& in, const std::string& out) {
    onnx::Node& t = e.node("Transpose", {in}, {out});
    (t.attributes["perm"] = attribute("perm", onnx::Attribute::Ints)).ints = {0, 2, 1, 3};
  };
  auto concat = [&](std::vector<std::string> parts, const std::string& out) {
    set_int(e.node("Concat", std::move(parts), {out}), "axis", 0);
  };

  std::string cos = op.inputs[2], sin = op.inputs[3];
  if (rotary > 0) {
    const std::string rows = e.ints("cache_rows", {-1, rotary / 2});
    e.node("Reshape", {cos, rows}, {e.value("cos_rows")});
    e.node("Reshape", {sin, rows}, {e.value("sin_rows")});
    cos = e.value("cos_rows"), sin = e.value("sin_rows");
  }

  // positions (batch, seq): position_ids itself, or offset + 0..S-1. Without a declared rank 2 the choice is made
  // at run time: p + (0..S-1) * (size(p) == 1), expanded to (batch, seq); S = input.shape[-2] in both layouts.
  std::string positions = pos;
  const bool need_shape = declared_rank(g, pos) != 2 || heads_from_cache;
  if (need_shape) e.node("Shape", {x}, {e.value("input_shape")});
  if (declared_rank(g, pos) != 2) {
    e.node("Gather", {e.value("input_shape"), e.ints("batch_seq_index", {0, -2})}, {e.value("batch_seq")});
    e.node("Gather", {e.value("input_shape"), e.scalar_int("seq_index", -2)}, {e.value("seq_len")});
    e.node("Range", {e.scalar_int("zero", 0), e.value("seq_len"), e.scalar_int("one", 1)}, {e.value("steps")}, 11);
    e.node("Size", {pos}, {e.value("position_count")});
    e.node("Equal", {e.value("position_count"), e.value("one")}, {e.value("is_offset")});
    set_int(e.node("Cast", {e.value("is_offset")}, {e.value("offset_factor")}), "to", kOnnxInt64);
    e.node("Mul", {e.value("steps"), e.value("offset_factor")}, {e.value("offset_steps")});
    e.node("Add", {pos, e.value("offset_steps")}, {e.value("position_sum")});
    e.node("Expand", {e.value("position_sum"), e.value("batch_seq")}, {e.value("positions")}, 8);
    positions = e.value("positions");
  }

  std::string in = x, out = op.outputs[0];
  if (heads_from_cache) {
    // head = 2 * cos_cache.shape[1]; x (P, S, Q) -> (P, S, Q / head, head) -> (P, Q / head, S, head).
    auto dim = [&](const std::string& shape, int64_t index, const std::string& name) {
      e.node("Gather", {shape, e.ints(name + "_index", {index})}, {e.value(name)});
      return e.value(name);
    };
    e.node("Shape", {op.inputs[2]}, {e.value("cache_shape")});
    e.node("Mul", {dim(e.value("cache_shape"), 1, "cache_width"), e.ints("two", {2})}, {e.value("head")});
    const std::string &shape = e.value("input_shape"), seq = dim(shape, -2, "seq"), last = dim(shape, -1, "last");
    e.node("Div", {last, e.value("head")}, {e.value("heads")});
    concat({e.ints("rows_any", {-1}), seq, e.value("heads"), e.value("head")}, e.value("split_shape"));
    e.node("Reshape", {x, e.value("split_shape")}, {e.value("split")});
    transpose(e.value("split"), e.value("heads_first"));
    // Row p of the P rows belongs to batch row p / (P / batch): positions (batch, S) -> (batch, P / batch, S) ->
    // (P, S).
    e.node("Size", {x}, {e.value("input_size")});
    e.node("Mul", {dim(shape, 0, "batch"), seq}, {e.value("batch_times_seq")});
    e.node("Mul", {e.value("batch_times_seq"), last}, {e.value("batch_seq_last")});
    e.node("Div", {e.value("input_size"), e.value("batch_seq_last")}, {e.value("rows_per_batch")});
    e.node("Reshape", {positions, e.ints("middle_one", {0, 1, -1})}, {e.value("positions_3d")});
    concat({e.value("batch"), e.value("rows_per_batch"), seq}, e.value("rows_shape"));
    e.node("Expand", {e.value("positions_3d"), e.value("rows_shape")}, {e.value("positions_rows")}, 8);
    concat({e.value("rows_any"), seq}, e.value("row_positions_shape"));
    e.node("Reshape", {e.value("positions_rows"), e.value("row_positions_shape")}, {e.value("row_positions")});
    in = e.value("heads_first"), positions = e.value("row_positions"), out = e.value("rotated");
  }
  onnx::Node& rot = e.node("RotaryEmbedding", {in, cos, sin, positions}, {out}, 23);
  set_int(rot, "interleaved", op.attr_int("interleaved", 0));
  if (heads > 0) set_int(rot, "num_heads", heads);
  if (rotary > 0) set_int(rot, "rotary_embedding_dim", rotary);
  if (heads_from_cache) {
    transpose(out, e.value("seq_first"));
    e.node("Reshape", {e.value("seq_first"), e.value("input_shape")}, {op.outputs[0]});
  }
  return e.take();
}

}  // namespace lockstep
