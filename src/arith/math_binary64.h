// The shared math functions that still compute in binary64: sin, cos, tan and pow (DESIGN.md section 3).
//
// Each widens its float argument to double (exact), evaluates a double-precision algorithm whose relative error is
// below ~1e-15, and rounds once to float: within 1 ulp of the correctly rounded result by construction, verified
// over all inputs by tests/arith/exhaustive_math.cpp. Built only from IEEE-754 basic operations on float and double,
// conversions and integer arithmetic, so the CPU and CUDA builds give the same bits. These four are the next to
// move to the binary32 + fma design of math.h (consumer GPUs run binary64 at 1/64 rate); they are rare in models.
//
// NaN outputs: a NaN input is returned with its quiet bit set; an invalid operation (sin(inf), pow(-2, 0.5))
// returns the canonical quiet NaN 0x7fc00000. Contraction must be off: the code relies on a*b+c being two roundings.
#pragma once

#include <cstdint>

#include "bits.h"
#include "hd.h"

namespace lockstep::arith {

namespace detail64 {

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

}  // namespace detail64

// ------------------------------------------------------------------------------------------- public API

/// Sine, full float range. Method: |x| < pi/4: Taylor degree 17 (double); else exact Payne-Hanek reduction by
/// pi/2 in integer arithmetic (96-bit window of 2/pi), then the sin/cos kernel of the quadrant; one rounding.
/// Special: NaN -> NaN; +-inf -> NaN; |x| < 2^-12 -> x (so sin(-0) = -0, denormals -> x).
LOCKSTEP_HD float sin_f32(float x) {
  const uint32_t ax = bits_of(x) & 0x7fffffffu;
  const bool neg = (bits_of(x) >> 31) != 0;
  if (ax >= detail64::kPosInf) return ax == detail64::kPosInf ? detail64::default_nan() : detail64::quiet(x);
  if (ax < 0x39800000u) return x;  // |x| < 2^-12: sin x rounds to x (keeps -0, denormals)
  if (ax < 0x3f490fdbu) return static_cast<float>(detail64::sin_kernel_d(static_cast<double>(x)));
  double r;
  const int n = detail64::reduce_pio2(ax, r);
  const double v = (n & 1) ? detail64::cos_kernel_d(r) : detail64::sin_kernel_d(r);
  const float f = static_cast<float>(v);
  return detail64::with_sign(f, neg != (n >= 2));
}

/// Cosine, full float range. Method: as sin_f32 (Payne-Hanek + Taylor kernels in double); one rounding.
/// Special: NaN -> NaN; +-inf -> NaN; cos(+-0) = 1.
LOCKSTEP_HD float cos_f32(float x) {
  const uint32_t ax = bits_of(x) & 0x7fffffffu;
  if (ax >= detail64::kPosInf) return ax == detail64::kPosInf ? detail64::default_nan() : detail64::quiet(x);
  if (ax < 0x3f490fdbu) return static_cast<float>(detail64::cos_kernel_d(static_cast<double>(x)));
  double r;
  const int n = detail64::reduce_pio2(ax, r);
  const double v = (n & 1) ? detail64::sin_kernel_d(r) : detail64::cos_kernel_d(r);
  const float f = static_cast<float>(v);
  return detail64::with_sign(f, n == 1 || n == 2);
}

/// Tangent, full float range. Method: as sin_f32 (|x| < pi/4 unreduced, else the exact Payne-Hanek reduction),
/// then sin(r) / cos(r) (even quadrant) or -cos(r) / sin(r) (odd) from the double kernels; one rounding.
/// Special: NaN -> NaN; +-inf -> NaN; tan(+-0) = +-0.
LOCKSTEP_HD float tan_f32(float x) {
  const uint32_t ax = bits_of(x) & 0x7fffffffu;
  const bool neg = (bits_of(x) >> 31) != 0;
  if (ax >= detail64::kPosInf) return ax == detail64::kPosInf ? detail64::default_nan() : detail64::quiet(x);
  double r = static_cast<double>(float_of(ax));
  const int n = ax < 0x3f490fdbu ? 0 : detail64::reduce_pio2(ax, r);
  const double s = detail64::sin_kernel_d(r), c = detail64::cos_kernel_d(r);
  return detail64::with_sign(static_cast<float>((n & 1) ? -c / s : s / c), neg);
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
  if (ax > detail64::kPosInf) return detail64::quiet(x);
  if (ay > detail64::kPosInf) return detail64::quiet(y);
  const bool xneg = (ix >> 31) != 0, yneg = (iy >> 31) != 0;
  if (ay == detail64::kPosInf) {
    if (ax == 0x3f800000u) return 1.0f;  // (-1)^(+-inf)
    const bool big = ax > 0x3f800000u;
    return (big != yneg) ? detail64::inf_f(false) : 0.0f;
  }
  const int yc = detail64::int_class(ay);
  const bool odd_neg = xneg && yc == 1;  // result takes x's sign
  if (ax == 0) return yneg ? detail64::inf_f(odd_neg) : detail64::zero_f(odd_neg);
  if (ax == detail64::kPosInf) return yneg ? detail64::zero_f(odd_neg) : detail64::inf_f(odd_neg);
  if (xneg && yc == 0) return detail64::default_nan();
  const double t = static_cast<double>(y) * detail64::log_core_d(static_cast<double>(float_of(ax)));
  if (t > 200.0) return detail64::inf_f(odd_neg);
  if (t < -200.0) return detail64::zero_f(odd_neg);
  return detail64::with_sign(static_cast<float>(detail64::exp_d(t)), odd_neg);
}

}  // namespace lockstep::arith
