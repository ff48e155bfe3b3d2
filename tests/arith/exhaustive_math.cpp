// Exhaustive accuracy test of src/arith/math.h against double-precision libm references.
//
// Build:  g++ -std=c++20 -O2 -ffp-contract=off -pthread -Isrc tests/arith/exhaustive_math.cpp -o exhaustive_math
// Usage:  exhaustive_math [function ...] [--stride N]
//   functions: exp expm1 log log1p tanh erf sigmoid softplus sinh cosh asinh acosh atanh atan asin acos sin cos tan
//   pow (default: all)
//   --stride N: test every Nth bit pattern (default 1 = all 2^32 patterns); for pow, divides the pair count.
//
// For each float input x, the reference r = f((double)x) is computed with glibc double functions (errors of a few
// double ulps, i.e. ~1e-16 relative: far below a float ulp). Criteria:
//   - r NaN  <=> result NaN;
//   - (float)r infinite or result infinite: result must equal (float)r exactly;
//   - r exactly zero: result must be a zero of the same sign;
//   - otherwise the ulp distance between the result and (float)r (the correctly rounded result, up to double
//     rounding of the reference) must be <= 1. "ulp distance" = number of floats between them (denormals
//     included; +0 and -0 count as the same point).
// Also reported: the maximum real error |result - r| / ulp(r), with ulp(r) the float ulp of the binade of |r|
// (2^-149 below 2^-126).
// Exit status: 0 if every tested function is within 1 ulp, 1 otherwise.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "arith/math.h"

namespace la = lockstep::arith;

