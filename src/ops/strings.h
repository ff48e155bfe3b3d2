// The strings family (StringConcat 20, StringSplit 20, StringNormalizer 10, RegexFullMatch 20): attributes and
// inputs validated into settings here; the kernels run on the host only, where string tensors live, so these ops
// have no CUDA kernel and a CUDA session runs them on the CPU (docs/arithmetic.md#string-ops).
#pragma once

#include <cstdint>
#include <set>
#include <string>

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

namespace cpu {
void string_concat(KernelContext& ctx);
void string_split(KernelContext& ctx);
void string_normalizer(KernelContext& ctx);
void regex_full_match(KernelContext& ctx);
}  // namespace cpu

}  // namespace lockstep
