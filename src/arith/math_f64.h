// The binary64 exp and log of the ops that compute in double (Exp, Log, ReduceLogSumExp on double inputs;
// docs/arithmetic.md#binary64-exp-and-log).
//
// Built only from IEEE-754 binary64 basic operations, fma_f64 (bits.h: std::fma on the host, __fma_rn on the GPU,
// both the single-rounding IEEE fusedMultiplyAdd), comparisons, conversions of exact small integers and bit
// manipulation: no libm or CUDA math call, so the CPU and CUDA builds return the same bits. Scalar code with
// branches (there is no SIMD path for double). Contraction must be off: a*b+c is two roundings unless written fma.
//
// Accuracy: within 1 ulp of the correctly rounded result; measured by tests/arith/math_f64_check.cpp (10 million
// random inputs per function against long double references; the figures are in docs/arithmetic.md) and checked
// by tests/cpp/test_math_f64.cpp and tests/test_math_f64.py. NaN outputs: a NaN input is returned with its quiet bit set; log of a negative
// number returns the canonical quiet NaN 0x7ff8000000000000.
#pragma once

#include <cstdint>

#include "bits.h"
#include "hd.h"

namespace lockstep::arith {

namespace detail_f64 {

// Bit patterns: the quiet bit of a NaN, the canonical quiet NaN, +inf, -inf.
constexpr uint64_t kQuietBit = 0x0008000000000000ull, kDefaultNaN = 0x7ff8000000000000ull,
                   kPosInf = 0x7ff0000000000000ull, kNegInf = 0xfff0000000000000ull;

constexpr double kInvLn2 = 0x1.71547652b82fep+0;
// ln2 = kLn2Hi + kLn2Lo to about 2^-96: kLn2Hi has 39 significant bits, so k * kLn2Hi is exact for |k| < 2^14.
constexpr double kLn2Hi = 0x1.62e42fefa4000p-1;
constexpr double kLn2Lo = -0x1.8432a1b0e2634p-43;
constexpr double kRoundMagic = 0x1.8p52;  // (v + magic) - magic rounds v to an integer, |v| < 2^51
constexpr uint64_t kSqrt2Bits = 0x3ff6a09e667f3bcdull;  // sqrt(2) rounded (just above it)

LOCKSTEP_HD double quiet(double x) { return double_of(bits_of(x) | kQuietBit); }

/// a + b as an exact pair (hi, lo) when |a| >= |b| or a = 0 (Fast2Sum).
struct Pair {
  double hi, lo;
};
LOCKSTEP_HD Pair fast_two_sum(double a, double b) {
  const double s = a + b;
  return {s, (a - s) + b};
}

/// Horner with one fma per step: c[0] + c[1] u + ... + c[N-1] u^(N-1), from c[N-1] down.
template <int N>
LOCKSTEP_HD double horner_fma(const double (&c)[N], double u) {
  double acc = c[N - 1];
  for (int i = N - 2; i >= 0; --i) acc = fma_f64(acc, u, c[i]);
  return acc;
}

/// 2^e for a normal exponent, -1022 <= e <= 1023, from the bits.
LOCKSTEP_HD double pow2(int e) { return double_of(static_cast<uint64_t>(e + 1023) << 52); }

}  // namespace detail_f64

/// e^x in binary64. Method: t = x clamped to [-746, 710]; k = round(t / ln2) (the round-to-integer magic);
/// r = t - k ln2 as r_hi + r_lo with r_hi = t - k * kLn2Hi exact (the product has at most 50 bits and the
/// difference is exact by Sterbenz) and r_lo = -(k * kLn2Lo); |r| <= ln2/2 (+1e-13).
/// e^r - 1 - r = r^2 q(r), q the Taylor polynomial 1/2! + r/3! + ... + r^12/14! (truncation < 1e-19 relative),
/// Horner with fma; r = r_hi + r_lo rounded feeds q; then 1 + r_hi as an exact pair (Fast2Sum),
/// m = hi + (lo + fma(r*r, q, r_lo)) (one last rounding); the result m 2^k1 2^(k-k1), k1 = floor(k/2), the first
/// product exact, the second rounding once (overflow to +inf, gradual underflow to denormals and 0).
/// Special: NaN -> NaN (quiet); +inf -> +inf; -inf -> +0; e^+-0 = 1.
LOCKSTEP_HD double exp_f64(double x) {
  namespace d = detail_f64;
  static constexpr double q[13] = {
      0x1.0000000000000p-1,  0x1.5555555555555p-3,  0x1.5555555555555p-5,  0x1.1111111111111p-7,
      0x1.6c16c16c16c17p-10, 0x1.a01a01a01a01ap-13, 0x1.a01a01a01a01ap-16, 0x1.71de3a556c734p-19,
      0x1.27e4fb7789f5cp-22, 0x1.ae64567f544e4p-26, 0x1.1eed8eff8d898p-29, 0x1.6124613a86d09p-33,
      0x1.93974a8c07c9dp-37,
  };
  if (x != x) return d::quiet(x);
  const double t = x < -746.0 ? -746.0 : x > 710.0 ? 710.0 : x;
  const double kd = (t * d::kInvLn2 + d::kRoundMagic) - d::kRoundMagic;
  const int k = static_cast<int>(kd);  // an integer value, |k| <= 1076: exact
  const double r_hi = t - kd * d::kLn2Hi;
  const double r_lo = -(kd * d::kLn2Lo);
  const double r = r_hi + r_lo;
  const double rest = fma_f64(r * r, d::horner_fma(q, r), r_lo);
  const d::Pair one = d::fast_two_sum(1.0, r_hi);
  const double m = one.hi + (one.lo + rest);
  const int k1 = k >> 1;  // arithmetic shift: floor(k / 2)
  return (m * d::pow2(k1)) * d::pow2(k - k1);
}

/// Natural logarithm in binary64. Method: denormals scaled by 2^54; x = 2^k m with m in [sqrt(1/2), sqrt(2)) from
/// the bits; f = m - 1 (exact); s = f / (2 + f); log(1 + f) = f - h + s (h + R), h = f^2 / 2, R(z) = z P(z),
/// z = s^2, P the series 2/3 + 2/5 z + ... + 2/23 z^10 of 2 atanh(s) = 2s + s R (truncation < 2e-20 relative),
/// Horner with fma. Assembly: f^2 as an exact pair (fma), halved; f - h as an exact pair (Fast2Sum, |f| >= h);
/// k kLn2Hi (exact) + (f - h)_hi as an exact pair (Fast2Sum, k = 0 or |k ln2| > |f - h|); then
/// hi + (lo + (((f - h)_lo - h_lo) + (s (h + R) + k kLn2Lo))), one last rounding.
/// Special: NaN -> NaN (quiet); +-0 -> -inf; x < 0 (incl. -inf) -> NaN 0x7ff8000000000000; +inf -> +inf;
/// log(1) = +0.
LOCKSTEP_HD double log_f64(double x) {
  namespace d = detail_f64;
  static constexpr double p[11] = {
      0x1.5555555555555p-1, 0x1.999999999999ap-2, 0x1.2492492492492p-2, 0x1.c71c71c71c71cp-3,
      0x1.745d1745d1746p-3, 0x1.3b13b13b13b14p-3, 0x1.1111111111111p-3, 0x1.e1e1e1e1e1e1ep-4,
      0x1.af286bca1af28p-4, 0x1.8618618618618p-4, 0x1.642c8590b2164p-4,
  };
  if (x != x) return d::quiet(x);
  if (x == 0.0) return double_of(d::kNegInf);
  if (x < 0.0) return double_of(d::kDefaultNaN);
  if (bits_of(x) == d::kPosInf) return x;
  int k = 0;
  if (x < 0x1p-1022) {
    x = x * 0x1p54;  // exact: denormals become normal
    k = -54;
  }
  const uint64_t b = bits_of(x);
  k += static_cast<int>(b >> 52) - 1023;
  uint64_t mb = (b & 0x000fffffffffffffull) | 0x3ff0000000000000ull;
  if (mb > d::kSqrt2Bits) {
    mb -= 0x0010000000000000ull;  // m / 2
    k += 1;
  }
  const double f = double_of(mb) - 1.0;
  const double s = f / (2.0 + f);
  const double z = s * s;
  const double R = z * d::horner_fma(p, z);
  const double ff = f * f;
  const double h = 0.5 * ff, h_lo = 0.5 * fma_f64(f, f, -ff);
  const d::Pair fh = d::fast_two_sum(f, -h);
  const double kd = static_cast<double>(k);
  const d::Pair top = d::fast_two_sum(kd * d::kLn2Hi, fh.hi);
  const double lo = (fh.lo - h_lo) + (s * (h + R) + kd * d::kLn2Lo);
  return top.hi + (top.lo + lo);
}

}  // namespace lockstep::arith
