// The strings family (StringConcat 20, StringSplit 20, StringNormalizer 10, RegexFullMatch 20, TfIdfVectorizer 9):
// attributes and inputs validated into settings here; the kernels of string tensors run on the host only, where
// string tensors live, so a CUDA session runs them on the CPU (docs/arithmetic.md#string-ops). TfIdfVectorizer also
// has a CUDA kernel for int32/int64 input (docs/arithmetic.md#tfidfvectorizer).
#pragma once

#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "arith/ngram.h"

#include "ops/common.h"
#include "ops/regex_program.h"
#include "runtime/kernel.h"

namespace lockstep {

/// Throws InvalidArgument naming the op and input unless input i is a string tensor.
void require_string_input(const KernelContext& ctx, int i, const char* name);

struct SplitSettings {
  bool on_whitespace = true;  // delimiter unset or "": split on runs of whitespace, dropping leading/trailing ones
  std::string delimiter;
  int64_t maxsplit = -1;      // negative: as many splits as possible
};
SplitSettings split_settings(const KernelContext& ctx);

enum class CaseChange { None, Lower, Upper };
struct NormalizerSettings {
  CaseChange change = CaseChange::None;
  bool case_sensitive = false;
  std::set<std::string> stopwords;  // lowercased when !case_sensitive
};
/// Validates X's shape ([C] or [1, C]), the attributes and the locale ("", "en_US", "en_US.UTF-8"; others are
/// NotImplemented). The stopwords still need lowercasing when !case_sensitive (the kernel's case mapping).
NormalizerSettings normalizer_settings(const KernelContext& ctx);

/// Compiles the node's RE2 `pattern` (src/ops/regex_program.h); throws NotImplemented naming the node for RE2
/// syntax outside the supported subset and InvalidArgument for an invalid pattern (docs/arithmetic.md#string-ops).
RegexProgram regex_program(const KernelContext& ctx);

/// A TfIdfVectorizer node's pool and weights, validated and laid out as arith::NgramTable's flat tables.
struct TfIdfModel {
  arith::TfIdfMode mode = arith::TfIdfMode::TF;
  int64_t min_len = 1, max_len = 1, max_skip = 0;
  int64_t columns = 0;                   // max(ngram_indexes) + 1
  bool string_pool = false;              // pool_strings (else pool_int64s)
  std::vector<int64_t> tables;           // first | key_at | column | keys (NgramTable's arrays, one buffer)
  int64_t at_key_at = 0, at_column = 0, at_keys = 0;  // offsets of the arrays after `first` in `tables`
  std::vector<float> weights;            // per output column: the weight of its n-grams, 1 without weights
  std::vector<std::string> vocabulary;   // string pool: its distinct strings, sorted (an item is an index here)
  /// The tables at `base`: tables.data() on the host, or a device copy of `tables`.
  arith::NgramTable table(const int64_t* base) const;
};
/// Reads and validates the attributes (errors name the node): mode, the gram lengths, max_skip_count, ngram_counts
/// against the pool, ngram_indexes (>= 0, one per pool n-gram at least), weights (as many as ngram_indexes); a
/// repeated n-gram is InvalidGraph, and n-grams of different weights sharing a column are NotImplemented (IDF,
/// TFIDF).
std::shared_ptr<const TfIdfModel> make_tfidf_model(const KernelContext& ctx);
/// X's rows: [C] and rank 0 (one element) are one row and give Y [columns]; [N, C] (N >= 1) gives Y [N, columns].
struct TfIdfRows {
  int64_t rows = 1, len = 0;
  Shape y_shape;
};
TfIdfRows tfidf_rows(const KernelContext& ctx, const TfIdfModel& m);
/// Whether X's kind (strings or integers) matches the pool's; onnxruntime counts nothing otherwise (Y all +0).
bool tfidf_input_matches_pool(const KernelContext& ctx, const TfIdfModel& m);
/// What a TfIdfVectorizer node keeps from run to run (its NodeState): the model, and the CUDA kernel's device copy
/// of its tables (null until a CUDA run makes it). Both kernels keep this one type.
struct TfIdfKept {
  std::shared_ptr<const TfIdfModel> model;
  std::shared_ptr<Buffer> device_tables;
};

namespace cpu {
void string_concat(KernelContext& ctx);
void string_split(KernelContext& ctx);
void string_normalizer(KernelContext& ctx);
void regex_full_match(KernelContext& ctx);
void tfidf_vectorizer(KernelContext& ctx);
}  // namespace cpu
namespace cuda {
void tfidf_vectorizer(KernelContext& ctx);
}  // namespace cuda

}  // namespace lockstep
