// lockstep shared scalar math library (DESIGN.md section 3, "Math functions").
//
// Every function here is built only from IEEE-754 basic operations (+ - * / on float and double, conversions
// between float, double and integers, all round-to-nearest-even), integer/bit manipulation, comparisons and
// constants. No libm / CUDA math function is called, so the CPU (g++ -O2 -ffp-contract=off, no -ffast-math) and
// the CUDA build (nvcc --fmad=false --prec-div=true --prec-sqrt=true --ftz=false) produce the same bits.
//
// Design: each function widens its float argument to double (exact), evaluates a double-precision algorithm whose
// relative error is below ~1e-15, and rounds once to float. The result is therefore within 0.5 + 2^24 * 1e-15 ulp
// of the exact value, i.e. it is the correctly rounded float except in rare near-halfway cases, where it is the
// other neighbour (1 ulp from the correctly rounded result). Measured over all 2^32 inputs: <= 1 ulp for every
// function (see docs/arithmetic.md#scalar-function-methods and tests/arith/exhaustive_math.cpp).
// Double was chosen over float+fma because (a) it makes the <= 1 ulp bound hold by construction, for composite
// functions too (sigmoid, softplus, tanh, pow), (b) the polynomials need no fma (so no libm fmaf call on hosts
// compiled without -mfma), and (c) FP64 runs at half the FP32 rate on H100/H200. On GPUs with slow FP64 (consumer
// parts) float kernels would be faster; changing that changes the contract on both devices.
//
// NaN outputs are deterministic: a NaN input is returned with its quiet bit set; an invalid operation (log(-1),
// sin(inf), pow(-2, 0.5), ...) returns the canonical quiet NaN 0x7fc00000. Denormal inputs and outputs are handled
// exactly (no flush to zero). Contraction must be off: the code relies on a*b+c being two roundings.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#include "hd.h"

namespace lockstep::arith {

// ---------------------------------------------------------------------------------------------- bit helpers

/// Bit pattern of a float.
LOCKSTEP_HD uint32_t bits_of(float x) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(x);
#else
  uint32_t u;
  std::memcpy(&u, &x, sizeof u);
  return u;
#endif
}

/// Float with the given bit pattern.
LOCKSTEP_HD float float_of(uint32_t u) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(u);
#else
  float x;
  std::memcpy(&x, &u, sizeof x);
  return x;
#endif
}

/// Bit pattern of a double.
LOCKSTEP_HD uint64_t bits_of(double x) {
#if defined(__CUDA_ARCH__)
  return static_cast<uint64_t>(__double_as_longlong(x));
#else
  uint64_t u;
  std::memcpy(&u, &x, sizeof u);
  return u;
#endif
}

/// Double with the given bit pattern.
LOCKSTEP_HD double double_of(uint64_t u) {
#if defined(__CUDA_ARCH__)
  return __longlong_as_double(static_cast<long long>(u));
#else
  double x;
  std::memcpy(&x, &u, sizeof x);
  return x;
#endif
}

/// Fused multiply-add a*b+c with a single rounding (IEEE fusedMultiplyAdd). Not used by the functions below;
/// provided for kernels whose contract says "fma".
LOCKSTEP_HD float fma_f32(float a, float b, float c) {
#if defined(__CUDA_ARCH__)
  return __fmaf_rn(a, b, c);
#else
  return std::fma(a, b, c);
#endif
}

