// TfIdfVectorizer's shared functions (src/arith/ngram.h): arith::ngram_count_row against a direct enumeration over a
// std::map of n-grams (the spec's skip-grams: every skip, every start, every length, 1-grams in the first pass
// only), on random pools and rows, int32 and int64; and arith::tfidf_value_f32's cases.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <random>
#include <vector>

#include "arith/bits.h"
#include "arith/ngram.h"

using namespace lockstep::arith;

namespace {

/// NgramTable's flat arrays for a pool given as, per length, a map from items to column.
struct Tables {
  std::vector<int64_t> first, key_at, keys, column;
  NgramTable table(int64_t min_len, int64_t max_len, int64_t max_skip) const {
    NgramTable t;
    t.min_len = min_len, t.max_len = max_len, t.max_skip = max_skip;
    t.first = first.data(), t.key_at = key_at.data(), t.keys = keys.data(), t.column = column.data();
    return t;
  }
};

Tables tables_of(const std::vector<std::map<std::vector<int64_t>, int64_t>>& grams, int64_t max_len) {
  Tables t;
  for (int64_t n = 0; n <= max_len; ++n) {
    t.first.push_back(static_cast<int64_t>(t.column.size()));
    t.key_at.push_back(static_cast<int64_t>(t.keys.size()));
    if (n == 0) continue;
    for (const auto& [key, col] : grams[n]) {
      t.column.push_back(col);
      t.keys.insert(t.keys.end(), key.begin(), key.end());
    }
  }
  t.first.push_back(static_cast<int64_t>(t.column.size()));
  return t;
}

template <typename T>
std::vector<uint32_t> direct_counts(const std::vector<std::map<std::vector<int64_t>, int64_t>>& grams,
                                    const std::vector<T>& x, int64_t min_len, int64_t max_len, int64_t max_skip,
                                    int64_t columns) {
  std::vector<uint32_t> counts(columns, 0);
  const int64_t len = static_cast<int64_t>(x.size());
  for (int64_t skip = 0; skip <= max_skip; ++skip)
    for (int64_t n = std::max<int64_t>(min_len, skip == 0 ? 1 : 2); n <= max_len; ++n)
      for (int64_t start = 0; start + (n - 1) * (skip + 1) < len; ++start) {
        std::vector<int64_t> key;
        for (int64_t k = 0; k < n; ++k) key.push_back(static_cast<int64_t>(x[start + k * (skip + 1)]));
        auto it = grams[n].find(key);
        if (it != grams[n].end()) ++counts[it->second];
      }
  return counts;
}

template <typename T>
void check_random(uint64_t seed) {
  std::mt19937_64 rng(seed);
  auto pick = [&](int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(rng); };
  const int64_t max_len = pick(1, 4), min_len = pick(1, max_len), max_skip = pick(0, 4), alphabet = pick(2, 6);
  const int64_t columns = pick(1, 12);
  std::vector<std::map<std::vector<int64_t>, int64_t>> grams(max_len + 1);
  for (int64_t n = min_len; n <= max_len; ++n)
    for (int64_t g = pick(0, 10); g > 0; --g) {
      std::vector<int64_t> key;
      for (int64_t k = 0; k < n; ++k) key.push_back(pick(0, alphabet - 1) - 1);  // -1 too (a string outside)
      grams[n].emplace(key, pick(0, columns - 1));                               // columns may repeat
    }
  const Tables t = tables_of(grams, max_len);
  for (int rows = 0; rows < 20; ++rows) {
    std::vector<T> x(pick(0, 60));
    for (T& v : x) v = static_cast<T>(pick(-1, alphabet - 1));
    std::vector<uint32_t> counts(columns, 0);
    ngram_count_row(t.table(min_len, max_len, max_skip), x.data(), static_cast<int64_t>(x.size()), counts.data());
    ASSERT_EQ(counts, direct_counts(grams, x, min_len, max_len, max_skip, columns))
        << "seed " << seed << " row " << rows;
  }
}

}  // namespace

TEST(Ngram, CountsMatchTheDirectEnumerationInt64) {
  for (uint64_t seed = 0; seed < 300; ++seed) check_random<int64_t>(seed);
}

TEST(Ngram, CountsMatchTheDirectEnumerationInt32) {
  for (uint64_t seed = 1000; seed < 1100; ++seed) check_random<int32_t>(seed);
}

TEST(Ngram, SpecExample) {
  // The spec's example: [94, 17, 36, 12, 28] with 2 skips has the 2-grams (94, 12) and (17, 28); with none, the four
  // adjacent pairs. Pool: (94, 12) -> column 0, (17, 36) -> column 1.
  std::vector<std::map<std::vector<int64_t>, int64_t>> grams(3);
  grams[2] = {{{94, 12}, 0}, {{17, 36}, 1}};
  const Tables t = tables_of(grams, 2);
  const std::vector<int64_t> x = {94, 17, 36, 12, 28};
  std::vector<uint32_t> counts(2, 0);
  ngram_count_row(t.table(2, 2, 0), x.data(), 5, counts.data());
  EXPECT_EQ(counts, (std::vector<uint32_t>{0, 1}));
  counts.assign(2, 0);
  ngram_count_row(t.table(2, 2, 2), x.data(), 5, counts.data());
  EXPECT_EQ(counts, (std::vector<uint32_t>{1, 1}));
}

TEST(Ngram, Values) {
  const float nan = __builtin_nanf("");
  EXPECT_EQ(bits_of(tfidf_value_f32(TfIdfMode::TFIDF, 0, nan)), 0u);  // no hit: +0 whatever the weight
  EXPECT_EQ(bits_of(tfidf_value_f32(TfIdfMode::IDF, 0, -3.0f)), 0u);
  EXPECT_EQ(tfidf_value_f32(TfIdfMode::TF, 7, 0.5f), 7.0f);
  EXPECT_EQ(tfidf_value_f32(TfIdfMode::IDF, 7, 0.5f), 0.5f);
  EXPECT_EQ(tfidf_value_f32(TfIdfMode::TFIDF, 10, 0.1f), 10.0f * 0.1f);  // one product: 1.0, not ten additions
  EXPECT_EQ(tfidf_value_f32(TfIdfMode::TFIDF, 10, 0.1f), 1.0f);
  EXPECT_EQ(bits_of(tfidf_value_f32(TfIdfMode::TFIDF, 3, -0.0f)), 0x80000000u);
  EXPECT_EQ(tfidf_value_f32(TfIdfMode::TF, 16777217u, 1.0f), 16777216.0f);  // rounded to nearest even
}
