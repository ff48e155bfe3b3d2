// Accuracy of the binary64 exp and log (src/arith/math_f64.h) on seeded random inputs against long double
// references (x87 expl/logl: 64-bit significands, errors near 2^-63 relative, i.e. ~1/1000 of a double ulp).
//
// Build:  g++ -std=c++20 -O2 -ffp-contract=off -pthread -Isrc tests/arith/math_f64_check.cpp -o math_f64_check
// Usage:  math_f64_check [--samples N]   (N per distribution, default 2,000,000; 5 distributions per function)
//         math_f64_check --dump N | python3 tests/arith/math_f64_mpmath.py   (N per distribution: the same
//         distributions, results checked against mpmath at 160 bits instead of long double)
//
// Criteria per input: NaN <=> NaN; infinite or zero references must be met exactly (zero with its sign);
// otherwise the distance in doubles between the result and the reference rounded to double (the correctly
// rounded result up to a double rounding of the reference) must be <= 1. Also reported: the largest real error
// |result - ref| / ulp(ref), ulp(ref) the double ulp of ref's binade (2^-1074 below 2^-1022).
// Exit status: 0 when both functions are within 1 ulp everywhere tested.
#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "arith/math_f64.h"

namespace la = lockstep::arith;

namespace {

constexpr uint64_t kBad = 1ull << 60;

int64_t ordered(double d) {
  const int64_t i = static_cast<int64_t>(la::bits_of(d));
  return i < 0 ? -(i & 0x7fffffffffffffffll) : i;
}
double of_bits(uint64_t b) { return la::double_of(b); }
uint64_t bits(double d) { return la::bits_of(d); }
long double ulp_at(long double r) {
  int e;
  std::frexp(static_cast<double>(std::fabs(r)), &e);  // |r| in [2^(e-1), 2^e)
  return std::ldexp(1.0L, std::max(e - 1, -1022) - 52);
}

struct Stats {
  uint64_t max_ulp = 0, over1 = 0, tested = 0, not_nearest = 0;
  double max_err = 0, worst_x = 0, worst_err_x = 0;
  void add(double x, double y, long double ref) {
    ++tested;
    uint64_t d = 0;
    double err = 0;
    const double rd = static_cast<double>(ref);
    if (std::isnan(ref) || std::isnan(y)) {
      d = std::isnan(ref) && std::isnan(y) ? 0 : kBad;
    } else if (std::isinf(rd) || std::isinf(y) || ref == 0) {
      d = bits(y) == bits(rd) ? 0 : kBad;
    } else {
      const int64_t a = ordered(y), b = ordered(rd);
      d = static_cast<uint64_t>(a > b ? a - b : b - a);
      err = static_cast<double>(std::fabs(static_cast<long double>(y) - ref) / ulp_at(ref));
    }
    if (d > 0) ++not_nearest;
    if (d > 1) ++over1;
    if (d > max_ulp) max_ulp = d, worst_x = x;
    if (err > max_err) max_err = err, worst_err_x = x;
  }
  void merge(const Stats& o) {
    if (o.max_ulp > max_ulp) max_ulp = o.max_ulp, worst_x = o.worst_x;
    if (o.max_err > max_err) max_err = o.max_err, worst_err_x = o.worst_err_x;
    over1 += o.over1;
    tested += o.tested;
    not_nearest += o.not_nearest;
  }
};

void report(const char* name, const Stats& s) {
  std::printf("%-12s max_ulp %" PRIu64 " (x = %a)  max_err %.4f ulp (x = %a)  not nearest %" PRIu64
              "  >1ulp %" PRIu64 "  tested %" PRIu64 "%s\n",
              name, s.max_ulp, s.worst_x, s.max_err, s.worst_err_x, s.not_nearest, s.over1, s.tested,
              s.max_ulp > 1 ? "  FAIL" : "");
}

/// The special inputs, then `samples` inputs of each distribution gen(rng, d), d < names.size(); prints one line
/// per distribution and returns the totals.
template <class Gen, class F, class Ref>
Stats run(const char* fname, uint64_t samples, Gen gen, F f, Ref ref, const std::vector<const char*>& names,
          const std::vector<double>& specials) {
  Stats all;
  for (double x : specials) all.add(x, f(x), ref(x));
  const int dists = static_cast<int>(names.size());
  const unsigned nt = std::max(1u, std::min(2u, std::thread::hardware_concurrency()));
  std::vector<std::vector<Stats>> parts(nt, std::vector<Stats>(dists));
  std::vector<std::thread> th;
  for (unsigned t = 0; t < nt; ++t)
    th.emplace_back([&, t] {
      std::mt19937_64 rng(20261206 + t);
      for (uint64_t i = t; i < samples * dists; i += nt) {
        const int d = static_cast<int>(i % dists);
        const double x = gen(rng, d);
        parts[t][d].add(x, f(x), ref(x));
      }
    });
  for (auto& t : th) t.join();
  for (int d = 0; d < dists; ++d) {
    Stats s;
    for (auto& p : parts) s.merge(p[d]);
    report((std::string(fname) + " " + names[d]).c_str(), s);
    all.merge(s);
  }
  return all;
}

double uniform(std::mt19937_64& rng, double lo, double hi) {
  return lo + (hi - lo) * std::uniform_real_distribution<double>(0.0, 1.0)(rng);
}

// The input distributions, d = 0..4.
double exp_input(std::mt19937_64& rng, int d) {
  switch (d) {
    case 0: return uniform(rng, -745.2, 709.8);                                                 // the whole range
    case 1: return uniform(rng, -1.0, 1.0) * std::ldexp(1.0, -static_cast<int>(rng() % 60));  // near 0
    case 2: return uniform(rng, -745.2, -708.0);                                                // denormal results
    case 3: return uniform(rng, 700.0, 709.8);                                                  // near overflow
    default: return of_bits(rng());                                                             // any bit pattern
  }
}
double log_input(std::mt19937_64& rng, int d) {
  switch (d) {
    case 0: return of_bits(rng() & 0x7fefffffffffffffull);                                      // all binades
    case 1: return 1.0 + uniform(rng, -1.0, 1.0) * std::ldexp(1.0, -static_cast<int>(rng() % 53));  // near 1
    case 2: return uniform(rng, 0.5, 2.0);
    case 3: return of_bits(rng() & 0x000fffffffffffffull);                                      // denormals
    default: return of_bits(rng());                                                             // any bit pattern
  }
}

}  // namespace