namespace detail {

constexpr uint32_t kQuietBit = 0x00400000u;
constexpr uint32_t kDefaultNaN = 0x7fc00000u;
constexpr uint32_t kPosInf = 0x7f800000u;

LOCKSTEP_HD float quiet(float x) { return float_of(bits_of(x) | kQuietBit); }
LOCKSTEP_HD float default_nan() { return float_of(kDefaultNaN); }
LOCKSTEP_HD float inf_f(bool negative) { return float_of(kPosInf | (negative ? 0x80000000u : 0u)); }
LOCKSTEP_HD float zero_f(bool negative) { return float_of(negative ? 0x80000000u : 0u); }
LOCKSTEP_HD float with_sign(float v, bool negative) { return negative ? -v : v; }

constexpr double kLn2 = 0x1.62e42fefa39efp-1;
constexpr double kLn2Hi = 0x1.62e42fee00000p-1;  // 32 significant bits: k*kLn2Hi is exact for |k| < 2^21
constexpr double kLn2Lo = 0x1.a39ef35793c76p-33;
constexpr double kInvLn2 = 0x1.71547652b82fep+0;
constexpr double kPio2 = 0x1.921fb54442d18p+0;
constexpr double kRoundMagic = 0x1.8p52;  // (v + magic) - magic rounds v to an integer, |v| < 2^51
constexpr uint64_t kSqrt2Bits = 0x3ff6a09e667f3bcdull;

// Horner evaluation of c[0] + c[1] u + ... + c[N-1] u^(N-1), separate mul and add (two roundings per step).
template <int N>
LOCKSTEP_HD double horner(const double (&c)[N], double u) {
  double acc = c[N - 1];
  for (int i = N - 2; i >= 0; --i) acc = acc * u + c[i];
  return acc;
}

// e^a in double, valid for |a| <= 700. Method: a = k ln2 + r (Cody-Waite, |r| <= 0.347), Taylor degree 12 for
// e^r (truncation < 2e-16 relative), times 2^k built from bits.
LOCKSTEP_HD double exp_d(double a) {
  static constexpr double c[13] = {
      0x1.0000000000000p+0, 0x1.0000000000000p+0, 0x1.0000000000000p-1, 0x1.5555555555555p-3,
      0x1.5555555555555p-5, 0x1.1111111111111p-7, 0x1.6c16c16c16c17p-10, 0x1.a01a01a01a01ap-13,
      0x1.a01a01a01a01ap-16, 0x1.71de3a556c734p-19, 0x1.27e4fb7789f5cp-22, 0x1.ae64567f544e4p-26,
      0x1.1eed8eff8d898p-29,
  };
  const double kd = (a * kInvLn2 + kRoundMagic) - kRoundMagic;
  const double r = (a - kd * kLn2Hi) - kd * kLn2Lo;
  const int k = static_cast<int>(kd);
  const double scale = double_of(static_cast<uint64_t>(k + 1023) << 52);
  return horner(c, r) * scale;
}

// e^a - 1 in double with relative accuracy, |a| <= 700. Method: |a| < 0.347: a + a^2 * (Taylor degree 11 in a,
// i.e. terms up to a^13/13!); otherwise exp_d(a) - 1 (cancellation at most 2 bits).
LOCKSTEP_HD double expm1_d(double a) {
  static constexpr double c[12] = {
      0x1.0000000000000p-1, 0x1.5555555555555p-3, 0x1.5555555555555p-5, 0x1.1111111111111p-7,
      0x1.6c16c16c16c17p-10, 0x1.a01a01a01a01ap-13, 0x1.a01a01a01a01ap-16, 0x1.71de3a556c734p-19,
      0x1.27e4fb7789f5cp-22, 0x1.ae64567f544e4p-26, 0x1.1eed8eff8d898p-29, 0x1.6124613a86d09p-33,
  };
  if (a > -0.347 && a < 0.347) return a + (a * a) * horner(c, a);
  return exp_d(a) - 1.0;
}

// 2*atanh(s) = log((1+s)/(1-s)) for |s| <= 0.1716. Method: odd Taylor series 2 s sum s^2n/(2n+1), n <= 10
// (truncation < 1e-17 relative).
LOCKSTEP_HD double log_series_d(double s) {
  static constexpr double c[11] = {
      0x1.0000000000000p+0, 0x1.5555555555555p-2, 0x1.999999999999ap-3, 0x1.2492492492492p-3,
      0x1.c71c71c71c71cp-4, 0x1.745d1745d1746p-4, 0x1.3b13b13b13b14p-4, 0x1.1111111111111p-4,
      0x1.e1e1e1e1e1e1ep-5, 0x1.af286bca1af28p-5, 0x1.8618618618618p-5,
  };
  return (2.0 * s) * horner(c, s * s);
}

// log(u) for a positive, finite, normal double u. Method: u = 2^e m with m in [sqrt(1/2), sqrt(2)) from the bits,
// s = (m-1)/(m+1), log(m) = log_series_d(s), result e*ln2 (hi/lo) + log(m).
LOCKSTEP_HD double log_core_d(double u) {
  const uint64_t b = bits_of(u);
  int e = static_cast<int>(b >> 52) - 1023;
  uint64_t mb = (b & 0x000fffffffffffffull) | 0x3ff0000000000000ull;
  if (mb > kSqrt2Bits) {
    mb -= 0x0010000000000000ull;  // m / 2
    e += 1;
  }
  const double m = double_of(mb);
  const double s = (m - 1.0) / (m + 1.0);
  const double ed = static_cast<double>(e);
  return ed * kLn2Hi + (log_series_d(s) + ed * kLn2Lo);
}

// log(1 + a) in double with relative accuracy, a > -1 finite. Method: if 1+a in (0.7071, 1.4142):
// log_series_d(a / (2 + a)); else log_core_d(1 + a).
LOCKSTEP_HD double log1p_d(double a) {
  if (a > -0.2928932188134524 && a < 0.4142135623730950) return log_series_d(a / (2.0 + a));
  return log_core_d(1.0 + a);
}

// sin(r), |r| <= pi/4 (+tiny). Method: Taylor r + r^3 P(r^2), terms up to r^17/17! (truncation < 1e-16 rel).
LOCKSTEP_HD double sin_kernel_d(double r) {
  static constexpr double c[8] = {
      -0x1.5555555555555p-3, 0x1.1111111111111p-7, -0x1.a01a01a01a01ap-13, 0x1.71de3a556c734p-19,
      -0x1.ae64567f544e4p-26, 0x1.6124613a86d09p-33, -0x1.ae7f3e733b81fp-41, 0x1.952c77030ad4ap-49,
  };
  const double z = r * r;
  return r + (r * z) * horner(c, z);
}

// cos(r), |r| <= pi/4 (+tiny). Method: Taylor 1 + r^2 P(r^2), terms up to r^16/16! (truncation < 1e-17).
LOCKSTEP_HD double cos_kernel_d(double r) {
  static constexpr double c[8] = {
      -0x1.0000000000000p-1, 0x1.5555555555555p-5, -0x1.6c16c16c16c17p-10, 0x1.a01a01a01a01ap-16,
      -0x1.27e4fb7789f5cp-22, 0x1.1eed8eff8d898p-29, -0x1.93974a8c07c9dp-37, 0x1.ae7f3e733b81fp-45,
  };
  const double z = r * r;
  return 1.0 + z * horner(c, z);
}

// Payne-Hanek reduction of a finite float |x| >= pi/4 (given as bits ax, sign clear): returns n (mod 4) and r in
// [-pi/4, pi/4] with |x| = (n + r/(pi/2)) * pi/2 mod 2pi. Exact integer arithmetic: the 24-bit significand is
// multiplied by a 96-bit window of the bits of 2/pi (bits above the window only add multiples of 4), giving 2
// quadrant bits and a 94-bit fraction; window truncation error < 2^-70 absolute in units of pi/2.
LOCKSTEP_HD int reduce_pio2(uint32_t ax, double& r) {
  // 2/pi in binary, MSB first, preceded by one zero word so that windows may start before the binary point.
  static constexpr uint32_t w[10] = {
      0x00000000u, 0xa2f9836eu, 0x4e441529u, 0xfc2757d1u, 0xf534ddc0u,
      0xdb629599u, 0x3c439041u, 0xfe5163abu, 0xdebbc561u, 0xb7246e3au,
  };
  const uint64_t M = (ax & 0x007fffffu) | 0x00800000u;          // |x| = M * 2^E
  const int E = static_cast<int>(ax >> 23) - 150;                // -24 <= E <= 104 here
  const int s = E - 1 + 31;                                      // stream position of 2/pi bit number E-1
  const int wi = s >> 5, sh = s & 31;
  uint64_t win[3];
  for (int k = 0; k < 3; ++k) {
    const uint64_t two = (static_cast<uint64_t>(w[wi + k]) << 32) | w[wi + k + 1];
    win[k] = static_cast<uint32_t>(two >> (32 - sh));
  }
  // P = M * (win0 win1 win2) = top * 2^64 + mid * 2^32 + low, 120 bits; weight of bit j is 2^(j - 94).
  uint64_t t = M * win[2];
  const uint64_t low = t & 0xffffffffull;
  t = (t >> 32) + M * win[1];
  const uint64_t mid = t & 0xffffffffull;
  const uint64_t top = (t >> 32) + M * win[0];
  const uint64_t F = ((top & 0x3fffffffull) << 34) | (mid << 2) | (low >> 30);  // fraction bits 93..30
  const uint64_t rest = low & 0x3fffffffull;                                      // fraction bits 29..0
  const int n = static_cast<int>(((top >> 30) + (F >> 63)) & 3u);  // round to nearest quadrant
  const double f = static_cast<double>(static_cast<int64_t>(F)) * 0x1p-64 + static_cast<double>(rest) * 0x1p-94;
  r = f * kPio2;
  return n;
}

// Polynomial pieces for erf (Chebyshev interpolants, mpmath, converted to monomials; error < 2e-16).
// p0: erf(x)/x as a polynomial in (x^2 - 1/2), 0 <= x <= 1.
// p1..p3: erf(x) as polynomials in (x - 1.5), (x - 2.5), (x - 3.5) on [1,2], [2,3], [3,4].
LOCKSTEP_HD double erf_pos_d(double a) {
  static constexpr double p0[14] = {
      0x1.ee51eb23cb7eap-1, -0x1.1fd16292151fdp-2, 0x1.454368017b042p-4, -0x1.2b902b7b2f224p-6,
      0x1.c82aa249df4a1p-9, -0x1.263991b81d62ep-11, 0x1.486638bc934bfp-14, -0x1.429e938bb3fb3p-17,
      0x1.1ad5ee09b7c4dp-20, -0x1.bf8e5ad031f42p-24, 0x1.428e75eef326cp-27, -0x1.aad6f12f0a592p-31,
      0x1.06139757ceda2p-34, -0x1.29b9f1b3df556p-38,
  };
  static constexpr double p1[19] = {
      0x1.eea5557137ae0p-1, 0x1.e723726b824aap-4, -0x1.6d5a95d0a1b7fp-3, 0x1.1c2a02beb6a4ep-3,
      -0x1.6d5a95d0a1b9ap-5, -0x1.e723726b65120p-7, 0x1.3ca3d72c48d50p-6, -0x1.36d73a692d053p-8,
      -0x1.35ae4e3a506c1p-9, 0x1.c0380e362faa7p-10, -0x1.85b5f31adf4f4p-14, -0x1.0acf49b689f6bp-12,
      0x1.45daf1c03c5edp-14, 0x1.2d5ccda7d2cefp-16, -0x1.d8d8db718a3f0p-17, 0x1.3122d618518c5p-21,
      0x1.9aed5951c72f6p-20, -0x1.2d677be6d86b7p-22, -0x1.b20a125165c54p-24,
  };
  static constexpr double p2[18] = {
      0x1.ffcaa8f4c9beap-1, 0x1.1d83170fbf6fcp-9, -0x1.64e3dcd3af2d3p-8, 0x1.119da0c46cc88p-7,
      -0x1.1a89b97cf1214p-7, 0x1.90e81283fccadp-8, -0x1.6ecdbf63b4dcep-9, 0x1.1c610bc8e5f86p-11,
      0x1.11551b52fb796p-12, -0x1.06717857ad0fap-12, 0x1.4a84c20123815p-14, 0x1.58bbca2bba994p-18,
      -0x1.d88c48f8a82b3p-17, 0x1.3ad68181439ecp-18, 0x1.9f3af4d2b1565p-23, -0x1.595d63766c65ep-21,
      0x1.495bf0556d5dep-23, 0x1.8353e53661806p-26,
  };
  static constexpr double p3[16] = {
      0x1.ffffe710d565ep-1, 0x1.6a597219a8b85p-18, -0x1.3d0e43d70cf42p-16, 0x1.62ccea63ec5dap-15,
      -0x1.1c07720e3fe19p-14, 0x1.586bafc441994p-14, -0x1.4615414a08ecfp-14, 0x1.e827fc58e8002p-15,
      -0x1.1f62d3ce576c5p-15, 0x1.0134fae85086ap-16, -0x1.37811cd545801p-18, 0x1.dddb4d7805a03p-22,
      0x1.e0532ff397fe4p-22, -0x1.459f5261ef7a8p-22, 0x1.67572b0a47f38p-24, -0x1.eb4266f96455dp-30,
  };
  if (a < 1.0) return a * horner(p0, a * a - 0.5);
  if (a < 2.0) return horner(p1, a - 1.5);
  if (a < 3.0) return horner(p2, a - 2.5);
  return horner(p3, a - 3.5);
}

// Integer class of a finite nonzero float magnitude (bits): 0 = not an integer, 1 = odd integer, 2 = even.
LOCKSTEP_HD int int_class(uint32_t ay) {
  const int e = static_cast<int>(ay >> 23) - 127;
  if (e < 0) return 0;
  if (e >= 24) return 2;
  const uint32_t mant = (ay & 0x007fffffu) | 0x00800000u;
  const int fb = 23 - e;
  if (mant & ((1u << fb) - 1u)) return 0;
  return ((mant >> fb) & 1u) ? 1 : 2;
}

}  // namespace detail

