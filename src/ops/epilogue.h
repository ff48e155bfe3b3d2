// The epilogue a fused Conv or MatMul applies to each product output (src/ops/fused.h makes the fused nodes).
// Contract: docs/arithmetic.md#graph-rewrites.
#pragma once

#include <cstdint>

#include "arith/elementwise.h"
#include "ops/elementwise.h"

namespace lockstep {

/// The activation a fused node ends with (its `activation` attribute), at most one.
enum class Activation : uint8_t { None, Relu, HardSwish };

/// The absorbed nodes' operations on product value t: the Add with addend value a (when there is one), in the
/// node's operand order, then the activation (the rewrite absorbs a HardSwish only where there is no Add).
LOCKSTEP_HD float absorbed_ops_f32(float t, bool has_addend, float a, bool addend_first, Activation activation) {
  if (has_addend) t = addend_first ? arith::AddOp{}(a, t) : arith::AddOp{}(t, a);
  if (activation == Activation::Relu) return arith::ReluOp{}(t);
  return activation == Activation::HardSwish ? arith::HardSwishOp{}(t) : t;
}

/// What a fused node does to product value t at output element i. POD: CUDA kernels take it by value.
struct ProductEpilogue {
  const float* addend = nullptr;  // the absorbed Add's other operand (device memory), or null
  BroadcastPlan plan;             // over the output: operand 0 the product, operand 1 the addend
  bool addend_first = false;      // the Add was Add(addend, product)
  Activation activation = Activation::None;

  LOCKSTEP_HD bool active() const { return addend != nullptr || activation != Activation::None; }
  LOCKSTEP_HD float apply(float t, int64_t i) const {
    return absorbed_ops_f32(t, addend != nullptr, addend ? addend[plan.offset(1, i)] : 0.0f, addend_first,
                            activation);
  }
};

/// The epilogue as a product kernel applies it while it stores output (m, n), element i of the output: the
/// addend read at i (it has the output's shape) or at n (one value per column, a MatMul's bias row). Small, and
/// with no index arithmetic, so that it costs the GEMM's inner loop nothing. apply(t, i, n) equals
/// ProductEpilogue::apply(t, i) of the epilogue it was made from.
struct StoreEpilogue {
  const float* addend = nullptr;
  bool per_column = false, addend_first = false;
  Activation activation = Activation::None;

  LOCKSTEP_HD bool active() const { return addend != nullptr || activation != Activation::None; }
  LOCKSTEP_HD float apply(float t, int64_t i, int64_t n) const {
    return absorbed_ops_f32(t, addend != nullptr, addend ? addend[per_column ? n : i] : 0.0f, addend_first,
                            activation);
  }
};

/// e as a StoreEpilogue for an output whose last dim is `columns` (per_column allowed only when `by_column`), or
/// false when its addend broadcasts in another way.
inline bool as_store_epilogue(const ProductEpilogue& e, int64_t columns, bool by_column, StoreEpilogue* out) {
  *out = {e.addend, false, e.addend_first, e.activation};
  if (!e.addend || e.plan.kind[1] == BroadcastPlan::Linear) return true;
  // One merged dim pair (rows, columns) with the addend's strides (0, 1): a row repeated down the output.
  out->per_column = by_column && e.plan.rank == 2 && e.plan.dims[1] == columns && e.plan.strides[1][0] == 0 &&
                    e.plan.strides[1][1] == 1;
  return out->per_column;
}

}  // namespace lockstep
