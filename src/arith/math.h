// lockstep shared math library (DESIGN.md section 3, "Math functions"; docs/arithmetic.md#scalar-function-methods).
//
// exp, expm1, log, log1p, tanh, erf, sigmoid, softplus, sinh, cosh, asinh, acosh, atanh, atan, asin and acos are
// binary32 algorithms: range reduction, minimax polynomials evaluated with fma (coefficients from
// tests/arith/fit_polynomials.py), and error-free transformations (TwoSum, exact remainders) where a step would
// otherwise lose the last bit. Each is written once, as a template over the lane type V of lanes.h, without
// branches on the value (selects instead), so that
//   - V = float is the host's scalar path and one CUDA thread per element,
//   - V = an AVX2 or AVX-512 register (src/cpu/lanes_avx2.h, lanes_avx512.h) is the CPU's vector path,
// and every path performs the same sequence of IEEE-754 operations on each element: the same bits everywhere.
// Accuracy: within 1 ulp of the correctly rounded result for every float input, tails and denormals included,
// checked over all 2^32 inputs by tests/arith/exhaustive_math.cpp (host), tests/arith/math_device_check.cu
// (host == device) and tests/cpp/test_elementwise.cpp (scalar == AVX2 == AVX-512).
//
// NaN outputs are deterministic: a NaN input is returned with its quiet bit set; an invalid operation (log(-1))
// returns the canonical quiet NaN 0x7fc00000. Contraction must be off: a*b+c is two roundings unless written
// mul_add. sin, cos, tan and pow still compute in binary64 (math_binary64.h).
#pragma once

#include <cstdint>

#include "bits.h"
#include "lane_helpers.h"
#include "lanes.h"
#include "math_binary64.h"

