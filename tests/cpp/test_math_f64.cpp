// The binary64 functions (src/arith/math_f64.h: exp_f64, log_f64; src/arith/elementwise.h: fmod_f64 and Mod's
// double functor): special values bit for bit, a random sample within 1 ulp of long double references, and fmod
// equal to std::fmod (exact) on every sampled pair. tests/arith/math_f64_check.cpp measures the ulp figures that
// docs/arithmetic.md quotes over 10 million inputs per function.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>

#include "arith/elementwise.h"
#include "arith/math_f64.h"

using namespace lockstep::arith;

namespace {

uint64_t bits64(double d) { return bits_of(d); }
double of64(uint64_t u) { return double_of(u); }
bool same64(double a, double b) { return (a != a && b != b) || bits64(a) == bits64(b); }

/// Distance in doubles between y and the reference rounded to double (+0 and -0 the same point).
uint64_t ulps(double y, long double ref) {
  auto ordered = [](double d) {
    const int64_t i = static_cast<int64_t>(bits64(d));
    return i < 0 ? -(i & 0x7fffffffffffffffll) : i;
  };
  const int64_t a = ordered(y), b = ordered(static_cast<double>(ref));
  return static_cast<uint64_t>(a > b ? a - b : b - a);
}

constexpr double kInf = std::numeric_limits<double>::infinity();

}  // namespace

TEST(MathF64, ExpSpecialValues) {
  EXPECT_EQ(bits64(exp_f64(0.0)), bits64(1.0));
  EXPECT_EQ(bits64(exp_f64(-0.0)), bits64(1.0));
  EXPECT_EQ(bits64(exp_f64(kInf)), bits64(kInf));
  EXPECT_EQ(bits64(exp_f64(-kInf)), bits64(0.0));
  EXPECT_EQ(bits64(exp_f64(710.0)), bits64(kInf));
  EXPECT_EQ(bits64(exp_f64(709.782712893384)), bits64(0x1.fffffffffff2ap+1023));  // the largest finite result
  EXPECT_EQ(bits64(exp_f64(-746.0)), bits64(0.0));
  EXPECT_EQ(bits64(exp_f64(-745.1332191019411)), bits64(0x1p-1074));  // rounds up to the smallest denormal
  EXPECT_EQ(bits64(exp_f64(-745.1332191019412)), bits64(0.0));         // just below: to 0
  EXPECT_EQ(bits64(exp_f64(1.0)), bits64(0x1.5bf0a8b145769p+1));       // e, correctly rounded
  EXPECT_EQ(bits64(exp_f64(0x1p-60)), bits64(1.0));
  EXPECT_EQ(bits64(exp_f64(-0x1p-60)), bits64(1.0));
  EXPECT_EQ(bits64(exp_f64(-0x1p-52)), bits64(0x1.ffffffffffffep-1));
  // NaN: the input's payload with the quiet bit set.
  EXPECT_EQ(bits64(exp_f64(of64(0x7ff0000000000001ull))), 0x7ff8000000000001ull);
  EXPECT_EQ(bits64(exp_f64(of64(0xfff8000000000123ull))), 0xfff8000000000123ull);
}

TEST(MathF64, LogSpecialValues) {
  EXPECT_EQ(bits64(log_f64(1.0)), bits64(0.0));
  EXPECT_EQ(bits64(log_f64(0.0)), bits64(-kInf));
  EXPECT_EQ(bits64(log_f64(-0.0)), bits64(-kInf));
  EXPECT_EQ(bits64(log_f64(kInf)), bits64(kInf));
  EXPECT_EQ(bits64(log_f64(-kInf)), 0x7ff8000000000000ull);
  EXPECT_EQ(bits64(log_f64(-1.0)), 0x7ff8000000000000ull);
  EXPECT_EQ(bits64(log_f64(-0x1p-1074)), 0x7ff8000000000000ull);
  EXPECT_EQ(bits64(log_f64(of64(0x7ff0000000000001ull))), 0x7ff8000000000001ull);
  EXPECT_EQ(bits64(log_f64(2.0)), bits64(0x1.62e42fefa39efp-1));             // ln 2, correctly rounded
  EXPECT_EQ(bits64(log_f64(0x1p-1074)), bits64(-0x1.74385446d71c3p+9));      // the smallest denormal
  EXPECT_EQ(bits64(log_f64(0x1.fffffffffffffp+1023)), bits64(0x1.62e42fefa39efp+9));
  EXPECT_EQ(bits64(log_f64(0x1.0000000000001p+0)), bits64(0x1.fffffffffffffp-53));
}

