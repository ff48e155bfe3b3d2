// Unit tests of the elementwise formulas that the cross-device cases cannot reach through numpy (bfloat16) or
// that are exact by contract (fmod, rounding, half conversion): checked against exhaustive or libm references.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "arith/elementwise.h"
#include "cpu/elementwise/unary_f32.h"
#include "cpu/isa.h"
#include "ops/fast_divisor.h"

using namespace lockstep::arith;

namespace {
float from_bits(uint32_t u) { float f; std::memcpy(&f, &u, 4); return f; }
uint32_t to_bits(float f) { uint32_t u; std::memcpy(&u, &f, 4); return u; }
bool same(float a, float b) { return (a != a && b != b) || to_bits(a) == to_bits(b); }
}  // namespace

TEST(Elementwise, RoundingMatchesLibmOnAllSampledFloats) {
  std::mt19937 rng(7);
  for (int i = 0; i < 2000000; ++i) {
    float x = from_bits(rng());
    ASSERT_TRUE(same(rint_f32(x), std::nearbyint(x))) << x;
    ASSERT_TRUE(same(floor_f32(x), std::floor(x))) << x;
    ASSERT_TRUE(same(ceil_f32(x), std::ceil(x))) << x;
  }
  EXPECT_EQ(to_bits(rint_f32(-0.4f)), 0x80000000u);
  EXPECT_EQ(rint_f32(2.5f), 2.0f);
  EXPECT_EQ(rint_f32(3.5f), 4.0f);
}

TEST(Elementwise, FmodIsExact) {
  std::mt19937 rng(11);
  for (int i = 0; i < 2000000; ++i) {
    float x = from_bits(rng()), y = from_bits(rng());
    if (i % 4 == 1) y = from_bits(rng() & 0x807fffffu);  // denormal divisors
    ASSERT_TRUE(same(fmod_f32(x, y), std::fmod(x, y))) << x << " " << y;
  }
}

TEST(Elementwise, HalfConversionRoundTripsAndRoundsToNearestEven) {
  for (uint32_t h = 0; h < 65536; ++h) {
    float f = f16_bits_to_f32(static_cast<uint16_t>(h));
    if (f != f) continue;
    ASSERT_EQ(f32_to_f16_bits(f), h);
  }
  // Every float: the result is one of the two neighbours and the nearer one (ties to even), checked in double.
  for (uint64_t u = 0; u < (1ull << 32); u += 97) {
    float x = from_bits(static_cast<uint32_t>(u));
    if (x != x || std::fabs(x) >= 65520.0f) continue;
    uint16_t h = f32_to_f16_bits(x);
    double got = f16_bits_to_f32(h);
    double up = f16_bits_to_f32(static_cast<uint16_t>(h + 1)), dn = f16_bits_to_f32(static_cast<uint16_t>(h - 1));
    double err = std::fabs(got - x);
    if ((h & 0x7fffu) != 0x7c00u) {
      ASSERT_LE(err, std::fabs(up - x)) << x;
    }
    if ((h & 0x7fffu) != 0) {
      ASSERT_LE(err, std::fabs(dn - x)) << x;
    }
  }
  EXPECT_EQ(f32_to_f16_bits(65520.0f), 0x7c00u);
  EXPECT_EQ(f32_to_f16_bits(65519.0f), 0x7bffu);
  EXPECT_EQ(f32_to_f16_bits(from_bits(0x33000000u)), 0u);       // 2^-25 ties to 0
  EXPECT_EQ(f32_to_f16_bits(from_bits(0x33000001u)), 1u);       // just above: smallest denormal
}

TEST(Elementwise, BFloat16RoundsToNearestEven) {
  EXPECT_EQ(f32_to_bf16_bits(from_bits(0x3f808000u)), 0x3f80u);  // tie, even below
  EXPECT_EQ(f32_to_bf16_bits(from_bits(0x3f818000u)), 0x3f82u);  // tie, even above
  EXPECT_EQ(f32_to_bf16_bits(from_bits(0x3f808001u)), 0x3f81u);
  EXPECT_TRUE(std::isnan(bf16_bits_to_f32(f32_to_bf16_bits(from_bits(0x7f800001u)))));
  EXPECT_EQ(bf16_bits_to_f32(0x4049u), from_bits(0x40490000u));
}