namespace {

constexpr uint64_t kBad = 1ull << 40;  // ulp distance assigned to NaN/inf/zero-sign violations

int64_t ordered(float f) {
  int32_t i;
  std::memcpy(&i, &f, 4);
  return i < 0 ? -static_cast<int64_t>(i & 0x7fffffff) : static_cast<int64_t>(i);
}

// Float ulp of the binade containing |r| (r finite nonzero double), from the bits (no libm call).
inline double ulp_at(double r) {
  uint64_t b;
  std::memcpy(&b, &r, 8);
  int e = static_cast<int>((b >> 52) & 0x7ff) - 1023;  // |r| in [2^e, 2^(e+1))
  if (e < -126) e = -126;
  if (e > 127) e = 127;
  const uint64_t u = static_cast<uint64_t>(e - 23 + 1023) << 52;
  double d;
  std::memcpy(&d, &u, 8);
  return d;
}

struct Stats {
  uint64_t max_ulp = 0;
  uint32_t worst_x = 0, worst_y = 0;  // worst input(s) (bits) for max_ulp
  double max_err = 0;                 // real-valued error in ulps
  uint32_t worst_err_x = 0, worst_err_y = 0;
  uint64_t over1 = 0;   // inputs with ulp distance > 1
  uint64_t tested = 0;
  void merge(const Stats& o) {
    if (o.max_ulp > max_ulp || (o.max_ulp == max_ulp && max_ulp > 0 && o.worst_x < worst_x)) {
      max_ulp = o.max_ulp;
      worst_x = o.worst_x;
      worst_y = o.worst_y;
    }
    if (o.max_err > max_err) {
      max_err = o.max_err;
      worst_err_x = o.worst_err_x;
      worst_err_y = o.worst_err_y;
    }
    over1 += o.over1;
    tested += o.tested;
  }
};

// Compare one result with its reference; returns ulp distance (kBad for special-value violations).
inline void check(Stats& st, float y, double r, uint32_t xb, uint32_t yb = 0) {
  st.tested++;
  uint64_t d;
  double err = 0;
  if (std::isnan(r) || std::isnan(y)) {
    d = (std::isnan(r) && std::isnan(y)) ? 0 : kBad;
  } else {
    const float rf = static_cast<float>(r);
    if (std::isinf(rf) || std::isinf(y)) {
      d = (y == rf) ? 0 : kBad;
    } else if (r == 0.0) {
      d = (y == 0.0f && std::signbit(y) == std::signbit(r)) ? 0 : kBad;
    } else {
      const int64_t a = ordered(y), b = ordered(rf);
      d = static_cast<uint64_t>(a > b ? a - b : b - a);
      err = std::fabs(static_cast<double>(y) - r) / ulp_at(r);
    }
  }
  if (d > 1) st.over1++;
  if (d > st.max_ulp) {
    st.max_ulp = d;
    st.worst_x = xb;
    st.worst_y = yb;
  }
  if (err > st.max_err) {
    st.max_err = err;
    st.worst_err_x = xb;
    st.worst_err_y = yb;
  }
}

// Runs f over all bit patterns i*stride (i >= 0, < 2^32) on all hardware threads.
template <class F, class R>
Stats run_unary(F f, R ref, uint64_t stride) {
  constexpr uint64_t kTotal = 1ull << 32, kChunk = 1ull << 22;
  std::atomic<uint64_t> next{0};
  unsigned nt = std::max(1u, std::thread::hardware_concurrency());
  std::vector<Stats> parts(nt);
  std::vector<std::thread> th;
  for (unsigned t = 0; t < nt; ++t) {
    th.emplace_back([&, t] {
      Stats st;
      for (;;) {
        const uint64_t c = next.fetch_add(1);
        const uint64_t lo = c * kChunk;
        if (lo >= kTotal) break;
        const uint64_t hi = lo + kChunk;
        for (uint64_t u = (lo + stride - 1) / stride * stride; u < hi; u += stride) {
          const uint32_t xb = static_cast<uint32_t>(u);
          float x;
          std::memcpy(&x, &xb, 4);
          check(st, f(x), ref(static_cast<double>(x)), xb);
        }
      }
      parts[t] = st;
    });
  }
  for (auto& t : th) t.join();
  Stats all;
  for (auto& p : parts) all.merge(p);
  return all;
}

float fl(uint32_t b) {
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}
uint32_t bi(float f) {
  uint32_t b;
  std::memcpy(&b, &f, 4);
  return b;
}

// pow: special-case table (all pairs) plus seeded random pairs from several distributions.
Stats run_pow(uint64_t stride) {
  std::vector<float> specials;
  const float base[] = {0.0f, 0x1p-149f, 0x1p-126f, 0x1.fffffep-127f, 0.25f, 0.5f, 0x1.fffffep-1f, 1.0f,
                        0x1.000002p+0f, 1.5f, 2.0f, 2.5f, 3.0f, 4.0f, 10.0f, 0x1p23f, 0x1p23f + 1.0f, 0x1p24f,
                        0x1p24f + 2.0f, 0x1p25f, 0x1.fffffep127f, 1e-10f, 1e10f, 0.1f, 7.0f, 127.0f, 128.0f,
                        149.0f, 150.0f, std::numeric_limits<float>::infinity()};
  for (float v : base) {
    specials.push_back(v);
    specials.push_back(-v);
  }
  specials.push_back(std::numeric_limits<float>::quiet_NaN());
  specials.push_back(fl(0xffc00001u));
  Stats st;
  for (float x : specials)
    for (float y : specials) check(st, la::pow_f32(x, y), std::pow(static_cast<double>(x), static_cast<double>(y)), bi(x), bi(y));
  const uint64_t kPairs = 8000000 / stride + 1;
  unsigned nt = std::max(1u, std::thread::hardware_concurrency());
  std::vector<Stats> parts(nt);
  std::vector<std::thread> th;
  for (unsigned t = 0; t < nt; ++t) {
    th.emplace_back([&, t] {
      std::mt19937_64 rng(12345 + t);
      std::uniform_real_distribution<double> U(0.0, 1.0);
      Stats s;
      for (uint64_t i = t; i < kPairs; i += nt) {
        float x, y;
        switch (i % 6) {
          case 0:  // raw bit patterns
            x = fl(static_cast<uint32_t>(rng()));
            y = fl(static_cast<uint32_t>(rng()));
            break;
          case 1:  // positive x over the whole range, |y| moderate
            x = fl(static_cast<uint32_t>(rng()) & 0x7f7fffffu);
            y = static_cast<float>((U(rng) * 2 - 1) * 40.0);
            break;
          case 2:  // x near 1, large |y|
            x = fl(0x3f800000u + static_cast<uint32_t>(rng() % 20000) - 10000u);
            y = static_cast<float>((U(rng) * 2 - 1) * std::ldexp(1.0, static_cast<int>(rng() % 30)));
            break;
          case 3: {  // negative x with integer y
            x = -fl(0x30000000u + static_cast<uint32_t>(rng() % 0x1e000000u));
            y = static_cast<float>(static_cast<int64_t>(rng() % 400) - 200);
            break;
          }
          case 4:  // results near the overflow threshold and in the denormal range
          case 5: {
            x = fl(0x34000000u + static_cast<uint32_t>(rng() % 0x16000000u));
            if (x == 1.0f) x = 2.0f;
            const double target = (i % 6 == 4) ? 120.0 + 10.0 * U(rng) : -155.0 + 32.0 * U(rng);
            y = static_cast<float>(target / std::log2(static_cast<double>(x)));
            if (rng() & 1) x = -x;
            break;
          }
        }
        check(s, la::pow_f32(x, y), std::pow(static_cast<double>(x), static_cast<double>(y)), bi(x), bi(y));
      }
      parts[t] = s;
    });
  }
  for (auto& t : th) t.join();
  for (auto& p : parts) st.merge(p);
  return st;
}

double sigmoid_ref(double x) { return 1.0 / (1.0 + std::exp(-x)); }
// softplus(x) = max(x,0) + log1p(e^-|x|); for |x| > 40, log1p(t) = t to relative 1e-18 (t < 5e-18).
double softplus_ref(double x) {
  const double t = std::exp(-std::fabs(x));
  const double l = std::fabs(x) > 40.0 ? t : std::log1p(t);
  return x > 0 ? x + l : l;
}

}  // namespace

