// The epilogue a fused Conv or MatMul applies to each product output (src/ops/fused.h makes the fused nodes).
// Contract: docs/arithmetic.md#graph-rewrites.
#pragma once

#include "arith/elementwise.h"
#include "ops/elementwise.h"

namespace lockstep {

/// What a fused node does to product value t at output element i. POD: CUDA kernels take it by value.
struct ProductEpilogue {
  const float* addend = nullptr;  // the absorbed Add's other operand (device memory), or null
  BroadcastPlan plan;             // over the output: operand 0 the product, operand 1 the addend
  bool addend_first = false;      // the Add was Add(addend, product)
  bool relu = false;

  LOCKSTEP_HD bool active() const { return addend != nullptr || relu; }
  LOCKSTEP_HD float apply(float t, int64_t i) const {
    if (addend) {
      const float a = addend[plan.offset(1, i)];
      t = addend_first ? arith::AddOp{}(a, t) : arith::AddOp{}(t, a);
    }
    return relu ? arith::ReluOp{}(t) : t;
  }
};

}  // namespace lockstep
