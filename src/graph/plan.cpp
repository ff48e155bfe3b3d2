#include "graph/plan.h"

#include <algorithm>
#include <deque>

#include "graph/expand.h"
#include "ops/ml.h"
#include "ops/registry.h"

namespace lockstep {

int Plan::id_of(const std::string& name) const {
  auto it = ids.find(name);
  return it == ids.end() ? -1 : it->second;
}

namespace {

int add_value(Plan& plan, const std::string& name) {
  auto [it, fresh] = plan.ids.emplace(name, static_cast<int>(plan.value_names.size()));
  if (fresh) plan.value_names.push_back(name);
  return it->second;
}

const OpEntry* resolve_op(const onnx::Node& node, int64_t graph_opset, int64_t ml_opset) {
  const int64_t opset = node.opset ? node.opset : graph_opset;
  if (node.domain == kFusedDomain) {
    if (const OpEntry* fused = find_fused_op(node.op_type)) return fused;
  }
  if (node.domain == kMlDomain) {
    const OpEntry* e = find_ml_op(node.op_type, ml_opset);
    if (!e)
      throw node.error(ErrorCode::NotImplemented, "op " + node.op_type + " is not supported at " + kMlDomain +
                                                      " opset " + std::to_string(ml_opset));
    return e;
  }
  if (node.domain == kMicrosoftDomain) {
    if (const OpEntry* e = find_microsoft_op(node.op_type)) return e;
    std::string have;
    for (const OpEntry& e : microsoft_ops()) have += (have.empty() ? "" : ", ") + std::string(e.op_type);
    for (const ExpandedOp& e : expanded_ops())
      if (e.domain == std::string(kMicrosoftDomain)) have += ", " + std::string(e.op_type);
    throw node.error(ErrorCode::NotImplemented, "op " + node.op_type + " of domain " + kMicrosoftDomain +
                                                    " is not supported (lockstep has " + have + ")");
  }
  if (!is_default_domain(node.domain))
    throw node.error(ErrorCode::NotImplemented, "ops of domain '" + node.domain + "' are not supported");
  if (is_control_flow(node)) return nullptr;
  if (is_sequence_op(node)) {
    if (opset < sequence_op_since(node.op_type))
      throw node.error(ErrorCode::NotImplemented,
                       "op " + node.op_type + " is not supported at opset " + std::to_string(opset));
    return nullptr;
  }
  const OpEntry* e = find_op(node.op_type, opset);
  if (!e)
    throw node.error(ErrorCode::NotImplemented,
                     "op " + node.op_type + " is not supported at opset " + std::to_string(opset));
  return e;
}

// Names defined in this graph: inputs, initializers and every node output.
std::set<std::string> local_names(const onnx::Graph& g) {
  std::set<std::string> names;
  for (const auto& v : g.inputs) names.insert(v.name);
  for (const auto& [name, t] : g.initializers) names.insert(name);
  for (const auto& n : g.nodes)
    for (const auto& o : n.outputs)
      if (!o.empty()) names.insert(o);
  return names;
}

const onnx::Graph& subgraph(const onnx::Node& node, const char* attr) {
  const onnx::Graph* g = node.attr_graph(attr);
  if (!g) throw node.error(ErrorCode::InvalidGraph, node.op_type + " needs the graph attribute '" + attr + "'");
  return *g;
}

// "<who> has <got> <what>, expected <expected>".
void check_count(const onnx::Node& node, const std::string& who, const char* what, size_t got, size_t expected) {
  if (got != expected)
    throw node.error(ErrorCode::InvalidGraph, who + " has " + std::to_string(got) + " " + what + ", expected " +
                                                  std::to_string(expected));
}

// Inputs from `first` on feed the body: each must be given.
void check_given(const onnx::Node& node, size_t first) {
  for (size_t i = first; i < node.inputs.size(); ++i)
    if (node.inputs[i].empty())
      throw node.error(ErrorCode::InvalidGraph, "input " + std::to_string(i) + " feeds the body and must be given");
}

// Loop: inputs (M, cond, N carried), body inputs (iteration, cond, N carried), body outputs (cond, N carried,
// K scan outputs), node outputs (N carried, K scan outputs).
void check_loop(const onnx::Node& node, const onnx::Graph& body) {
  if (node.inputs.size() < 2)
    throw node.error(ErrorCode::InvalidGraph, "Loop needs the inputs M and cond (either may be empty)");
  const size_t n = node.inputs.size() - 2;
  check_count(node, "the body", "inputs", body.inputs.size(), n + 2);
  if (body.outputs.size() < n + 1)
    throw node.error(ErrorCode::InvalidGraph, "the body has " + std::to_string(body.outputs.size()) +
                                                  " outputs, fewer than cond and the " + std::to_string(n) +
                                                  " loop-carried values");
  check_count(node, "the node", "outputs", node.outputs.size(), body.outputs.size() - 1);
  check_given(node, 2);
}

// Scan: inputs ([sequence_lens before opset 9,] N states, M scan inputs), body inputs (N states, M scan elements),
// body outputs and node outputs (N states, K scan outputs); the axis and direction lists have M or K entries.
void check_scan(const onnx::Node& node, const onnx::Graph& body, int64_t opset) {
  const int64_t m = node.attr_int("num_scan_inputs", 0);
  const size_t lens = opset <= kLastBatchedScan ? 1 : 0;
  if (m < 1 || node.inputs.size() < lens + static_cast<size_t>(m))
    throw node.error(ErrorCode::InvalidGraph, "num_scan_inputs must be between 1 and the number of inputs, got " +
                                                  std::to_string(m));
  check_given(node, lens);
  const size_t n = node.inputs.size() - lens - static_cast<size_t>(m);
  check_count(node, "the body", "inputs", body.inputs.size(), n + static_cast<size_t>(m));
  check_count(node, "the node", "outputs", node.outputs.size(), body.outputs.size());
  if (body.outputs.size() < n)
    throw node.error(ErrorCode::InvalidGraph, "the body has fewer outputs than the " + std::to_string(n) + " states");
  const size_t k = body.outputs.size() - n, ms = static_cast<size_t>(m);
  const std::pair<const char*, size_t> lists[] = {{"directions", ms}, {"scan_input_axes", ms},
                                                  {"scan_input_directions", ms}, {"scan_output_axes", k},
                                                  {"scan_output_directions", k}};
  for (const auto& [attr, count] : lists)
    if (node.has(attr)) check_count(node, std::string("attribute '") + attr + "'", "entries", node.attr_ints(attr).size(), count);
}

// SequenceMap: inputs (the sequence, M more), body inputs (one element, M more, each an element where that input is
// a sequence), body outputs and node outputs (K, each a sequence of the iterations' results).
void check_sequence_map(const onnx::Node& node, const onnx::Graph& body) {
  if (node.inputs.empty()) throw node.error(ErrorCode::InvalidGraph, "SequenceMap needs the input input_sequence");
  check_count(node, "the body", "inputs", body.inputs.size(), node.inputs.size());
  check_count(node, "the body", "outputs", body.outputs.size(), node.outputs.size());
  check_given(node, 0);
}

void plan_subgraphs(PlannedNode& pn, int64_t opset, int64_t ml_opset, const std::set<std::string>& visible) {
  const onnx::Node& node = *pn.node;
  std::vector<const onnx::Graph*> graphs;
  if (node.op_type == "If") {
    graphs = {&subgraph(node, "then_branch"), &subgraph(node, "else_branch")};
    for (const onnx::Graph* g : graphs)
      if (g->outputs.size() != node.outputs.size())
        throw node.error(ErrorCode::InvalidGraph, "both branches must have as many outputs as the If node");
  } else {
    graphs = {&subgraph(node, "body")};
    if (node.op_type == "Loop") check_loop(node, *graphs[0]);
    else if (node.op_type == "SequenceMap") check_sequence_map(node, *graphs[0]);
    else check_scan(node, *graphs[0], opset);
  }
  for (const onnx::Graph* g : graphs) pn.subgraphs.push_back(build_plan(*g, opset, visible, ml_opset));
}

// Kahn's algorithm over producer edges; ONNX requires sorted nodes but exporters do not always comply.
std::vector<size_t> topological_order(const onnx::Graph& g, const std::vector<std::vector<std::string>>& reads) {
  std::map<std::string, size_t> producer;
  for (size_t i = 0; i < g.nodes.size(); ++i)
    for (const auto& o : g.nodes[i].outputs) {
      if (o.empty()) continue;
      if (!producer.emplace(o, i).second)
        throw g.nodes[i].error(ErrorCode::InvalidGraph, "output '" + o + "' is produced by more than one node");
    }
  std::vector<int> pending(g.nodes.size(), 0);
  std::vector<std::vector<size_t>> readers(g.nodes.size());
  for (size_t i = 0; i < g.nodes.size(); ++i)
    for (const auto& name : reads[i]) {
      auto it = producer.find(name);
      if (it == producer.end()) continue;
      ++pending[i];
      readers[it->second].push_back(i);
    }
  std::deque<size_t> ready;
  for (size_t i = 0; i < g.nodes.size(); ++i)
    if (pending[i] == 0) ready.push_back(i);
  std::vector<size_t> order;
  while (!ready.empty()) {
    size_t i = ready.front();
    ready.pop_front();
    order.push_back(i);
    for (size_t r : readers[i])
      if (--pending[r] == 0) ready.push_back(r);
  }
  if (order.size() != g.nodes.size())
    throw Error(ErrorCode::InvalidGraph, "graph '" + g.name + "' has a cycle");
  return order;
}

void compute_lifetimes(Plan& plan) {
  std::vector<int> last_reader(plan.value_names.size(), -1);
  for (size_t i = 0; i < plan.nodes.size(); ++i) {
    auto mark = [&](int id) {
      if (id >= 0) last_reader[id] = static_cast<int>(i);
    };
    for (int id : plan.nodes[i].inputs) mark(id);
    for (const auto& sub : plan.nodes[i].subgraphs)
      for (const auto& name : sub->outer_refs) mark(plan.id_of(name));
  }
  std::set<int> keep(plan.graph_outputs.begin(), plan.graph_outputs.end());
  for (const auto& [id, t] : plan.constants) keep.insert(id);
  for (size_t id = 0; id < last_reader.size(); ++id)
    if (last_reader[id] >= 0 && !keep.count(static_cast<int>(id)))
      plan.nodes[last_reader[id]].release_after.push_back(static_cast<int>(id));
  const std::set<int> feeds(plan.graph_inputs.begin(), plan.graph_inputs.end());
  for (PlannedNode& pn : plan.nodes) {
    pn.may_donate.assign(pn.inputs.size(), false);
    for (size_t i = 0; i < pn.inputs.size(); ++i) {
      const int id = pn.inputs[i];
      pn.may_donate[i] = id >= 0 && !feeds.count(id) && std::count(pn.inputs.begin(), pn.inputs.end(), id) == 1 &&
                         std::count(pn.release_after.begin(), pn.release_after.end(), id) == 1;
    }
  }
}

}  // namespace

bool is_control_flow(const onnx::Node& node) {
  return is_default_domain(node.domain) && (node.op_type == "If" || node.op_type == "Loop" || node.op_type == "Scan");
}

int64_t sequence_op_since(const std::string& op_type) {
  static const std::map<std::string, int64_t> since = {
      {"SequenceEmpty", 11}, {"SequenceConstruct", 11}, {"SequenceInsert", 11}, {"SequenceAt", 11},
      {"SequenceErase", 11}, {"SequenceLength", 11}, {"SplitToSequence", 11}, {"ConcatFromSequence", 11},
      {"SequenceMap", 17}};
  auto it = since.find(op_type);
  return it == since.end() ? 0 : it->second;
}

bool is_sequence_op(const onnx::Node& node) {
  return is_default_domain(node.domain) && sequence_op_since(node.op_type) > 0;
}

std::unique_ptr<Plan> build_plan(const onnx::Graph& graph, int64_t opset, const std::set<std::string>& outer_scope,
                                 int64_t ml_opset) {
  auto plan = std::make_unique<Plan>();
  std::set<std::string> overridable;
  for (const auto& v : graph.inputs) {
    plan->graph_inputs.push_back(add_value(*plan, v.name));
    overridable.insert(v.name);
  }
  for (const auto& [name, t] : graph.initializers) {
    int id = add_value(*plan, name);
    plan->constants[id] = t;  // an overridable initializer is the default for its input
  }
  std::set<std::string> defined = local_names(graph);
  std::set<std::string> visible = outer_scope;
  visible.insert(defined.begin(), defined.end());

  // What each node reads, including the outer-scope names its subgraphs read.
  std::vector<PlannedNode> unordered(graph.nodes.size());
  std::vector<std::vector<std::string>> reads(graph.nodes.size());
  std::set<std::string> outer_refs;
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    const onnx::Node& node = graph.nodes[i];
    unordered[i].node = &node;
    unordered[i].entry = resolve_op(node, opset, ml_opset);
    if (is_control_flow(node) || (is_sequence_op(node) && node.op_type == "SequenceMap"))
      plan_subgraphs(unordered[i], opset, ml_opset, visible);
    reads[i] = node.inputs;
    for (const auto& sub : unordered[i].subgraphs) reads[i].insert(reads[i].end(), sub->outer_refs.begin(), sub->outer_refs.end());
    for (const auto& name : reads[i]) {
      if (name.empty() || defined.count(name)) continue;
      if (!outer_scope.count(name))
        throw node.error(ErrorCode::InvalidGraph, "input '" + name + "' is not produced by any node, input or initializer");
      outer_refs.insert(name);
    }
  }
  for (const auto& v : graph.outputs) {
    if (defined.count(v.name)) continue;
    if (!outer_scope.count(v.name))
      throw Error(ErrorCode::InvalidGraph, "graph output '" + v.name + "' is not produced by any node, input or initializer");
    outer_refs.insert(v.name);
  }
  plan->outer_refs.assign(outer_refs.begin(), outer_refs.end());
  for (const auto& name : plan->outer_refs) add_value(*plan, name);

  for (size_t i : topological_order(graph, reads)) {
    PlannedNode& pn = unordered[i];
    for (const auto& name : pn.node->inputs) pn.inputs.push_back(name.empty() ? -1 : add_value(*plan, name));
    for (const auto& name : pn.node->outputs) pn.outputs.push_back(name.empty() ? -1 : add_value(*plan, name));
    plan->nodes.push_back(std::move(pn));
  }
  for (const auto& v : graph.outputs) {
    plan->graph_outputs.push_back(add_value(*plan, v.name));
    plan->optional_outputs.push_back(v.optional);
  }
  compute_lifetimes(*plan);
  return plan;
}

}  // namespace lockstep