int main(int argc, char** argv) {
  uint64_t samples = 2000000, dump = 0;
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "--samples" && i + 1 < argc) samples = std::strtoull(argv[++i], nullptr, 10);
    if (std::string(argv[i]) == "--dump" && i + 1 < argc) dump = std::strtoull(argv[++i], nullptr, 10);
  }
  if (dump) {  // "exp x y" and "log x y" lines (C99 hex floats) for an independent check (math_f64_mpmath.py)
    std::mt19937_64 rng(7);
    for (uint64_t i = 0; i < dump * 5; ++i) {
      const double x = exp_input(rng, static_cast<int>(i % 5)), y = log_input(rng, static_cast<int>(i % 5));
      std::printf("exp %a %a\nlog %a %a\n", x, la::exp_f64(x), y, la::log_f64(y));
    }
    return 0;
  }
  const double inf = INFINITY;
  const std::vector<double> exp_specials = {
      0.0, -0.0, 1.0, -1.0, inf, -inf, NAN, 709.782712893384, 709.7827128933841, 710.0, -708.3964185322641,
      -708.4, -745.1332191019411, -745.1332191019412, -745.2, -746.0, -1000.0, 0x1p-1074, -0x1p-1074, 0x1p-60,
      -0x1p-60, 0x1.62e42fefa39efp-2, -0x1.62e42fefa39efp-2, 0x1.62e42fefa39efp-1, 1e-300, 1e300, -1e300};
  const Stats e = run("exp64", samples, exp_input, [](double x) { return la::exp_f64(x); },
                      [](double x) { return std::exp(static_cast<long double>(x)); },
                      {"all", "near0", "denormal", "overflow", "bits"}, exp_specials);
  report("exp64 total", e);
  const std::vector<double> log_specials = {0.0,         -0.0,   1.0, -1.0, inf, -inf, NAN, 0x1p-1074, 0x1p-1022,
                                            0x1.fffffffffffffp-1023, 0x1.fffffffffffffp1023, 2.0, 0.5,
                                            0x1.0000000000001p0, 0x1.fffffffffffffp-1, 0x1.6a09e667f3bcdp0,
                                            0x1.6a09e667f3bccp0, 0x1.6a09e667f3bcdp-1, 0x1.6a09e667f3bcep-1};
  const Stats l = run("log64", samples, log_input, [](double x) { return la::log_f64(x); },
                      [](double x) { return std::log(static_cast<long double>(x)); },
                      {"binades", "near1", "[0.5,2]", "denormal", "bits"}, log_specials);
  report("log64 total", l);
  return e.max_ulp > 1 || l.max_ulp > 1 ? 1 : 0;
}
