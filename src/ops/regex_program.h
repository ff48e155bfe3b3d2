// RegexFullMatch's matcher: the RE2 subset lockstep accepts, parsed once into a Thompson NFA program and run by a
// breadth-first simulation (a set of program counters per input position: no recursion, no backtracking, time
// linear in input length x program size). Host only and device independent; bytes, not code points
// (docs/arithmetic.md#string-ops).
#pragma once

#include <array>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace lockstep {

/// A pattern lockstep cannot run: RE2 syntax outside the subset (unsupported) or not valid RE2 (!unsupported).
/// message is the reason without the pattern, e.g. "the escape \p at offset 1 is RE2 syntax lockstep does not
/// support" or "missing )".
struct RegexPatternError : std::runtime_error {
  bool unsupported;
  RegexPatternError(bool unsupported, const std::string& message)
      : std::runtime_error(message), unsupported(unsupported) {}
};

enum class RegexAssertion : uint8_t { BeginText, EndText, WordBoundary, NotWordBoundary };

struct RegexInstruction {
  enum class Op : uint8_t {
    Bytes,   // consume one byte in sets[x], go on at pc + 1
    Split,   // go on at both x and y
    Jump,    // go on at x
    Assert,  // go on at pc + 1 where RegexAssertion(x) holds at this position
    Match,   // the whole input matched when reached at its end
  };
  Op op;
  int32_t x = 0, y = 0;
};

/// 256-bit byte set.
using RegexByteSet = std::array<uint64_t, 4>;

struct RegexProgram {
  std::vector<RegexInstruction> code;  // starts at 0
  std::vector<RegexByteSet> sets;
  bool per_code_point = false;  // uses `.`, a negated class or \W \D \S: RE2 matches one code point, not one byte
};

/// Parses an RE2 pattern (no flags; literals, `.`, classes, \d \w \s \D \W \S, escapes, \b \B ^ $, groups,
/// alternation, greedy and lazy * + ? {n} {n,} {n,m} with counts up to 1000) into a program; throws
/// RegexPatternError otherwise.
RegexProgram compile_regex(const std::string& pattern);

/// Whether the program matches all of s (RE2::FullMatch), byte by byte.
bool full_match(const RegexProgram& program, std::string_view s);

}  // namespace lockstep