TEST(Elementwise, CastRules) {
  EXPECT_EQ(cast_element<int32_t>(NAN), 0);
  EXPECT_EQ(cast_element<int32_t>(3e9f), INT32_MAX);
  EXPECT_EQ(cast_element<int32_t>(-3e9f), INT32_MIN);
  EXPECT_EQ(cast_element<int64_t>(9.3e18f), INT64_MAX);
  EXPECT_EQ(cast_element<int8_t>(-128.9f), -128);
  EXPECT_EQ(cast_element<uint8_t>(-0.9f), 0);
  EXPECT_EQ(cast_element<uint8_t>(-3.0f), 0);
  EXPECT_EQ(cast_element<uint64_t>(1.9e19f), UINT64_MAX);
  EXPECT_EQ(cast_element<int8_t>(int32_t{300}), 44);
  EXPECT_EQ(cast_element<float>(int64_t{(1ll << 53) + 1}), 9007199254740992.0f);
  EXPECT_EQ(cast_element<float>(int64_t{16777217}), 16777216.0f);
  EXPECT_EQ(cast_element<Boolean>(NAN).v, 1);
  EXPECT_EQ(cast_element<Boolean>(-0.0f).v, 0);
}

// float8e8m0 (docs/arithmetic.md#low-precision-conversions): the three round modes, saturate at code 0xfe, the
// float's bits (sign ignored, subnormals in exponent 0), and a double source rounded to float first.
TEST(Elementwise, CastToE8M0) {
  using E8 = Low<LowType::E8M0>;
  const E8M0Round up = E8M0Round::Up, down = E8M0Round::Down, nearest = E8M0Round::Nearest;
  EXPECT_EQ(f32_to_e8m0(1.0f, true, up), 127u);
  EXPECT_EQ(f32_to_e8m0(1.25f, true, up), 128u);
  EXPECT_EQ(f32_to_e8m0(1.25f, true, down), 127u);
  EXPECT_EQ(f32_to_e8m0(1.25f, true, nearest), 127u);
  EXPECT_EQ(f32_to_e8m0(1.5f, true, nearest), 128u);  // the tie rounds up
  EXPECT_EQ(f32_to_e8m0(-3.0f, true, up), 129u);      // the sign is ignored
  EXPECT_EQ(f32_to_e8m0(0.0f, false, nearest), 0u);
  EXPECT_EQ(f32_to_e8m0(from_bits(0x00400000u), true, up), 1u);       // 2^-127, a subnormal: mantissa set
  EXPECT_EQ(f32_to_e8m0(from_bits(0x00400000u), true, nearest), 0u);  // bit 22 alone with e = 0 stays
  EXPECT_EQ(f32_to_e8m0(from_bits(0x7f000001u), true, up), 0xfeu);    // saturates below NaN
  EXPECT_EQ(f32_to_e8m0(from_bits(0x7f000001u), false, up), 0xffu);
  EXPECT_EQ(f32_to_e8m0(INFINITY, true, up), 0xffu);
  EXPECT_EQ(f32_to_e8m0(NAN, true, down), 0xffu);
  EXPECT_EQ(cast_element<E8>(1.00000001).bits, 127u);  // double -> float (1.0f) first, then exact
  EXPECT_EQ(cast_element<E8>(3.0, CastMode{true, down}).bits, 128u);
  EXPECT_EQ(cast_element<E8>(int32_t{1024}).bits, 137u);
  for (uint32_t c = 0; c < 255; ++c) {
    // every code round-trips, but code 0 under up: 2^-127 is a subnormal whose mantissa is set
    EXPECT_EQ(f32_to_e8m0(e8m0_to_f32(c), true, c == 0 ? down : up), c) << c;
    EXPECT_EQ(e8m0_to_f32(c), std::ldexp(1.0f, static_cast<int>(c) - 127)) << c;
  }
  EXPECT_TRUE(std::isnan(e8m0_to_f32(0xffu)));
}

