// Graph rewrites that fuse nodes. Each fused op computes exactly the operations of the nodes it replaces, in the
// same order and with the same roundings, so a fused and an unfused graph return the same bits on every
// provider (docs/arithmetic.md#graph-rewrites). They run after constant folding, before planning.
#include <map>
#include <set>

#include "graph/plan.h"

namespace lockstep {

namespace {

bool is_default_domain(const std::string& d) { return d.empty() || d == "ai.onnx"; }

bool is_op(const onnx::Node& n, const char* op_type) { return n.op_type == op_type && is_default_domain(n.domain); }

std::vector<const onnx::Graph*> subgraphs_of(const onnx::Node& n) {
  std::vector<const onnx::Graph*> subgraphs;
  for (const auto& [attr, a] : n.attributes) {
    if (a.g) subgraphs.push_back(a.g.get());
    for (const auto& sub : a.graphs) subgraphs.push_back(sub.get());
  }
  return subgraphs;
}

// Every name a subgraph (If branches, at any depth) reads: such a value must keep its producer.
void collect_subgraph_reads(const onnx::Graph& g, std::set<std::string>& names) {
  for (const auto& n : g.nodes)
    for (const onnx::Graph* sub : subgraphs_of(n)) {
      for (const auto& sn : sub->nodes) names.insert(sn.inputs.begin(), sn.inputs.end());
      collect_subgraph_reads(*sub, names);
    }
}

// How many times each value is read: by nodes, as a graph output, or from a subgraph.
std::map<std::string, int> reader_counts(const onnx::Graph& g) {
  std::map<std::string, int> readers;
  for (const auto& n : g.nodes)
    for (const auto& name : n.inputs)
      if (!name.empty()) ++readers[name];
  for (const auto& v : g.outputs) ++readers[v.name];
  std::set<std::string> subgraph_reads;
  collect_subgraph_reads(g, subgraph_reads);
  for (const auto& name : subgraph_reads) ++readers[name];
  return readers;
}

// Sigmoid(x) -> s, Mul(x, s) or Mul(s, x) -> y, s read by nothing else: lockstep.Silu(x) -> y, computing
// x * sigmoid(x) per element, the two roundings of the unfused pair.
void fuse_silu(onnx::Graph& graph) {
  std::map<std::string, int> readers = reader_counts(graph);
  std::map<std::string, size_t> sigmoid_of;  // output name -> index of the Sigmoid node
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    const onnx::Node& n = graph.nodes[i];
    if (is_op(n, "Sigmoid") && n.inputs.size() == 1 && n.outputs.size() == 1 && readers[n.outputs[0]] == 1)
      sigmoid_of[n.outputs[0]] = i;
  }
  std::set<size_t> removed;
  for (onnx::Node& mul : graph.nodes) {
    if (!is_op(mul, "Mul") || mul.inputs.size() != 2 || mul.outputs.size() != 1) continue;
    for (int s = 0; s < 2; ++s) {
      auto it = sigmoid_of.find(mul.inputs[s]);
      if (it == sigmoid_of.end() || graph.nodes[it->second].inputs[0] != mul.inputs[1 - s]) continue;
      removed.insert(it->second);
      mul.domain = kFusedDomain;
      mul.op_type = "Silu";
      mul.inputs = {mul.inputs[1 - s]};
      break;
    }
  }
  std::vector<onnx::Node> kept;
  for (size_t i = 0; i < graph.nodes.size(); ++i)
    if (!removed.count(i)) kept.push_back(std::move(graph.nodes[i]));
  graph.nodes = std::move(kept);
}

}  // namespace

namespace {
void refuse_fused_nodes(const onnx::Graph& graph) {
  for (const auto& n : graph.nodes) {
    if (n.domain == kFusedDomain)
      throw n.error(ErrorCode::NotImplemented, "ops of domain '" + n.domain + "' are not supported (only the "
                                               "optimized models lockstep writes may use them)");
    for (const onnx::Graph* sub : subgraphs_of(n)) refuse_fused_nodes(*sub);
  }
}

bool imports_fused_domain(const onnx::Model& model) {
  for (const auto& o : model.opset_imports)
    if (o.domain == kFusedDomain && o.version == kFusedDomainVersion) return true;
  return false;
}
}  // namespace

// A model's own use of the domain is refused even where it imports it: only a model lockstep wrote (marked in its
// metadata) holds lockstep's fused nodes, and they are the nodes fuse_nodes made.
void refuse_fused_domain(const onnx::Model& model) {
  auto mark = model.metadata.find(kWrittenByLockstep);
  if (!imports_fused_domain(model) || mark == model.metadata.end() || mark->second != "1")
    refuse_fused_nodes(model.graph);
}

void mark_fused_domain(onnx::Model& model) {
  bool fused = false;
  for (const auto& n : model.graph.nodes) fused |= n.domain == kFusedDomain;
  if (!fused) return;
  if (!imports_fused_domain(model)) model.opset_imports.push_back({kFusedDomain, kFusedDomainVersion});
  model.metadata[kWrittenByLockstep] = "1";
}

void fuse_nodes(onnx::Graph& graph) { fuse_silu(graph); }

}  // namespace lockstep
