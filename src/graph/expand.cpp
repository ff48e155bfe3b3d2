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

onnx::Node expansion_node(const onnx::Node& op, const std::string& type, std::vector<std::string> inputs,
                          std::vector<std::string> outputs, const std::string& name_suffix) {
  onnx::Node n;
  n.name = op.name + "/" + name_suffix;
  n.op_type = type;
  n.inputs = std::move(inputs);
  n.outputs = std::move(outputs);
  return n;
}

// MeanVarianceNormalization (9, 13): the function body of onnx's definition, in its order:
//   m = ReduceMean(X, axes); v = ReduceMean(X^2, axes) - m^2; Y = (X - m) / (Sqrt(v) + 1e-9)
// with ^2 as Pow(., 2) and axes default [0, 2, 3]. ReduceMean takes axes as an attribute before opset 18.
std::vector<onnx::Node> expand_mean_variance_normalization(onnx::Graph& g, const onnx::Node& op, int64_t opset) {
  if (op.inputs.size() != 1 || op.outputs.size() != 1 || op.inputs[0].empty())
    throw op.error(ErrorCode::InvalidGraph, "MeanVarianceNormalization takes one input and gives one output");
  const std::string& x = op.inputs[0];
  const std::string p = op.outputs[0] + "/mvn_";  // the body's value names: unique, as the output's name is
  // The body's constants are float32; double where X is declared double (the body's own type would not match).
  const DType constant_type = declared_dtype(g, x) == DType::Double ? DType::Double : DType::Float;
  g.initializers[p + "exponent"] = scalar_of_type(constant_type, 2.0);
  g.initializers[p + "epsilon"] = scalar_of_type(constant_type, 1e-9);
  const std::vector<int64_t> axes = op.attr_ints("axes", {0, 2, 3});
  if (opset >= 18)
    g.initializers[p + "axes"] = Tensor::from_bytes(DType::Int64, {static_cast<int64_t>(axes.size())}, axes.data());
  auto node = [&](const char* type, std::vector<std::string> in, const std::string& out) {
    return expansion_node(op, type, std::move(in), {out}, out == op.outputs[0] ? type : out.substr(p.size()));
  };
  auto mean = [&](const std::string& in, const std::string& out) {
    onnx::Node n = node("ReduceMean", {in}, out);
    if (opset >= 18) {
      n.inputs.push_back(p + "axes");
    } else {
      (n.attributes["axes"] = attribute("axes", onnx::Attribute::Ints)).ints = axes;
    }
    return n;
  };
  return {mean(x, p + "mean"),
          node("Pow", {p + "mean", p + "exponent"}, p + "mean_squared"),
          node("Pow", {x, p + "exponent"}, p + "squares"),
          mean(p + "squares", p + "mean_of_squares"),
          node("Sub", {p + "mean_of_squares", p + "mean_squared"}, p + "variance"),
          node("Sqrt", {p + "variance"}, p + "std"),
          node("Sub", {x, p + "mean"}, p + "centred"),
          node("Add", {p + "std", p + "epsilon"}, p + "std_plus_epsilon"),
          node("Div", {p + "centred", p + "std_plus_epsilon"}, op.outputs[0])};
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
