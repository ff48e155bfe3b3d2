#include "ops/fused.h"

#include "ops/registry.h"

namespace lockstep {

ProductEpilogue plan_epilogue(const KernelContext& ctx, int addend_input, const Shape& product, Shape& out_shape) {
  ProductEpilogue e;
  const std::string activation = ctx.node.attr_string("activation", "");
  e.activation = activation == "Relu"            ? Activation::Relu
                 : activation == "HardSwish"     ? Activation::HardSwish
                 : activation == "GeluErfChain"  ? Activation::GeluErfChain
                 : activation == "GeluTanhChain" ? Activation::GeluTanhChain
                                                 : Activation::None;
  if (takes_constants(e.activation)) {
    // Only fuse_product_epilogues writes these: after a MatMul's bias Add, with the chain's constants.
    const std::vector<float> constants = ctx.node.attr_floats("activation_constants");
    const size_t wanted = e.activation == Activation::GeluErfChain ? 3 : 4;
    if (ctx.node.op_type != "FusedMatMul" || constants.size() != wanted)
      throw ctx.error("activation " + activation + " needs a FusedMatMul with " + std::to_string(wanted) +
                          " activation_constants",
                      ErrorCode::InvalidGraph);
    std::copy(constants.begin(), constants.end(), e.constants.c);
  }
  e.addend_first = ctx.node.attr_int("addend_first", 0) != 0;
  if (!ctx.has_input(addend_input)) {
    e.plan = plan_broadcast_shapes(ctx, {product}, out_shape);
    return e;
  }
  const Tensor& addend = ctx.input(addend_input);
  if (addend.dtype() != DType::Float)
    throw ctx.error(std::string("the fused Add's operand is ") + dtype_name(addend.dtype()) + ", the product float",
                    ErrorCode::InvalidGraph);
  e.plan = plan_broadcast_shapes(ctx, {product, addend.shape()}, out_shape);
  e.addend = addend.data<float>();
  return e;
}

namespace {
const OpEntry kFusedRows[] = {
    {"FusedConv", 1, kNewestOpset, &cpu::fused_conv, LOCKSTEP_CUDA_KERNEL(fused_conv)},
    {"FusedMatMul", 1, kNewestOpset, &cpu::fused_matmul, LOCKSTEP_CUDA_KERNEL(fused_matmul)},
};
}  // namespace

std::span<const OpEntry> fused_product_ops() { return kFusedRows; }

}  // namespace lockstep
