// The execution plan of one graph: value ids, topological node order, and lifetimes for buffer reuse.
#pragma once

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "onnx/model.h"
#include "ops/registry.h"

namespace lockstep {

struct Plan;

struct PlannedNode {
  const onnx::Node* node = nullptr;
  // nullptr for control flow (If, Loop, Scan) and the sequence ops, which the executor runs itself
  const OpEntry* entry = nullptr;
  std::vector<int> inputs;         // value ids; -1 for an absent optional input
  std::vector<int> outputs;        // value ids; -1 for an absent optional output
  std::vector<int> release_after;  // values whose last reader is this node: their buffers go back to the pool
  // Per input: the node is the value's last reader, reads it through this input alone, and the value is neither a
  // graph input nor kept (a graph output or a constant), so an output may take its buffer over
  // (KernelContext::donatable; the executor also checks that no other tensor shares the buffer).
  std::vector<bool> may_donate;
  // The subgraphs of a control-flow node: If's then_branch and else_branch, Loop's, Scan's or SequenceMap's body.
  // Empty otherwise.
  std::vector<std::unique_ptr<Plan>> subgraphs;
};

struct Plan {
  std::vector<std::string> value_names;  // id -> name
  std::map<std::string, int> ids;        // name -> id
  std::vector<int> graph_inputs;         // ids of the graph's declared inputs, in order
  std::vector<int> graph_outputs;        // ids of the graph's outputs, in order
  std::vector<bool> optional_outputs;    // per graph output: declared optional, so it may have no value
  std::map<int, Tensor> constants;       // initializers (host tensors) that are not overridable inputs
  std::vector<std::string> outer_refs;   // names this graph reads from enclosing graphs (subgraphs only)
  std::vector<PlannedNode> nodes;        // topological order

  int id_of(const std::string& name) const;
};

/// If, Loop and Scan of the default domain: ops with subgraphs, which the executor runs itself (no OpEntry).
bool is_control_flow(const onnx::Node& node);
/// The sequence ops of the default domain (SequenceEmpty, SequenceConstruct, SequenceInsert, SequenceAt,
/// SequenceErase, SequenceLength, SplitToSequence, ConcatFromSequence, SequenceMap), which the executor runs itself
/// (src/runtime/sequence.cpp): they move tensors between sequences and compute nothing.
bool is_sequence_op(const onnx::Node& node);
/// The opset that introduced a sequence op (11, or 17 for SequenceMap); 0 for other ops.
int64_t sequence_op_since(const std::string& op_type);
/// The last opset whose Scan has a batch axis and sequence_lens (Scan-8); Scan-9 has neither.
inline constexpr int64_t kLastBatchedScan = 8;

/// Builds the plan. `outer_scope` holds the names visible from enclosing graphs (empty for the main graph);
/// `ml_opset` is the model's ai.onnx.ml opset (0: none imported). Throws InvalidGraph for dangling names, cycles or
/// duplicate producers, NotImplemented for unknown ops, both naming the node.
std::unique_ptr<Plan> build_plan(const onnx::Graph& graph, int64_t opset, const std::set<std::string>& outer_scope,
                                 int64_t ml_opset = 0);

/// An attribute of that name and type, its value still to set: what the graph rewrites give the nodes they make.
inline onnx::Attribute attribute(const std::string& name, onnx::Attribute::Type type) {
  onnx::Attribute a;
  a.name = name;
  a.type = type;
  return a;
}

/// Whether a node's domain is the default ONNX domain ("" or "ai.onnx").
inline bool is_default_domain(const std::string& domain) { return domain.empty() || domain == "ai.onnx"; }

/// The rewrites that fuse nodes (docs/arithmetic.md#graph-rewrites): each fused node computes the same sequence of
/// operations as the nodes it replaces, so the bits do not depend on whether it runs. Main graph only.
void fuse_nodes(onnx::Graph& graph);
/// Throws NotImplemented, naming the node, for a model's own node (subgraphs included) in lockstep's domain
/// (kFusedDomain), which only fuse_nodes creates, unless the model is one lockstep wrote: it imports that domain at
/// kFusedDomainVersion and its metadata has kWrittenByLockstep = "1" (SessionOptions::optimized_model_filepath).
void refuse_fused_domain(const onnx::Model& model);
/// For a model whose graph has fused nodes: adds the import of lockstep's domain and the kWrittenByLockstep mark,
/// so that the model written from it declares the ops it uses and loads back.
void mark_fused_domain(onnx::Model& model);
/// The metadata key that marks a model written by lockstep with fused nodes.
inline constexpr const char* kWrittenByLockstep = "lockstep.fused_graph";

/// Constant folding: every node whose inputs are all constants is run once on the CPU and replaced by
/// initializers. It runs before provider selection, so every provider sees the same graph.
void fold_constants(onnx::Graph& graph, int64_t opset);

}  // namespace lockstep