// ------------------------------------------------------------------------------------------- public API

/// e^x. Method: double exp_d (Cody-Waite ln2 reduction + Taylor degree 12), one rounding to float.
/// Special: NaN -> NaN; x > 89 (incl. +inf) -> +inf; x < -104 (incl. -inf) -> +0; denormal results exact-rounded.
LOCKSTEP_HD float exp_f32(float x) {
  if (x != x) return detail::quiet(x);
  if (x > 89.0f) return detail::inf_f(false);
  if (x < -104.0f) return 0.0f;
  return static_cast<float>(detail::exp_d(static_cast<double>(x)));
}

/// e^x - 1. Method: |x| < 0.347: x + x^2 * Taylor degree 11 (double); else exp_d(x) - 1; one rounding.
/// Special: NaN -> NaN; |x| < 2^-28 -> x (keeps -0); x > 89 -> +inf; x < -40 (incl. -inf) -> -1.
LOCKSTEP_HD float expm1_f32(float x) {
  if (x != x) return detail::quiet(x);
  if ((bits_of(x) & 0x7fffffffu) < 0x31800000u) return x;  // |x| < 2^-28
  if (x > 89.0f) return detail::inf_f(false);
  if (x < -40.0f) return -1.0f;
  return static_cast<float>(detail::expm1_d(static_cast<double>(x)));
}

