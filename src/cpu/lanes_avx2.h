// The lane primitives of src/arith/lanes.h on AVX2 registers (V = f32x8, 8 floats), so that the shared math
// templates run 8 elements per instruction with the bits of the scalar path. Include only from *_avx2.cpp files,
// and before arith/math.h: the math templates find these overloads by ordinary lookup at their definition (a GCC
// vector type has no namespace for argument-dependent lookup to search).
//
// f32x8 is a GCC vector type: + - * / and comparisons are per lane IEEE operations (a comparison yields the
// all-ones/all-zeros int vector i32x8), `m ? a : b` is a per-lane blend, and a scalar operand is broadcast. The
// primitives without an operator map to one instruction each.
#pragma once

#include <immintrin.h>

#include <cstdint>

#include "arith/lanes.h"

namespace lockstep::arith {

/// The lane type: a 8-float GCC vector (__m256 without its may_alias attribute, which a template argument drops).
using f32x8 = float __attribute__((vector_size(32)));
using i32x8 = int32_t __attribute__((vector_size(32)));
using u32x8 = uint32_t __attribute__((vector_size(32)));

template <>
struct LaneInt<f32x8> {
  using type = i32x8;
};

LOCKSTEP_LANE i32x8 as_int(f32x8 x) { return reinterpret_cast<i32x8>(x); }
LOCKSTEP_LANE f32x8 as_float(i32x8 i) { return reinterpret_cast<f32x8>(i); }
LOCKSTEP_LANE i32x8 wrapping_add(i32x8 a, int32_t c) {
  return reinterpret_cast<i32x8>(reinterpret_cast<u32x8>(a) + static_cast<uint32_t>(c));
}
LOCKSTEP_LANE f32x8 mul_add(f32x8 a, f32x8 b, f32x8 c) { return _mm256_fmadd_ps(a, b, c); }
LOCKSTEP_LANE f32x8 sqrt_lanes(f32x8 x) { return _mm256_sqrt_ps(x); }
LOCKSTEP_LANE f32x8 select(i32x8 m, f32x8 a, f32x8 b) { return m ? a : b; }
LOCKSTEP_LANE i32x8 select(i32x8 m, i32x8 a, i32x8 b) { return m ? a : b; }
LOCKSTEP_LANE bool any_lane(i32x8 m) {
  const __m256i v = reinterpret_cast<__m256i>(m);
  return !_mm256_testz_si256(v, v);
}
/// t[i] per lane (0 <= i <= 3): the table in lanes 0-3 of a register, permuted by i.
LOCKSTEP_LANE f32x8 lookup4(const float* t, i32x8 i) {
  return _mm256_permutevar8x32_ps(_mm256_castps128_ps256(_mm_loadu_ps(t)), reinterpret_cast<__m256i>(i));
}
/// lane_helpers.h's min_keep_nan / max_keep_nan in one instruction: min_ps(c, x) is c < x ? c : x and max_ps(c, x)
/// is c > x ? c : x, lane by lane, which return x when x is NaN, as the selects do.
LOCKSTEP_LANE f32x8 min_keep_nan(f32x8 x, f32x8 c) { return _mm256_min_ps(c, x); }
LOCKSTEP_LANE f32x8 max_keep_nan(f32x8 x, f32x8 c) { return _mm256_max_ps(c, x); }
LOCKSTEP_LANE float get_lane(f32x8 v, int i) { return v[i]; }
LOCKSTEP_LANE void set_lane(f32x8& v, int i, float x) { v[i] = x; }
LOCKSTEP_LANE int32_t get_lane(i32x8 v, int i) { return v[i]; }
LOCKSTEP_LANE void set_lane(i32x8& v, int i, int32_t x) { v[i] = x; }

}  // namespace lockstep::arith