TEST(MathF64, ExpAndLogWithinOneUlpOfLongDouble) {
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  uint64_t worst_exp = 0, worst_log = 0;
  for (int i = 0; i < 300000; ++i) {
    const double xe = i % 3 == 0 ? -745.0 + 1454.7 * u(rng) : (u(rng) * 2 - 1) * std::ldexp(1.0, -(i % 60));
    const double ye = exp_f64(xe);
    worst_exp = std::max(worst_exp, ulps(ye, std::exp(static_cast<long double>(xe))));
    const double xl = i % 3 == 0 ? of64(rng() & 0x7fefffffffffffffull) : 0.5 + 1.5 * u(rng);
    worst_log = std::max(worst_log, ulps(log_f64(xl), std::log(static_cast<long double>(xl))));
  }
  EXPECT_LE(worst_exp, 1u);
  EXPECT_LE(worst_log, 1u);
}

TEST(MathF64, FmodIsExact) {
  std::mt19937_64 rng(13);
  for (int i = 0; i < 500000; ++i) {
    double x = of64(rng()), y = of64(rng());
    if (i % 4 == 1) y = of64(rng() & 0x800fffffffffffffull);  // denormal divisors: quotients up to 2^2100
    if (i % 4 == 2) y = std::ldexp(1.0 + (rng() % 1000), -static_cast<int>(rng() % 1100));
    ASSERT_TRUE(same64(fmod_f64(x, y), std::fmod(x, y))) << std::hexfloat << x << " " << y;
  }
  const double edge[] = {0.0, -0.0, 0x1p-1074, -0x1p-1074, 0x1p-1022, 1.0, -1.0, 3.0, 0.1, 1e308, -1e308,
                         0x1.fffffffffffffp+1023, kInf, -kInf, std::numeric_limits<double>::quiet_NaN()};
  for (double x : edge)
    for (double y : edge) ASSERT_TRUE(same64(fmod_f64(x, y), std::fmod(x, y))) << std::hexfloat << x << " " << y;
}

TEST(MathF64, ModFloorRemainderOnDouble) {
  // fmod = 0 (opset 28): numpy's mod. r = fmod(a, b); r == 0 -> zero with b's sign; signs differ -> r + b.
  const ModOp floor_mod{false};
  std::mt19937_64 rng(17);
  for (int i = 0; i < 200000; ++i) {
    const double a = of64(rng()), b = of64(rng());
    const double r = std::fmod(a, b);
    double want = r;
    if (r == 0) want = std::copysign(0.0, b);
    else if ((r < 0) != (b < 0)) want = r + b;
    ASSERT_TRUE(same64(floor_mod(a, b), want)) << std::hexfloat << a << " " << b;
  }
  EXPECT_EQ(bits64(floor_mod(-3.0, 2.0)), bits64(1.0));
  EXPECT_EQ(bits64(floor_mod(3.0, -2.0)), bits64(-1.0));
  EXPECT_EQ(bits64(floor_mod(4.0, -2.0)), bits64(-0.0));
  EXPECT_EQ(bits64(floor_mod(-4.0, 2.0)), bits64(0.0));
  EXPECT_EQ(bits64(floor_mod(1.0, -kInf)), bits64(-kInf));
  EXPECT_EQ(bits64(ModOp{true}(-3.0, 2.0)), bits64(-1.0));
}