/// Natural logarithm. Method: exponent/mantissa split (m in [sqrt(1/2), sqrt(2))), atanh series degree 21 in
/// s = (m-1)/(m+1), e*ln2 added in hi/lo parts (double); one rounding.
/// Special: NaN -> NaN; +-0 -> -inf; x < 0 (incl. -inf) -> NaN; +inf -> +inf; log(1) = +0; denormals exact.
LOCKSTEP_HD float log_f32(float x) {
  const uint32_t ix = bits_of(x);
  if ((ix & 0x7fffffffu) > detail::kPosInf) return detail::quiet(x);
  if ((ix & 0x7fffffffu) == 0) return detail::inf_f(true);
  if (ix >> 31) return detail::default_nan();
  if (ix == detail::kPosInf) return x;
  return static_cast<float>(detail::log_core_d(static_cast<double>(x)));
}

/// log(1 + x). Method: 1+x in (0.707, 1.414): atanh series in s = x/(2+x); else log of 1+x (double, 1+x exact for
/// x < 2^29); one rounding. Special: NaN -> NaN; |x| < 2^-30 -> x (keeps -0); -1 -> -inf; x < -1 -> NaN;
/// +inf -> +inf.
LOCKSTEP_HD float log1p_f32(float x) {
  if (x != x) return detail::quiet(x);
  if ((bits_of(x) & 0x7fffffffu) < 0x30800000u) return x;  // |x| < 2^-30
  if (x == -1.0f) return detail::inf_f(true);
  if (x < -1.0f) return detail::default_nan();
  if (bits_of(x) == detail::kPosInf) return x;
  return static_cast<float>(detail::log1p_d(static_cast<double>(x)));
}

