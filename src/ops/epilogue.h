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

/// The activation a fused node ends with (its `activation` attribute), at most one. The GELU chains (the fused
/// nodes of src/graph/fuse.cpp) are absorbed only after a MatMul's bias Add, never into a Conv.
enum class Activation : uint8_t { None, Relu, HardSwish, GeluErfChain, GeluTanhChain };

/// The constants of the GELU chains, in their attributes' order (the `activation_constants` attribute):
/// GeluErfChain's divisor, addend, factor; GeluTanhChain's half, cube_factor, scale, one.
struct ActivationConstants {
  float c[4] = {};
};

/// Whether the activation reads ActivationConstants (the GELU chains). Only MatMul's epilogues take those: the
/// Conv-only paths (the depthwise kernels, the transposed tile store) run the others through with_activation, and
/// the CUDA GEMM's store runs only the others (absorbed_ops_without_chains_f32).
LOCKSTEP_HD constexpr bool takes_constants(Activation a) {
  return a == Activation::GeluErfChain || a == Activation::GeluTanhChain;
}

/// absorbed_ops_f32 for an activation that takes no constants: the Add with addend value a (when there is one), in
/// the node's operand order, then Relu or HardSwish. For kernels that must not hold the GELU chains' code: in the
/// CUDA GEMM's store their registers spill the tile's (ptxas, sm_90: 64x128 with totals in shared 167 registers and
/// none spilled -> 168 and 24 bytes).
template <class V>
LOCKSTEP_LANE V absorbed_ops_without_chains_f32(V t, bool has_addend, V a, bool addend_first, Activation activation) {
  if (has_addend) t = addend_first ? arith::AddOp{}(a, t) : arith::AddOp{}(t, a);
  if (activation == Activation::Relu) return arith::ReluOp{}(t);
  return activation == Activation::HardSwish ? arith::HardSwishOp{}(t) : t;
}

/// The absorbed nodes' operations on product value t: the Add with addend value a (when there is one), in the
/// node's operand order, then the activation (with its constants k). V is a float or the float lanes of a register
/// (cpu/lanes_avx2.h, lanes_avx512.h), each lane running the float sequence.
template <class V>
LOCKSTEP_LANE V absorbed_ops_f32(V t, bool has_addend, V a, bool addend_first, Activation activation,
                                 const ActivationConstants& k) {
  if (!takes_constants(activation)) return absorbed_ops_without_chains_f32(t, has_addend, a, addend_first, activation);
  if (has_addend) t = addend_first ? arith::AddOp{}(a, t) : arith::AddOp{}(t, a);
  return activation == Activation::GeluErfChain ? arith::GeluErfChainOp{k.c[0], k.c[1], k.c[2]}(t)
                                                : arith::GeluTanhChainOp{k.c[0], k.c[1], k.c[2], k.c[3]}(t);
}

/// f(std::integral_constant<Activation, activation>{}): a kernel's loop with the activation fixed at compile time,
/// one copy per activation, so that no element tests it. Inlined, so that the loop keeps its registers. Only the
/// activations without constants (!takes_constants): Conv's.
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
  ActivationConstants constants;

  LOCKSTEP_HD bool active() const { return addend != nullptr || activation != Activation::None; }
  LOCKSTEP_HD float apply(float t, int64_t i, int64_t n) const {
    return absorbed_ops_f32(t, addend != nullptr, addend ? addend[per_column ? n : i] : 0.0f, addend_first,
                            activation, constants);
  }
  /// apply() where the activation takes no constants (!takes_constants(activation)): the CUDA GEMM's store.
  LOCKSTEP_HD float apply_without_chains(float t, int64_t i, int64_t n) const {
    return absorbed_ops_without_chains_f32(t, addend != nullptr, addend ? addend[per_column ? n : i] : 0.0f,
                                           addend_first, activation);
  }
};

}  // namespace lockstep
