// The strings family's definitions: validation of inputs and attributes, and RegexFullMatch's pattern compiled.
#include "ops/strings.h"

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