/// Hyperbolic tangent. Method: t = expm1_d(2|x|), tanh = t / (t + 2) (double), sign restored; one rounding.
/// Special: NaN -> NaN; |x| < 2^-13 -> x (keeps -0, denormals); |x| >= 10 (incl. inf) -> +-1.
LOCKSTEP_HD float tanh_f32(float x) {
  if (x != x) return detail::quiet(x);
  const uint32_t ax = bits_of(x) & 0x7fffffffu;
  const bool neg = (bits_of(x) >> 31) != 0;
  if (ax < 0x39000000u) return x;  // |x| < 2^-13
  if (ax >= 0x41200000u) return neg ? -1.0f : 1.0f;  // |x| >= 10
  const double t = detail::expm1_d(2.0 * static_cast<double>(float_of(ax)));
  return detail::with_sign(static_cast<float>(t / (t + 2.0)), neg);
}

/// Error function. Method (double, on |x|): [0,1): x * P13(x^2 - 1/2); [1,2), [2,3), [3,4): polynomials of degree
/// 18, 17, 15 in (|x| - midpoint) (Chebyshev interpolants, error < 2e-16); sign restored; one rounding.
/// Special: NaN -> NaN; erf(-0) = -0; denormals exact-rounded; |x| >= 4 (incl. inf) -> +-1.
LOCKSTEP_HD float erf_f32(float x) {
  if (x != x) return detail::quiet(x);
  const uint32_t ax = bits_of(x) & 0x7fffffffu;
  const bool neg = (bits_of(x) >> 31) != 0;
  if (ax >= 0x40800000u) return neg ? -1.0f : 1.0f;  // |x| >= 4: erf rounds to +-1
  return detail::with_sign(static_cast<float>(detail::erf_pos_d(static_cast<double>(float_of(ax)))), neg);
}

