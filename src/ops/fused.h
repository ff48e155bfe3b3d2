// The product epilogues of the graph rewrites (src/graph/fuse.cpp): a Conv or MatMul whose output was read only by
// an Add (and the Add's only by a Relu, or a MatMul's Add's only by a GELU chain), or only by a Relu, or a Conv's
// only by a HardSwish, becomes one lockstep.FusedConv / lockstep.FusedMatMul. Each output applies, to the product's
// rounded value, exactly the absorbed nodes' operations in their order (the Add with its operands in the node's
// order, then the activation), so the fused node returns the unfused graph's bits.
// Contract: docs/arithmetic.md#graph-rewrites.
#pragma once

#include "ops/conv.h"
#include "ops/elementwise.h"
#include "ops/epilogue.h"
#include "ops/gemm.h"
#include "runtime/kernel.h"

namespace lockstep {

/// What a fused node does to product value t at output element i. POD: CUDA kernels take it by value.
struct ProductEpilogue {
  const float* addend = nullptr;  // the absorbed Add's other operand (device memory), or null
  BroadcastPlan plan;             // over the output: operand 0 the product, operand 1 the addend
  bool addend_first = false;      // the Add was Add(addend, product)
  Activation activation = Activation::None;
  ActivationConstants constants;

  LOCKSTEP_HD bool active() const { return addend != nullptr || activation != Activation::None; }
  LOCKSTEP_HD float apply(float t, int64_t i) const {
    return absorbed_ops_f32(t, addend != nullptr, addend ? addend[plan.offset(1, i)] : 0.0f, addend_first,
                            activation, constants);
  }
};

/// e as a StoreEpilogue for an output whose last dim is `columns` (per_column allowed only when `by_column`), or
/// false when its addend broadcasts in another way.
inline bool as_store_epilogue(const ProductEpilogue& e, int64_t columns, bool by_column, StoreEpilogue* out) {
  *out = {e.addend, false, e.addend_first, e.activation, e.constants};
  if (!e.addend || e.plan.kind[1] == BroadcastPlan::Linear) return true;
  // One merged dim pair (rows, columns) with the addend's strides (0, 1): a row repeated down the output.
  out->per_column = by_column && e.plan.rank == 2 && e.plan.dims[1] == columns && e.plan.strides[1][0] == 0 &&
                    e.plan.strides[1][1] == 1;
  return out->per_column;
}

/// The epilogue of a fused node whose addend (if any) is input `addend_input` and whose product has shape
/// `product`; `out_shape` receives the output's shape: the product's, or larger where the addend broadcasts it.
ProductEpilogue plan_epilogue(const KernelContext& ctx, int addend_input, const Shape& product, Shape& out_shape);

/// FusedConv (inputs X, W, optional B, optional addend; Conv's attributes): `Dev::conv_into(ctx, g, y, e)` writes
/// the conv through epilogue e, `Dev::apply_epilogue(ctx, e, product, y, n)` writes
/// `y[i] = e.apply(product[e.plan.offset(0, i)], i)` for i < n (used only where the addend broadcasts the output up).
template <class Dev>
void run_fused_conv(KernelContext& ctx) {
  const ConvGeom g = conv_geometry(ctx);
  Shape out_shape;
  const ProductEpilogue e = plan_epilogue(ctx, 3, g.out_shape, out_shape);
  Tensor& y = ctx.output(0, DType::Float, out_shape);
  if (y.numel() == 0) return;
  if (out_shape == g.out_shape) return Dev::conv_into(ctx, g, y.data<float>(), e);
  Tensor product = new_tensor(ctx, DType::Float, g.out_shape);
  Dev::conv_into(ctx, g, product.data<float>(), ProductEpilogue{});
  Dev::apply_epilogue(ctx, e, product.data<float>(), y.data<float>(), y.numel());
}

/// FusedMatMul (inputs A, B, addend): the rewrite fuses only a float [N] addend with a constant [K, N] B, so the
/// output has the product's shape. `Dev::matmul_with_epilogue(ctx, p, e)` writes the product through e.
template <class Dev>
void run_fused_matmul(KernelContext& ctx) {
  const MatMulParams p = matmul_params(ctx);
  Shape out_shape;
  const ProductEpilogue e = plan_epilogue(ctx, 2, p.out_shape, out_shape);
  if (out_shape != p.out_shape || ctx.input(0).dtype() != DType::Float)
    throw ctx.error("FusedMatMul needs a float product whose shape the addend keeps", ErrorCode::InvalidGraph);
  Dev::matmul_with_epilogue(ctx, p, e);
}

namespace cpu {
void fused_conv(KernelContext& ctx);
void fused_matmul(KernelContext& ctx);
}  // namespace cpu
namespace cuda {
void fused_conv(KernelContext& ctx);
void fused_matmul(KernelContext& ctx);
}  // namespace cuda

}  // namespace lockstep
