#include "runtime/half_precision.h"

#include <unordered_set>

#include "ops/registry.h"

namespace lockstep {

namespace {

bool is_half(DType t) { return t == DType::Float16 || t == DType::BFloat16; }

// The families whose kernels compute, and the ops of the other families that compare values.
bool family_computes(const char* family) {
  static const std::unordered_set<std::string> kComputing = {
      "conv", "gemm", "elementwise", "reduce", "normalization", "pool", "resize",
      "loss", "recurrent", "attention", "detection"};
  return kComputing.count(family) != 0;
}

const std::unordered_set<const OpEntry*>& computing_rows() {
  static const std::unordered_set<const OpEntry*> rows = [] {
    // Where, Cast and CastLike select or convert: they take every type as it is.
    const std::unordered_set<std::string> kMoving = {"Where", "Cast", "CastLike"};
    const std::unordered_set<std::string> kComparing = {"TopK", "Unique"};
    std::unordered_set<const OpEntry*> out;
    for (const RegisteredOp& r : all_ops())
      if ((family_computes(r.family) && !kMoving.count(r.entry->op_type)) || kComparing.count(r.entry->op_type))
        out.insert(r.entry);
    using FamilyFn = std::span<const OpEntry> (*)();
    for (FamilyFn fused : {fused_elementwise_ops, fused_reduce_ops, fused_product_ops})
      for (const OpEntry& e : fused()) out.insert(&e);
    return out;
  }();
  return rows;
}

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

const OpEntry& cast_row() {
  static const OpEntry& row = *find_op("Cast", kNewestOpset);
  return row;
}

void run_kernel_with_half_rule(KernelFn kernel, KernelFn cast, KernelContext& ctx) {
  DType half = DType::Undefined;
  if (computes_in_float(ctx.entry))
    for (const Tensor* t : ctx.inputs)
      if (t && is_half(t->dtype())) {
        half = t->dtype();
        break;
      }
  if (half == DType::Undefined) return kernel(ctx);
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
    if (y.defined() && y.dtype() == DType::Float && !output_stays_float(ctx, static_cast<int>(i)))
      y = convert(y, half, cast, ctx);
  }
}

}  // namespace lockstep