namespace lockstep::arith {

namespace detail {

constexpr float kInf = __builtin_huge_valf();
constexpr float kInvLn2 = 0x1.715476p+0f;
constexpr float kLn2Hi = 0x1.62e43p-1f;      // 21 significant bits: k * kLn2Hi is exact, |k| <= 151
constexpr float kLn2Lo = -0x1.05c61p-29f;    // ln2 - kLn2Hi
constexpr float kExpOverflow = 0x1.62e42ep+6f;  // the largest x with e^x < FLT_MAX (rounded): 0x42b17217
constexpr int32_t kDefaultNaN = 0x7fc00000;

template <class V>
LOCKSTEP_LANE V default_nan_lanes() {
  return as_float(lane_int_t<V>{} + kDefaultNaN);
}

template <class V>
LOCKSTEP_LANE lane_int_t<V> splat_int(int32_t c) {
  return lane_int_t<V>{} + c;
}

/// A value as an unevaluated sum hi + lo of two floats, |lo| far below hi's ulp.
template <class V>
struct FloatPair {
  V hi, lo;
};

/// a + b as an exact pair, for any magnitudes (TwoSum).
template <class V>
LOCKSTEP_LANE FloatPair<V> two_sum(V a, V b) {
  const V s = a + b, b_part = s - a;
  return {s, (a - (s - b_part)) + (b - b_part)};
}

/// a + b as an exact pair when |a| >= |b| or a = 0 (Fast2Sum).
template <class V>
LOCKSTEP_LANE FloatPair<V> fast_two_sum(V a, V b) {
  const V s = a + b;
  return {s, (a - s) + b};
}

/// t - k ln2 as hi + lo: hi exact (kLn2Hi has 21 bits and |k| <= 151), lo = k times ln2's low part, rounded.
template <class V>
LOCKSTEP_LANE FloatPair<V> ln2_remainder(V t, V kf) {
  return {mul_add(kf, splat<V>(-kLn2Hi), t), kf * -kLn2Lo};
}

/// e^t = 2^k (1 + u) for t in [-104, 89], with u in about [-0.29, 0.42] carrying one rounding (|error| <= 2^-26).
/// Reduction: k = round(t / ln2) through the round-to-integer magic, r = t - k ln2 in two parts (r_hi exact: kLn2Hi
/// has 21 bits and |k| <= 151), e^r - 1 = r_hi + (r_lo + r^2 q(r)), q minimax for |r| <= ln2/2 (error < 4e-9).
/// force_zero selects k = 0 (expm1's central interval, where q must cover r = t up to 1.5 ln2). For a NaN t, k is
/// meaningless: every caller replaces a NaN lane's result at the end.
template <class V>
struct ExpParts {
  lane_int_t<V> k;
  V u;
};
template <class V, int N>
LOCKSTEP_LANE ExpParts<V> exp_parts_of(V t, const float (&q)[N], lane_int_t<V> k, V kf) {
  const auto rem = ln2_remainder(t, kf);
  const V r = rem.hi + rem.lo;
  return {k, rem.hi + mul_add(r * r, horner(q, r), rem.lo)};
}
template <class V, int N>
LOCKSTEP_LANE ExpParts<V> exp_parts(V t, const float (&q)[N]) {
  const V shifted = mul_add(t, splat<V>(kInvLn2), splat<V>(kRoundMagic));
  return exp_parts_of(t, q, as_int(shifted) - as_int(kRoundMagic), shifted - kRoundMagic);
}
template <class V, int N>
LOCKSTEP_LANE ExpParts<V> exp_parts(V t, const float (&q)[N], decltype(t < t) force_zero) {
  const V shifted = mul_add(t, splat<V>(kInvLn2), splat<V>(kRoundMagic));
  return exp_parts_of(t, q, select(force_zero, splat_int<V>(0), as_int(shifted) - as_int(kRoundMagic)),
                      select(force_zero, splat<V>(0.0f), shifted - kRoundMagic));
}

// (e^r - 1 - r) / r^2 for |r| <= ln2/2, degree 4.
#define LOCKSTEP_EXP_Q {0x1.fffffcp-2f, 0x1.555492p-3f, 0x1.5558f2p-5f, 0x1.1239e4p-7f, 0x1.6a243p-10f}

/// e^x for the reduced parts, as two floats h + l: h = 2^k (1 + u) rounded (k clamped to >= kmin so that 2^k is
/// normal) and l its exact rounding error (TwoSum: 2^k u + 2^k is a sum of two floats).
template <class V>
LOCKSTEP_LANE FloatPair<V> scaled_pair(lane_int_t<V> k, V u) {
  const V s = pow2_lanes<V>(k);
  const V h = mul_add(s, u, s);
  return {h, mul_add(s, u, s - h)};
}

}  // namespace detail

/// e^x. Method: exp_parts, p = 1 + u, times 2^k in two exact steps (one rounding when the result is denormal).
/// Special: NaN -> NaN; x > 0x1.62e42ep+6 (incl. +inf) -> +inf; x < -104 (incl. -inf) -> +0 (selected: those lanes
/// compute e^0, since a product that underflows costs x86 a microcode assist for the whole vector, and Softmax's
/// masked rows are full of such x; e^-104 itself rounds to +0, so the bits are those of the clamped formula).
template <class V>
LOCKSTEP_LANE V exp_f32(V x) {
  static constexpr float q[5] = LOCKSTEP_EXP_Q;
  const auto vanishing = x < -104.0f;
  const V t = min_keep_nan(select(vanishing, splat<V>(0.0f), x), splat<V>(89.0f));
  const auto e = detail::exp_parts(t, q);
  const auto k1 = e.k >> 1;
  const V y = ((1.0f + e.u) * pow2_lanes<V>(k1)) * pow2_lanes<V>(e.k - k1);
  return select(x != x, quiet_nan_lanes(x),
                select(x > detail::kExpOverflow, splat<V>(detail::kInf), select(vanishing, splat<V>(0.0f), y)));
}

/// e^x - 1. Method: on (-ln2/2, 1.5 ln2) k = 0 and the result is u itself (q of degree 7 on that interval);
/// elsewhere exp_parts and fma(2^k, u, 2^k - 1) (2^k - 1 exact for |k| <= 24; k = 128 scaled in two steps).
/// Special: NaN -> NaN; +-0 -> +-0; x > 0x1.62e42ep+6 -> +inf; x < -40 (incl. -inf) -> -1.
template <class V>
LOCKSTEP_LANE V expm1_f32(V x) {
  // (e^r - 1 - r) / r^2 for r in [-ln2/2, 1.5 ln2], degree 7.
  static constexpr float q[8] = {0x1p-1f,          0x1.555556p-3f,  0x1.55555p-5f,   0x1.111078p-7f,
                                 0x1.6c22b8p-10f, 0x1.a093eep-13f, 0x1.8f0dc8p-16f, 0x1.f6b088p-19f};
  const V t = min_keep_nan(max_keep_nan(x, splat<V>(-40.0f)), splat<V>(89.0f));
  const auto e = detail::exp_parts(t, q, (t > -0x1.62e43p-2f) & (t < 0x1.0a2b24p+0f));
  const auto km = select(e.k > 127, detail::splat_int<V>(127), e.k);
  const V s = pow2_lanes<V>(km);
  const V y = mul_add(s, e.u, s - 1.0f) * pow2_lanes<V>(e.k - km);
  const V finite = select(x == 0.0f, x, y);
  return select(x != x, quiet_nan_lanes(x), select(x > detail::kExpOverflow, splat<V>(detail::kInf), finite));
}

namespace detail {

/// log(1 + f) for f = m - 1, m in [sqrt(1/2), sqrt(2)), plus k ln2 and a correction c (the rounding error of
/// 1 + x in log1p), in the classic form f - h + s (h + R) with s = f / (2 + f), h = f^2 / 2, R(s^2) minimax.
template <class V>
LOCKSTEP_LANE V log_of_reduced(V f, V kf, V c) {
  static constexpr float p[4] = {0x1.555554p-1f, 0x1.999a7ap-2f, 0x1.2438e8p-2f, 0x1.e2f456p-3f};
  constexpr float ln2_hi = 0x1.62e3p-1f;  // 16 bits: kf * ln2_hi is exact
  constexpr float ln2_lo = 0x1.2fefa2p-17f;
  const V s = f / (2.0f + f);
  const V z = s * s;
  const V h = 0.5f * (f * f);
  const V r = z * horner(p, z);
  const V t = mul_add(s, h + r, mul_add(kf, splat<V>(ln2_lo), c));
  return mul_add(kf, splat<V>(ln2_hi), (t - h) + f);
}

/// Splits a positive normal float's bits into k and m = 2^-k x in [sqrt(1/2), sqrt(2)) (the offset moves the
/// binade boundary from 1 to sqrt(1/2)). The add wraps for NaN/inf bit patterns, whose lanes the callers replace.
template <class V>
struct LogSplit {
  lane_int_t<V> k;
  V m;
};
template <class V>
LOCKSTEP_LANE LogSplit<V> split_binade(lane_int_t<V> bits) {
  constexpr int32_t kOffset = 0x3f800000 - 0x3f3504f3;
  const lane_int_t<V> shifted = wrapping_add(bits, kOffset);
  return {(shifted >> 23) - 127, as_float((shifted & 0x007fffff) + 0x3f3504f3)};
}

}  // namespace detail

/// Natural logarithm. Method: denormals scaled by 2^25, split_binade, log_of_reduced.
/// Special: NaN -> NaN; +-0 -> -inf; x < 0 (incl. -inf) -> NaN; +inf -> +inf; log(1) = +0.
template <class V>
LOCKSTEP_LANE V log_f32(V x) {
  const auto denormal = x < 0x1p-126f;
  const V scaled = select(denormal, x * 0x1p25f, x);
  const auto sp = detail::split_binade<V>(as_int(scaled));
  const auto k = sp.k - select(denormal, detail::splat_int<V>(25), detail::splat_int<V>(0));
  const V y = detail::log_of_reduced(sp.m - 1.0f, float_of_small_int<V>(k), splat<V>(0.0f));
  V special = select(x == detail::kInf, x, y);
  special = select(x == 0.0f, splat<V>(-detail::kInf), special);
  special = select(x < 0.0f, detail::default_nan_lanes<V>(), special);
  return select(x != x, quiet_nan_lanes(x), special);
}

namespace detail {

/// log(1 + h + l) for h >= -1 and |l| far below h's ulp (l = 0 for log1p itself), special values aside.
/// Method: u = 1 + h; when u lies in [sqrt(1/2), sqrt(2)) the reduced argument is h itself (k = 0); otherwise k, m
/// from u's bits. The rounding error of 1 + h (exact) plus l, divided by u, is log_of_reduced's correction c.
template <class V>
LOCKSTEP_LANE V log1p_of_pair(V h, V l) {
  const V u = 1.0f + h;
  const auto sp = split_binade<V>(as_int(u));
  const auto central = sp.k == 0;
  const V err = select(sp.k >= 2, 1.0f - (u - h), h - (u - 1.0f));
  const V c = select(sp.k >= 25, splat<V>(0.0f), (select(central, splat<V>(0.0f), err) + l) / u);
  const V f = select(central, h, sp.m - 1.0f);
  return log_of_reduced(f, float_of_small_int<V>(sp.k), c);
}

}  // namespace detail

/// log(1 + x). Method: detail::log1p_of_pair(x, 0).
/// Special: NaN -> NaN; +-0 -> +-0; -1 -> -inf; x < -1 -> NaN; +inf -> +inf.
template <class V>
LOCKSTEP_LANE V log1p_f32(V x) {
  const V y = detail::log1p_of_pair(x, splat<V>(0.0f));
  V special = select(x == detail::kInf, x, select(x == 0.0f, x, y));
  special = select(x == -1.0f, splat<V>(-detail::kInf), special);
  special = select(x < -1.0f, detail::default_nan_lanes<V>(), special);
  return select(x != x, quiet_nan_lanes(x), special);
}

/// Hyperbolic tangent. Method: |x| < 0.55: x + x^3 P(x^2) (minimax, degree 5). Otherwise 1 - 2 / (e^2a + 1) with
/// e^2a = 2^k (1 + u) from exp_parts (a = min(|x|, 10)): the denominator as an exact float pair (TwoSum), the
/// quotient with its exact remainder, and 1 - q by Fast2Sum, so that only u's rounding and the last addition
/// round (the remainder's quotient is taken with the reciprocal: one division per element). Sign restored.
/// Special: NaN -> NaN; +-0 -> +-0; |x| >= 10 (incl. inf) -> +-1.
template <class V>
LOCKSTEP_LANE V tanh_f32(V x) {
  static constexpr float p[6] = {-0x1.555554p-2f, 0x1.1110dcp-3f, -0x1.ba0994p-5f,
                                 0x1.64e39ap-6f,  -0x1.13b41ap-7f, 0x1.3a002ap-9f};
  static constexpr float q[5] = LOCKSTEP_EXP_Q;
  const V a = abs_lanes(x);
  const V x2 = x * x;
  const V small = mul_add(x * x2, horner(p, x2), x);

  const V t = 2.0f * min_keep_nan(a, splat<V>(10.0f));
  const auto e = detail::exp_parts(t, q);
  const V s = pow2_lanes<V>(e.k), big = s * e.u;  // e^2a = s + big
  const V s1 = s + 1.0f, s1_err = (s - s1) + 1.0f;  // Fast2Sum, s >= 1
  const V dh = s1 + big, dl = ((s1 - dh) + big) + s1_err;
  const V qh = 2.0f / dh, r = 0.5f * qh;  // r = 1/dh rounded, exactly: the only division
  const V ql = (mul_add(-qh, dh, splat<V>(2.0f)) - qh * dl) * r;
  const V w = 1.0f - qh, w_err = (1.0f - w) - qh;  // Fast2Sum, 1 >= qh
  const V large = copysign_lanes(w + (w_err - ql), x);

  const V y = select(a < 0.55f, select(x == 0.0f, x, small), large);
  return select(x != x, quiet_nan_lanes(x), y);
}

/// Error function. Method (on a = |x|): a < 1: a + a p(a^2) (minimax, degree 6); [1, 1.75), [1.75, 2.5),
/// [2.5, 3.25), [3.25, 4): 1 - q_i(a - m_i) (minimax for erfc, degree 9, m_i the midpoints, picked by lookup);
/// a >= 4: 1. Sign restored. Special: NaN -> NaN; erf(-0) = -0; denormals -> x (rounded x + x p).
template <class V>
LOCKSTEP_LANE V erf_f32(V x) {
  static constexpr float p[7] = {0x1.06eba8p-3f,  -0x1.81273ep-2f, 0x1.ce2cf8p-4f, -0x1.b7f908p-6f,
                                 0x1.54057cp-8f, -0x1.a3f532p-11f, 0x1.4964aep-14f};
  // Column j holds coefficient j of the four erfc pieces, so that lookup4 picks a piece's coefficient.
  static constexpr float q[10][4] = {
      {0x1.a8973cp-5f, 0x1.5bde72p-9f, 0x1.916f7ap-15f, 0x1.3ce7ap-22f},
      {-0x1.5ce596p-3f, -0x1.94624ep-7f, -0x1.30538ep-12f, -0x1.296a78p-19f},
      {0x1.dfbbbp-3f, 0x1.ada86ep-6f, 0x1.b5784cp-11f, 0x1.0d874p-17f},
      {-0x1.4374dep-3f, -0x1.0ea47p-5f, -0x1.89e19cp-10f, -0x1.394abcp-16f},
      {0x1.f3b5d4p-6f, 0x1.afe67cp-6f, 0x1.ed45dp-10f, 0x1.058748p-15f},
      {0x1.f578dp-6f, -0x1.997722p-7f, -0x1.c11ae6p-10f, -0x1.4c26b4p-15f},
      {-0x1.6adb1ep-6f, 0x1.dc089ep-10f, 0x1.2b3fccp-10f, 0x1.4a40ccp-15f},
      {0x1.6e77dcp-10f, 0x1.eb9426p-10f, -0x1.159bf2p-11f, -0x1.07f6fap-15f},
      {0x1.0fac38p-8f, -0x1.5f0716p-10f, 0x1.03709ap-13f, 0x1.66ddf6p-16f},
      {-0x1.797d28p-10f, 0x1.0714ap-12f, 0x1.746f4ap-16f, -0x1.5bf522p-17f},
  };
  static constexpr float mid[4] = {1.375f, 2.125f, 2.875f, 3.625f};
  const V a = abs_lanes(x);
  const V small = mul_add(a, horner(p, a * a), a);

  const lane_int_t<V> zero = detail::splat_int<V>(0), one = detail::splat_int<V>(1);
  const lane_int_t<V> piece = select(a >= 1.75f, one, zero) + select(a >= 2.5f, one, zero) +
                              select(a >= 3.25f, one, zero);
  const V d = a - lookup4(mid, piece);
  V acc = lookup4(q[9], piece);
  for (int j = 8; j >= 0; --j) acc = mul_add(acc, d, lookup4(q[j], piece));
  const V tail = select(a >= 4.0f, splat<V>(1.0f), 1.0f - acc);

  const V y = copysign_lanes(select(a < 1.0f, small, tail), x);
  return select(x != x, quiet_nan_lanes(x), y);
}

/// Logistic sigmoid 1 / (1 + e^-|x|) (x >= 0) or e^-|x| / (1 + e^-|x|) (x < 0). Method: e^-|x| from exp_parts as an
/// exact float pair (scaled_pair), 1 + e by Fast2Sum, the quotient n / d as n * (1/d) (faithful) corrected by its
/// exact remainder (one division per element): only u's rounding and the last addition round noticeably. For e < 2^-100 (x < -69.3) the result is e itself (rounded once).
/// Special: NaN -> NaN; x > 17.3 -> 1 (rounds there); x < -104 (incl. -inf) -> +0.
template <class V>
LOCKSTEP_LANE V sigmoid_f32(V x) {
  static constexpr float q[5] = LOCKSTEP_EXP_Q;
  const V t = max_keep_nan(-abs_lanes(x), splat<V>(-104.0f));
  const auto e = detail::exp_parts(t, q);
  const auto tiny = e.k < -100;
  const auto kc = select(tiny, detail::splat_int<V>(-100), e.k);
  const auto ep = detail::scaled_pair<V>(kc, e.u);
  const V dh = 1.0f + ep.hi, dl = ((1.0f - dh) + ep.hi) + ep.lo;  // Fast2Sum, 1 >= e
  const auto positive = x >= 0.0f;
  const V nh = select(positive, splat<V>(1.0f), ep.hi), nl = select(positive, splat<V>(0.0f), ep.lo);
  const V r = 1.0f / dh;  // the only division
  const V qh = nh * r;     // faithful, so the remainder nh - qh dh below is exact
  const V y = qh + (mul_add(-qh, dh, nh) + (nl - qh * dl)) * r;
  const V tiny_y = ep.hi * pow2_lanes<V>(e.k - kc);
  return select(x != x, quiet_nan_lanes(x), select(tiny & (x < 0.0f), tiny_y, y));
}

/// Softplus log(1 + e^x). Method: e = e^t as an exact float pair (scaled_pair), t = x for 0 < x < 8, else -|x|;
/// then log1p_of_pair(e), plus x when x >= 8 (log(1 + e^x) = x + log1p(e^-x)). For e < 2^-100 (x < -69.3) the
/// result is e itself, rounded once. Special: NaN -> NaN; +inf -> +inf; x < -104 (incl. -inf) -> +0.
template <class V>
LOCKSTEP_LANE V softplus_f32(V x) {
  static constexpr float q[5] = LOCKSTEP_EXP_Q;
  const auto direct = (x > 0.0f) & (x < 8.0f);
  const V t = max_keep_nan(select(direct, x, -abs_lanes(x)), splat<V>(-104.0f));
  const auto e = detail::exp_parts(t, q);
  const auto tiny = e.k < -100;
  const auto kc = select(tiny, detail::splat_int<V>(-100), e.k);
  const auto ep = detail::scaled_pair<V>(kc, e.u);
  const V l = detail::log1p_of_pair(ep.hi, ep.lo);
  const V y = select(x >= 8.0f, x + l, l);
  const V tiny_y = ep.hi * pow2_lanes<V>(e.k - kc);
  return select(x != x, quiet_nan_lanes(x), select(tiny & (x < 0.0f), tiny_y, y));
}

namespace detail {

/// e^r for r = r_hi + r_lo, |r| <= ln2/2, as a pair (relative error about 2^-26.5, where u alone has 2^-25.5):
/// 1 + r_hi exactly by Fast2Sum, then the rest r_lo + r^2 q(r) added by Fast2Sum.
template <class V, int N>
LOCKSTEP_LANE FloatPair<V> exp_of_remainder(FloatPair<V> r, const float (&q)[N]) {
  const V rr = r.hi + r.lo;
  const V rest = mul_add(rr * rr, horner(q, rr), r.lo);
  const auto one = fast_two_sum(splat<V>(1.0f), r.hi);
  const auto sum = fast_two_sum(one.hi, rest);
  return {sum.hi, sum.lo + one.lo};
}

/// (e^a + sign e^-a) / 2 for 0 <= a <= 89.5 (sign +1: cosh; -1: sinh, used for a >= 0.55 only). Method: a = k ln2 +
/// r; the result is 2^(k-1) (e^r + sign 2^-2k e^-r), both exponentials as pairs of exp_of_remainder, the sum of the
/// high parts by Fast2Sum (e^r is the larger), the low parts added, one rounding, then 2^(k-1) in two exact steps
/// (k - 1 reaches 128 below the overflow threshold). 2^-2k stops at 2^-80, where the term is below e^r's last bit.
template <class V>
LOCKSTEP_LANE V exp_half_sum(V a, float sign) {
  static constexpr float q[5] = LOCKSTEP_EXP_Q;
  const V shifted = mul_add(a, splat<V>(kInvLn2), splat<V>(kRoundMagic));
  const lane_int_t<V> k = as_int(shifted) - as_int(kRoundMagic);
  const auto r = ln2_remainder(a, shifted - kRoundMagic);
  const auto up = exp_of_remainder(r, q);
  const auto down = exp_of_remainder<V>({-r.hi, -r.lo}, q);
  const lane_int_t<V> kc = select(k > 40, splat_int<V>(40), k);
  const V c = sign * pow2_lanes<V>(-(kc + kc));
  const auto sum = fast_two_sum(up.hi, c * down.hi);
  const V m = sum.hi + (sum.lo + mul_add(c, down.lo, up.lo));
  const lane_int_t<V> k1 = (k - 1) >> 1;
  return (m * pow2_lanes<V>(k1)) * pow2_lanes<V>(k - 1 - k1);
}

}  // namespace detail

/// Hyperbolic sine. Method (on a = |x|): a < 0.55: a + a^3 P(a^2) (minimax, degree 3); otherwise
/// detail::exp_half_sum(min(a, 89.5), -1), which keeps e^a and e^-a as pairs so that their difference (a factor
/// coth(a) <= 2 on the error) still leaves the result within 1 ulp. Sign restored.
/// Special: NaN -> NaN; +-0 -> +-0; |x| > 0x1.65a9f8p+6 (incl. inf) -> +-inf; denormals -> x.
template <class V>
LOCKSTEP_LANE V sinh_f32(V x) {
  static constexpr float p[4] = {0x1.555556p-3f, 0x1.111112p-7f, 0x1.a0177cp-13f, 0x1.74597ap-19f};
  const V a = abs_lanes(x);
  const V a2 = a * a;
  const V small = mul_add(a * a2, horner(p, a2), a);
  const V large = detail::exp_half_sum(min_keep_nan(a, splat<V>(89.5f)), -1.0f);
  const V y = copysign_lanes(select(a < 0.55f, small, large), x);
  return select(x != x, quiet_nan_lanes(x), y);
}

/// Hyperbolic cosine. Method: detail::exp_half_sum(min(|x|, 89.5), +1) (a sum of two positive terms).
/// Special: NaN -> NaN; cosh(+-0) = 1; |x| > 0x1.65a9f8p+6 (incl. inf) -> +inf.
template <class V>
LOCKSTEP_LANE V cosh_f32(V x) {
  const V y = detail::exp_half_sum(min_keep_nan(abs_lanes(x), splat<V>(89.5f)), 1.0f);
  return select(x != x, quiet_nan_lanes(x), y);
}

namespace detail {

/// sqrt(h + l) as a pair, for h >= 0 and |l| far below h: the rounded root r, corrected by the exact remainder
/// h - r^2 (one fma) plus l, over 2r.
template <class V>
LOCKSTEP_LANE FloatPair<V> sqrt_pair(V h, V l) {
  const V r = sqrt_lanes(h);
  return {r, (mul_add(-r, r, h) + l) / (r + r)};
}

/// log(a + sqrt(a^2 + sign)) for 0 <= a < 2^13 (sign +1: asinh; -1: acosh, a > 1). Method: a^2 as an exact pair
/// (fma), plus sign by TwoSum, its root by sqrt_pair, a + root by TwoSum; then log1p_of_pair(s - 1, rest), where
/// s - 1 is exact (s in [1, 2^24]: Sterbenz below 2, a multiple of s's ulp above).
template <class V>
LOCKSTEP_LANE V log_of_root_sum(V a, float sign) {
  const V sq = a * a, sq_lo = mul_add(a, a, -sq);
  const auto radicand = two_sum(sq, splat<V>(sign));
  const auto root = sqrt_pair(radicand.hi, radicand.lo + sq_lo);
  const auto s = two_sum(a, root.hi);
  return log1p_of_pair(s.hi - 1.0f, s.lo + root.lo);
}

/// log(2a) for a normal positive a: log_of_reduced of a's binade split, with k + 1.
template <class V>
LOCKSTEP_LANE V log_of_twice(V a) {
  const auto sp = split_binade<V>(as_int(a));
  return log_of_reduced(sp.m - 1.0f, float_of_small_int<V>(sp.k + 1), splat<V>(0.0f));
}

}  // namespace detail

/// Inverse hyperbolic sine. Method (on a = |x|): a < 2^-12: a itself (a^3/6 is below 0.1 ulp; log1p's second-order
/// terms would not cancel to the last bit there); a < 2^13: log(a + sqrt(a^2 + 1)) by detail::log_of_root_sum;
/// a >= 2^13: log(2a) (the dropped 1/(4a^2) is below 2^-28). Sign restored.
/// Special: NaN -> NaN; +-0 -> +-0; +-inf -> +-inf.
template <class V>
LOCKSTEP_LANE V asinh_f32(V x) {
  const V a = abs_lanes(x);
  const V y = select(a < 0x1p13f, detail::log_of_root_sum(a, 1.0f), detail::log_of_twice(a));
  const V r = copysign_lanes(select(a == detail::kInf, a, select(a < 0x1p-12f, a, y)), x);
  return select(x != x, quiet_nan_lanes(x), r);
}

/// Inverse hyperbolic cosine. Method: x < 2^13: log(x + sqrt(x^2 - 1)) by detail::log_of_root_sum; x >= 2^13:
/// log(2x) (the dropped -1/(4x^2) is below 2^-28).
/// Special: NaN -> NaN; acosh(1) = +0; +inf -> +inf; x < 1 (incl. -inf) -> NaN.
template <class V>
LOCKSTEP_LANE V acosh_f32(V x) {
  const V y = select(x < 0x1p13f, detail::log_of_root_sum(x, -1.0f), detail::log_of_twice(x));
  V special = select(x == detail::kInf, x, select(x == 1.0f, splat<V>(0.0f), y));
  special = select(x < 1.0f, detail::default_nan_lanes<V>(), special);
  return select(x != x, quiet_nan_lanes(x), special);
}

/// Inverse hyperbolic tangent. Method (on a = |x|): log1p(2a / (1 - a)) / 2, with 1 - a as an exact pair
/// (Fast2Sum) and the quotient corrected by its exact remainder, so that detail::log1p_of_pair sees the argument
/// to about 2^-48. Sign restored.
/// Special: NaN -> NaN; +-0 -> +-0; +-1 -> +-inf; |x| > 1 -> NaN; denormals -> x.
template <class V>
LOCKSTEP_LANE V atanh_f32(V x) {
  const V a = abs_lanes(x);
  const auto d = detail::fast_two_sum(splat<V>(1.0f), -a);
  const V n = a + a;
  const V qh = n / d.hi;
  const V ql = (mul_add(-qh, d.hi, n) - qh * d.lo) / d.hi;
  const V y = 0.5f * detail::log1p_of_pair(qh, ql);
  const V r = copysign_lanes(select(a == 1.0f, splat<V>(detail::kInf), y), x);
  const V special = select(a > 1.0f, detail::default_nan_lanes<V>(), r);
  return select(x != x, quiet_nan_lanes(x), special);
}

namespace detail {

constexpr float kPiHi = 0x1.921fb6p+1f, kPiLo = -0x1.777a5cp-24f;  // pi = hi + lo to about 2^-48

/// base + factor (w_hi + w_lo) rounded once, for base = 0 or |base_hi| >= |factor w_hi|, factor a power of two
/// (times +-1): the product exact, its sum with base_hi by Fast2Sum, then the low parts.
template <class V>
LOCKSTEP_LANE V angle_sum(V base_hi, V base_lo, V factor, V w_hi, V w_lo) {
  const auto s = fast_two_sum(base_hi, factor * w_hi);
  return s.hi + (s.lo + mul_add(factor, w_lo, base_lo));
}

/// asin of 0 <= a <= 1 as pieces that asin and acos combine: a <= 1/2: w = asin(a) = a + a^3 p(a^2) (minimax,
/// degree 6); a > 1/2 (reflected): asin(a) = pi/2 - 2w with w = asin(s), s = sqrt((1 - a) / 2) (the halved
/// difference exact by Sterbenz) with the root's remainder in w_lo.
template <class V>
struct AsinParts {
  V w_hi, w_lo;
  decltype(V{} < V{}) reflected;
};
template <class V>
LOCKSTEP_LANE AsinParts<V> asin_parts(V a) {
  static constexpr float p[7] = {0x1.555556p-3f, 0x1.3332aap-4f, 0x1.6ddacap-5f, 0x1.ed5bf8p-6f,
                                 0x1.9326fap-6f, 0x1.ebc608p-8f, 0x1.1be142p-5f};
  const auto reflected = a > 0.5f;
  const V z = 0.5f * (1.0f - a);
  const auto root = sqrt_pair(z, splat<V>(0.0f));
  const V w = select(reflected, root.hi, a);
  const V w2 = w * w;
  const V tail = (w * w2) * horner(p, w2);
  return {w, select(reflected & (z > 0.0f), root.lo, splat<V>(0.0f)) + tail, reflected};
}

}  // namespace detail

/// Arcsine. Method (on a = |x|): detail::asin_parts; a <= 1/2: w; a > 1/2: pi/2 - 2w by detail::angle_sum (pi/2
/// as a pair). Sign restored. Special: NaN -> NaN; +-0 -> +-0; +-1 -> +-pi/2 rounded; |x| > 1 -> NaN.
template <class V>
LOCKSTEP_LANE V asin_f32(V x) {
  const V a = abs_lanes(x);
  const auto w = detail::asin_parts(a);
  const V zero = splat<V>(0.0f);
  const V y = detail::angle_sum(select(w.reflected, splat<V>(0.5f * detail::kPiHi), zero),
                                select(w.reflected, splat<V>(0.5f * detail::kPiLo), zero),
                                select(w.reflected, splat<V>(-2.0f), splat<V>(1.0f)), w.w_hi, w.w_lo);
  const V r = select(a > 1.0f, detail::default_nan_lanes<V>(), copysign_lanes(y, x));
  return select(x != x, quiet_nan_lanes(x), r);
}

/// Arccosine. Method: detail::asin_parts of a = |x|; |x| <= 1/2: pi/2 - sign(x) w; x > 1/2: 2w; x < -1/2: pi - 2w;
/// each by detail::angle_sum (pi and pi/2 as pairs).
/// Special: NaN -> NaN; acos(+-0) = pi/2 rounded; acos(1) = +0; acos(-1) = pi rounded; |x| > 1 -> NaN.
template <class V>
LOCKSTEP_LANE V acos_f32(V x) {
  const V a = abs_lanes(x);
  const auto w = detail::asin_parts(a);
  const auto negative = x < 0.0f;
  const V half = select(w.reflected, splat<V>(0.0f), splat<V>(0.5f));  // base: half pi, or pi / 0 when reflected
  const V base = select(w.reflected & negative, splat<V>(1.0f), half);
  const V factor = select(w.reflected, splat<V>(2.0f), splat<V>(-1.0f));
  const V y = detail::angle_sum(base * detail::kPiHi, base * detail::kPiLo, select(negative, -factor, factor),
                                w.w_hi, w.w_lo);
  const V r = select(a > 1.0f, detail::default_nan_lanes<V>(), y);
  return select(x != x, quiet_nan_lanes(x), r);
}

/// Arctangent. Method (on a = |x|, clamped to 2^64): atan(a) = base + atan(v) with v = a (base 0) for
/// a <= tan(pi/8), v = (a - 1) / (a + 1) (base pi/4) up to tan(3pi/8), v = -1/a (base pi/2) beyond, so |v| <=
/// tan(pi/8); numerator and denominator as exact pairs (TwoSum), v corrected by its exact remainder;
/// atan(v) = v + v^3 p(v^2) (minimax, degree 6); the sum by detail::angle_sum. Sign restored.
/// Special: NaN -> NaN; +-0 -> +-0; +-inf -> +-pi/2 rounded; denormals -> x.
template <class V>
LOCKSTEP_LANE V atan_f32(V x) {
  static constexpr float p[7] = {-0x1.555556p-2f, 0x1.999992p-3f, -0x1.2490c2p-3f, 0x1.c6d1ep-4f,
                                 -0x1.70824p-4f,  0x1.1e5a1ep-4f, -0x1.36a56ep-5f};
  const V a = min_keep_nan(abs_lanes(x), splat<V>(0x1p64f));
  const auto mid = a > 0x1.a8279ap-2f, far = a > 0x1.3504f4p+1f;
  const V zero = splat<V>(0.0f), one = splat<V>(1.0f);
  const auto num = detail::two_sum(a, -one), den = detail::two_sum(a, one);
  const V n_hi = select(far, -one, select(mid, num.hi, a)), n_lo = select(far, zero, select(mid, num.lo, zero));
  const V d_hi = select(far, a, select(mid, den.hi, one)), d_lo = select(far, zero, select(mid, den.lo, zero));
  const V v = n_hi / d_hi;
  const V v_lo = ((mul_add(-v, d_hi, n_hi) + n_lo) - v * d_lo) / d_hi;
  const V z = v * v;
  const V tail = (v * z) * horner(p, z);
  const V base = select(far, splat<V>(0.5f), select(mid, splat<V>(0.25f), zero));
  const V y = detail::angle_sum(base * detail::kPiHi, base * detail::kPiLo, one, v, v_lo + tail);
  return select(x != x, quiet_nan_lanes(x), copysign_lanes(y, x));
}

#undef LOCKSTEP_EXP_Q

}  // namespace lockstep::arith