TEST(Elementwise, IntegerDivisionNeverTraps) {
  EXPECT_EQ(int_div<int64_t>(7, 0), 0);
  EXPECT_EQ(int_div<int64_t>(INT64_MIN, -1), INT64_MIN);
  EXPECT_EQ(int_div<int32_t>(-7, 2), -3);
  EXPECT_EQ(int_mod<int32_t>(-7, 2, false), 1);
  EXPECT_EQ(int_mod<int32_t>(7, -2, false), -1);
  EXPECT_EQ(int_mod<int32_t>(-7, 2, true), -1);
  EXPECT_EQ(int_mod<int32_t>(INT32_MIN, -1, false), 0);
  EXPECT_EQ(int_mod<int64_t>(5, 0, false), 0);
}

namespace {

// Every 4099th bit pattern (all signs, binades, denormals and NaN payloads) and the special values.
std::vector<float> sweep_inputs() {
  std::vector<float> v;
  for (uint64_t u = 0; u <= 0xffffffffu; u += 4099) v.push_back(from_bits(static_cast<uint32_t>(u)));
  for (uint32_t u : {0x00000000u, 0x80000000u, 0x7f800000u, 0xff800000u, 0x7fc00000u, 0xffc00001u, 0x7f800001u,
                     0x00000001u, 0x80000001u, 0x007fffffu, 0x00800000u, 0x3f800000u, 0xbf800000u, 0x42b17218u,
                     0x42b17217u, 0xc2d00000u, 0xc2cfffffu, 0x41000000u, 0x40ffffffu, 0x3f000000u})
    v.push_back(from_bits(u));
  return v;
}

template <class F>
void expect_lanes_match_scalar(const char* name, const F& f, const std::vector<float>& x) {
  std::vector<float> want(x.size());
  for (size_t i = 0; i < x.size(); ++i) want[i] = f(x[i]);
  for (int isa = 1; isa <= static_cast<int>(lockstep::cpu::cpu_best_isa()); ++isa) {
    lockstep::cpu::force_cpu_isa(static_cast<lockstep::cpu::CpuIsa>(isa));
    const lockstep::cpu::UnaryF32Kernel<F> kernel = lockstep::cpu::unary_f32_kernel<F>();
    lockstep::cpu::reset_cpu_isa();
    ASSERT_NE(kernel, nullptr) << name;
    const char* isa_name = lockstep::cpu::cpu_isa_name(static_cast<lockstep::cpu::CpuIsa>(isa));
    std::vector<float> got(x.size());
    kernel(f, x.data(), got.data(), static_cast<int64_t>(x.size()));
    for (size_t i = 0; i < x.size(); ++i)  // exact bits, NaN payloads included
      ASSERT_EQ(to_bits(got[i]), to_bits(want[i])) << name << " on " << isa_name << " at x = " << x[i] << " (bits "
                                                   << std::hex << to_bits(x[i]) << ")";
    // Tails: every length up to two registers, in place, with guard values after the end left untouched.
    for (int64_t n = 0; n <= 33; ++n) {
      std::vector<float> buf(x.begin() + 1000, x.begin() + 1000 + n + 8);
      kernel(f, buf.data(), buf.data(), n);
      for (int64_t i = 0; i < n + 8; ++i)
        ASSERT_EQ(to_bits(buf[i]), to_bits(i < n ? want[1000 + i] : x[1000 + i])) << name << " n = " << n;
    }
  }
}

}  // namespace

