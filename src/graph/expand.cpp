// The table of ops lockstep runs as a composition of other ops, the pass that expands them, and the expansions of
// the default domain's function-body ops (docs/arithmetic.md#expanded-ops).
#include "graph/expand.h"

#include <cstring>
#include <string>
#include <vector>

#include "arith/elementwise.h"
#include "graph/plan.h"

namespace lockstep {

DType declared_dtype(const onnx::Graph& g, const std::string& name) {
  if (auto it = g.initializers.find(name); it != g.initializers.end()) return it->second.dtype();
  for (const auto* list : {&g.inputs, &g.value_info, &g.outputs})
    for (const onnx::ValueInfo& v : *list)
      if (v.name == name) return v.dtype;
  return DType::Undefined;
}

int declared_rank(const onnx::Graph& g, const std::string& name) {
  if (auto it = g.initializers.find(name); it != g.initializers.end()) return it->second.rank();
  for (const auto* list : {&g.inputs, &g.value_info, &g.outputs})
    for (const onnx::ValueInfo& v : *list)
      if (v.name == name) return v.has_shape && !v.sequence ? static_cast<int>(v.dims.size()) : -1;
  return -1;
}

int64_t declared_dim(const onnx::Graph& g, const std::string& name, int d) {
  if (auto it = g.initializers.find(name); it != g.initializers.end())
    return d < it->second.rank() ? it->second.dim(d) : -1;
  for (const auto* list : {&g.inputs, &g.value_info, &g.outputs})
    for (const onnx::ValueInfo& v : *list)
      if (v.name == name && v.has_shape && d < static_cast<int>(v.dims.size()) && v.dims[d].value)
        return *v.dims[d].value;
  return -1;
}

Tensor scalar_of_type(DType type, double value) {
  const float f = static_cast<float>(value);
  switch (type) {
    case DType::Double: return Tensor::from_bytes(DType::Double, {}, &value);
    case DType::Float16: {
      const uint16_t h = arith::f32_to_f16_bits(f);
      return Tensor::from_bytes(DType::Float16, {}, &h);
    }
    case DType::BFloat16: {
      const uint16_t h = arith::f32_to_bf16_bits(f);
      return Tensor::from_bytes(DType::BFloat16, {}, &h);
    }
    default: return Tensor::from_bytes(DType::Float, {}, &f);
  }
}

const std::string& input_or_empty(const onnx::Node& op, size_t i) {
  static const std::string kNone;
  return i < op.inputs.size() ? op.inputs[i] : kNone;
}
const std::string& output_or_empty(const onnx::Node& op, size_t i) {
  static const std::string kNone;
  return i < op.outputs.size() ? op.outputs[i] : kNone;
}

void set_int(onnx::Node& n, const std::string& name, int64_t v) {
  (n.attributes[name] = attribute(name, onnx::Attribute::Int)).i = v;
}
void set_ints(onnx::Node& n, const std::string& name, std::vector<int64_t> v) {
  (n.attributes[name] = attribute(name, onnx::Attribute::Ints)).ints = std::move(v);
}
void set_float(onnx::Node& n, const std::string& name, float v) {
  (n.attributes[name] = attribute(name, onnx::Attribute::Float)).f = v;
}

ExpansionBuilder::ExpansionBuilder(onnx::Graph& graph, const onnx::Node& op, int64_t opset, const std::string& tag,
                                   int64_t min_opset)
    : graph_(graph), op_(op), opset_(opset), min_opset_(min_opset),
      prefix_(output_or_empty(op, 0).empty() ? op.name + "/" + tag + "_" : op.outputs[0] + "/" + tag + "_") {}

onnx::Node& ExpansionBuilder::node(const std::string& type, std::vector<std::string> inputs,
                                   std::vector<std::string> outputs, int64_t since) {
  while (outputs.size() > 1 && outputs.back().empty()) outputs.pop_back();
  const std::string& first = outputs.at(0);
  onnx::Node n;
  n.name = op_.name + "/" + (first.compare(0, prefix_.size(), prefix_) == 0 ? first.substr(prefix_.size()) : first);
  n.op_type = type;
  n.inputs = std::move(inputs);
  n.outputs = std::move(outputs);
  const int64_t needed = since > min_opset_ ? since : min_opset_;
  if (opset_ < needed) n.opset = needed;
  nodes_.push_back(std::move(n));
  return nodes_.back();
}

std::string ExpansionBuilder::op(const std::string& type, std::vector<std::string> inputs, const std::string& suffix) {
  node(type, std::move(inputs), {value(suffix)});
  return value(suffix);
}

std::string ExpansionBuilder::op_to(const std::string& type, std::vector<std::string> inputs, const std::string& out) {
  node(type, std::move(inputs), {out});
  return out;
}

std::string ExpansionBuilder::ints(const std::string& suffix, const std::vector<int64_t>& v) {
  graph_.initializers[value(suffix)] = Tensor::from_bytes(DType::Int64, {static_cast<int64_t>(v.size())}, v.data());
  return value(suffix);
}

std::string ExpansionBuilder::scalar_int(const std::string& suffix, int64_t v) {
  graph_.initializers[value(suffix)] = Tensor::from_bytes(DType::Int64, {}, &v);
  return value(suffix);
}

// MeanVarianceNormalization (9, 13): the function body of onnx's definition, in its order:
//   m = ReduceMean(X, axes); v = ReduceMean(X^2, axes) - m^2; Y = (X - m) / (Sqrt(v) + 1e-9)
// with ^2 as Pow(., 2) and axes default [0, 2, 3]. ReduceMean takes axes as an attribute before opset 18.
std::vector<onnx::Node> expand_mean_variance_normalization(onnx::Graph& g, const onnx::Node& op, int64_t opset) {
  if (op.inputs.size() != 1 || op.outputs.size() != 1 || op.inputs[0].empty())
    throw op.error(ErrorCode::InvalidGraph, "MeanVarianceNormalization takes one input and gives one output");
  const std::string& x = op.inputs[0];
  ExpansionBuilder b(g, op, opset, "mvn");
  // The body's constants are float32; double where X is declared double (the body's own type would not match).
  const DType constant_type = declared_dtype(g, x) == DType::Double ? DType::Double : DType::Float;
  g.initializers[b.value("exponent")] = scalar_of_type(constant_type, 2.0);
  g.initializers[b.value("epsilon")] = scalar_of_type(constant_type, 1e-9);
  const std::vector<int64_t> axes = op.attr_ints("axes", {0, 2, 3});
  auto mean = [&](const std::string& in, const std::string& suffix) {
    if (opset >= 18) return b.op("ReduceMean", {in, b.ints("axes", axes)}, suffix);
    set_ints(b.node("ReduceMean", {in}, {b.value(suffix)}), "axes", axes);
    return b.value(suffix);
  };
  const std::string m = mean(x, "mean");
  const std::string m2 = b.op("Pow", {m, b.value("exponent")}, "mean_squared");
  const std::string e = mean(b.op("Pow", {x, b.value("exponent")}, "squares"), "mean_of_squares");
  const std::string d = b.op("Sqrt", {b.op("Sub", {e, m2}, "variance")}, "std");
  b.op_to("Div", {b.op("Sub", {x, m}, "centred"), b.op("Add", {d, b.value("epsilon")}, "std_plus_epsilon")},
          op.outputs[0]);
  return b.take();
}

namespace {

constexpr ExpandedOp kExpandedOps[] = {
    {"", "MeanVarianceNormalization", 9, "normalization", expand_mean_variance_normalization},
    // onnxruntime's contrib ops (expand_microsoft_norm.cpp); SimplifiedLayerNormalization is in its default domain.
    {"", "SimplifiedLayerNormalization", 1, "normalization", expand_simplified_layer_normalization},
    {"com.microsoft", "SkipLayerNormalization", 1, "normalization", expand_skip_layer_normalization},
    {"com.microsoft", "SkipSimplifiedLayerNormalization", 1, "normalization",
     expand_skip_simplified_layer_normalization},
    {"com.microsoft", "EmbedLayerNormalization", 1, "normalization", expand_embed_layer_normalization},
    {"com.microsoft", "RotaryEmbedding", 1, "attention", expand_microsoft_rotary_embedding},
    // expand_microsoft_attention.cpp
    {"com.microsoft", "MultiHeadAttention", 1, "attention", expand_microsoft_multi_head_attention},
    {"com.microsoft", "GroupQueryAttention", 1, "attention", expand_microsoft_group_query_attention},
    {"com.microsoft", "Attention", 1, "attention", expand_microsoft_attention},
};

void expand_graph(onnx::Graph& g, int64_t opset) {
  std::vector<onnx::Node> nodes;
  for (onnx::Node& n : g.nodes) {
    for (auto& [name, a] : n.attributes) {
      if (a.g) expand_graph(*a.g, opset);
      for (auto& sub : a.graphs) expand_graph(*sub, opset);
    }
    if (const ExpandedOp* e = find_expanded_op(n, opset)) {
      for (onnx::Node& made : e->expand(g, n, opset)) nodes.push_back(std::move(made));
    } else {
      nodes.push_back(std::move(n));
    }
  }
  g.nodes = std::move(nodes);
}

}  // namespace

std::span<const ExpandedOp> expanded_ops() { return kExpandedOps; }

const ExpandedOp* find_expanded_op(const onnx::Node& n, int64_t opset) {
  for (const ExpandedOp& e : kExpandedOps) {
    const bool domain = e.domain[0] == '\0' ? is_default_domain(n.domain) : n.domain == e.domain;
    // The com.microsoft domain has one opset (1); the default domain's rows start at an opset.
    if (domain && n.op_type == e.op_type && (e.domain[0] != '\0' || opset >= e.since)) return &e;
  }
  return nullptr;
}

void expand_function_ops(onnx::Graph& graph, int64_t opset) { expand_graph(graph, opset); }

void refuse_mixed_opsets(const onnx::Graph& graph, int64_t opset) {
  for (const onnx::Node& n : graph.nodes) {
    if (n.opset != 0 && n.opset != opset)
      throw n.error(ErrorCode::NotImplemented,
                    "this node stands for an op the model uses and follows opset " + std::to_string(n.opset) +
                        " where the model imports " + std::to_string(opset) +
                        ": the optimized model cannot be written (leave optimized_model_filepath empty)");
    for (const auto& [name, a] : n.attributes) {
      if (a.g) refuse_mixed_opsets(*a.g, opset);
      for (const auto& sub : a.graphs) refuse_mixed_opsets(*sub, opset);
    }
  }
}

}  // namespace lockstep
