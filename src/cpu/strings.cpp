// CPU kernels of the strings family, the only ones for string tensors, which live on the host (src/ops/strings.h);
// TfIdfVectorizer's integer rows also have a CUDA kernel (src/cuda/strings.cu), which calls the same arith functions.
#include <algorithm>
#include <clocale>
#include <cwctype>
#include <locale.h>
#include <string_view>
#include <vector>

#include "arith/ngram.h"
#include "ops/elementwise.h"
#include "ops/strings.h"
#include "runtime/thread_pool.h"

namespace lockstep::cpu {

namespace {

// Decodes the UTF-8 code point at s[i] and advances i; false on a malformed or overlong sequence.
bool next_code_point(std::string_view s, size_t& i, char32_t& cp) {
  const unsigned char lead = static_cast<unsigned char>(s[i]);
  const int extra = lead < 0x80 ? 0 : (lead >> 5) == 0x6 ? 1 : (lead >> 4) == 0xE ? 2 : (lead >> 3) == 0x1E ? 3 : -1;
  if (extra < 0 || i + extra >= s.size()) return false;
  cp = extra == 0 ? lead : lead & (0x3F >> extra);
  for (int k = 1; k <= extra; ++k) {
    const unsigned char c = static_cast<unsigned char>(s[i + k]);
    if ((c >> 6) != 0x2) return false;
    cp = (cp << 6) | (c & 0x3F);
  }
  constexpr char32_t kSmallest[] = {0, 0x80, 0x800, 0x10000};
  if (cp < kSmallest[extra] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
  i += extra + 1;
  return true;
}

void append_utf8(std::string& out, char32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
    return;
  }
  const int extra = cp < 0x800 ? 1 : cp < 0x10000 ? 2 : 3;
  out += static_cast<char>(((0xFF00 >> (extra + 1)) & 0xFF) | (cp >> (6 * extra)));
  for (int k = extra - 1; k >= 0; --k) out += static_cast<char>(0x80 | ((cp >> (6 * k)) & 0x3F));
}

[[noreturn]] void not_utf8(const KernelContext& ctx, int64_t element) {
  throw ctx.error(ctx.node.op_type + " input X element " + std::to_string(element) + " is not valid UTF-8");
}

// Python's str.isspace set: Unicode White_Space plus the ASCII separators U+001C..U+001F.
bool is_whitespace(char32_t cp) {
  return (cp >= 0x09 && cp <= 0x0D) || (cp >= 0x1C && cp <= 0x20) || cp == 0x85 || cp == 0xA0 || cp == 0x1680 ||
         (cp >= 0x2000 && cp <= 0x200A) || cp == 0x2028 || cp == 0x2029 || cp == 0x202F || cp == 0x205F ||
         cp == 0x3000;
}

std::vector<std::string> split_on_whitespace(const KernelContext& ctx, const std::string& s, int64_t element,
                                             int64_t maxsplit) {
  std::vector<std::pair<size_t, size_t>> words;  // [begin, end) byte ranges of the runs of non-whitespace
  for (size_t i = 0; i < s.size();) {
    const size_t at = i;
    char32_t cp = 0;
    if (!next_code_point(s, i, cp)) not_utf8(ctx, element);
    const bool space = is_whitespace(cp);
    if (!space && (words.empty() || words.back().second != at)) words.push_back({at, i});
    if (!space) words.back().second = i;
  }
  if (maxsplit >= 0 && static_cast<int64_t>(words.size()) > maxsplit + 1) {
    words[maxsplit].second = words.back().second;  // the rest after the last split, inner whitespace kept
    words.resize(maxsplit + 1);
  }
  std::vector<std::string> parts;
  for (auto [begin, end] : words) parts.push_back(s.substr(begin, end - begin));
  return parts;
}

std::vector<std::string> split_on_delimiter(const std::string& s, const std::string& delimiter, int64_t maxsplit) {
  std::vector<std::string> parts;
  size_t begin = 0;
  for (size_t at; (maxsplit < 0 || static_cast<int64_t>(parts.size()) < maxsplit) &&
                  (at = s.find(delimiter, begin)) != std::string::npos;
       begin = at + delimiter.size())
    parts.push_back(s.substr(begin, at - begin));
  parts.push_back(s.substr(begin));
  return parts;
}

// Simple (one code point to one) case mapping of glibc's C.UTF-8 tables, the en_US mapping.
locale_t utf8_ctype(const KernelContext& ctx) {
  static const locale_t ctype = newlocale(LC_CTYPE_MASK, "C.UTF-8", static_cast<locale_t>(0));
  if (!ctype) throw ctx.error("StringNormalizer needs the C.UTF-8 locale, which this system lacks", ErrorCode::Fail);
  return ctype;
}

std::string change_case(const KernelContext& ctx, const std::string& s, int64_t element, CaseChange change) {
  if (change == CaseChange::None) return s;
  const locale_t ctype = utf8_ctype(ctx);
  std::string out;
  for (size_t i = 0; i < s.size();) {
    char32_t cp = 0;
    if (!next_code_point(s, i, cp)) not_utf8(ctx, element);
    const wint_t w = static_cast<wint_t>(cp);
    append_utf8(out, static_cast<char32_t>(change == CaseChange::Lower ? towlower_l(w, ctype) : towupper_l(w, ctype)));
  }
  return out;
}

bool has_non_ascii(const std::string& s) {
  for (char c : s)
    if (static_cast<unsigned char>(c) & 0x80) return true;
  return false;
}

}  // namespace

// Contract: out = a + b (bytes) per element, with numpy broadcasting; see docs/arithmetic.md#string-ops
void string_concat(KernelContext& ctx) {
  require_string_input(ctx, 0, "X");
  require_string_input(ctx, 1, "Y");
  const Tensor& a = ctx.input(0);
  const Tensor& b = ctx.input(1);
  Shape shape;
  BroadcastPlan plan = plan_broadcast(ctx, {&a, &b}, shape);
  Tensor& z = ctx.output(0, DType::String, shape);
  const std::string* x = a.data<std::string>();
  const std::string* y = b.data<std::string>();
  std::string* out = z.data<std::string>();
  for (int64_t i = 0; i < plan.numel; ++i) out[i] = x[plan.offset(0, i)] + y[plan.offset(1, i)];
}

// Contract: per element, the substrings between delimiters (or runs of whitespace), left to right, at most
// maxsplit splits, padded with "" to the longest; see docs/arithmetic.md#string-ops
void string_split(KernelContext& ctx) {
  require_string_input(ctx, 0, "X");
  const SplitSettings s = split_settings(ctx);
  const Tensor& x = ctx.input(0);
  const std::string* in = x.data<std::string>();
  std::vector<std::vector<std::string>> parts(x.numel());
  int64_t widest = 0;
  for (int64_t e = 0; e < x.numel(); ++e) {
    parts[e] = s.on_whitespace ? split_on_whitespace(ctx, in[e], e, s.maxsplit)
                               : split_on_delimiter(in[e], s.delimiter, s.maxsplit);
    widest = std::max<int64_t>(widest, static_cast<int64_t>(parts[e].size()));
  }
  Shape y_shape = x.shape();
  y_shape.push_back(widest);
  std::string* y = ctx.output(0, DType::String, y_shape).data<std::string>();
  int64_t* counts = ctx.output(1, DType::Int64, x.shape()).data<int64_t>();
  for (int64_t e = 0; e < x.numel(); ++e) {
    counts[e] = static_cast<int64_t>(parts[e].size());
    std::move(parts[e].begin(), parts[e].end(), y + e * widest);
  }
}

// Contract: drop the elements found in stopwords (compared lowercased unless is_case_sensitive), then map each
// code point of the rest by C.UTF-8's towlower/towupper; see docs/arithmetic.md#string-ops
void string_normalizer(KernelContext& ctx) {
  require_string_input(ctx, 0, "X");
  NormalizerSettings s = normalizer_settings(ctx);
  std::set<std::string> stopwords;
  for (const std::string& w : s.stopwords)
    stopwords.insert(s.case_sensitive ? w : change_case(ctx, w, -1, CaseChange::Lower));
  const Tensor& x = ctx.input(0);
  const std::string* in = x.data<std::string>();
  std::vector<std::string> kept;
  for (int64_t e = 0; e < x.numel(); ++e)
    if (!stopwords.count(s.case_sensitive ? in[e] : change_case(ctx, in[e], e, CaseChange::Lower)))
      kept.push_back(change_case(ctx, in[e], e, s.change));
  if (kept.empty()) kept.push_back("");  // the spec's empty value
  const int64_t c = static_cast<int64_t>(kept.size());
  Tensor& y = ctx.output(0, DType::String, x.rank() == 1 ? Shape{c} : Shape{1, c});
  std::move(kept.begin(), kept.end(), y.data<std::string>());
}

// Contract: RE2::FullMatch of each element, byte by byte, by lockstep's Thompson NFA simulation of the accepted
// RE2 subset (src/ops/regex_program.h: linear in element length x program size, no recursion); see
// docs/arithmetic.md#string-ops
void regex_full_match(KernelContext& ctx) {
  require_string_input(ctx, 0, "X");
  auto make = [&ctx] { return regex_program(ctx); };
  std::shared_ptr<const RegexProgram> program =
      ctx.state ? ctx.state->get_or_make<RegexProgram>([](const RegexProgram&) { return true; }, make)
                : std::make_shared<const RegexProgram>(make());
  const Tensor& x = ctx.input(0);
  const std::string* in = x.data<std::string>();
  uint8_t* y = ctx.output(0, DType::Bool, x.shape()).data<uint8_t>();
  for (int64_t e = 0; e < x.numel(); ++e) {
    if (program->per_code_point && has_non_ascii(in[e]))
      throw ctx.error("RegexFullMatch pattern '" + ctx.node.attr_string("pattern", "") + "' matches one code point " +
                      "with `.`, a negated class or \\W \\D \\S; lockstep matches bytes and refuses input X element " +
                      std::to_string(e) + ", which is not ASCII", ErrorCode::NotImplemented);
    y[e] = full_match(*program, in[e]);
  }
}

// Contract: TfIdfVectorizer, docs/arithmetic.md#tfidfvectorizer: per row, arith::ngram_count_row's exact counts
// (strings first mapped to their index in the pool's sorted vocabulary, -1 outside it), then
// arith::tfidf_value_f32 per element.
void tfidf_vectorizer(KernelContext& ctx) {
  auto make = [&ctx] { return TfIdfKept{make_tfidf_model(ctx), nullptr}; };
  const std::shared_ptr<const TfIdfKept> kept =
      ctx.state ? ctx.state->get_or_make<TfIdfKept>([](const TfIdfKept&) { return true; }, make)
                : std::make_shared<const TfIdfKept>(make());
  const TfIdfModel& m = *kept->model;
  const TfIdfRows r = tfidf_rows(ctx, m);
  float* y = ctx.output(0, DType::Float, r.y_shape).data<float>();
  const int64_t cols = m.columns;
  std::fill(y, y + r.rows * cols, 0.0f);
  if (r.len == 0 || !tfidf_input_matches_pool(ctx, m)) return;
  const Tensor& x = ctx.input(0);
  std::vector<int64_t> ids;  // string X: each element's vocabulary index
  if (x.dtype() == DType::String) {
    const std::string* in = x.data<std::string>();
    ids.resize(x.numel());
    for (int64_t e = 0; e < x.numel(); ++e) {
      auto it = std::lower_bound(m.vocabulary.begin(), m.vocabulary.end(), in[e]);
      ids[e] = it != m.vocabulary.end() && *it == in[e] ? it - m.vocabulary.begin() : -1;
    }
  }
  const arith::NgramTable table = m.table(m.tables.data());
  ctx.pool->parallel_for(
      r.rows,
      [&](int64_t begin, int64_t end) {
        std::vector<uint32_t> counts(cols);
        for (int64_t row = begin; row < end; ++row) {
          std::fill(counts.begin(), counts.end(), 0u);
          const int64_t at = row * r.len;
          uint32_t* c = counts.data();
          if (x.dtype() == DType::String) arith::ngram_count_row(table, ids.data() + at, r.len, c);
          else if (x.dtype() == DType::Int32) arith::ngram_count_row(table, x.data<int32_t>() + at, r.len, c);
          else arith::ngram_count_row(table, x.data<int64_t>() + at, r.len, c);
          float* yr = y + row * cols;
          for (int64_t c = 0; c < cols; ++c) yr[c] = arith::tfidf_value_f32(m.mode, counts[c], m.weights[c]);
        }
      },
      1);
}

}  // namespace lockstep::cpu
