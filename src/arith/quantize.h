// Per-element formulas of the quantize family (QuantizeLinear, DequantizeLinear), shared literally by both devices
// (docs/arithmetic.md#quantize).
#pragma once

#include <cstdint>
#include <type_traits>

#include "arith/elementwise.h"
#include "arith/hd.h"

namespace lockstep::arith {

/// Which scale (and zero point) element e of x uses. x is viewed as (outer, axis_dim, inner); the scale index is
/// o*outer_stride + (a / block)*axis_stride + i*inner_stride (per tensor: all strides 0; per axis: axis_stride 1).
struct ScaleIndex {
  int64_t inner = 1, axis_dim = 1, block = 1;
  int64_t outer_stride = 0, axis_stride = 0, inner_stride = 0;
  LOCKSTEP_HD int64_t of(int64_t e) const {
    int64_t i = e % inner, rest = e / inner;
    int64_t a = rest % axis_dim, o = rest / axis_dim;
    return o * outer_stride + (a / block) * axis_stride + i * inner_stride;
  }
};

/// q rounded half to even (Round's rule), NaN taken as 0, clamped to +-2^31, plus the zero point, in int64.
LOCKSTEP_HD int64_t round_offset(float q, int64_t zero_point) {
  float r = rint_f32(q);
  if (r != r) r = 0.0f;
  const float kLimit = 2147483648.0f;  // 2^31: beyond every quantized type's range, and exact as float and int64
  r = r < -kLimit ? -kLimit : r;
  r = kLimit < r ? kLimit : r;
  return static_cast<int64_t>(r) + zero_point;
}

/// r = round_offset(q, zero point) saturated to Q.
template <class Q>
LOCKSTEP_HD Q round_saturate(float q, Q zero_point) {
  const int64_t v = round_offset(q, static_cast<int64_t>(zero_point));
  constexpr int kBits = 8 * static_cast<int>(sizeof(Q));  // Q has at most 32 bits
  constexpr int64_t lo = std::is_signed_v<Q> ? -(int64_t{1} << (kBits - 1)) : 0;
  constexpr int64_t hi = std::is_signed_v<Q> ? (int64_t{1} << (kBits - 1)) - 1 : (int64_t{1} << kBits) - 1;
  return static_cast<Q>(v < lo ? lo : hi < v ? hi : v);
}

/// QuantizeLinear to a low-precision type, q = x / scale: int4/uint4/int2/uint2 as round_saturate (to their
/// range); float4e2m1: q + zero point, then Cast's rounding; float8: Cast's rounding of q with `saturate` (the
/// zero point is taken as 0, as in onnx's reference, so that -0 stays -0). A NaN q skips the float4 sum: x86 passes
/// q's NaN through it and a GPU would return its positive default NaN, and the NaN's sign picks float4's zero.
template <class Q>
LOCKSTEP_HD Q quantize_low(float q, Q zero_point, bool saturate) {
  if constexpr (!Q::kFloat) {
    const int64_t v = round_offset(q, static_cast<int64_t>(low_to_f32(zero_point)));
    return Q{static_cast<uint8_t>(small_int_saturate(v, Q::kIntBits, Q::kSigned))};
  } else {
    const float r = Q::kType == LowType::E2M1 && q == q ? q + low_to_f32(zero_point) : q;
    return Q{static_cast<uint8_t>(f64_to_minifloat(mini_float(Q::kType), static_cast<double>(r), saturate))};
  }
}

/// x / scale (IEEE division), except that a NaN quotient is fixed by the operands: x's NaN when x is one, else
/// scale's, else (0/0, inf/inf) the negative default NaN. That is what x86 returns (and so numpy, the reference);
/// a GPU returns its one positive NaN instead. The NaN's sign survives into float8 (S.1111.111) and into float4,
/// which has no NaN and writes a zero of the opposite sign, so it must not depend on the device.
LOCKSTEP_HD float quotient_keeping_nan(float x, float scale) {
  if (x != x) return x;
  if (scale != scale) return scale;
  const float q = x / scale;
  return q == q ? q : float_of(0xffc00000u);
}

/// QuantizeLinear: round_saturate(quotient_keeping_nan(x, scale)); quantize_low for the low-precision types.
template <class Q>
LOCKSTEP_HD Q quantize_element(float x, float scale, Q zero_point, bool saturate) {
  if constexpr (IsLow<Q>::value) return quantize_low<Q>(quotient_keeping_nan(x, scale), zero_point, saturate);
  else return round_saturate<Q>(quotient_keeping_nan(x, scale), zero_point);
}

/// y = float(x - zero_point) * scale: the difference exact in int64, one rounding to float, one product. A
/// low-precision x: float(x) - float(zero_point) (exact but for float8 values far apart), one product.
template <class Q>
LOCKSTEP_HD float dequantize_element(Q x, Q zero_point, float scale) {
  if constexpr (IsLow<Q>::value) return (low_to_f32(x) - low_to_f32(zero_point)) * scale;
  else return static_cast<float>(static_cast<int64_t>(x) - static_cast<int64_t>(zero_point)) * scale;
}

/// DynamicQuantizeLinear's uint8 parameters from the input's range [lo, hi] (lo = min(0, MIN x), hi = max(0, MAX x)):
/// scale = (hi - lo) / 255; zero point = round_saturate(0 - lo / scale).
struct DynamicRange {
  float scale;
  uint8_t zero_point;
};
LOCKSTEP_HD DynamicRange dynamic_range(float lo, float hi) {
  float scale = (hi - lo) / 255.0f;
  float shifted = 0.0f - lo / scale;
  return {scale, round_saturate<uint8_t>(shifted, uint8_t(0))};
}

/// The two ops as functors of (x, scale, zero point), so that each device has one loop for both.
/// `saturate` is QuantizeLinear's attribute (float8 only). The scale S of DequantizeLinear (float, Half or BHalf) is
/// also its output type: the product is rounded to float, then to S (as onnx's reference does).
template <class Q>
struct QuantizeOp {
  bool saturate = true;
  LOCKSTEP_HD Q operator()(float x, float scale, Q zero_point) const {
    return quantize_element<Q>(x, scale, zero_point, saturate);
  }
};
template <class Q, class S = float>
struct DequantizeOp {
  LOCKSTEP_HD S operator()(Q x, S scale, Q zero_point) const {
    return cast_element<S>(dequantize_element<Q>(x, zero_point, cast_element<float>(scale)));
  }
};

/// QLinearMatMul, one output: the exact integer dot product of (a - a_zp) and (b - b_zp) over k (int64, so the
/// order does not matter), one rounding to float, times the multiplier (a_scale*b_scale)/y_scale, then
/// round_saturate with y's zero point. a(k) and b(k) return the integer operands.
template <class Q, class A, class B>
LOCKSTEP_HD Q qlinear_dot(int64_t K, A a, int32_t a_zp, B b, int32_t b_zp, float multiplier, Q y_zp) {
  int64_t acc = 0;
  for (int64_t k = 0; k < K; ++k) acc += static_cast<int64_t>(a(k) - a_zp) * static_cast<int64_t>(b(k) - b_zp);
  return round_saturate<Q>(static_cast<float>(acc) * multiplier, y_zp);
}

/// MatMulInteger and ConvInteger, one output: the sum over k of a(k) * b(k), a and b the operands less their zero
/// points (each product exact in int32), accumulated in int32 wrapping modulo 2^32, so that every order of the
/// additions gives the same result.
template <class A, class B>
LOCKSTEP_HD int32_t integer_dot_i32(int64_t K, A a, B b) {
  uint32_t acc = 0;
  for (int64_t k = 0; k < K; ++k) acc += static_cast<uint32_t>(a(k) * b(k));
  return static_cast<int32_t>(acc);
}

}  // namespace lockstep::arith
