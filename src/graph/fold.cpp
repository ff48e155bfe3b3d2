// Constant folding. Provider-independent by construction: it runs before a provider is chosen, on the CPU
// kernels, which implement the same contract as every other provider's.
#include <set>

#include "graph/plan.h"
#include "runtime/half_precision.h"
#include "runtime/provider.h"
#include "runtime/thread_pool.h"

namespace lockstep {

namespace {

bool foldable(const onnx::Node& node, const onnx::Graph& graph, const std::set<std::string>& overridable) {
  if (is_control_flow(node) || !(node.domain.empty() || node.domain == "ai.onnx")) return false;
  for (const auto& name : node.inputs)
    if (!name.empty() && (!graph.initializers.count(name) || overridable.count(name))) return false;
  return true;
}

// Returns false, changing nothing, where an output has no value (Optional without an input makes an empty
// optional, which no initializer can hold): the node then stays in the graph.
bool fold_node(const onnx::Node& node, const OpEntry& entry, onnx::Graph& graph, int64_t opset, Provider& cpu,
               ThreadPool& pool) {
  KernelContext ctx(node, entry);
  ctx.opset = opset;
  for (const auto& name : node.inputs) ctx.inputs.push_back(name.empty() ? nullptr : &graph.initializers.at(name));
  ctx.outputs.resize(node.outputs.size());
  ctx.allocator = &cpu.allocator();
  ctx.pool = &pool;
  ctx.to_host = [](const Tensor& t) { return t; };
  run_kernel_with_half_rule(entry.cpu, cast_row().cpu, ctx);
  for (size_t i = 0; i < node.outputs.size(); ++i)
    if (!node.outputs[i].empty() && !ctx.outputs[i].defined()) return false;
  for (size_t i = 0; i < node.outputs.size(); ++i)
    if (!node.outputs[i].empty()) graph.initializers[node.outputs[i]] = ctx.outputs[i];
  return true;
}

}  // namespace

void fold_constants(onnx::Graph& graph, int64_t opset) {
  std::set<std::string> overridable;
  for (const auto& v : graph.inputs) overridable.insert(v.name);
  auto cpu = make_cpu_provider();
  ThreadPool pool(1);
  std::set<std::string> graph_outputs;
  for (const auto& v : graph.outputs) graph_outputs.insert(v.name);
  // Repeat until no node folds: nodes need not be sorted, and each fold can make its readers foldable.
  for (bool changed = true; changed;) {
    changed = false;
    std::vector<onnx::Node> kept;
    for (auto& node : graph.nodes) {
      const int64_t node_opset = node.opset ? node.opset : opset;
      const OpEntry* entry = find_op(node.op_type, node_opset);
      if (!entry || !foldable(node, graph, overridable) ||
          !fold_node(node, *entry, graph, node_opset, *cpu, pool)) {
        kept.push_back(std::move(node));
        continue;
      }
      changed = true;
    }
    graph.nodes = std::move(kept);
  }
}

}  // namespace lockstep
