// Per-element conversions of the low-precision element types (float8 E4M3FN/E4M3FNUZ/E5M2/E5M2FNUZ/E8M0, float4
// E2M1, int4/uint4, int2/uint2), shared literally by the CPU and CUDA kernels (docs/arithmetic.md#low-precision).
// Every value is one byte holding the type's bit pattern in its low bits (see lockstep/tensor.h).
#pragma once

#include <cstdint>

#include "arith/bits.h"
#include "arith/hd.h"

namespace lockstep::arith {

/// The low-precision types, the minifloats first; E8M0 (exponent only, no sign) is a float type of its own.
enum class LowType : int { E4M3FN, E4M3FNUZ, E5M2, E5M2FNUZ, E2M1, Int4, UInt4, Int2, UInt2, E8M0 };

/// A small float format. Codes are magnitudes (the sign bit apart); fnuz types have no -0 and one NaN, the sign
/// bit alone (0x80).
struct MiniFloat {
  int man_bits, bias, sign_shift;
  uint32_t max_code;    // the largest finite magnitude
  uint32_t inf_code;    // the infinity's magnitude, 0 where there is none
  uint32_t nan_code;    // the NaN written for a NaN input (with the input's sign unless fnuz)
  bool fnuz;
  bool nan_as_zero;     // no NaN at all (E2M1): onnx's reference (ml_dtypes) writes the opposite-signed zero
};

/// The formats, a table (a switch, not an array, so that device code reads it as constants):
/// man, bias, sign bit, max, inf, nan, fnuz, nan_as_zero.
LOCKSTEP_HD constexpr MiniFloat mini_float(LowType k) {
  switch (k) {
    case LowType::E4M3FN: return {3, 7, 7, 0x7e, 0, 0x7f, false, false};      // max 448, NaN S.1111.111, no inf
    case LowType::E4M3FNUZ: return {3, 8, 7, 0x7f, 0, 0x80, true, false};     // max 240
    case LowType::E5M2: return {2, 15, 7, 0x7b, 0x7c, 0x7e, false, false};    // IEEE-like, max 57344
    case LowType::E5M2FNUZ: return {2, 16, 7, 0x7f, 0, 0x80, true, false};    // max 57344
    default: return {1, 1, 3, 0x7, 0, 0, false, true};                        // E2M1: max 6, no inf or NaN
  }
}

/// Minifloat bits -> float (exact); NaN decodes as the quiet NaN of its sign (fnuz: negative), as ml_dtypes does.
LOCKSTEP_HD float minifloat_to_f32(const MiniFloat& f, uint32_t bits) {
  const uint32_t sign_bit = 1u << f.sign_shift, mag = bits & (sign_bit - 1u);
  const uint32_t sign = (bits & sign_bit) ? 0x80000000u : 0u;
  if (f.fnuz && bits == sign_bit) return float_of(0xffc00000u);
  if (mag > f.max_code) return float_of(sign | (mag == f.inf_code ? 0x7f800000u : 0x7fc00000u));
  const uint32_t e = mag >> f.man_bits, m = mag & ((1u << f.man_bits) - 1u);
  // value = significand * 2^(exponent - bias - man_bits), the significand an integer below 2^(man_bits+1)
  const uint32_t significand = e == 0 ? m : m | (1u << f.man_bits);
  const int exponent = (e == 0 ? 1 : static_cast<int>(e)) - f.bias - f.man_bits;
  const float scale = float_of(static_cast<uint32_t>(exponent + 127) << 23);  // 2^exponent, a normal float
  return float_of(bits_of(static_cast<float>(significand) * scale) | sign);
}

/// Rounds |x| (finite, as double bits without the sign) to a minifloat magnitude code, round to nearest even;
/// returns max_code + 1 or more where the rounded value exceeds the format's range.
LOCKSTEP_HD uint32_t minifloat_round(const MiniFloat& f, uint64_t a) {
  const int e = static_cast<int>(a >> 52) - 1023, emin = 1 - f.bias;
  if (e > 32) return f.max_code + 1u;  // beyond every format
  const uint64_t mant = (a & 0xfffffffffffffull) | (a >> 52 ? uint64_t{1} << 52 : 0);
  const int drop = 52 - f.man_bits + (e < emin ? emin - e : 0);
  if (drop > 62) return 0;  // below half the smallest subnormal
  uint64_t q = mant >> drop;
  const uint64_t rem = mant & ((uint64_t{1} << drop) - 1u), half = uint64_t{1} << (drop - 1);
  if (rem > half || (rem == half && (q & 1u))) ++q;
  // Normal: (biased exponent - 1) * 2^man + q, where q includes the implicit bit (a carry moves up an exponent).
  return static_cast<uint32_t>(e >= emin ? (static_cast<uint64_t>(e + f.bias - 1) << f.man_bits) + q : q);
}

/// double -> minifloat bits per ONNX Cast: RNE; with `saturate`, out of range (and inf) -> +-max, else inf where
/// the type has one and NaN otherwise; E2M1 always saturates; fnuz: no -0, one NaN.
LOCKSTEP_HD uint32_t f64_to_minifloat(const MiniFloat& f, double x, bool saturate) {
  const uint64_t u = bits_of(x), a = u & 0x7fffffffffffffffull;
  const uint32_t sign = (u >> 63) ? 1u << f.sign_shift : 0u;
  if (a > 0x7ff0000000000000ull) {
    if (f.nan_as_zero) return sign ^ (1u << f.sign_shift);
    return f.fnuz ? f.nan_code : sign | f.nan_code;
  }
  const uint32_t mag = a == 0x7ff0000000000000ull ? f.max_code + 1u : minifloat_round(f, a);
  if (mag > f.max_code) {
    if (saturate || f.nan_as_zero) return sign | f.max_code;
    if (f.inf_code != 0) return sign | f.inf_code;
    return f.fnuz ? f.nan_code : sign | f.nan_code;
  }
  return mag == 0 && f.fnuz ? 0u : sign | mag;
}

/// Cast's `round_mode` for float8e8m0 (opset 24): up (the default), down, nearest.
enum class E8M0Round : int { Up, Down, Nearest };

/// float8e8m0 bits -> float (exact): 2^(bits - 127); 0xff is NaN (decoded as the positive quiet NaN, as ml_dtypes);
/// code 0, 2^-127, is a float32 subnormal.
LOCKSTEP_HD float e8m0_to_f32(uint32_t bits) {
  if (bits == 0xffu) return float_of(0x7fc00000u);
  return float_of(bits == 0 ? 0x00400000u : bits << 23);
}

/// float -> float8e8m0 bits, on the float's encoding (onnx's reference, onnx.numpy_helper.to_float8e8m0): the sign
/// is ignored (negative inputs are undefined in ONNX); NaN and +-inf give 0xff (NaN); otherwise the code is the
/// biased exponent field e (0 for zero and subnormals) plus one where the mode rounds up:
///   up: any mantissa bit set; down: never; nearest: mantissa bit 22 set and (a lower bit set or e > 0), so ties
///   round up.
/// Rounding e = 0xfe up gives 0xfe with `saturate` and 0xff (NaN) without.
LOCKSTEP_HD uint32_t f32_to_e8m0(float x, bool saturate, E8M0Round mode) {
  const uint32_t u = bits_of(x), e = (u >> 23) & 0xffu, m = u & 0x7fffffu;
  if (e == 0xffu) return 0xffu;
  bool up = false;
  if (mode == E8M0Round::Up) up = m != 0;
  else if (mode == E8M0Round::Nearest) up = (m & 0x400000u) != 0 && ((m & 0x3fffffu) != 0 || e > 0);
  if (up && saturate && e == 0xfeu) up = false;
  return e + (up ? 1u : 0u);
}

/// N-bit two's complement (int4, int2) bits -> value (sign extension).
LOCKSTEP_HD int32_t small_int_value(uint32_t bits, int n) {
  const uint32_t mask = (1u << n) - 1u, v = bits & mask;
  return static_cast<int32_t>(v) - ((v >> (n - 1)) ? static_cast<int32_t>(1u << n) : 0);
}

/// Integer -> int4/uint4/int2/uint2 bits: keeps the low n bits (ONNX's wrap for fixed point -> fixed point).
LOCKSTEP_HD uint32_t small_int_wrap(uint64_t v, int n) { return static_cast<uint32_t>(v) & ((1u << n) - 1u); }

/// Real -> int4/uint4/int2/uint2 bits: truncation toward zero; NaN and results outside [lo, hi] -> 0 (ONNX leaves
/// them undefined; 0 is what onnx's reference, ml_dtypes, gives).
LOCKSTEP_HD uint32_t small_int_from_real(double x, int n, bool is_signed) {
  const double lo = is_signed ? -static_cast<double>(1u << (n - 1)) : 0.0;
  const double hi = is_signed ? static_cast<double>((1u << (n - 1)) - 1u) : static_cast<double>((1u << n) - 1u);
  if (!(x > lo - 1.0 && x < hi + 1.0)) return 0;
  return small_int_wrap(static_cast<uint64_t>(static_cast<int64_t>(x)), n);
}

/// Real -> int4/uint4/int2/uint2 for QuantizeLinear: already rounded and offset, saturated to [lo, hi].
LOCKSTEP_HD uint32_t small_int_saturate(int64_t v, int n, bool is_signed) {
  const int64_t lo = is_signed ? -(int64_t{1} << (n - 1)) : 0;
  const int64_t hi = is_signed ? (int64_t{1} << (n - 1)) - 1 : (int64_t{1} << n) - 1;
  return small_int_wrap(static_cast<uint64_t>(v < lo ? lo : hi < v ? hi : v), n);
}

/// Storage tag of a low-precision type for Cast and the quantize family: one byte of bits.
template <LowType K>
struct Low {
  uint8_t bits;
  static constexpr LowType kType = K;
  static constexpr bool kFloat = static_cast<int>(K) <= static_cast<int>(LowType::E2M1) || K == LowType::E8M0;
  static constexpr bool kSigned = K == LowType::Int4 || K == LowType::Int2;
  static constexpr int kIntBits = K == LowType::Int4 || K == LowType::UInt4 ? 4 : 2;
};


/// A low-precision value as float (exact): the decoded minifloat or e8m0, or the small integer.
template <LowType K>
LOCKSTEP_HD float low_to_f32(Low<K> v) {
  if constexpr (K == LowType::E8M0) return e8m0_to_f32(v.bits);
  else if constexpr (Low<K>::kFloat) return minifloat_to_f32(mini_float(K), v.bits);
  else if constexpr (Low<K>::kSigned) return static_cast<float>(small_int_value(v.bits, Low<K>::kIntBits));
  else return static_cast<float>(v.bits & ((1u << Low<K>::kIntBits) - 1u));
}

}  // namespace lockstep::arith
