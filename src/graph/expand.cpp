// Ops defined by an ONNX function body that lockstep runs as that body: each such node is replaced, before anything
// else reads the graph, by the body's nodes. Both providers then run the same primitive ops, so the op gets the
// contract of each of them and the bits of a model that wrote the body out itself (docs/arithmetic.md#expanded-ops).
#include <cstring>
#include <string>
#include <vector>

#include "graph/plan.h"

namespace lockstep {

namespace {

// The element type of value `name` where the graph declares it (inputs, initializers, value_info), else Undefined.
DType declared_dtype(const onnx::Graph& g, const std::string& name) {
  if (auto it = g.initializers.find(name); it != g.initializers.end()) return it->second.dtype();
  for (const auto* list : {&g.inputs, &g.value_info, &g.outputs})
    for (const onnx::ValueInfo& v : *list)
      if (v.name == name) return v.dtype;
  return DType::Undefined;
}

// A one-element constant: float32, as the function bodies write them, or double where X is declared double.
Tensor scalar_like(DType x_type, double value) {
  if (x_type == DType::Double) return Tensor::from_bytes(DType::Double, {}, &value);
  const float f = static_cast<float>(value);
  return Tensor::from_bytes(DType::Float, {}, &f);
}

onnx::Node body_node(const onnx::Node& op, const std::string& type, std::vector<std::string> inputs,
                     std::string output) {
  onnx::Node n;
  n.name = op.name + "/" + type;
  n.op_type = type;
  n.inputs = std::move(inputs);
  n.outputs = {std::move(output)};
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
  const DType x_type = declared_dtype(g, x);
  g.initializers[p + "exponent"] = scalar_like(x_type, 2.0);
  g.initializers[p + "epsilon"] = scalar_like(x_type, 1e-9);
  const std::vector<int64_t> axes = op.attr_ints("axes", {0, 2, 3});
  if (opset >= 18)
    g.initializers[p + "axes"] = Tensor::from_bytes(DType::Int64, {static_cast<int64_t>(axes.size())}, axes.data());
  auto mean = [&](const std::string& in, const std::string& out) {
    onnx::Node n = body_node(op, "ReduceMean", {in}, out);
    n.name = op.name + "/" + out.substr(p.size());  // the two means told apart
    if (opset >= 18) {
      n.inputs.push_back(p + "axes");
    } else {
      (n.attributes["axes"] = attribute("axes", onnx::Attribute::Ints)).ints = axes;
    }
    return n;
  };
  return {mean(x, p + "mean"),
          body_node(op, "Pow", {p + "mean", p + "exponent"}, p + "mean_squared"),
          body_node(op, "Pow", {x, p + "exponent"}, p + "squares"),
          mean(p + "squares", p + "mean_of_squares"),
          body_node(op, "Sub", {p + "mean_of_squares", p + "mean_squared"}, p + "variance"),
          body_node(op, "Sqrt", {p + "variance"}, p + "std"),
          body_node(op, "Sub", {x, p + "mean"}, p + "centred"),
          body_node(op, "Add", {p + "std", p + "epsilon"}, p + "std_plus_epsilon"),
          body_node(op, "Div", {p + "centred", p + "std_plus_epsilon"}, op.outputs[0])};
}

void expand_graph(onnx::Graph& g, int64_t opset) {
  std::vector<onnx::Node> nodes;
  for (onnx::Node& n : g.nodes) {
    for (auto& [name, a] : n.attributes) {
      if (a.g) expand_graph(*a.g, opset);
      for (auto& sub : a.graphs) expand_graph(*sub, opset);
    }
    if (is_default_domain(n.domain) && n.op_type == "MeanVarianceNormalization" && opset >= 9) {
      for (onnx::Node& body : expand_mean_variance_normalization(g, n, opset)) nodes.push_back(std::move(body));
    } else {
      nodes.push_back(std::move(n));
    }
  }
  g.nodes = std::move(nodes);
}

}  // namespace

void expand_function_ops(onnx::Graph& graph, int64_t opset) { expand_graph(graph, opset); }

}  // namespace lockstep