/// Logistic sigmoid 1 / (1 + e^-x). Method: double 1 / (1 + exp_d(-x)); one rounding (accurate for both signs,
/// denormal results for x < -87.3). Special: NaN -> NaN; x > 40 (incl. +inf) -> 1; x < -110 (incl. -inf) -> +0.
LOCKSTEP_HD float sigmoid_f32(float x) {
  if (x != x) return detail::quiet(x);
  if (x > 40.0f) return 1.0f;
  if (x < -110.0f) return 0.0f;
  const double e = detail::exp_d(-static_cast<double>(x));
  return static_cast<float>(1.0 / (1.0 + e));
}

/// Softplus log(1 + e^x). Method: double max(x, 0) + log1p_d(exp_d(-|x|)) (no overflow); one rounding.
/// Special: NaN -> NaN; x > 100 (incl. +inf) -> x; x < -110 (incl. -inf) -> +0.
LOCKSTEP_HD float softplus_f32(float x) {
  if (x != x) return detail::quiet(x);
  if (x > 100.0f) return x;
  if (x < -110.0f) return 0.0f;
  const double a = static_cast<double>(x);
  const double e = detail::exp_d(a > 0.0 ? -a : a);
  return static_cast<float>(detail::log1p_d(e) + (a > 0.0 ? a : 0.0));
}