int main(int argc, char** argv) {
  uint64_t stride = 1;
  std::vector<std::string> want;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--stride" && i + 1 < argc) {
      stride = std::strtoull(argv[++i], nullptr, 10);
      if (stride == 0) stride = 1;
    } else {
      want.push_back(a);
    }
  }
  const char* all[] = {"exp",  "expm1", "log",   "log1p", "tanh", "erf",  "sigmoid", "softplus", "sinh", "cosh",
                       "asinh", "acosh", "atanh", "atan", "asin", "acos", "sin",     "cos",      "tan", "pow"};
  if (want.empty()) want.assign(std::begin(all), std::end(all));
  std::printf("threads %u, stride %" PRIu64 "\n", std::max(1u, std::thread::hardware_concurrency()), stride);
  std::printf("%-9s %8s %12s %12s %14s %10s %8s\n", "function", "max_ulp", "worst_input", "max_err_ulp",
              "count>1ulp", "tested", "seconds");
  bool ok = true;
  const auto t_all = std::chrono::steady_clock::now();
  for (const std::string& name : want) {
    const auto t0 = std::chrono::steady_clock::now();
    Stats st;
    // clang-format off
    if (name == "exp")           st = run_unary([](float x) { return la::exp_f32(x); },      [](double x) { return std::exp(x); }, stride);
    else if (name == "expm1")    st = run_unary([](float x) { return la::expm1_f32(x); },    [](double x) { return std::expm1(x); }, stride);
    else if (name == "log")      st = run_unary([](float x) { return la::log_f32(x); },      [](double x) { return std::log(x); }, stride);
    else if (name == "log1p")    st = run_unary([](float x) { return la::log1p_f32(x); },    [](double x) { return std::log1p(x); }, stride);
    else if (name == "tanh")     st = run_unary([](float x) { return la::tanh_f32(x); },     [](double x) { return std::tanh(x); }, stride);
    else if (name == "erf")      st = run_unary([](float x) { return la::erf_f32(x); },      [](double x) { return std::erf(x); }, stride);
    else if (name == "sigmoid")  st = run_unary([](float x) { return la::sigmoid_f32(x); },  sigmoid_ref, stride);
    else if (name == "softplus") st = run_unary([](float x) { return la::softplus_f32(x); }, softplus_ref, stride);
    else if (name == "sinh")     st = run_unary([](float x) { return la::sinh_f32(x); },     [](double x) { return std::sinh(x); }, stride);
    else if (name == "cosh")     st = run_unary([](float x) { return la::cosh_f32(x); },     [](double x) { return std::cosh(x); }, stride);
    else if (name == "asinh")    st = run_unary([](float x) { return la::asinh_f32(x); },    [](double x) { return std::asinh(x); }, stride);
    else if (name == "acosh")    st = run_unary([](float x) { return la::acosh_f32(x); },    [](double x) { return std::acosh(x); }, stride);
    else if (name == "atanh")    st = run_unary([](float x) { return la::atanh_f32(x); },    [](double x) { return std::atanh(x); }, stride);
    else if (name == "atan")     st = run_unary([](float x) { return la::atan_f32(x); },     [](double x) { return std::atan(x); }, stride);
    else if (name == "asin")     st = run_unary([](float x) { return la::asin_f32(x); },     [](double x) { return std::asin(x); }, stride);
    else if (name == "acos")     st = run_unary([](float x) { return la::acos_f32(x); },     [](double x) { return std::acos(x); }, stride);
    else if (name == "sin")      st = run_unary([](float x) { return la::sin_f32(x); },      [](double x) { return std::sin(x); }, stride);
    else if (name == "cos")      st = run_unary([](float x) { return la::cos_f32(x); },      [](double x) { return std::cos(x); }, stride);
    else if (name == "tan")      st = run_unary([](float x) { return la::tan_f32(x); },      [](double x) { return std::tan(x); }, stride);
    else if (name == "pow")      st = run_pow(stride);
    else { std::fprintf(stderr, "unknown function %s\n", name.c_str()); return 2; }
    // clang-format on
    const double sec = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    char worst[48];
    if (name == "pow")
      std::snprintf(worst, sizeof worst, "%08x,%08x", st.worst_x, st.worst_y);
    else
      std::snprintf(worst, sizeof worst, "%08x", st.worst_x);
    std::printf("%-9s %8" PRIu64 " %12s %12.6f %14" PRIu64 " %10" PRIu64 " %8.1f", name.c_str(), st.max_ulp, worst,
                st.max_err, st.over1, st.tested, sec);
    if (st.max_ulp > 0) {
      if (name == "pow")
        std::printf("   worst: pow(%a, %a)", fl(st.worst_x), fl(st.worst_y));
      else
        std::printf("   worst: x = %a (largest error at x = %a)", fl(st.worst_x), fl(st.worst_err_x));
    }
    std::printf("%s\n", st.max_ulp > 1 ? "   FAIL" : "");
    std::fflush(stdout);
    if (st.max_ulp > 1) ok = false;
  }
  const double total = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_all).count();
  std::printf("total %.1f s: %s\n", total, ok ? "PASS (all <= 1 ulp)" : "FAIL");
  return ok ? 0 : 1;
}
