// Unit tests of the reduce family's shared pieces: the SIMD canonical reductions (AVX2, AVX-512) and the warp
// emulations must give the reference bits of src/arith/reduce.h (docs/arithmetic.md#reduce).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "arith/reduce.h"
#include "arith/reduce_ops.h"
#include "cpu/isa.h"
#include "ops/reduce.h"

namespace lockstep {
namespace {

uint32_t bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
bool same(float a, float b) { return (a != a && b != b) || bits(a) == bits(b); }

std::vector<float> salted(int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> x(n);
  for (auto& v : x) v = u(rng) * 1000.0f;
  for (int64_t i = 0; i < n; i += 17) x[i] = (i / 17) % 2 ? -0.0f : 0.0f;
  return x;
}

// Every ISA the host has, every tail length (the AVX-512 tail is two masked registers: lengths on both sides of 16).
TEST(ReduceCanonical, ContiguousMatchesReferenceOnEveryIsa) {
  for (int isa = 0; isa <= static_cast<int>(cpu::cpu_best_isa()); ++isa)
  for (int64_t n : {0, 1, 5, 15, 16, 17, 31, 32, 33, 49, 63, 64, 65, 100, 196, 257, 1000, 4099}) {
    cpu::force_cpu_isa(static_cast<cpu::CpuIsa>(isa));
    std::vector<float> x = salted(n, static_cast<uint32_t>(n));
    const float* p = x.data();
    auto id = [p](int64_t i) { return p[i]; };
    auto sq = [p](int64_t i) { return p[i] * p[i]; };
    auto ab = [p](int64_t i) { return arith::l1_term_f32(p[i]); };
    EXPECT_TRUE(same(cpu::sum_contiguous_f32(p, n), arith::sum_canonical_f32(n, id))) << n;
    EXPECT_TRUE(same(cpu::sum_squares_contiguous_f32(p, n), arith::sum_canonical_f32(n, sq))) << n;
    EXPECT_TRUE(same(cpu::sum_abs_contiguous_f32(p, n), arith::sum_canonical_f32(n, ab))) << n;
    std::vector<float> y(n);
    for (int64_t i = 0; i < n; ++i) y[i] = 1.0f + x[i] * 1e-4f;
    const float* q = y.data();
    EXPECT_TRUE(same(cpu::product_contiguous_f32(q, n),
                     arith::product_canonical_f32(n, [q](int64_t i) { return q[i]; })))
        << n;
    cpu::reset_cpu_isa();
  }
}

// Exact bytes (NaN payloads too): the vector max/min must pick what the sequential rule picks.
TEST(ReduceExtreme, ContiguousMatchesSequentialRule) {
  auto nan_with = [](uint32_t payload) {
    uint32_t u = 0x7fc00000u | payload;
    float f;
    std::memcpy(&f, &u, 4);
    return f;
  };
  std::mt19937 rng(5);
  for (int64_t n : {0, 1, 7, 15, 16, 17, 24, 31, 100, 129, 1000}) {
    for (int variant = 0; variant < 6; ++variant) {
      std::vector<float> x = salted(n, static_cast<uint32_t>(n * 7 + variant));
      if (variant == 1) for (auto& v : x) v = -std::fabs(v);  // max is a zero of either sign, or negative
      if (variant == 2) for (auto& v : x) v = (rng() % 2) ? 0.0f : -0.0f;  // all zeros, mixed signs
      if (variant == 3 && n > 3) x[n / 2] = nan_with(5), x[n - 1] = nan_with(9);  // the first NaN wins
      if (variant == 4 && n > 0) x[n - 1] = std::numeric_limits<float>::infinity();
      if (variant == 5) for (auto& v : x) v = -std::fabs(v) - 1.0f;  // all negative, no zeros
      const float* p = x.data();
      auto load = [p](int64_t i) { return p[i]; };
      EXPECT_EQ(bits(cpu::max_contiguous_f32(p, n)), bits(arith::extreme_seq_f32<true>(n, 0.0f, load)))
          << n << " variant " << variant;
      EXPECT_EQ(bits(cpu::min_contiguous_f32(p, n)), bits(arith::extreme_seq_f32<false>(n, 0.0f, load)))
          << n << " variant " << variant;
    }
  }
}

TEST(ReduceCanonical, AllNegativeZeroSumsToPositiveZero) {
  std::vector<float> x(70, -0.0f);
  EXPECT_EQ(bits(cpu::sum_contiguous_f32(x.data(), 70)), 0u);
}

// Emulates the warp version: lane j folds (value, index) of terms j, j+32, ...; then the xor tree.
template <bool IsMax>
float warp_extreme_emulated(const std::vector<float>& x, int64_t* at) {
  float v[32];
  int64_t idx[32];
  for (int j = 0; j < 32; ++j) {
    v[j] = 0.0f;
    idx[j] = -1;
    for (size_t i = j; i < x.size(); i += 32) arith::extreme_pick_f32<IsMax>(v[j], idx[j], x[i], int64_t(i));
  }
  for (int w = 16; w >= 1; w /= 2) {
    float nv[32];
    int64_t ni[32];
    for (int j = 0; j < 32; ++j) {
      nv[j] = v[j];
      ni[j] = idx[j];
      arith::extreme_pick_f32<IsMax>(nv[j], ni[j], v[j ^ w], idx[j ^ w]);
    }
    std::memcpy(v, nv, sizeof v);
    std::memcpy(idx, ni, sizeof idx);
  }
  *at = idx[0];
  return v[0];
}

TEST(ReduceExtreme, WarpPickMatchesSequentialRule) {
  std::mt19937 rng(7);
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  const float pool[] = {0.0f, -0.0f, 1.0f, -1.0f, 2.0f, inf, -inf, nan, 0.5f};
  for (int trial = 0; trial < 2000; ++trial) {
    std::vector<float> x(1 + rng() % 150);
    for (auto& v : x) v = pool[rng() % (trial % 2 ? 9 : 7)];
    for (bool is_max : {true, false}) {
      int64_t seq_at = -1, warp_at = -1;
      auto load = [&](int64_t i) { return x[i]; };
      float seq = is_max ? arith::extreme_seq_f32<true>(x.size(), 0.0f, load, &seq_at)
                         : arith::extreme_seq_f32<false>(x.size(), 0.0f, load, &seq_at);
      float warp = is_max ? warp_extreme_emulated<true>(x, &warp_at) : warp_extreme_emulated<false>(x, &warp_at);
      ASSERT_EQ(seq_at, warp_at) << trial;
      ASSERT_TRUE(same(seq, warp)) << trial;
    }
  }
}

TEST(ReduceCanonical, XorTreeMatchesLaneTree) {
  std::vector<float> x = salted(32, 3);
  float lane[32], v[32];
  for (int j = 0; j < 32; ++j) lane[j] = v[j] = x[j];
  float ref = arith::tree_over_lanes_f32(lane, arith::AddF32{});
  for (int w = 16; w >= 1; w /= 2) {
    float nv[32];
    for (int j = 0; j < 32; ++j) nv[j] = v[j] + v[j ^ w];
    std::memcpy(v, nv, sizeof v);
  }
  EXPECT_TRUE(same(ref, v[0]));
}

}  // namespace
}  // namespace lockstep