// The SIMD kernels run the scalar path's operation sequence in every lane (docs/arithmetic.md): same bits.
TEST(Elementwise, LaneKernelsMatchScalarByteForByte) {
  if (lockstep::cpu::cpu_best_isa() == lockstep::cpu::CpuIsa::Scalar) GTEST_SKIP() << "no AVX2 on this CPU";
  const std::vector<float> x = sweep_inputs();
  expect_lanes_match_scalar("Exp", ExpOp{}, x);
  expect_lanes_match_scalar("Log", LogOp{}, x);
  expect_lanes_match_scalar("Tanh", TanhOp{}, x);
  expect_lanes_match_scalar("Erf", ErfOp{}, x);
  expect_lanes_match_scalar("Sigmoid", SigmoidOp{}, x);
  expect_lanes_match_scalar("Softplus", SoftplusOp{}, x);
  expect_lanes_match_scalar("Elu", EluOp{0.7f}, x);
  expect_lanes_match_scalar("Selu", SeluOp{1.6732632f, 1.0507010f}, x);
  expect_lanes_match_scalar("Gelu", GeluOp{false}, x);
  expect_lanes_match_scalar("Gelu tanh", GeluOp{true}, x);
  expect_lanes_match_scalar("exp(x - m)", ExpOfDifferenceOp{3.5f}, x);
  expect_lanes_match_scalar("LeakyRelu", LeakyReluOp{0.01f}, x);
  expect_lanes_match_scalar("HardSigmoid", HardSigmoidOp{0.2f, 0.5f}, x);
  expect_lanes_match_scalar("HardSwish", HardSwishOp{}, x);
  expect_lanes_match_scalar("Silu", SiluOp{}, x);
  expect_lanes_match_scalar("GeluErfChain", GeluErfChainOp{1.4142135f, 1.0f, 0.5f}, x);
  expect_lanes_match_scalar("Sinh", SinhOp{}, x);
  expect_lanes_match_scalar("Cosh", CoshOp{}, x);
  expect_lanes_match_scalar("Asinh", AsinhOp{}, x);
  expect_lanes_match_scalar("Acosh", AcoshOp{}, x);
  expect_lanes_match_scalar("Atanh", AtanhOp{}, x);
  expect_lanes_match_scalar("Asin", AsinOp{}, x);
  expect_lanes_match_scalar("Acos", AcosOp{}, x);
  expect_lanes_match_scalar("Atan", AtanOp{}, x);
}

// The broadcasting GPU kernels' index division (ops/fast_divisor.h): exact for every divisor below 2^31 and every
// index below 2^31; checked on the divisors and indices where an off-by-one would show (powers of two and their
// neighbours, the largest values) and on random pairs.
TEST(Elementwise, FastDivisorQuotientIsExact) {
  std::vector<uint32_t> divisors, indices = {0, 1, 2, 3, 0x7ffffffeu, 0x7fffffffu};
  for (int b = 0; b < 31; ++b)
    for (int64_t delta : {-1, 0, 1}) {
      const int64_t v = (int64_t(1) << b) + delta;
      if (v >= 1 && v < (int64_t(1) << 31)) divisors.push_back(uint32_t(v)), indices.push_back(uint32_t(v));
    }
  for (uint32_t d : {3u, 7u, 12u, 768u, 1536u, 3072u, 50257u, 0x7fffffffu}) divisors.push_back(d);
  std::mt19937 rng(11);
  for (int i = 0; i < 200; ++i) divisors.push_back(1 + rng() % 0x7fffffffu);
  for (uint32_t d : divisors) {
    const lockstep::FastDivisor f(d);
    for (uint32_t n : indices) ASSERT_EQ(f.quotient(n), n / d) << n << " / " << d;
    for (uint32_t q : {d - 1, d, d + 1})  // around the multiples of d
      for (uint32_t k = 1; k < 5 && uint64_t(k) * d < 0x7fffffffu; ++k) {
        const uint32_t n = k * d + q - d;
        ASSERT_EQ(f.quotient(n), n / d) << n << " / " << d;
      }
    for (int i = 0; i < 2000; ++i) {
      const uint32_t n = rng() % 0x80000000u;
      ASSERT_EQ(f.quotient(n), n / d) << n << " / " << d;
    }
  }
}
