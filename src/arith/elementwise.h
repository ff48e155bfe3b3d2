// The elementwise family's per-element formulas (docs/arithmetic.md, "Elementwise"). The CPU and CUDA kernels
// both instantiate their loops with these functors, so both devices run literally the same code per element.
//
// Each functor declares kTypes (the ONNX element types it accepts, as TypeBit flags) and kBoolOut (its output is
// bool, stored as one byte 0/1, whatever its input type). Bool inputs arrive as uint8_t.
#pragma once

#include <cmath>
#include <cstdint>
#include <type_traits>

#include "arith/hd.h"
#include "arith/low_precision.h"
#include "arith/math.h"
#include "arith/math_f64.h"

namespace lockstep::arith {

enum TypeBit : unsigned {
  kF32 = 1u << 0, kF64 = 1u << 1, kI8 = 1u << 2, kI16 = 1u << 3, kI32 = 1u << 4, kI64 = 1u << 5,
  kU8 = 1u << 6, kU16 = 1u << 7, kU32 = 1u << 8, kU64 = 1u << 9, kBool = 1u << 10, kF16 = 1u << 11,
  kBF16 = 1u << 12,
};
constexpr unsigned kFloats = kF32 | kF64;
constexpr unsigned kShapeInts = kI32 | kI64;
/// Every integer type: the exact integer binary and comparison ops (wrapping two's-complement arithmetic).
constexpr unsigned kInts = kI8 | kI16 | kI32 | kI64 | kU8 | kU16 | kU32 | kU64;

// ---------------------------------------------------------------------------------------------- scalar helpers

LOCKSTEP_HD float copysign_f32(float magnitude, float sign) {
  return float_of((bits_of(magnitude) & 0x7fffffffu) | (bits_of(sign) & 0x80000000u));
}
LOCKSTEP_HD float abs_f32(float x) { return float_of(bits_of(x) & 0x7fffffffu); }
LOCKSTEP_HD double abs_f64(double x) { return double_of(bits_of(x) & 0x7fffffffffffffffull); }
LOCKSTEP_HD bool isnan_f32(float x) { return x != x; }

/// IEEE square root (correctly rounded on both devices; sqrtss on the host, __fsqrt_rn on the GPU).
LOCKSTEP_HD float sqrt_f32(float x) { return sqrt_lanes(x); }
LOCKSTEP_HD double sqrt_f64(double x) {
#if defined(__CUDA_ARCH__)
  return __dsqrt_rn(x);
#else
  return std::sqrt(x);
#endif
}

/// Round half to even, exactly: for |x| < 2^23, (|x| + 2^23) - 2^23 rounds |x| to an integer under RNE.
/// |x| >= 2^23, inf and NaN are returned unchanged. The sign of x is kept (round(-0.3) = -0).
LOCKSTEP_HD float rint_f32(float x) {
  float ax = abs_f32(x);
  if (!(ax < 8388608.0f)) return x;
  float r = (ax + 8388608.0f) - 8388608.0f;
  return copysign_f32(r, x);
}
/// floor/ceil from rint_f32 with one correction step; results keep x's sign (floor(-0.5) = -1, ceil(-0.5) = -0).
LOCKSTEP_HD float floor_f32(float x) {
  if (!(abs_f32(x) < 8388608.0f)) return x;
  float r = rint_f32(x);
  if (r > x) r = r - 1.0f;
  return copysign_f32(r, x);
}
LOCKSTEP_HD float ceil_f32(float x) {
  if (!(abs_f32(x) < 8388608.0f)) return x;
  float r = rint_f32(x);
  if (r < x) r = r + 1.0f;
  return copysign_f32(r, x);
}

/// C fmod, exactly (the result is always representable): long division on the integer significands.
/// fmod(x, 0), fmod(inf, y), NaN operands -> NaN; |x| < |y| (y = inf included) -> x; result has x's sign.
LOCKSTEP_HD float fmod_f32(float x, float y) {
  const uint32_t ux = bits_of(x), uy = bits_of(y);
  const uint32_t sign = ux & 0x80000000u, ax = ux & 0x7fffffffu, ay = uy & 0x7fffffffu;
  if (ay == 0 || ax >= 0x7f800000u || ay > 0x7f800000u) return float_of(0x7fc00000u);
  if (ax < ay) return x;
  if (ax == ay) return float_of(sign);
  int ex = static_cast<int>(ax >> 23), ey = static_cast<int>(ay >> 23);
  uint32_t mx = ax & 0x7fffffu, my = ay & 0x7fffffu;
  // Significands with the implicit bit; denormals are normalised (their exponent goes below 1).
  if (ex == 0) { for (ex = 1; !(mx & 0x800000u); --ex) mx <<= 1; } else { mx |= 0x800000u; }
  if (ey == 0) { for (ey = 1; !(my & 0x800000u); --ey) my <<= 1; } else { my |= 0x800000u; }
  for (; ex > ey; --ex) {
    if (mx >= my) mx -= my;
    mx <<= 1;
  }
  if (mx >= my) mx -= my;
  if (mx == 0) return float_of(sign);
  for (; !(mx & 0x800000u); --ex) mx <<= 1;
  uint32_t out = ex > 0 ? (static_cast<uint32_t>(ex) << 23) | (mx & 0x7fffffu) : mx >> (1 - ex);
  return float_of(out | sign);
}

/// C fmod on doubles, exactly. Special cases as fmod_f32. With x = Mx 2^ex and y = My 2^ey (53-bit integer
/// significands, denormals normalised, ex >= ey), x mod y = (Mx 2^(ex-ey) mod My) 2^ey, computed as R = Mx mod My,
/// then R = (R 2^s) mod My for s = min(11, bits left) until ex - ey bits are used: R < My < 2^53, so R 2^11 fits
/// 64 bits and every step is an exact integer remainder. The remainder, normalised, is the result (a denormal
/// when its exponent falls below 1: a multiple of y's quantum, so the shift drops no bit); x's sign.
LOCKSTEP_HD double fmod_f64(double x, double y) {
  constexpr uint64_t kSign = 0x8000000000000000ull, kInf = 0x7ff0000000000000ull;
  constexpr uint64_t kFrac = 0x000fffffffffffffull, kOne = 0x0010000000000000ull;
  const uint64_t ux = bits_of(x), uy = bits_of(y);
  const uint64_t sign = ux & kSign, ax = ux & ~kSign, ay = uy & ~kSign;
  if (ay == 0 || ax >= kInf || ay > kInf) return double_of(0x7ff8000000000000ull);
  if (ax < ay) return x;
  if (ax == ay) return double_of(sign);
  int ex = static_cast<int>(ax >> 52), ey = static_cast<int>(ay >> 52);
  uint64_t mx = ax & kFrac, my = ay & kFrac;
  if (ex == 0) { for (ex = 1; !(mx & kOne); --ex) mx <<= 1; } else { mx |= kOne; }
  if (ey == 0) { for (ey = 1; !(my & kOne); --ey) my <<= 1; } else { my |= kOne; }
  mx %= my;
  for (int left = ex - ey; left > 0 && mx != 0;) {
    const int s = left < 11 ? left : 11;
    mx = (mx << s) % my;
    left -= s;
  }
  if (mx == 0) return double_of(sign);
  int e = ey;
  for (; !(mx & kOne); --e) mx <<= 1;
  const uint64_t out = e > 0 ? (static_cast<uint64_t>(e) << 52) | (mx & kFrac) : mx >> (1 - e);
  return double_of(out | sign);
}

LOCKSTEP_HD float fmod_of(float x, float y) { return fmod_f32(x, y); }
LOCKSTEP_HD double fmod_of(double x, double y) { return fmod_f64(x, y); }

// ---------------------------------------------------------------------------------------------- conversions

/// float -> IEEE binary16 bits, round to nearest even; NaN stays NaN (quiet), overflow -> inf, denormals kept.
LOCKSTEP_HD uint16_t f32_to_f16_bits(float x) {
  const uint32_t u = bits_of(x);
  const uint32_t sign = (u >> 16) & 0x8000u, a = u & 0x7fffffffu;
  if (a >= 0x7f800000u) return static_cast<uint16_t>(sign | (a > 0x7f800000u ? 0x7e00u | ((a >> 13) & 0x3ffu) : 0x7c00u));
  if (a >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // >= 65520 rounds to inf
  uint32_t q, rem, half;
  if (a >= 0x38800000u) {  // normal half
    q = (a >> 13) - (112u << 10);
    rem = a & 0x1fffu;
    half = 0x1000u;
  } else {  // denormal half (or zero): value = m * 2^(e-150), unit 2^-24
    if (a < 0x33000000u) return static_cast<uint16_t>(sign);
    const uint32_t e = a >> 23, m = (a & 0x7fffffu) | 0x800000u, s = 126u - e;
    q = m >> s;
    rem = m & ((1u << s) - 1u);
    half = 1u << (s - 1u);
  }
  if (rem > half || (rem == half && (q & 1u))) ++q;
  return static_cast<uint16_t>(sign | q);
}
/// binary16 bits -> float (exact).
LOCKSTEP_HD float f16_bits_to_f32(uint16_t h) {
  const uint32_t sign = (static_cast<uint32_t>(h) & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
  if (e == 31) return float_of(sign | 0x7f800000u | (m << 13));
  if (e == 0) return copysign_f32(static_cast<float>(m) * 5.9604644775390625e-8f, float_of(sign));  // m * 2^-24
  return float_of(sign | ((e + 112u) << 23) | (m << 13));
}
/// float -> bfloat16 bits, round to nearest even; NaN -> the quiet NaN of its sign, payload dropped (as ml_dtypes).
LOCKSTEP_HD uint16_t f32_to_bf16_bits(float x) {
  const uint32_t u = bits_of(x);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>(((u >> 16) & 0x8000u) | 0x7fc0u);
  return static_cast<uint16_t>((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}
LOCKSTEP_HD float bf16_bits_to_f32(uint16_t h) { return float_of(static_cast<uint32_t>(h) << 16); }

/// Storage tags for the 16-bit float types and bool, so that Cast can tell them from uint16/uint8.
struct Half { uint16_t bits; };
struct BHalf { uint16_t bits; };
struct Boolean { uint8_t v; };

template <class S> struct IsLow : std::false_type {};
template <LowType K> struct IsLow<Low<K>> : std::true_type {};

/// A value in transit through Cast: a signed integer, an unsigned integer or a real (float and float16 sources
/// are held exactly as double).
struct CastValue {
  enum Kind : int { Signed, Unsigned, Real } kind;
  int64_t i;
  uint64_t u;
  double d;
};

template <class S>
LOCKSTEP_HD CastValue cast_load(S s) {
  if constexpr (std::is_same_v<S, Half>) return {CastValue::Real, 0, 0, static_cast<double>(f16_bits_to_f32(s.bits))};
  else if constexpr (std::is_same_v<S, BHalf>) return {CastValue::Real, 0, 0, static_cast<double>(bf16_bits_to_f32(s.bits))};
  else if constexpr (std::is_same_v<S, Boolean>) return {CastValue::Signed, s.v != 0 ? 1 : 0, 0, 0.0};
  else if constexpr (IsLow<S>::value) {
    if constexpr (S::kFloat) return {CastValue::Real, 0, 0, static_cast<double>(low_to_f32(s))};
    else return {CastValue::Signed, static_cast<int64_t>(low_to_f32(s)), 0, 0.0};
  } else if constexpr (std::is_floating_point_v<S>) return {CastValue::Real, 0, 0, static_cast<double>(s)};
  else if constexpr (std::is_signed_v<S>) return {CastValue::Signed, static_cast<int64_t>(s), 0, 0.0};
  else return {CastValue::Unsigned, 0, static_cast<uint64_t>(s), 0.0};
}

/// Real -> integer: truncation toward zero; NaN -> 0; out of range saturates to the type's min/max.
template <class I>
LOCKSTEP_HD I real_to_int(double d) {
  constexpr int kBits = 8 * sizeof(I);
  if (d != d) return 0;
  if constexpr (std::is_signed_v<I>) {
    const double lo = -static_cast<double>(uint64_t{1} << (kBits - 1));  // exact power of two
    if (d < lo) return static_cast<I>(static_cast<uint64_t>(1) << (kBits - 1));  // min
    if (d >= -lo) return static_cast<I>((static_cast<uint64_t>(1) << (kBits - 1)) - 1u);  // max
    return static_cast<I>(static_cast<int64_t>(d));
  } else {
    const double hi = kBits == 64 ? 18446744073709551616.0 : static_cast<double>(uint64_t{1} << (kBits % 64));
    if (!(d > -1.0)) return 0;
    if (d >= hi) return static_cast<I>(~uint64_t{0});
    return static_cast<I>(static_cast<uint64_t>(d));
  }
}

/// Cast's attributes that change a conversion: `saturate` (float8 targets) and `round_mode` (float8e8m0). A bool
/// converts to the default round mode.
struct CastMode {
  bool saturate = true;
  E8M0Round round = E8M0Round::Up;
  LOCKSTEP_HD CastMode(bool s = true, E8M0Round r = E8M0Round::Up) : saturate(s), round(r) {}
};

/// CastValue -> a low-precision type: floats round from double (exact for every float source; an integer beyond
/// 2^53 is out of every minifloat's range either way), integers wrap, reals truncate (small_int_from_real);
/// float8e8m0 first rounds the value to float (as Cast to float does), then f32_to_e8m0.
template <class D>
LOCKSTEP_HD D cast_store_low(CastValue v, CastMode mode) {
  if constexpr (D::kType == LowType::E8M0) {
    const float f = v.kind == CastValue::Signed ? static_cast<float>(v.i)
                    : v.kind == CastValue::Unsigned ? static_cast<float>(v.u) : static_cast<float>(v.d);
    return D{static_cast<uint8_t>(f32_to_e8m0(f, mode.saturate, mode.round))};
  } else {
    const double real = v.kind == CastValue::Signed ? static_cast<double>(v.i)
                        : v.kind == CastValue::Unsigned ? static_cast<double>(v.u) : v.d;
    if constexpr (D::kFloat) return D{static_cast<uint8_t>(f64_to_minifloat(mini_float(D::kType), real, mode.saturate))};
    else if (v.kind == CastValue::Real) return D{static_cast<uint8_t>(small_int_from_real(real, D::kIntBits, D::kSigned))};
    else return D{static_cast<uint8_t>(small_int_wrap(v.kind == CastValue::Signed ? static_cast<uint64_t>(v.i) : v.u,
                                                      D::kIntBits))};
  }
}

/// `mode` holds Cast's attributes: they only change conversions to the float8 types.
template <class D>
LOCKSTEP_HD D cast_store(CastValue v, CastMode mode = {}) {
  if constexpr (IsLow<D>::value) return cast_store_low<D>(v, mode);
  else if constexpr (std::is_same_v<D, Half>) return Half{f32_to_f16_bits(cast_store<float>(v))};
  else if constexpr (std::is_same_v<D, BHalf>) return BHalf{f32_to_bf16_bits(cast_store<float>(v))};
  else if constexpr (std::is_same_v<D, Boolean>) {
    bool nz = v.kind == CastValue::Signed ? v.i != 0 : v.kind == CastValue::Unsigned ? v.u != 0 : v.d != 0.0;
    return Boolean{static_cast<uint8_t>(nz ? 1 : 0)};
  } else if constexpr (std::is_floating_point_v<D>) {
    // One IEEE round-to-nearest-even conversion from the source value (int64 -> float directly, not via double).
    return v.kind == CastValue::Signed ? static_cast<D>(v.i)
           : v.kind == CastValue::Unsigned ? static_cast<D>(v.u) : static_cast<D>(v.d);
  } else {
    // Integer -> integer wraps modulo 2^bits (two's complement).
    if (v.kind == CastValue::Signed) return static_cast<D>(static_cast<uint64_t>(v.i));
    if (v.kind == CastValue::Unsigned) return static_cast<D>(v.u);
    return real_to_int<D>(v.d);
  }
}

template <class D, class S>
LOCKSTEP_HD D cast_element(S s, CastMode mode = {}) { return cast_store<D>(cast_load(s), mode); }

// ---------------------------------------------------------------------------------------------- integer helpers

template <class T> using Unsigned = std::make_unsigned_t<T>;
/// Integer +, -, * wrap modulo 2^bits (computed in the unsigned type: no undefined behaviour).
template <class T> LOCKSTEP_HD T wrap_add(T a, T b) { return static_cast<T>(static_cast<Unsigned<T>>(a) + static_cast<Unsigned<T>>(b)); }
template <class T> LOCKSTEP_HD T wrap_sub(T a, T b) { return static_cast<T>(static_cast<Unsigned<T>>(a) - static_cast<Unsigned<T>>(b)); }
template <class T> LOCKSTEP_HD T wrap_mul(T a, T b) {
  using W = std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, Unsigned<T>>;  // avoid int promotion
  return static_cast<T>(static_cast<W>(static_cast<Unsigned<T>>(a)) * static_cast<W>(static_cast<Unsigned<T>>(b)));
}
template <class T> LOCKSTEP_HD bool is_min_over_minus_one(T a, T b) {
  if constexpr (std::is_signed_v<T>) return b == T(-1) && a == static_cast<T>(Unsigned<T>(1) << (8 * sizeof(T) - 1));
  else return false;
}
/// Integer division truncates toward zero; x / 0 = 0; MIN / -1 = MIN (wraps).
template <class T> LOCKSTEP_HD T int_div(T a, T b) {
  if (b == 0) return 0;
  if (is_min_over_minus_one(a, b)) return a;
  return static_cast<T>(a / b);
}
/// Integer remainder: fmod = truncated (sign of a), else floored (sign of b, as Python); x mod 0 = 0.
template <class T> LOCKSTEP_HD T int_mod(T a, T b, bool fmod) {
  if (b == 0 || is_min_over_minus_one(a, b)) return 0;
  T r = static_cast<T>(a % b);
  if constexpr (std::is_signed_v<T>)
    if (!fmod && r != 0 && ((r < 0) != (b < 0))) r = static_cast<T>(r + b);
  return r;
}

// ---------------------------------------------------------------------------------------------- unary functors

struct ReluOp {
  static constexpr unsigned kTypes = kFloats | kI8 | kI32 | kI64;
  static constexpr bool kBoolOut = false;
  // x < 0 ? 0 : x keeps -0 and NaN (as onnxruntime). T{} is 0 in every lane: it runs on float lanes too.
  template <class T> LOCKSTEP_LANE T operator()(T x) const { return x < T{} ? T{} : x; }
};
struct NegOp {
  static constexpr unsigned kTypes = kFloats | kI8 | kI16 | kI32 | kI64;
  static constexpr bool kBoolOut = false;
  template <class T> LOCKSTEP_HD T operator()(T x) const {
    if constexpr (std::is_floating_point_v<T>) return -x;
    else return wrap_sub(T(0), x);
  }
};
struct AbsOp {
  static constexpr unsigned kTypes = kFloats | kI8 | kI16 | kI32 | kI64 | kU8;
  static constexpr bool kBoolOut = false;
  template <class T> LOCKSTEP_HD T operator()(T x) const {
    if constexpr (std::is_same_v<T, float>) return abs_f32(x);
    else if constexpr (std::is_same_v<T, double>) return abs_f64(x);
    else if constexpr (std::is_signed_v<T>) return x < 0 ? wrap_sub(T(0), x) : x;
    else return x;
  }
};
struct SignOp {
  static constexpr unsigned kTypes = kFloats | kI8 | kI32 | kI64;
  static constexpr bool kBoolOut = false;
  // NaN -> NaN, +-0 -> +0.
  template <class T> LOCKSTEP_HD T operator()(T x) const {
    if (x > T(0)) return T(1);
    if (x < T(0)) return T(-1);
    return x == T(0) ? T(0) : x;
  }
};
struct SqrtOp {
  static constexpr unsigned kTypes = kFloats;
  static constexpr bool kBoolOut = false;
  LOCKSTEP_HD float operator()(float x) const { return sqrt_f32(x); }
  LOCKSTEP_HD double operator()(double x) const { return sqrt_f64(x); }
};
struct ReciprocalOp {
  static constexpr unsigned kTypes = kFloats;
  static constexpr bool kBoolOut = false;
  template <class T> LOCKSTEP_HD T operator()(T x) const { return T(1) / x; }
};
/// Mean's final step: sum / n (an IEEE division by the float count).
struct DivideByOp {
  static constexpr unsigned kTypes = kFloats;
  static constexpr bool kBoolOut = false;
  float n;
  template <class T> LOCKSTEP_HD T operator()(T x) const { return x / static_cast<T>(n); }
};

// The float functors from here on are templates over the lane type of lanes.h: float, and for those listed in
// src/cpu/elementwise/unary_f32.h a SIMD register too. The same operations per element on every path.
#define LOCKSTEP_F32_UNARY(Name, expr)                                          \
  struct Name {                                                                 \
    static constexpr unsigned kTypes = kF32;                                    \
    static constexpr bool kBoolOut = false;                                     \
    template <class V> LOCKSTEP_LANE V operator()(V x) const { return expr; }   \
  };
LOCKSTEP_F32_UNARY(SinOp, sin_f32(x))
LOCKSTEP_F32_UNARY(CosOp, cos_f32(x))
LOCKSTEP_F32_UNARY(TanOp, tan_f32(x))
LOCKSTEP_F32_UNARY(SinhOp, sinh_f32(x))
LOCKSTEP_F32_UNARY(CoshOp, cosh_f32(x))
LOCKSTEP_F32_UNARY(AsinhOp, asinh_f32(x))
LOCKSTEP_F32_UNARY(AcoshOp, acosh_f32(x))
LOCKSTEP_F32_UNARY(AtanhOp, atanh_f32(x))
LOCKSTEP_F32_UNARY(AsinOp, asin_f32(x))
LOCKSTEP_F32_UNARY(AcosOp, acos_f32(x))
LOCKSTEP_F32_UNARY(AtanOp, atan_f32(x))
LOCKSTEP_F32_UNARY(FloorOp, floor_f32(x))
LOCKSTEP_F32_UNARY(CeilOp, ceil_f32(x))
LOCKSTEP_F32_UNARY(RoundOp, rint_f32(x))
LOCKSTEP_F32_UNARY(SigmoidOp, sigmoid_f32(x))
LOCKSTEP_F32_UNARY(TanhOp, tanh_f32(x))
LOCKSTEP_F32_UNARY(ErfOp, erf_f32(x))
LOCKSTEP_F32_UNARY(SoftplusOp, softplus_f32(x))
// Sigmoid then Mul(x, sigmoid(x)) fused (src/graph/fuse.cpp): the same two results, each rounded as unfused.
LOCKSTEP_F32_UNARY(SiluOp, x * sigmoid_f32(x))
#undef LOCKSTEP_F32_UNARY
// Exp and Log also take double: the binary64 functions of math_f64.h (the lane template serves float).
#define LOCKSTEP_F32_F64_UNARY(Name, f32, f64)                                    \
  struct Name {                                                                 \
    static constexpr unsigned kTypes = kFloats;                                 \
    static constexpr bool kBoolOut = false;                                     \
    template <class V> LOCKSTEP_LANE V operator()(V x) const { return f32(x); } \
    LOCKSTEP_HD double operator()(double x) const { return f64(x); }            \
  };
LOCKSTEP_F32_F64_UNARY(ExpOp, exp_f32, exp_f64)
LOCKSTEP_F32_F64_UNARY(LogOp, log_f32, log_f64)
#undef LOCKSTEP_F32_F64_UNARY

/// GELU as torch exports it, fused (src/graph/fuse.cpp): Div(x, divisor), Erf, Add(e, addend), Mul(x, s),
/// Mul(m, factor), each result rounded as the unfused node rounds it.
struct GeluErfChainOp {
  static constexpr unsigned kTypes = kF32;
  static constexpr bool kBoolOut = false;
  float divisor, addend, factor;
  template <class V> LOCKSTEP_LANE V operator()(V x) const { return (x * (erf_f32(x / divisor) + addend)) * factor; }
};

/// GELU's tanh form as torch exports it (GPT-2's gelu_new), fused (src/graph/fuse.cpp): h = Mul(x, half), Pow(x, 3)
/// = (x*x)*x, Mul(p, cube_factor), Add(x, q), Mul(s, scale), Tanh, Add(t, one), Mul(h, v), each result rounded as
/// the unfused node rounds it.
struct GeluTanhChainOp {
  static constexpr unsigned kTypes = kF32;
  static constexpr bool kBoolOut = false;
  float half, cube_factor, scale, one;
  template <class V> LOCKSTEP_LANE V operator()(V x) const {
    const V s = x + ((x * x) * x) * cube_factor;
    return (x * half) * (tanh_f32(s * scale) + one);
  }
};

/// Where(IsNaN(x), value, x) fused after a Softmax (src/graph/fuse.cpp): a selection, no arithmetic.
LOCKSTEP_HD float nan_replaced_f32(float x, float value) { return x != x ? value : x; }

/// Softmax's steps (docs/arithmetic.md#softmax--logsoftmax): e^(x - m); e / s; LogSoftmax's (x - m) - log s.
struct ExpOfDifferenceOp {
  static constexpr unsigned kTypes = kF32;
  static constexpr bool kBoolOut = false;
  float m;
  template <class V> LOCKSTEP_LANE V operator()(V x) const { return exp_f32(x - m); }
};
struct QuotientOp {
  static constexpr unsigned kTypes = kF32;
  static constexpr bool kBoolOut = false;
  float divisor;
  template <class V> LOCKSTEP_LANE V operator()(V x) const { return x / divisor; }
};
struct TwoDifferencesOp {
  static constexpr unsigned kTypes = kF32;
  static constexpr bool kBoolOut = false;
  float first, second;
  template <class V> LOCKSTEP_LANE V operator()(V x) const { return (x - first) - second; }
};

struct LeakyReluOp {
  static constexpr unsigned kTypes = kF32;
  static constexpr bool kBoolOut = false;
  float alpha;
  template <class V> LOCKSTEP_LANE V operator()(V x) const { return select(x >= 0.0f, x, alpha * x); }
};
struct EluOp {
  static constexpr unsigned kTypes = kF32;
  static constexpr bool kBoolOut = false;
  float alpha;
  template <class V> LOCKSTEP_LANE V operator()(V x) const { return select(x >= 0.0f, x, alpha * expm1_f32(x)); }
};
struct SeluOp {
  static constexpr unsigned kTypes = kF32;
  static constexpr bool kBoolOut = false;
  float alpha, gamma;
  template <class V> LOCKSTEP_LANE V operator()(V x) const {
    return select(x > 0.0f, gamma * x, gamma * (alpha * expm1_f32(x)));
  }
};
/// max(0, min(1, alpha*x + beta)): two roundings (no fma); NaN propagates.
template <class V>
LOCKSTEP_LANE V hard_sigmoid_f32(V x, float alpha, float beta) {
  V v = alpha * x + beta;
  v = select(1.0f < v, splat<V>(1.0f), v);
  return select(v < 0.0f, splat<V>(0.0f), v);
}
struct HardSigmoidOp {
  static constexpr unsigned kTypes = kF32;
  static constexpr bool kBoolOut = false;
  float alpha, beta;
  template <class V> LOCKSTEP_LANE V operator()(V x) const { return hard_sigmoid_f32(x, alpha, beta); }
};
struct HardSwishOp {
  static constexpr unsigned kTypes = kF32;
  static constexpr bool kBoolOut = false;
  // alpha = float(1/6) multiplied (as onnxruntime), beta = 0.5.
  template <class V> LOCKSTEP_LANE V operator()(V x) const { return x * hard_sigmoid_f32(x, 1.0f / 6.0f, 0.5f); }
};
struct GeluOp {
  static constexpr unsigned kTypes = kF32;
  static constexpr bool kBoolOut = false;
  bool tanh_approximation;
  template <class V> LOCKSTEP_LANE V operator()(V x) const {
    V s;
    if (tanh_approximation) {
      const V x3 = (x * x) * x;
      s = tanh_f32(0.7978845608028654f * (x + 0.044715f * x3));  // sqrt(2/pi)
    } else {
      s = erf_f32(x * 0.70710678118654752f);  // 1/sqrt(2)
    }
    return (0.5f * x) * (1.0f + s);
  }
};
struct IsNaNOp {
  static constexpr unsigned kTypes = kFloats;
  static constexpr bool kBoolOut = true;
  template <class T> LOCKSTEP_HD uint8_t operator()(T x) const { return x != x ? 1 : 0; }
};
struct IsInfOp {
  static constexpr unsigned kTypes = kFloats;
  static constexpr bool kBoolOut = true;
  bool negative, positive;
  template <class T> LOCKSTEP_HD uint8_t operator()(T x) const {
    const T inf = static_cast<T>(INFINITY);
    return ((positive && x == inf) || (negative && x == -inf)) ? 1 : 0;
  }
};
struct BitwiseNotOp {
  static constexpr unsigned kTypes = kInts;
  static constexpr bool kBoolOut = false;
  template <class T> LOCKSTEP_HD T operator()(T x) const { return static_cast<T>(~x); }
};
/// ThresholdedRelu: x where x > alpha, else +0 (so NaN gives +0, as the spec's "otherwise").
struct ThresholdedReluOp {
  static constexpr unsigned kTypes = kF32;
  static constexpr bool kBoolOut = false;
  float alpha;
  LOCKSTEP_HD float operator()(float x) const { return x > alpha ? x : 0.0f; }
};
/// Swish (24): x * sigmoid(alpha * x), the product alpha * x rounded first.
struct SwishOp {
  static constexpr unsigned kTypes = kF32;
  static constexpr bool kBoolOut = false;
  float alpha;
  LOCKSTEP_HD float operator()(float x) const { return x * sigmoid_f32(alpha * x); }
};
/// Celu (12): x >= 0 ? x : alpha * expm1(x / alpha) (expm1, as Elu; the quotient rounded first).
struct CeluOp {
  static constexpr unsigned kTypes = kF32;
  static constexpr bool kBoolOut = false;
  float alpha;
  LOCKSTEP_HD float operator()(float x) const { return x >= 0.0f ? x : alpha * expm1_f32(x / alpha); }
};
/// Softsign: x / (1 + |x|).
struct SoftsignOp {
  static constexpr unsigned kTypes = kF32;
  static constexpr bool kBoolOut = false;
  LOCKSTEP_HD float operator()(float x) const { return x / (1.0f + abs_f32(x)); }
};
/// Shrink: x < -lambd ? x + bias : x > lambd ? x - bias : +0.
struct ShrinkOp {
  static constexpr unsigned kTypes = kF32;
  static constexpr bool kBoolOut = false;
  float lambd, bias;
  LOCKSTEP_HD float operator()(float x) const { return x < -lambd ? x + bias : x > lambd ? x - bias : 0.0f; }
};
/// Mish (18): x * tanh(softplus(x)), each function rounded to float.
struct MishOp {
  static constexpr unsigned kTypes = kF32;
  static constexpr bool kBoolOut = false;
  LOCKSTEP_HD float operator()(float x) const { return x * tanh_f32(softplus_f32(x)); }
};
struct NotOp {
  static constexpr unsigned kTypes = kBool;
  static constexpr bool kBoolOut = true;
  LOCKSTEP_HD uint8_t operator()(uint8_t x) const { return x == 0 ? 1 : 0; }
};
/// Clip: v = x < lo ? lo : x; then hi < v ? hi : v. NaN x stays NaN; a NaN bound is ignored; lo > hi gives hi.
template <class T>
struct ClipOp {
  static constexpr bool kBoolOut = false;
  T lo, hi;
  LOCKSTEP_HD T operator()(T x) const {
    T v = x < lo ? lo : x;
    return hi < v ? hi : v;
  }
};

// ---------------------------------------------------------------------------------------------- binary functors

struct AddOp {
  static constexpr unsigned kTypes = kFloats | kInts;
  static constexpr bool kBoolOut = false;
  // Float lanes (cpu/lanes_avx2.h, lanes_avx512.h) take the float add.
  template <class T> LOCKSTEP_LANE T operator()(T a, T b) const {
    if constexpr (std::is_integral_v<T>) return wrap_add(a, b); else return a + b;
  }
};
struct SubOp {
  static constexpr unsigned kTypes = kFloats | kInts;
  static constexpr bool kBoolOut = false;
  template <class T> LOCKSTEP_HD T operator()(T a, T b) const {
    if constexpr (std::is_floating_point_v<T>) return a - b; else return wrap_sub(a, b);
  }
};
struct MulOp {
  static constexpr unsigned kTypes = kFloats | kInts;
  static constexpr bool kBoolOut = false;
  template <class T> LOCKSTEP_HD T operator()(T a, T b) const {
    if constexpr (std::is_floating_point_v<T>) return a * b; else return wrap_mul(a, b);
  }
};
struct DivOp {
  static constexpr unsigned kTypes = kFloats | kInts;
  static constexpr bool kBoolOut = false;
  template <class T> LOCKSTEP_HD T operator()(T a, T b) const {
    if constexpr (std::is_floating_point_v<T>) return a / b; else return int_div(a, b);
  }
};
struct PowOp {
  static constexpr unsigned kTypes = kF32 | kI32 | kI64;
  static constexpr bool kBoolOut = false;
  // onnxruntime's two special cases, bit for bit: y == 2 is x*x (correctly rounded), y == 3 is (x*x)*x (two
  // roundings: GELU's tanh form cubes its input); otherwise pow_f32.
  LOCKSTEP_HD float operator()(float x, float y) const {
    return y == 2.0f ? x * x : y == 3.0f ? (x * x) * x : pow_f32(x, y);
  }
  // Integers: exact, wrapping, by squaring; a negative exponent truncates 1 / x^-y (so 0 unless |x| = 1; 0^-y = 0).
  template <class T> LOCKSTEP_HD T operator()(T x, T y) const {
    if (y < 0) return x == 1 ? T(1) : x == -1 ? ((-(y + 1)) % 2 == 0 ? T(-1) : T(1)) : T(0);
    T r = 1;
    for (T b = x; y > 0; y /= 2) {
      if (y % 2) r = wrap_mul(r, b);
      b = wrap_mul(b, b);
    }
    return r;
  }
};
struct ModOp {
  static constexpr unsigned kTypes = kFloats | kInts;
  static constexpr bool kBoolOut = false;
  bool fmod;
  // Floats: the exact fmod; fmod = 0 (opset 28) makes it the floor remainder: a zero takes b's sign, a remainder
  // whose sign differs from b's gets b added (one rounding). Integers: int_mod.
  template <class T> LOCKSTEP_HD T operator()(T a, T b) const {
    if constexpr (std::is_floating_point_v<T>) {
      const T r = fmod_of(a, b);
      if (fmod) return r;
      if (r == T(0)) return b < T(0) ? -T(0) : T(0);
      return (r < T(0)) != (b < T(0)) ? r + b : r;
    } else {
      return int_mod(a, b, fmod);
    }
  }
};
/// SwiGLU (28): Swish_alpha(a) * b, Swish's sequence for the gate, then one IEEE multiply.
struct SwiGLUOp {
  static constexpr unsigned kTypes = kF32;
  static constexpr bool kBoolOut = false;
  float alpha;
  LOCKSTEP_HD float operator()(float a, float b) const { return (a * sigmoid_f32(alpha * a)) * b; }
};
/// com.microsoft BiasGelu and FastGelu: Gelu (erf, or the tanh approximation) of a + b, the sum rounded first.
struct BiasGeluOp {
  static constexpr unsigned kTypes = kF32;
  static constexpr bool kBoolOut = false;
  bool tanh_approximation;
  LOCKSTEP_HD float operator()(float a, float b) const { return GeluOp{tanh_approximation}(a + b); }
};
struct PReluOp {
  static constexpr unsigned kTypes = kF32;
  static constexpr bool kBoolOut = false;
  LOCKSTEP_HD float operator()(float x, float slope) const { return x < 0.0f ? slope * x : x; }
};
/// Max/Min: NaN if either operand is NaN; on ties (+0 vs -0) the second operand wins (as onnxruntime).
struct MaxOp {
  static constexpr unsigned kTypes = kFloats | kInts;
  static constexpr bool kBoolOut = false;
  template <class T> LOCKSTEP_HD T operator()(T a, T b) const {
    if (a != a) return a;
    if (b != b) return b;
    return a > b ? a : b;
  }
};
struct MinOp {
  static constexpr unsigned kTypes = kFloats | kInts;
  static constexpr bool kBoolOut = false;
  template <class T> LOCKSTEP_HD T operator()(T a, T b) const {
    if (a != a) return a;
    if (b != b) return b;
    return a < b ? a : b;
  }
};

/// BitShift: a right shift of a signed x is arithmetic; an amount outside [0, bits) gives the sign fill alone
/// (-1 for a right shift of a negative x, else 0); a left shift drops the bits shifted past the top.
struct BitShiftOp {
  static constexpr unsigned kTypes = kInts;
  static constexpr bool kBoolOut = false;
  bool left;
  template <class T> LOCKSTEP_HD T operator()(T x, T y) const {
    constexpr int kBits = 8 * static_cast<int>(sizeof(T));
    bool negative = false, out_of_range = y >= static_cast<T>(kBits);
    if constexpr (std::is_signed_v<T>) {
      negative = x < 0;
      out_of_range = out_of_range || y < 0;
    }
    if (out_of_range) return !left && negative ? static_cast<T>(-1) : static_cast<T>(0);
    const int n = static_cast<int>(y);
    if (left) return static_cast<T>(static_cast<Unsigned<T>>(static_cast<Unsigned<T>>(x) << n));
    return static_cast<T>(x >> n);
  }
};

#define LOCKSTEP_COMPARE(Name, types, expr)                                               \
  struct Name {                                                                           \
    static constexpr unsigned kTypes = types;                                             \
    static constexpr bool kBoolOut = true;                                                \
    template <class T> LOCKSTEP_HD uint8_t operator()(T a, T b) const { return (expr) ? 1 : 0; } \
  };
LOCKSTEP_COMPARE(EqualOp, kFloats | kInts | kBool, a == b)
LOCKSTEP_COMPARE(GreaterOp, kFloats | kInts, a > b)
LOCKSTEP_COMPARE(LessOp, kFloats | kInts, a < b)
LOCKSTEP_COMPARE(GreaterOrEqualOp, kFloats | kInts, a >= b)
LOCKSTEP_COMPARE(LessOrEqualOp, kFloats | kInts, a <= b)
LOCKSTEP_COMPARE(AndOp, kBool, (a != 0) && (b != 0))
LOCKSTEP_COMPARE(OrOp, kBool, (a != 0) || (b != 0))
LOCKSTEP_COMPARE(XorOp, kBool, (a != 0) != (b != 0))
#undef LOCKSTEP_COMPARE

#define LOCKSTEP_BITWISE(Name, expr)                                                      \
  struct Name {                                                                           \
    static constexpr unsigned kTypes = kInts;                                             \
    static constexpr bool kBoolOut = false;                                               \
    template <class T> LOCKSTEP_HD T operator()(T a, T b) const { return static_cast<T>(expr); } \
  };
LOCKSTEP_BITWISE(BitwiseAndOp, a & b)
LOCKSTEP_BITWISE(BitwiseOrOp, a | b)
LOCKSTEP_BITWISE(BitwiseXorOp, a ^ b)
#undef LOCKSTEP_BITWISE

}  // namespace lockstep::arith
