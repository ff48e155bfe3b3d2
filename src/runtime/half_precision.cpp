#include "runtime/half_precision.h"

#include <unordered_set>

#include "ops/registry.h"
#include "runtime/thread_pool.h"

namespace lockstep {

namespace {

bool is_half(DType t) { return t == DType::Float16 || t == DType::BFloat16; }

// The families whose kernels compute, and the ops of the other families that compare or compute values.
bool family_computes(const char* family) {
  static const std::unordered_set<std::string> kComputing = {
      "conv", "gemm", "elementwise", "reduce", "normalization", "pool", "resize",
      "loss", "recurrent", "attention", "detection", "signal"};
  return kComputing.count(family) != 0;
}

const std::unordered_set<const OpEntry*>& computing_rows() {
  static const std::unordered_set<const OpEntry*> rows = [] {
    // Where, Cast and CastLike select or convert: they take every type as it is. MelWeightMatrix's output type is
    // its attribute's, whatever its inputs' (it reads its half scalars exactly).
    const std::unordered_set<std::string> kSelectingOrConverting = {"Where", "Cast", "CastLike", "MelWeightMatrix"};
    const std::unordered_set<std::string> kComparing = {"TopK", "Unique", "Range"};
    std::unordered_set<const OpEntry*> out;
    for (const RegisteredOp& r : all_ops())
      if ((family_computes(r.family) && !kSelectingOrConverting.count(r.entry->op_type)) ||
          kComparing.count(r.entry->op_type))
        out.insert(r.entry);
    using FamilyFn = std::span<const OpEntry> (*)();
    for (FamilyFn fused : {fused_elementwise_ops, fused_reduce_ops, fused_product_ops})
      for (const OpEntry& e : fused()) out.insert(&e);
    return out;
  }();
  return rows;
}

// Ops that copy elements of their first input, whatever their type, and read no other input of that type.
bool moves_first_input(const onnx::Node& n) {
  static const std::unordered_set<std::string> kByteMovers = {
      "Reshape", "Flatten", "Squeeze", "Unsqueeze", "Identity", "Transpose", "Slice", "Expand", "Tile", "Gather",
      "Split", "DepthToSpace", "SpaceToDepth"};
  return n.domain.empty() && kByteMovers.count(n.op_type) != 0;
}

bool reads_only_shape(const onnx::Node& n) { return n.domain.empty() && (n.op_type == "Shape" || n.op_type == "Size"); }

bool computes(const PlannedNode& pn) { return pn.entry && computes_in_float(*pn.entry); }

// ONNX types LayerNormalization's Mean and InvStdDev (outputs 1 and 2) as float whatever X's type is.
bool output_stays_float(const KernelContext& ctx, int i) {
  return i >= 1 && ctx.node.op_type == "LayerNormalization";
}

// Runs the device's Cast kernel as a CastLike whose second input is an empty tensor of type `to`.
Tensor convert(const Tensor& x, DType to, KernelFn cast, const KernelContext& ctx) {
  static const onnx::Node kCastLike = [] {
    onnx::Node n;
    n.op_type = "CastLike";
    return n;
  }();
  const Tensor like = Tensor::empty(to, {0});
  KernelContext c(kCastLike, ctx.entry);
  c.opset = ctx.opset;
  c.max_tensor_bytes = ctx.max_tensor_bytes;
  c.device = ctx.device;
  c.allocator = ctx.allocator;
  c.pool = ctx.pool;
  c.stream = ctx.stream;
  c.to_host = ctx.to_host;
  c.inputs = {&x, &like};
  c.outputs.resize(1);
  cast(c);
  return std::move(c.outputs[0]);
}

}  // namespace

bool computes_in_float(const OpEntry& entry) { return computing_rows().count(&entry) != 0; }

std::vector<std::vector<bool>> half_values_in_float(const Plan& plan) {
  const size_t n = plan.value_names.size();
  std::vector<bool> keep(n, false);
  // Candidates, in topological order: what a computing node makes, and what a mover makes of a candidate.
  for (const PlannedNode& pn : plan.nodes) {
    const bool makes = computes(pn) || (pn.entry && moves_first_input(*pn.node) && !pn.inputs.empty() &&
                                        pn.inputs[0] >= 0 && keep[pn.inputs[0]]);
    for (int id : pn.outputs)
      if (id >= 0) keep[id] = makes;
  }
  std::vector<bool> read(n, false);
  for (int id : plan.graph_outputs) keep[id] = false;
  for (const PlannedNode& pn : plan.nodes) {
    for (int id : pn.inputs)
      if (id >= 0) read[id] = true;
    for (const auto& sub : pn.subgraphs)
      for (const auto& name : sub->outer_refs)
        if (int id = plan.id_of(name); id >= 0) keep[id] = false;
  }
  for (size_t id = 0; id < n; ++id) keep[id] = keep[id] && read[id];
  // Drop what some reader needs rounded, until nothing changes (each pass only drops).
  for (bool changed = true; changed;) {
    changed = false;
    auto drop = [&](int id) {
      if (id >= 0 && keep[id]) keep[id] = false, changed = true;
    };
    for (const PlannedNode& pn : plan.nodes) {
      if (computes(pn) || reads_only_shape(*pn.node)) continue;
      const bool mover = pn.entry && moves_first_input(*pn.node) && !pn.inputs.empty();
      bool outputs_kept = mover;
      for (int id : pn.outputs) outputs_kept = outputs_kept && id >= 0 && keep[id];
      for (size_t i = 0; i < pn.inputs.size(); ++i)
        if (!(mover && i == 0 && outputs_kept)) drop(pn.inputs[i]);
      if (mover && pn.inputs[0] >= 0 && !keep[pn.inputs[0]])
        for (int id : pn.outputs) drop(id);
    }
  }
  std::vector<std::vector<bool>> out;
  for (const PlannedNode& pn : plan.nodes) {
    std::vector<bool> per_output;
    for (int id : pn.outputs) per_output.push_back(id >= 0 && keep[id]);
    out.push_back(std::move(per_output));
  }
  return out;
}

std::vector<bool> half_constants_in_float(const Plan& plan) {
  const size_t n = plan.value_names.size();
  std::vector<bool> ok(n, false), escapes(n, false);
  for (const auto& [id, t] : plan.constants) ok[id] = is_half(t.dtype());
  for (int id : plan.graph_outputs) escapes[id] = true;
  std::vector<bool> read(n, false);
  for (const PlannedNode& pn : plan.nodes) {
    for (int id : pn.inputs) {
      if (id < 0) continue;
      read[id] = true;
      if (!computes(pn)) escapes[id] = true;
    }
    for (const auto& sub : pn.subgraphs)
      for (const auto& name : sub->outer_refs)
        if (int id = plan.id_of(name); id >= 0) escapes[id] = true;
  }
  for (size_t id = 0; id < n; ++id) ok[id] = ok[id] && read[id] && !escapes[id];
  return ok;
}

Tensor widen_on_host(const Tensor& t, ThreadPool& pool, Allocator& allocator) {
  static const onnx::Node kNoNode;
  KernelContext ctx(kNoNode, cast_row());
  ctx.allocator = &allocator;
  ctx.pool = &pool;
  ctx.to_host = [](const Tensor& x) { return x; };
  return convert(t, DType::Float, cast_row().cpu, ctx);
}

const OpEntry& cast_row() {
  static const OpEntry& row = *find_op("Cast", kNewestOpset);
  return row;
}

DType run_kernel_with_half_rule(KernelFn kernel, KernelFn cast, KernelContext& ctx, HalfValuesInFloat* kept) {
  if (kept) kept->output_half.assign(ctx.outputs.size(), DType::Undefined);
  DType half = DType::Undefined;
  if (computes_in_float(ctx.entry))
    for (size_t i = 0; i < ctx.inputs.size() && half == DType::Undefined; ++i)
      if (ctx.inputs[i] && is_half(ctx.inputs[i]->dtype()))
        half = ctx.inputs[i]->dtype();
      else if (kept && i < kept->input_half.size())
        half = kept->input_half[i];
  if (half == DType::Undefined) {
    kernel(ctx);
    // A mover passes a half value left in float32 on as it is (half_values_in_float kept its outputs too).
    if (kept && moves_first_input(ctx.node) && !kept->input_half.empty() && kept->input_half[0] != DType::Undefined)
      for (size_t i = 0; i < ctx.outputs.size() && i < kept->keep_output.size(); ++i)
        if (kept->keep_output[i]) kept->output_half[i] = kept->input_half[0];
    return half;
  }
  std::vector<Tensor> widened(ctx.inputs.size());
  std::vector<const Tensor*> host_copies;
  if (ctx.host_copies) host_copies = *ctx.host_copies;
  for (size_t i = 0; i < ctx.inputs.size(); ++i) {
    if (!ctx.inputs[i] || ctx.inputs[i]->dtype() != half) continue;
    widened[i] = convert(*ctx.inputs[i], DType::Float, cast, ctx);
    ctx.inputs[i] = &widened[i];
    if (i < host_copies.size()) host_copies[i] = nullptr;  // the host copy holds the half values
    if (i < ctx.donatable.size()) ctx.donatable[i] = true;  // no other tensor shares the widened buffer
  }
  const std::vector<const Tensor*>* original_host_copies = ctx.host_copies;
  if (ctx.host_copies) ctx.host_copies = &host_copies;
  kernel(ctx);
  ctx.host_copies = original_host_copies;
  for (size_t i = 0; i < ctx.outputs.size(); ++i) {
    Tensor& y = ctx.outputs[i];
    if (!y.defined() || y.dtype() != DType::Float || output_stays_float(ctx, static_cast<int>(i))) continue;
    if (kept && i < kept->keep_output.size() && kept->keep_output[i])
      kept->output_half[i] = half;
    else
      y = convert(y, half, cast, ctx);
  }
  return half;
}

}  // namespace lockstep
