// The strings family's definitions: validation of inputs and attributes, and RegexFullMatch's pattern compiled.
#include "ops/strings.h"

#include <algorithm>
#include <map>

#include "arith/bits.h"
#include "ops/registry.h"

namespace lockstep {

void require_string_input(const KernelContext& ctx, int i, const char* name) {
  if (ctx.input(i).dtype() != DType::String)
    throw ctx.error(ctx.node.op_type + " input " + name + " must be a string tensor, got " +
                    dtype_name(ctx.input(i).dtype()));
}

SplitSettings split_settings(const KernelContext& ctx) {
  SplitSettings s;
  s.delimiter = ctx.node.attr_string("delimiter", "");
  s.on_whitespace = s.delimiter.empty();
  s.maxsplit = ctx.node.attr_int("maxsplit", -1);
  return s;
}

NormalizerSettings normalizer_settings(const KernelContext& ctx) {
  const Shape& shape = ctx.input(0).shape();
  if (!(shape.size() == 1 || (shape.size() == 2 && shape[0] == 1)))
    throw ctx.error("StringNormalizer input X must be [C] or [1, C], got " + shape_string(shape));
  NormalizerSettings s;
  const std::string action = ctx.node.attr_string("case_change_action", "NONE");
  if (action == "LOWER")
    s.change = CaseChange::Lower;
  else if (action == "UPPER")
    s.change = CaseChange::Upper;
  else if (action != "NONE")
    throw ctx.error("StringNormalizer case_change_action must be LOWER, UPPER or NONE, got '" + action + "'");
  const int64_t sensitive = ctx.node.attr_int("is_case_sensitive", 0);
  if (sensitive != 0 && sensitive != 1)
    throw ctx.error("StringNormalizer is_case_sensitive must be 0 or 1, got " + std::to_string(sensitive));
  s.case_sensitive = sensitive == 1;
  const std::string locale = ctx.node.attr_string("locale", "");
  if (locale != "" && locale != "en_US" && locale != "en_US.UTF-8")
    throw ctx.error("StringNormalizer locale '" + locale + "' is not supported (supported: \"\", en_US, en_US.UTF-8)",
                    ErrorCode::NotImplemented);
  for (const std::string& w : ctx.node.attr_strings("stopwords")) s.stopwords.insert(w);
  return s;
}

RegexProgram regex_program(const KernelContext& ctx) {
  if (!ctx.node.has("pattern")) throw ctx.error("RegexFullMatch needs the attribute pattern", ErrorCode::InvalidGraph);
  const std::string pattern = ctx.node.attr_string("pattern", "");
  try {
    return compile_regex(pattern);
  } catch (const RegexPatternError& e) {
    if (e.unsupported)
      throw ctx.error("RegexFullMatch pattern '" + pattern + "': " + e.what(), ErrorCode::NotImplemented);
    throw ctx.error("RegexFullMatch pattern '" + pattern + "' is not a valid RE2 pattern: " + e.what());
  }
}

arith::NgramTable TfIdfModel::table(const int64_t* base) const {
  arith::NgramTable t;
  t.min_len = min_len, t.max_len = max_len, t.max_skip = max_skip;
  t.first = base;
  t.key_at = base + at_key_at;
  t.column = base + at_column;
  t.keys = base + at_keys;
  return t;
}

namespace {
bool same_bits(float a, float b) { return arith::bits_of(a) == arith::bits_of(b); }
}  // namespace

std::shared_ptr<const TfIdfModel> make_tfidf_model(const KernelContext& ctx) {
  const onnx::Node& n = ctx.node;
  auto m = std::make_shared<TfIdfModel>();
  const std::string mode = n.attr_string("mode", "");
  if (mode == "TF") m->mode = arith::TfIdfMode::TF;
  else if (mode == "IDF") m->mode = arith::TfIdfMode::IDF;
  else if (mode == "TFIDF") m->mode = arith::TfIdfMode::TFIDF;
  else throw ctx.error("TfIdfVectorizer mode must be TF, IDF or TFIDF, got '" + mode + "'", ErrorCode::InvalidGraph);
  for (const char* attr : {"min_gram_length", "max_gram_length", "max_skip_count", "ngram_counts", "ngram_indexes"})
    if (!n.has(attr))
      throw ctx.error(std::string("TfIdfVectorizer needs the attribute ") + attr, ErrorCode::InvalidGraph);
  m->min_len = n.attr_int("min_gram_length", 1);
  m->max_len = n.attr_int("max_gram_length", 1);
  m->max_skip = n.attr_int("max_skip_count", 0);
  const std::vector<int64_t> counts = n.attr_ints("ngram_counts");
  const std::vector<int64_t> indexes = n.attr_ints("ngram_indexes");
  const std::vector<float> weights = n.attr_floats("weights");
  const auto bad = [&](const std::string& what) {
    return ctx.error("TfIdfVectorizer " + what, ErrorCode::InvalidGraph);
  };
  if (m->min_len < 1 || m->max_len < m->min_len)
    throw bad("needs 1 <= min_gram_length <= max_gram_length, got " + std::to_string(m->min_len) + " and " +
              std::to_string(m->max_len));
  if (m->max_skip < 0) throw bad("max_skip_count must be >= 0, got " + std::to_string(m->max_skip));
  if (counts.empty() || m->max_len > static_cast<int64_t>(counts.size()))
    throw bad("ngram_counts (" + std::to_string(counts.size()) + " entries) must give the start of every length up " +
              "to max_gram_length = " + std::to_string(m->max_len));
  if (indexes.empty()) throw bad("needs a non-empty ngram_indexes");
  for (int64_t c : indexes)
    if (c < 0) throw bad("ngram_indexes must be >= 0, got " + std::to_string(c));
  if (n.has("weights") && weights.size() != indexes.size())
    throw bad("has " + std::to_string(weights.size()) + " weights but " + std::to_string(indexes.size()) +
              " ngram_indexes; they must be as many");
  m->columns = *std::max_element(indexes.begin(), indexes.end()) + 1;
  const std::vector<std::string> pool_strings = n.attr_strings("pool_strings");
  const std::vector<int64_t> pool_ints = n.attr_ints("pool_int64s");
  if (n.has("pool_strings") == n.has("pool_int64s"))
    throw bad("needs exactly one of pool_strings and pool_int64s");
  m->string_pool = n.has("pool_strings");
  const int64_t total = static_cast<int64_t>(m->string_pool ? pool_strings.size() : pool_ints.size());
  if (total == 0) throw bad(std::string(m->string_pool ? "pool_strings" : "pool_int64s") + " is empty");
  // The pool's items as int64: the integers themselves, or each string's index in the sorted vocabulary.
  std::vector<int64_t> items(pool_ints);
  if (m->string_pool) {
    m->vocabulary = pool_strings;
    std::sort(m->vocabulary.begin(), m->vocabulary.end());
    m->vocabulary.erase(std::unique(m->vocabulary.begin(), m->vocabulary.end()), m->vocabulary.end());
    for (const std::string& w : pool_strings)
      items.push_back(std::lower_bound(m->vocabulary.begin(), m->vocabulary.end(), w) - m->vocabulary.begin());
  }
  // Pool n-gram g (in pool order over all lengths) writes column ngram_indexes[g]; only lengths min..max count.
  std::vector<std::map<std::vector<int64_t>, int64_t>> grams(m->max_len + 1);  // per length: items -> column
  std::vector<int> weighted(m->columns, 0);
  m->weights.assign(m->columns, 1.0f);
  int64_t g = 0;
  for (size_t i = 0; i < counts.size(); ++i) {
    const int64_t len = static_cast<int64_t>(i) + 1;
    const int64_t begin = counts[i], end = i + 1 < counts.size() ? counts[i + 1] : total;
    if (begin < 0 || end < begin || end > total)
      throw bad("ngram_counts " + std::to_string(begin) + ".." + std::to_string(end) + " of the " +
                std::to_string(len) + "-grams lie outside the pool of " + std::to_string(total) + " items");
    if ((end - begin) % len != 0)
      throw bad("the " + std::to_string(end - begin) + " pool items of the " + std::to_string(len) +
                "-grams are not whole " + std::to_string(len) + "-grams");
    for (int64_t at = begin; at < end; at += len, ++g) {
      if (g >= static_cast<int64_t>(indexes.size()))
        throw bad("the pool holds more n-grams than the " + std::to_string(indexes.size()) + " ngram_indexes");
      if (len < m->min_len || len > m->max_len) continue;
      const int64_t col = indexes[g];
      std::vector<int64_t> key(items.begin() + at, items.begin() + at + len);
      if (!grams[len].emplace(key, col).second)
        throw bad("pool n-gram " + std::to_string(g) + " (of length " + std::to_string(len) + ") appears twice");
      const float w = weights.empty() ? 1.0f : weights[g];
      if (weighted[col] && !same_bits(m->weights[col], w) && m->mode != arith::TfIdfMode::TF)
        throw ctx.error("TfIdfVectorizer ngram_indexes maps n-grams of different weights to output column " +
                            std::to_string(col) + "; this is not supported",
                        ErrorCode::NotImplemented);
      weighted[col] = 1;
      m->weights[col] = w;
    }
  }
  // first | key_at | column | keys
  const int64_t L = m->max_len;
  std::vector<int64_t> first(L + 2, 0), key_at(L + 1, 0), column, keys;
  for (int64_t len = 0; len <= L; ++len) {
    first[len] = static_cast<int64_t>(column.size());
    key_at[len] = static_cast<int64_t>(keys.size());
    if (len == 0) continue;
    for (const auto& [key, col] : grams[len]) {  // std::map: ascending lexicographic order
      column.push_back(col);
      keys.insert(keys.end(), key.begin(), key.end());
    }
  }
  first[L + 1] = static_cast<int64_t>(column.size());
  m->tables = first;
  m->at_key_at = static_cast<int64_t>(m->tables.size());
  m->tables.insert(m->tables.end(), key_at.begin(), key_at.end());
  m->at_column = static_cast<int64_t>(m->tables.size());
  m->tables.insert(m->tables.end(), column.begin(), column.end());
  m->at_keys = static_cast<int64_t>(m->tables.size());
  m->tables.insert(m->tables.end(), keys.begin(), keys.end());
  return m;
}

TfIdfRows tfidf_rows(const KernelContext& ctx, const TfIdfModel& m) {
  const Tensor& x = ctx.input(0);
  const DType t = x.dtype();
  if (t != DType::String && t != DType::Int32 && t != DType::Int64)
    throw ctx.error(std::string("TfIdfVectorizer input X must be string, int32 or int64, got ") + dtype_name(t));
  TfIdfRows r;
  if (x.rank() == 0) {
    r.len = 1;
    r.y_shape = {m.columns};
  } else if (x.rank() == 1) {
    r.len = x.dim(0);
    r.y_shape = {m.columns};
  } else if (x.rank() == 2 && x.dim(0) >= 1) {
    r.rows = x.dim(0);
    r.len = x.dim(1);
    r.y_shape = {r.rows, m.columns};
  } else {
    throw ctx.error("TfIdfVectorizer input X must be [C] or [N, C] with N >= 1, got " + shape_string(x.shape()));
  }
  // Every hit adds 1 to a 32-bit count: refuse rows that could make more hits than that holds.
  const double hits = static_cast<double>(r.len) * static_cast<double>(m.max_skip + 1) *
                      static_cast<double>(m.max_len - m.min_len + 1);
  if (hits >= 4294967295.0)
    throw ctx.error("TfIdfVectorizer rows of " + std::to_string(r.len) + " items with max_skip_count " +
                        std::to_string(m.max_skip) + " could count more than 2^32 - 1 n-grams in one column",
                    ErrorCode::NotImplemented);
  return r;
}

bool tfidf_input_matches_pool(const KernelContext& ctx, const TfIdfModel& m) {
  return (ctx.input(0).dtype() == DType::String) == m.string_pool;
}

namespace {
const OpEntry kRows[] = {
    {"StringConcat", 20, kNewestOpset, &cpu::string_concat, nullptr},
    {"StringSplit", 20, kNewestOpset, &cpu::string_split, nullptr},
    {"StringNormalizer", 10, kNewestOpset, &cpu::string_normalizer, nullptr},
    {"RegexFullMatch", 20, kNewestOpset, &cpu::regex_full_match, nullptr},
    // int32/int64 X runs on the GPU; string X runs this row's CPU kernel inside a CUDA session (the executor's rule
    // for string inputs, src/runtime/executor.cpp).
    {"TfIdfVectorizer", 9, kNewestOpset, &cpu::tfidf_vectorizer, LOCKSTEP_CUDA_KERNEL(tfidf_vectorizer)},
};
}  // namespace

std::span<const OpEntry> strings_ops() { return kRows; }

}  // namespace lockstep
