// Lane helpers derived from the primitives of lanes.h (and of the SIMD lane headers, which a SIMD kernel file
// includes before this one): the same operations per lane on every lane type.
#pragma once

#include <cstdint>

#include "lanes.h"

namespace lockstep::arith {

/// min/max with the NaN of the first argument kept: min_keep_nan(x, c) is x when x is NaN.
template <class V>
LOCKSTEP_LANE V min_keep_nan(V x, V c) {
  return select(c < x, c, x);
}
template <class V>
LOCKSTEP_LANE V max_keep_nan(V x, V c) {
  return select(x < c, c, x);
}

/// |x| (clears the sign bit), and x with the sign bit of s.
template <class V>
LOCKSTEP_LANE V abs_lanes(V x) {
  return as_float(as_int(x) & 0x7fffffff);
}
template <class V>
LOCKSTEP_LANE V copysign_lanes(V magnitude, V s) {
  return as_float((as_int(magnitude) & 0x7fffffff) | (as_int(s) & static_cast<int32_t>(0x80000000u)));
}

/// A NaN with its quiet bit set (the payload kept), as every math function returns for a NaN input.
template <class V>
LOCKSTEP_LANE V quiet_nan_lanes(V x) {
  return as_float(as_int(x) | 0x00400000);
}

constexpr float kRoundMagic = 0x1.8p23f;  // (v + magic) - magic rounds v to an integer under RNE, |v| < 2^22

/// The integer n (|n| < 2^22) as a float, exactly, through the bits of n + magic.
template <class V>
LOCKSTEP_LANE V float_of_small_int(lane_int_t<V> n) {
  return as_float(n + as_int(kRoundMagic)) - kRoundMagic;
}

/// 2^n as a float for -126 <= n <= 127, exactly.
template <class V>
LOCKSTEP_LANE V pow2_lanes(lane_int_t<V> n) {
  return as_float((n + 127) << 23);
}

/// c[0] + c[1] u + ... + c[N-1] u^(N-1) by Horner's rule with one fma per step.
template <class V, int N>
LOCKSTEP_LANE V horner(const float (&c)[N], V u) {
  V acc = splat<V>(c[N - 1]);
  for (int i = N - 2; i >= 0; --i) acc = mul_add(acc, u, splat<V>(c[i]));
  return acc;
}

}  // namespace lockstep::arith
