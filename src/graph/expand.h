// Ops that lockstep runs as a composition of other ops: each node of such an op is replaced, at session creation and
// before anything else reads the graph, by the nodes of its definition. Both providers then run the same primitive
// ops, so the op gets their contracts and the bits of a model that wrote those nodes out itself
// (docs/arithmetic.md#expanded-ops). One row per op; the expansions live in expand_*.cpp.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "onnx/model.h"

namespace lockstep {

/// Replaces `op` by the nodes that compute it. `opset` is the graph's default-domain opset. A node made at another
/// default-domain opset (an opset-23 Attention inside an opset-17 model) says so in onnx::Node::opset. New values and
/// constants take names derived from the op's first output, which is unique in the graph. Throws InvalidGraph or
/// NotImplemented, naming the node, for what the definition does not allow or lockstep does not run.
using ExpandFunction = std::vector<onnx::Node> (*)(onnx::Graph& graph, const onnx::Node& op, int64_t opset);

struct ExpandedOp {
  const char* domain;  // "" for the default domain, or com.microsoft
  const char* op_type;
  int since;           // the first opset of that domain the row handles
  const char* family;  // the row's family in `lockstep ops`
  ExpandFunction expand;
};

/// Replaces each node of an op in the table below by the nodes that compute it, subgraphs included. It runs first, at
/// every graph_optimization_level: these ops have no kernel of their own.
void expand_function_ops(onnx::Graph& graph, int64_t opset);

/// Every op lockstep runs by expansion.
std::span<const ExpandedOp> expanded_ops();
/// The row that expands `node` at default-domain opset `opset`, or nullptr.
const ExpandedOp* find_expanded_op(const onnx::Node& node, int64_t opset);

/// Throws NotImplemented naming the first node, subgraphs included, that an expansion made at a default-domain opset
/// other than the model's: a model file has one opset per domain, so such a graph cannot be written out
/// (SessionOptions::optimized_model_filepath) and read back with the same meaning.
void refuse_mixed_opsets(const onnx::Graph& graph, int64_t opset);

// Building blocks of the expansions.

/// The element type of value `name` where the graph declares it (inputs, initializers, value_info, outputs), else
/// Undefined.
DType declared_dtype(const onnx::Graph& graph, const std::string& name);
/// The rank the graph declares for tensor `name`, or -1 where it declares none.
int declared_rank(const onnx::Graph& graph, const std::string& name);
/// The declared dim `d` of tensor `name`, or -1 where unknown.
int64_t declared_dim(const onnx::Graph& graph, const std::string& name, int d);
/// A one-element constant of element type `type` (float32, double or a half type) holding `value`, rounded once.
Tensor scalar_of_type(DType type, double value);
/// Input or output i of `op`, or "" where it has none (absent optional).
const std::string& input_or_empty(const onnx::Node& op, size_t i);
const std::string& output_or_empty(const onnx::Node& op, size_t i);

void set_int(onnx::Node& node, const std::string& name, int64_t value);
void set_ints(onnx::Node& node, const std::string& name, std::vector<int64_t> value);
void set_float(onnx::Node& node, const std::string& name, float value);

/// The nodes of one expansion, as they are made. Values are named `<op's first output>/<tag>_<suffix>` (unique, as
/// that output is), nodes `<op's name>/<their first output without that prefix>`. A node whose form needs a newer
/// default-domain opset than the model's (its `since`, at least the builder's `min_opset`) follows that opset
/// (onnx::Node::opset).
class ExpansionBuilder {
 public:
  ExpansionBuilder(onnx::Graph& graph, const onnx::Node& op, int64_t opset, const std::string& tag,
                   int64_t min_opset = 1);

  std::string value(const std::string& suffix) const { return prefix_ + suffix; }
  /// A node of `type` writing `outputs` (full names; trailing empty ones dropped).
  onnx::Node& node(const std::string& type, std::vector<std::string> inputs, std::vector<std::string> outputs,
                   int64_t since = 1);
  /// A node writing one made value, value(suffix), which it returns.
  std::string op(const std::string& type, std::vector<std::string> inputs, const std::string& suffix);
  /// The same, writing `out` (one of the op's own outputs).
  std::string op_to(const std::string& type, std::vector<std::string> inputs, const std::string& out);
  /// A 1-D int64 constant, or a rank-0 one.
  std::string ints(const std::string& suffix, const std::vector<int64_t>& v);
  std::string scalar_int(const std::string& suffix, int64_t v);
  onnx::Node& last() { return nodes_.back(); }
  onnx::Graph& graph() { return graph_; }
  const onnx::Node& source() const { return op_; }
  std::vector<onnx::Node> take() { return std::move(nodes_); }

 private:
  onnx::Graph& graph_;
  const onnx::Node& op_;
  int64_t opset_, min_opset_;
  std::string prefix_;
  std::vector<onnx::Node> nodes_;
};

// The expansions, by file.
std::vector<onnx::Node> expand_mean_variance_normalization(onnx::Graph& g, const onnx::Node& op, int64_t opset);
// expand_microsoft_norm.cpp
std::vector<onnx::Node> expand_skip_layer_normalization(onnx::Graph& g, const onnx::Node& op, int64_t opset);
std::vector<onnx::Node> expand_skip_simplified_layer_normalization(onnx::Graph& g, const onnx::Node& op,
                                                                   int64_t opset);
std::vector<onnx::Node> expand_simplified_layer_normalization(onnx::Graph& g, const onnx::Node& op, int64_t opset);
std::vector<onnx::Node> expand_embed_layer_normalization(onnx::Graph& g, const onnx::Node& op, int64_t opset);
std::vector<onnx::Node> expand_microsoft_rotary_embedding(onnx::Graph& g, const onnx::Node& op, int64_t opset);
// expand_microsoft_attention.cpp
std::vector<onnx::Node> expand_microsoft_multi_head_attention(onnx::Graph& g, const onnx::Node& op, int64_t opset);
std::vector<onnx::Node> expand_microsoft_group_query_attention(onnx::Graph& g, const onnx::Node& op,
                                                               int64_t opset);
std::vector<onnx::Node> expand_microsoft_attention(onnx::Graph& g, const onnx::Node& op, int64_t opset);

}  // namespace lockstep
