// Lane primitives: the vocabulary the shared math functions (math.h) are written in.
//
// A math function is written once as a template over a lane type V and runs unchanged on
//   - V = float: the host's scalar path and one CUDA thread (these overloads, host and device);
//   - V = f32x8 / f32x16: AVX2 and AVX-512 registers (src/cpu/lanes_avx2.h, lanes_avx512.h).
// Every primitive is one IEEE-754 operation per lane (+ - * / fma, compare, select, bit reinterpretation and
// 32-bit integer arithmetic on the bits), so each lane of a register performs exactly the operation sequence of
// the scalar instantiation and returns the same bits. Nothing here rounds differently per ISA: conversions
// between float and integer are avoided altogether (integers are moved through the bits, see float_of_small_int).
//
// Templates built on these primitives (lane_helpers.h, math.h) must come after every overload set, scalar and
// SIMD, because a GCC vector type has no namespace for argument-dependent lookup: the SIMD headers are included
// first, then math.h.
//
// Masks are whatever a comparison yields: bool for float, an all-ones/all-zeros integer vector for registers.
// Masks combine with | and &; never negate one with ! or ~ (bool and vector masks disagree): compare the other way.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#include "hd.h"

// Lane functions are always inlined on the host: the SIMD kernel files are compiled with -mavx2/-mavx512f, and an
// out-of-line copy of a scalar helper emitted there could be picked by the linker for the whole program (ODR
// merging), which would then fault on a CPU without that ISA.
#if defined(__CUDACC__)
#define LOCKSTEP_LANE __host__ __device__ __forceinline__
#else
#define LOCKSTEP_LANE inline __attribute__((always_inline))
#endif

namespace lockstep::arith {

/// The 32-bit integer lane type that matches V (int32_t for float; the matching integer vector for registers).
template <class V>
struct LaneInt;
template <>
struct LaneInt<float> {
  using type = int32_t;
};
template <class V>
using lane_int_t = typename LaneInt<V>::type;

/// Bits of a float lane as a signed 32-bit integer.
LOCKSTEP_LANE int32_t as_int(float x) {
#if defined(__CUDA_ARCH__)
  return __float_as_int(x);
#else
  int32_t i;
  std::memcpy(&i, &x, sizeof i);
  return i;
#endif
}

/// Float lane with the given bits.
LOCKSTEP_LANE float as_float(int32_t i) {
#if defined(__CUDA_ARCH__)
  return __int_as_float(i);
#else
  float x;
  std::memcpy(&x, &i, sizeof x);
  return x;
#endif
}

/// a*b + c with one rounding (IEEE fusedMultiplyAdd).
LOCKSTEP_LANE float mul_add(float a, float b, float c) {
#if defined(__CUDA_ARCH__)
  return __fmaf_rn(a, b, c);
#else
  return std::fma(a, b, c);
#endif
}

/// IEEE square root, correctly rounded on every device (sqrtss/vsqrtps on the host, __fsqrt_rn on the GPU).
LOCKSTEP_LANE float sqrt_lanes(float x) {
#if defined(__CUDA_ARCH__)
  return __fsqrt_rn(x);
#else
  return std::sqrt(x);
#endif
}

/// a + c modulo 2^32: bit arithmetic that may pass INT32_MAX (a NaN's bits plus an offset) without the signed
/// overflow that is undefined behaviour in C++; the SIMD overloads are the same single integer add.
LOCKSTEP_LANE int32_t wrapping_add(int32_t a, int32_t c) {
  return static_cast<int32_t>(static_cast<uint32_t>(a) + static_cast<uint32_t>(c));
}

/// Per lane: m ? a : b.
LOCKSTEP_LANE float select(bool m, float a, float b) { return m ? a : b; }
LOCKSTEP_LANE int32_t select(bool m, int32_t a, int32_t b) { return m ? a : b; }

/// True when the mask is set in any lane.
LOCKSTEP_LANE bool any_lane(bool m) { return m; }

/// t[i] for a 4-entry table, 0 <= i <= 3 (a register permute on the SIMD paths).
LOCKSTEP_LANE float lookup4(const float* t, int32_t i) { return t[i]; }

/// A float lane of value c in every lane.
template <class V>
LOCKSTEP_LANE V splat(float c) {
  return V{} + c;
}

/// Number of lanes of V, and lane access, for the rare per-lane scalar step (sin/cos of huge arguments).
template <class V>
constexpr int kLaneCount = static_cast<int>(sizeof(V) / sizeof(float));
LOCKSTEP_LANE float get_lane(float v, int) { return v; }
LOCKSTEP_LANE void set_lane(float& v, int, float x) { v = x; }
LOCKSTEP_LANE int32_t get_lane(int32_t v, int) { return v; }
LOCKSTEP_LANE void set_lane(int32_t& v, int, int32_t x) { v = x; }
LOCKSTEP_LANE bool get_lane(bool v, int) { return v; }

}  // namespace lockstep::arith
