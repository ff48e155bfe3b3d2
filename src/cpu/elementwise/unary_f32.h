// SIMD kernels of the float unary ops whose functors are lane templates (src/arith/elementwise.h): each runs the
// functor on AVX2 or AVX-512 registers, so every element gets the operation sequence of the scalar path.
#pragma once

#include <cstdint>

#include "arith/elementwise.h"
#include "cpu/isa.h"

namespace lockstep::cpu {

// The functors with a SIMD kernel; each *_avx2.cpp / *_avx512.cpp instantiates the kernels for this list.
#define LOCKSTEP_LANE_UNARY_FUNCTORS(X)                                                        \
  X(arith::SigmoidOp) X(arith::TanhOp) X(arith::ErfOp) X(arith::ExpOp) X(arith::LogOp)         \
  X(arith::SoftplusOp) X(arith::EluOp) X(arith::SeluOp) X(arith::GeluOp) X(arith::LeakyReluOp) \
  X(arith::HardSigmoidOp) X(arith::HardSwishOp) X(arith::ExpOfDifferenceOp)                    \
  X(arith::QuotientOp) X(arith::TwoDifferencesOp) X(arith::SiluOp) X(arith::GeluErfChainOp)    \
  X(arith::GeluTanhChainOp)                                                                    \
  X(arith::SinhOp) X(arith::CoshOp) X(arith::AsinhOp) X(arith::AcoshOp) X(arith::AtanhOp)      \
  X(arith::AsinOp) X(arith::AcosOp) X(arith::AtanOp)

template <class F>
inline constexpr bool kHasLaneKernel = false;
#define LOCKSTEP_DECLARE_LANE(F) \
  template <>                    \
  inline constexpr bool kHasLaneKernel<F> = true;
LOCKSTEP_LANE_UNARY_FUNCTORS(LOCKSTEP_DECLARE_LANE)
#undef LOCKSTEP_DECLARE_LANE

/// y[i] = f(x[i]) for i < n, 8 (AVX2) or 16 (AVX-512) elements per step, the tail through masked loads/stores.
/// x and y may be the same array.
template <class F>
void unary_f32_avx2(const F& f, const float* x, float* y, int64_t n);
template <class F>
void unary_f32_avx512(const F& f, const float* x, float* y, int64_t n);

/// The SIMD kernels' loop over whole registers of Lanes (an ISA file's kWidth, load and store): four registers a
/// step, since each function is a long dependency chain and four independent ones side by side keep the FP pipes
/// busy (with the pre-RA scheduler, CMakeLists.txt), then one at a time. Returns where the tail starts. Every lane
/// runs the scalar sequence.
template <class Lanes, class F>
inline int64_t unary_f32_whole_registers(const F& f, const float* x, float* y, int64_t n) {
  constexpr int64_t W = Lanes::kWidth;
  int64_t i = 0;
  for (; i + 4 * W <= n; i += 4 * W) {
    const auto v0 = f(Lanes::load(x + i)), v1 = f(Lanes::load(x + i + W));
    const auto v2 = f(Lanes::load(x + i + 2 * W)), v3 = f(Lanes::load(x + i + 3 * W));
    Lanes::store(y + i, v0);
    Lanes::store(y + i + W, v1);
    Lanes::store(y + i + 2 * W, v2);
    Lanes::store(y + i + 3 * W, v3);
  }
  for (; i + W <= n; i += W) Lanes::store(y + i, f(Lanes::load(x + i)));
  return i;
}

template <class F>
using UnaryF32Kernel = void (*)(const F& f, const float* x, float* y, int64_t n);

/// F's SIMD kernel for cpu_isa(), or nullptr when the scalar path runs (no SIMD, or not an x86 build).
template <class F>
UnaryF32Kernel<F> unary_f32_kernel() {
#if defined(__x86_64__) || defined(__i386__)
  if constexpr (kHasLaneKernel<F>) {
    const CpuIsa isa = cpu_isa();
    if (isa == CpuIsa::Avx512) return unary_f32_avx512<F>;
    if (isa == CpuIsa::Avx2) return unary_f32_avx2<F>;
  }
#endif
  return nullptr;
}

}  // namespace lockstep::cpu
