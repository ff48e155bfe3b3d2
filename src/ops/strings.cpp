// The strings family's definitions: validation of inputs and attributes, and the RE2-to-ECMAScript rewrite.
#include "ops/strings.h"

#include <cctype>

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

namespace {

// RE2's \d, \w and \s as class members: ASCII only, and \s without \v (std::regex's own follow the C locale).
const char* class_members(char escape) {
  switch (std::tolower(static_cast<unsigned char>(escape))) {
    case 'd': return "0-9";
    case 'w': return "0-9A-Za-z_";
    default: return "\\t\\n\\f\\r ";
  }
}

// Reads an RE2 pattern left to right and writes the ECMAScript pattern with the same meaning.
struct PatternRewriter {
  const KernelContext& ctx;
  const std::string& p;
  size_t i = 0;
  RegexSettings out;

  [[noreturn]] void refuse(const std::string& what) const {
    throw ctx.error("RegexFullMatch pattern '" + p + "': " + what + " at offset " + std::to_string(i) +
                    " is RE2 syntax lockstep does not support", ErrorCode::NotImplemented);
  }
  [[noreturn]] void invalid(const std::string& what) const {
    throw ctx.error("RegexFullMatch pattern '" + p + "' is not a valid RE2 pattern: " + what);
  }

  void escape(bool in_class) {
    if (++i == p.size()) invalid("trailing backslash");
    const char c = p[i];
    const bool ascii = (static_cast<unsigned char>(c) & 0x80) == 0;
    if (c == 'd' || c == 'w' || c == 's') {
      out.ecmascript += in_class ? std::string(class_members(c)) : "[" + std::string(class_members(c)) + "]";
    } else if (c == 'D' || c == 'W' || c == 'S') {
      if (in_class) refuse(std::string("\\") + c + " inside brackets");
      out.per_code_point = true;
      out.ecmascript += "[^" + std::string(class_members(c)) + "]";
    } else if ((c == 'b' || c == 'B') && !in_class) {
      out.ecmascript += std::string("\\") + c;
    } else if (c == 'n' || c == 't' || c == 'r' || c == 'f' || c == 'v' || (ascii && std::ispunct(c))) {
      out.ecmascript += std::string("\\") + c;
    } else {
      refuse(std::string("the escape \\") + c);
    }
    ++i;
  }

  void bracket() {
    out.ecmascript += '[';
    if (++i < p.size() && p[i] == '^') {
      out.per_code_point = true;
      out.ecmascript += '^';
      ++i;
    }
    for (bool first = true; i < p.size() && (first || p[i] != ']'); first = false) {
      if (p[i] == '\\') {
        escape(true);
        continue;
      }
      if (p[i] == '[' && i + 1 < p.size() && p[i + 1] == ':') refuse("a POSIX class [:name:]");
      if (static_cast<unsigned char>(p[i]) & 0x80) refuse("a non-ASCII character");
      out.ecmascript += (p[i] == '[' || p[i] == ']') ? std::string("\\") + p[i] : std::string(1, p[i]);
      ++i;
    }
    if (i == p.size()) invalid("missing ]");
    out.ecmascript += ']';
    ++i;
  }

  void group() {
    if (p.compare(i, 2, "(?") != 0) {
      out.ecmascript += '(';
    } else if (p.compare(i, 3, "(?:") == 0) {
      out.ecmascript += "(?:";
      i += 2;
    } else {
      refuse("a flag or named group '(?'");
    }
    ++i;
  }

  // The length of a repetition {n}, {n,} or {n,m} at i, or 0 where RE2 reads the brace as a literal.
  size_t repetition_length() const {
    size_t j = i + 1, digits = 0;
    while (j < p.size() && std::isdigit(static_cast<unsigned char>(p[j]))) ++j, ++digits;
    if (digits == 0) return 0;
    if (j < p.size() && p[j] == ',')
      while (++j < p.size() && std::isdigit(static_cast<unsigned char>(p[j]))) {}
    return j < p.size() && p[j] == '}' ? j + 1 - i : 0;
  }

  void brace() {
    const size_t n = repetition_length();
    out.ecmascript += n ? p.substr(i, n) : "\\{";
    i += n ? n : 1;
  }

  // RE2 rejects a repetition of a repetition (`a**`, `a{2}+`), which std::regex would take; `a*?` is lazy.
  void check_repetition(char c, int& after) const {
    const bool repeats = c == '*' || c == '+' || c == '?' || (c == '{' && repetition_length() > 0);
    if (repeats && after == 1 && c == '?')
      after = 2;
    else if (repeats && after != 0)
      invalid("bad repetition operator at offset " + std::to_string(i));
    else
      after = repeats ? 1 : 0;
  }

  RegexSettings rewrite() {
    for (int after = 0; i < p.size();) {  // after: 1 just after a repetition, 2 after its lazy `?`
      const char c = p[i];
      if (static_cast<unsigned char>(c) & 0x80) refuse("a non-ASCII character");
      check_repetition(c, after);
      if (c == '\\') {
        escape(false);
      } else if (c == '[') {
        bracket();
      } else if (c == '(') {
        group();
      } else if (c == '{') {
        brace();
      } else {
        if (c == '.') out.per_code_point = true;
        out.ecmascript += c == '.' ? "[^\\n]" : c == '}' ? "\\}" : std::string(1, c);
        ++i;
      }
    }
    return out;
  }
};

}  // namespace

RegexSettings regex_settings(const KernelContext& ctx) {
  if (!ctx.node.has("pattern")) throw ctx.error("RegexFullMatch needs the attribute pattern", ErrorCode::InvalidGraph);
  const std::string pattern = ctx.node.attr_string("pattern", "");
  return PatternRewriter{ctx, pattern}.rewrite();
}

namespace {
const OpEntry kRows[] = {
    {"StringConcat", 20, kNewestOpset, &cpu::string_concat, nullptr},
    {"StringSplit", 20, kNewestOpset, &cpu::string_split, nullptr},
    {"StringNormalizer", 10, kNewestOpset, &cpu::string_normalizer, nullptr},
    {"RegexFullMatch", 20, kNewestOpset, &cpu::regex_full_match, nullptr},
};
}  // namespace

std::span<const OpEntry> strings_ops() { return kRows; }

}  // namespace lockstep
