// The lane primitives of src/arith/lanes.h on AVX-512 registers (V = f32x16, 16 floats), so that the shared math
// templates run 16 elements per instruction with the bits of the scalar path. Include only from *_avx512.cpp files,
// and before arith/math.h: the math templates find these overloads by ordinary lookup at their definition (a GCC
// vector type has no namespace for argument-dependent lookup to search).
//
// f32x16 is a GCC vector type: + - * / and comparisons are per lane IEEE operations (a comparison yields the
// all-ones/all-zeros int vector i32x16), `m ? a : b` is a per-lane blend, and a scalar operand is broadcast. The
// primitives without an operator map to one instruction each.
#pragma once

#include <immintrin.h>

#include <cstdint>

#include "arith/lanes.h"

namespace lockstep::arith {

/// The lane type: a 16-float GCC vector (__m512 without its may_alias attribute, which a template argument drops).
using f32x16 = float __attribute__((vector_size(64)));
using i32x16 = int32_t __attribute__((vector_size(64)));
using u32x16 = uint32_t __attribute__((vector_size(64)));

template <>
struct LaneInt<f32x16> {
  using type = i32x16;
};

LOCKSTEP_LANE i32x16 as_int(f32x16 x) { return reinterpret_cast<i32x16>(x); }
LOCKSTEP_LANE f32x16 as_float(i32x16 i) { return reinterpret_cast<f32x16>(i); }
LOCKSTEP_LANE i32x16 wrapping_add(i32x16 a, int32_t c) {
  return reinterpret_cast<i32x16>(reinterpret_cast<u32x16>(a) + static_cast<uint32_t>(c));
}
LOCKSTEP_LANE f32x16 mul_add(f32x16 a, f32x16 b, f32x16 c) { return _mm512_fmadd_ps(a, b, c); }
/// IEEE square root per lane (the zero-masking form: see lookup4).
LOCKSTEP_LANE f32x16 sqrt_lanes(f32x16 x) { return _mm512_maskz_sqrt_ps(0xffff, x); }
LOCKSTEP_LANE f32x16 select(i32x16 m, f32x16 a, f32x16 b) { return m ? a : b; }
LOCKSTEP_LANE i32x16 select(i32x16 m, i32x16 a, i32x16 b) { return m ? a : b; }
LOCKSTEP_LANE bool any_lane(i32x16 m) {
  const __m512i v = reinterpret_cast<__m512i>(m);
  return _mm512_test_epi32_mask(v, v) != 0;
}
/// t[i] per lane (0 <= i <= 3): the table in lanes 0-3 of a register, permuted by i. (The zero-masking forms of
/// the intrinsics avoid GCC 12's false "may be used uninitialized" on the plain ones' undefined inputs.)
LOCKSTEP_LANE f32x16 lookup4(const float* t, i32x16 i) {
  return _mm512_maskz_permutexvar_ps(0xffff, reinterpret_cast<__m512i>(i), _mm512_maskz_loadu_ps(0xf, t));
}
/// lane_helpers.h's min_keep_nan / max_keep_nan in one instruction: min_ps(c, x) is c < x ? c : x and max_ps(c, x)
/// is c > x ? c : x, lane by lane, which return x when x is NaN, as the selects do. (Zero-masking forms: see
/// lookup4.)
LOCKSTEP_LANE f32x16 min_keep_nan(f32x16 x, f32x16 c) { return _mm512_maskz_min_ps(0xffff, c, x); }
LOCKSTEP_LANE f32x16 max_keep_nan(f32x16 x, f32x16 c) { return _mm512_maskz_max_ps(0xffff, c, x); }
LOCKSTEP_LANE float get_lane(f32x16 v, int i) { return v[i]; }
LOCKSTEP_LANE void set_lane(f32x16& v, int i, float x) { v[i] = x; }
LOCKSTEP_LANE int32_t get_lane(i32x16 v, int i) { return v[i]; }
LOCKSTEP_LANE void set_lane(i32x16& v, int i, int32_t x) { v[i] = x; }

}  // namespace lockstep::arith
