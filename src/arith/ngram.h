// TfIdfVectorizer's n-gram counting and weighting, shared by the CPU and CUDA kernels
// (docs/arithmetic.md#tfidfvectorizer). The counting is exact integer work; the only float operations are the
// conversion of a count and one multiplication by a weight (tfidf_value_f32).
#pragma once

#include <cstdint>

#include "arith/hd.h"

namespace lockstep::arith {

/// The pool of a TfIdfVectorizer node as flat tables, in host or device memory. Only the n-grams of the lengths
/// counted (min_len..max_len) are held: those of length n are grams [first[n], first[n + 1]), sorted ascending
/// (lexicographically over their items); gram g of length n has its n items at keys[key_at[n] + (g - first[n]) * n]
/// and adds to output column column[g]. Items are int64 (string pools: the index of each string in the node's
/// sorted vocabulary, and -1 for an input string outside it, which no gram holds).
struct NgramTable {
  int64_t min_len = 1, max_len = 1, max_skip = 0;
  const int64_t* first = nullptr;   // max_len + 2 entries
  const int64_t* key_at = nullptr;  // max_len + 1 entries
  const int64_t* keys = nullptr;
  const int64_t* column = nullptr;
};

/// The output column of the n-gram x[start], x[start + step], ..., x[start + (n - 1) * step] (n items), or -1 when
/// the pool does not hold it: a binary search over the grams of length n.
template <typename T>
LOCKSTEP_HD int64_t ngram_column(const NgramTable& t, int64_t n, const T* x, int64_t start, int64_t step) {
  int64_t lo = t.first[n], hi = t.first[n + 1];
  const int64_t* base = t.keys + t.key_at[n] - t.first[n] * n;
  while (lo < hi) {
    const int64_t mid = lo + (hi - lo) / 2;
    const int64_t* gram = base + mid * n;
    int order = 0;  // gram vs the row's n-gram: -1 below, +1 above
    for (int64_t k = 0; k < n && order == 0; ++k) {
      const int64_t item = static_cast<int64_t>(x[start + k * step]);
      order = gram[k] < item ? -1 : gram[k] > item ? 1 : 0;
    }
    if (order == 0) return t.column[mid];
    if (order < 0) lo = mid + 1;
    else hi = mid;
  }
  return -1;
}

/// Counts the n-grams of one row x[0..len) into counts (one per output column, zeroed by the caller), as
/// onnxruntime and the ONNX reference enumerate them: for skip = 0..max_skip (items step = skip + 1 apart), for each
/// start position, every length n from min_len to max_len whose last item lies in the row. 1-grams do not depend
/// on the skip and are counted in the skip-0 pass only. Each hit adds 1 to its column (exact, unsigned 32-bit).
template <typename T>
LOCKSTEP_HD void ngram_count_row(const NgramTable& t, const T* x, int64_t len, uint32_t* counts) {
  for (int64_t skip = 0; skip <= t.max_skip; ++skip) {
    const int64_t step = skip + 1;
    const int64_t shortest = skip == 0 || t.min_len > 1 ? t.min_len : 2;
    if (shortest > t.max_len) break;
    for (int64_t start = 0; start < len; ++start)
      for (int64_t n = shortest; n <= t.max_len && start + (n - 1) * step < len; ++n) {
        const int64_t col = ngram_column(t, n, x, start, step);
        if (col >= 0) counts[col] += 1u;
      }
  }
}

/// TfIdfVectorizer's modes.
enum class TfIdfMode : int { TF, IDF, TFIDF };

/// One output element from its column's count and weight (1 without a weights attribute): +0 for a zero count,
/// else TF: float(count); IDF: weight; TFIDF: float(count) * weight (the conversion rounds to nearest, then one
/// float32 multiplication).
LOCKSTEP_HD float tfidf_value_f32(TfIdfMode mode, uint32_t count, float weight) {
  if (count == 0u) return 0.0f;
  if (mode == TfIdfMode::IDF) return weight;
  const float c = static_cast<float>(count);
  return mode == TfIdfMode::TFIDF ? c * weight : c;
}

}  // namespace lockstep::arith
