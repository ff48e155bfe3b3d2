// Attribute access and error helpers for the model IR.
#include "onnx/model.h"

namespace lockstep::onnx {

const Attribute* Node::find(const std::string& attr) const {
  auto it = attributes.find(attr);
  return it == attributes.end() ? nullptr : &it->second;
}

std::string Node::label() const { return "Node '" + name + "' (" + op_type + ")"; }

Error Node::error(ErrorCode code, const std::string& message) const { return Error(code, label() + ": " + message); }

namespace {
const Attribute* typed(const Node& n, const std::string& attr, Attribute::Type want, const char* want_name) {
  const Attribute* a = n.find(attr);
  if (a && a->type != want)
    throw n.error(ErrorCode::InvalidGraph, "attribute '" + attr + "' must be of type " + want_name);
  return a;
}
}  // namespace

int64_t Node::attr_int(const std::string& attr, int64_t fallback) const {
  const Attribute* a = typed(*this, attr, Attribute::Int, "INT");
  return a ? a->i : fallback;
}

float Node::attr_float(const std::string& attr, float fallback) const {
  const Attribute* a = typed(*this, attr, Attribute::Float, "FLOAT");
  return a ? a->f : fallback;
}

std::string Node::attr_string(const std::string& attr, const std::string& fallback) const {
  const Attribute* a = typed(*this, attr, Attribute::String, "STRING");
  return a ? a->s : fallback;
}

std::vector<int64_t> Node::attr_ints(const std::string& attr, std::vector<int64_t> fallback) const {
  const Attribute* a = typed(*this, attr, Attribute::Ints, "INTS");
  return a ? a->ints : fallback;
}

std::vector<float> Node::attr_floats(const std::string& attr, std::vector<float> fallback) const {
  const Attribute* a = typed(*this, attr, Attribute::Floats, "FLOATS");
  return a ? a->floats : fallback;
}

std::vector<std::string> Node::attr_strings(const std::string& attr, std::vector<std::string> fallback) const {
  const Attribute* a = typed(*this, attr, Attribute::Strings, "STRINGS");
  return a ? a->strings : fallback;
}

const Tensor* Node::attr_tensor(const std::string& attr) const {
  const Attribute* a = typed(*this, attr, Attribute::TensorT, "TENSOR");
  return a ? &a->t : nullptr;
}

const Graph* Node::attr_graph(const std::string& attr) const {
  const Attribute* a = typed(*this, attr, Attribute::GraphT, "GRAPH");
  return a ? a->g.get() : nullptr;
}

int64_t Model::default_opset() const {
  for (const auto& o : opset_imports)
    if (o.domain.empty() || o.domain == "ai.onnx") return o.version;
  return 0;
}

}  // namespace lockstep::onnx