/// Sine, full float range. Method: |x| < pi/4: Taylor degree 17 (double); else exact Payne-Hanek reduction by
/// pi/2 in integer arithmetic (96-bit window of 2/pi), then the sin/cos kernel of the quadrant; one rounding.
/// Special: NaN -> NaN; +-inf -> NaN; |x| < 2^-12 -> x (so sin(-0) = -0, denormals -> x).
LOCKSTEP_HD float sin_f32(float x) {
  const uint32_t ax = bits_of(x) & 0x7fffffffu;
  const bool neg = (bits_of(x) >> 31) != 0;
  if (ax >= detail::kPosInf) return ax == detail::kPosInf ? detail::default_nan() : detail::quiet(x);
  if (ax < 0x39800000u) return x;  // |x| < 2^-12: sin x rounds to x (keeps -0, denormals)
  if (ax < 0x3f490fdbu) return static_cast<float>(detail::sin_kernel_d(static_cast<double>(x)));
  double r;
  const int n = detail::reduce_pio2(ax, r);
  const double v = (n & 1) ? detail::cos_kernel_d(r) : detail::sin_kernel_d(r);
  const float f = static_cast<float>(v);
  return detail::with_sign(f, neg != (n >= 2));
}

/// Cosine, full float range. Method: as sin_f32 (Payne-Hanek + Taylor kernels in double); one rounding.
/// Special: NaN -> NaN; +-inf -> NaN; cos(+-0) = 1.
LOCKSTEP_HD float cos_f32(float x) {
  const uint32_t ax = bits_of(x) & 0x7fffffffu;
  if (ax >= detail::kPosInf) return ax == detail::kPosInf ? detail::default_nan() : detail::quiet(x);
  if (ax < 0x3f490fdbu) return static_cast<float>(detail::cos_kernel_d(static_cast<double>(x)));
  double r;
  const int n = detail::reduce_pio2(ax, r);
  const double v = (n & 1) ? detail::sin_kernel_d(r) : detail::cos_kernel_d(r);
  const float f = static_cast<float>(v);
  return detail::with_sign(f, n == 1 || n == 2);
}

/// x^y with the C99/IEEE special cases. Method: |x|^y = exp_d(y * log_core_d(|x|)) in double (error of the
/// product < 2^-46 absolute for |y log x| < 200, i.e. < 1e-6 ulp after rounding); sign from y's integer class.
/// Special cases (in order): pow(x, +-0) = 1 (even x NaN); pow(+1, y) = 1 (even y NaN); NaN in -> NaN;
/// pow(-1, +-inf) = 1; pow(x, +-inf) = +0 or +inf by |x| < 1 and sign of y; pow(+-0, y): y odd integer ->
/// +-0 (y > 0) / +-inf (y < 0), otherwise +0 / +inf; pow(+-inf, y): y odd integer -> +-inf (y > 0) / +-0 (y < 0),
/// otherwise +inf / +0; x < 0 finite with non-integer y -> NaN; x < 0 with integer y -> +-|x|^y.
LOCKSTEP_HD float pow_f32(float x, float y) {
  const uint32_t ix = bits_of(x), iy = bits_of(y);
  const uint32_t ax = ix & 0x7fffffffu, ay = iy & 0x7fffffffu;
  if (ay == 0) return 1.0f;
  if (ix == 0x3f800000u) return 1.0f;
  if (ax > detail::kPosInf) return detail::quiet(x);
  if (ay > detail::kPosInf) return detail::quiet(y);
  const bool xneg = (ix >> 31) != 0, yneg = (iy >> 31) != 0;
  if (ay == detail::kPosInf) {
    if (ax == 0x3f800000u) return 1.0f;  // (-1)^(+-inf)
    const bool big = ax > 0x3f800000u;
    return (big != yneg) ? detail::inf_f(false) : 0.0f;
  }
  const int yc = detail::int_class(ay);
  const bool odd_neg = xneg && yc == 1;  // result takes x's sign
  if (ax == 0) return yneg ? detail::inf_f(odd_neg) : detail::zero_f(odd_neg);
  if (ax == detail::kPosInf) return yneg ? detail::zero_f(odd_neg) : detail::inf_f(odd_neg);
  if (xneg && yc == 0) return detail::default_nan();
  const double t = static_cast<double>(y) * detail::log_core_d(static_cast<double>(float_of(ax)));
  if (t > 200.0) return detail::inf_f(odd_neg);
  if (t < -200.0) return detail::zero_f(odd_neg);
  return detail::with_sign(static_cast<float>(detail::exp_d(t)), odd_neg);
}

}  // namespace lockstep::arith
