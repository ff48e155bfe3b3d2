// The epilogue a fused Conv or MatMul applies to each product output (src/ops/fused.h makes the fused nodes and
// plans their epilogues): the absorbed nodes' operations, and the form in which a product kernel applies them as it
// stores. Nothing here needs more than arith, so that the ISA files (src/cpu/*/..._avx2.cpp, ..._avx512.cpp) run the
// operations on their registers' lanes.
// Contract: docs/arithmetic.md#graph-rewrites.
#pragma once

#include <cstdint>
#include <type_traits>

#include "arith/elementwise.h"

namespace lockstep {

/// The activation a fused node ends with (its `activation` attribute), at most one.
enum class Activation : uint8_t { None, Relu, HardSwish };

/// The absorbed nodes' operations on product value t: the Add with addend value a (when there is one), in the
/// node's operand order, then the activation. V is a float or the float lanes of a register (cpu/lanes_avx2.h,
/// lanes_avx512.h), each lane running the float sequence.
template <class V>
LOCKSTEP_LANE V absorbed_ops_f32(V t, bool has_addend, V a, bool addend_first, Activation activation) {
  if (has_addend) t = addend_first ? arith::AddOp{}(a, t) : arith::AddOp{}(t, a);
  if (activation == Activation::Relu) return arith::ReluOp{}(t);
  return activation == Activation::HardSwish ? arith::HardSwishOp{}(t) : t;
}

/// f(std::integral_constant<Activation, activation>{}): a kernel's loop with the activation fixed at compile time,
/// one copy per activation, so that no element tests it. Inlined, so that the loop keeps its registers.
template <class F>
LOCKSTEP_LANE decltype(auto) with_activation(Activation activation, F&& f) {
  switch (activation) {
    case Activation::Relu: return f(std::integral_constant<Activation, Activation::Relu>{});
    case Activation::HardSwish: return f(std::integral_constant<Activation, Activation::HardSwish>{});
    default: return f(std::integral_constant<Activation, Activation::None>{});
  }
}

/// The epilogue as a product kernel applies it while it stores output (m, n), element i of the output: the
/// addend read at i (it has the output's shape) or at n (one value per column, a MatMul's bias row). Small, and
/// with no index arithmetic, so that it costs the GEMM's inner loop nothing. apply(t, i, n) equals
/// ProductEpilogue::apply(t, i) (src/ops/fused.h) of the epilogue it was made from.
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

}  // namespace lockstep
