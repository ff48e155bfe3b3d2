// RegexFullMatch's matcher: the pattern parser (an explicit stack of open groups, no recursion), the compiler from
// the parsed tree to a Thompson NFA program, and the breadth-first full-match simulation.
#include "ops/regex_program.h"

#include <algorithm>
#include <cctype>
#include <cstring>

namespace lockstep {

namespace {

constexpr int kMaxRepeat = 1000;            // RE2's largest count in {n,m}, and its bound on nested counts' product
constexpr int kMaxNesting = 1000;           // lockstep's bound on nested groups (the compiler recurses on them)
constexpr size_t kMaxInstructions = 1 << 20;  // lockstep's bound on the program

void add_byte(RegexByteSet& s, unsigned char c) { s[c >> 6] |= uint64_t{1} << (c & 63); }
bool has_byte(const RegexByteSet& s, unsigned char c) { return (s[c >> 6] >> (c & 63)) & 1; }
void add_range(RegexByteSet& s, unsigned char lo, unsigned char hi) {
  for (int c = lo; c <= hi; ++c) add_byte(s, static_cast<unsigned char>(c));
}

// RE2's \d, \w and \s: ASCII only, and \s without \v.
void add_class(RegexByteSet& s, char escape) {
  switch (std::tolower(static_cast<unsigned char>(escape))) {
    case 'd': add_range(s, '0', '9'); break;
    case 'w': add_range(s, '0', '9'), add_range(s, 'A', 'Z'), add_range(s, 'a', 'z'), add_byte(s, '_'); break;
    default: for (char c : {'\t', '\n', '\f', '\r', ' '}) add_byte(s, static_cast<unsigned char>(c));
  }
}
RegexByteSet complement(RegexByteSet s) {
  for (uint64_t& w : s) w = ~w;
  return s;
}
bool is_class_escape(char c) { return c != 0 && std::strchr("dwsDWS", c); }  // \d \w \s \D \W \S
bool is_word(unsigned char c) { return std::isalnum(c) || c == '_'; }  // ASCII: the C locale

// The parsed pattern: a tree in an arena, children by index.
struct Node {
  enum class Kind { Empty, Bytes, Assert, Concat, Alternate, Repeat } kind = Kind::Empty;
  int32_t value = 0;  // Bytes: the set; Assert: the RegexAssertion
  int min = 0, max = 0;  // Repeat: max -1 is unbounded
  bool counted = false;  // Repeat written {n}, {n,} or {n,m} (RE2 bounds these, not * + ?)
  std::vector<int> kids;
};

struct Parser {
  const std::string& p;
  size_t i = 0;
  RegexProgram prog;
  std::vector<Node> nodes;

  struct Group {
    std::vector<int> alternatives, items;  // the finished alternatives, the current one's items
  };
  std::vector<Group> groups{1};

  [[noreturn]] void refuse(const std::string& what) const {
    throw RegexPatternError(true, what + " at offset " + std::to_string(i) + " is RE2 syntax lockstep does not support");
  }
  [[noreturn]] void invalid(const std::string& what) const { throw RegexPatternError(false, what); }

  explicit Parser(const std::string& pattern) : p(pattern) {}

  int add(Node n) {
    nodes.push_back(std::move(n));
    return static_cast<int>(nodes.size()) - 1;
  }
  int leaf(Node::Kind kind, int32_t value) {
    Node n;
    n.kind = kind;
    n.value = value;
    return add(std::move(n));
  }
  int add_set(const RegexByteSet& s) {
    prog.sets.push_back(s);
    return leaf(Node::Kind::Bytes, static_cast<int32_t>(prog.sets.size() - 1));
  }
  void push(int node) { groups.back().items.push_back(node); }

  // The byte of a one-character escape at p[i] (just after the backslash): \n \t \r \f \v or punctuation.
  unsigned char escaped_byte() const {
    const char c = p[i];
    switch (c) {
      case 'n': return '\n';
      case 't': return '\t';
      case 'r': return '\r';
      case 'f': return '\f';
      case 'v': return '\v';
    }
    if ((static_cast<unsigned char>(c) & 0x80) == 0 && std::ispunct(static_cast<unsigned char>(c))) return c;
    refuse(std::string("the escape \\") + c);
  }

  void escape() {
    if (++i == p.size()) invalid("trailing backslash");
    const char c = p[i];
    if (c == 'd' || c == 'w' || c == 's' || c == 'D' || c == 'W' || c == 'S') {
      RegexByteSet s{};
      add_class(s, c);
      if (std::isupper(static_cast<unsigned char>(c))) prog.per_code_point = true, s = complement(s);
      push(add_set(s));
    } else if (c == 'b' || c == 'B') {
      push(leaf(Node::Kind::Assert, static_cast<int32_t>(c == 'b' ? RegexAssertion::WordBoundary
                                                                   : RegexAssertion::NotWordBoundary)));
    } else {
      RegexByteSet s{};
      add_byte(s, escaped_byte());
      push(add_set(s));
    }
    ++i;
  }

  // One class member at p[i] that is a single byte (not \d \w \s); advances past it.
  unsigned char class_byte() {
    if (p[i] == '\\') {
      if (++i == p.size()) invalid("trailing backslash");
      const unsigned char c = escaped_byte();
      ++i;
      return c;
    }
    if (p[i] == '[' && i + 1 < p.size() && p[i + 1] == ':') refuse("a POSIX class [:name:]");
    if (static_cast<unsigned char>(p[i]) & 0x80) refuse("a non-ASCII character");
    return static_cast<unsigned char>(p[i++]);
  }

  // A bracket class: `]` first is a member, `-` is a range between two bytes and a member elsewhere.
  void bracket() {
    RegexByteSet s{};
    bool negated = false;
    if (++i < p.size() && p[i] == '^') {
      prog.per_code_point = negated = true;
      ++i;
    }
    for (bool first = true; i < p.size() && (first || p[i] != ']'); first = false) {
      if (p[i] == '\\' && i + 1 < p.size() && is_class_escape(p[i + 1])) {
        if (std::isupper(static_cast<unsigned char>(p[i + 1]))) ++i, refuse(std::string("\\") + p[i] + " inside brackets");
        add_class(s, p[i + 1]);
        i += 2;
        continue;
      }
      const unsigned char lo = class_byte();
      if (i + 1 < p.size() && p[i] == '-' && p[i + 1] != ']') {
        ++i;
        if (p[i] == '\\' && i + 1 < p.size() && is_class_escape(p[i + 1]))
          invalid("bad character class range at offset " + std::to_string(i));
        const unsigned char hi = class_byte();
        if (hi < lo) invalid("bad character class range at offset " + std::to_string(i));
        add_range(s, lo, hi);
      } else {
        add_byte(s, lo);
      }
    }
    if (i == p.size()) invalid("missing ]");
    ++i;
    push(add_set(negated ? complement(s) : s));
  }

  // A number of a repetition at p[j], advancing j; -1 where RE2 reads none (no digits, a leading zero, or more
  // than 9 digits: RE2 then takes the brace as a literal).
  int count(size_t& j) const {
    const size_t start = j;
    while (j < p.size() && std::isdigit(static_cast<unsigned char>(p[j]))) ++j;
    const size_t digits = j - start;
    if (digits == 0 || digits > 9 || (digits > 1 && p[start] == '0')) return -1;
    return std::stoi(p.substr(start, digits));
  }

  // The repetition {n}, {n,} or {n,m} at i: its length (0 where RE2 reads the brace as a literal), min and max.
  size_t repetition(int& min, int& max) const {
    size_t j = i + 1;
    if ((min = count(j)) < 0) return 0;
    max = min;
    if (j < p.size() && p[j] == ',') {
      ++j;
      if (j < p.size() && p[j] == '}')
        max = -1;
      else if ((max = count(j)) < 0)
        return 0;
    }
    return j < p.size() && p[j] == '}' ? j + 1 - i : 0;
  }

  // RE2's bound on nested counts: 1000 divided by each count (its max, or min when unbounded) on a path must
  // stay above zero.
  int budget(int node, int arg) const {
    const Node& n = nodes[node];
    if (n.kind == Node::Kind::Repeat && n.counted) {
      const int m = n.max < 0 ? n.min : n.max;
      if (m > 0) arg /= m;
    }
    int out = arg;
    for (int k : n.kids) out = std::min(out, budget(k, arg));
    return out;
  }

  // A repetition operator at i applied to the last item; after: 1 just after a repetition, 2 after its lazy `?`.
  bool repeat(int& after) {
    const char c = p[i];
    int min = 0, max = -1;
    size_t length = 1;
    if (c == '{') {
      if ((length = repetition(min, max)) == 0) return false;
    } else if (c != '*' && c != '+' && c != '?') {
      return false;
    } else {
      min = c == '+' ? 1 : 0;
      max = c == '?' ? 1 : -1;
    }
    if (after == 1 && c == '?') {  // lazy: the same full matches
      after = 2;
      ++i;
      return true;
    }
    if (after != 0) invalid("bad repetition operator at offset " + std::to_string(i));
    std::vector<int>& items = groups.back().items;
    if (items.empty()) invalid("missing argument to repetition operator at offset " + std::to_string(i));
    if (c == '{' && (min > kMaxRepeat || max > kMaxRepeat || (max >= 0 && max < min)))
      invalid("invalid repetition size at offset " + std::to_string(i));
    Node n{Node::Kind::Repeat, 0, min, max, c == '{', {items.back()}};
    items.back() = add(std::move(n));
    if (c == '{' && (min >= 2 || max >= 2) && budget(items.back(), kMaxRepeat) == 0)
      invalid("invalid repetition size at offset " + std::to_string(i));
    after = 1;
    i += length;
    return true;
  }

  int sequence(std::vector<int>& items, Node::Kind kind) {
    if (items.size() == 1) return items[0];
    return add({items.empty() ? Node::Kind::Empty : kind, 0, 0, 0, false, std::move(items)});
  }
  int close_group() {
    Group& g = groups.back();
    g.alternatives.push_back(sequence(g.items, Node::Kind::Concat));
    const int node = sequence(g.alternatives, Node::Kind::Alternate);
    groups.pop_back();
    return node;
  }

  int parse() {
    for (int after = 0; i < p.size();) {
      const char c = p[i];
      if (static_cast<unsigned char>(c) & 0x80) refuse("a non-ASCII character");
      if (repeat(after)) continue;
      after = 0;
      if (c == '\\') {
        escape();
      } else if (c == '[') {
        bracket();
      } else if (c == '(') {
        if (p.compare(i, 2, "(?") == 0 && p.compare(i, 3, "(?:") != 0) refuse("a flag or named group '(?'");
        if (groups.size() > kMaxNesting) refuse("groups nested deeper than " + std::to_string(kMaxNesting));
        i += p.compare(i, 3, "(?:") == 0 ? 3 : 1;
        groups.emplace_back();
      } else if (c == ')') {
        if (groups.size() == 1) invalid("unexpected ) at offset " + std::to_string(i));
        const int node = close_group();
        push(node);
        ++i;
      } else if (c == '|') {
        Group& g = groups.back();
        g.alternatives.push_back(sequence(g.items, Node::Kind::Concat));
        g.items.clear();
        ++i;
      } else if (c == '^' || c == '$') {
        push(leaf(Node::Kind::Assert,
                  static_cast<int32_t>(c == '^' ? RegexAssertion::BeginText : RegexAssertion::EndText)));
        ++i;
      } else {
        RegexByteSet s{};
        if (c == '.') {
          prog.per_code_point = true;
          s = complement(s);
          s['\n' >> 6] &= ~(uint64_t{1} << ('\n' & 63));
        } else {
          add_byte(s, static_cast<unsigned char>(c));
        }
        push(add_set(s));
        ++i;
      }
    }
    if (groups.size() > 1) invalid("missing )");
    return close_group();
  }
};

// Emits a node's code (Thompson's construction); a repetition repeats its operand's code.
struct Compiler {
  const std::vector<Node>& nodes;
  std::vector<RegexInstruction>& code;

  int32_t pc() const { return static_cast<int32_t>(code.size()); }
  int32_t emit(RegexInstruction::Op op, int32_t x = 0, int32_t y = 0) {
    if (code.size() == kMaxInstructions)
      throw RegexPatternError(true, "a pattern that compiles to more than " + std::to_string(kMaxInstructions) +
                                        " instructions (lockstep's limit) is not supported");
    code.push_back({op, x, y});
    return pc() - 1;
  }
  // x? (greedy: the first branch is x) or x* (loop back).
  void optional(int node, bool loop) {
    const int32_t split = emit(RegexInstruction::Op::Split, pc() + 1);
    compile(node);
    if (loop) emit(RegexInstruction::Op::Jump, split);
    code[split].y = pc();
  }

  void compile(int node) {
    const Node& n = nodes[node];
    switch (n.kind) {
      case Node::Kind::Empty: break;
      case Node::Kind::Bytes: emit(RegexInstruction::Op::Bytes, n.value); break;
      case Node::Kind::Assert: emit(RegexInstruction::Op::Assert, n.value); break;
      case Node::Kind::Concat:
        for (int k : n.kids) compile(k);
        break;
      case Node::Kind::Alternate: {
        std::vector<int32_t> jumps;
        for (size_t k = 0; k + 1 < n.kids.size(); ++k) {
          const int32_t split = emit(RegexInstruction::Op::Split, pc() + 1);
          compile(n.kids[k]);
          jumps.push_back(emit(RegexInstruction::Op::Jump));
          code[split].y = pc();
        }
        compile(n.kids.back());
        for (int32_t j : jumps) code[j].x = pc();
        break;
      }
      case Node::Kind::Repeat:
        for (int k = 0; k < n.min; ++k) compile(n.kids[0]);
        if (n.max < 0)
          optional(n.kids[0], true);
        else
          for (int k = n.min; k < n.max; ++k) optional(n.kids[0], false);
        break;
    }
  }
};

bool holds(RegexAssertion a, std::string_view s, size_t at) {
  switch (a) {
    case RegexAssertion::BeginText: return at == 0;
    case RegexAssertion::EndText: return at == s.size();
    default: {
      const bool before = at > 0 && is_word(static_cast<unsigned char>(s[at - 1]));
      const bool after = at < s.size() && is_word(static_cast<unsigned char>(s[at]));
      return (before != after) == (a == RegexAssertion::WordBoundary);
    }
  }
}

}  // namespace

RegexProgram compile_regex(const std::string& pattern) {
  Parser parser(pattern);
  const int root = parser.parse();
  RegexProgram prog = std::move(parser.prog);
  Compiler{parser.nodes, prog.code}.compile(root);
  prog.code.push_back({RegexInstruction::Op::Match});
  return prog;
}

bool full_match(const RegexProgram& program, std::string_view s) {
  const std::vector<RegexInstruction>& code = program.code;
  std::vector<int32_t> current, next, stack;
  std::vector<size_t> seen(code.size(), 0);  // seen[pc] == at + 1: pc is in the set at position at
  // Adds pc and what it reaches without consuming a byte at position at: the byte-consuming and Match states.
  auto add = [&](std::vector<int32_t>& states, int32_t start, size_t at) {
    stack.push_back(start);
    while (!stack.empty()) {
      const int32_t pc = stack.back();
      stack.pop_back();
      if (seen[pc] == at + 1) continue;
      seen[pc] = at + 1;
      const RegexInstruction& ins = code[pc];
      switch (ins.op) {
        case RegexInstruction::Op::Split: stack.push_back(ins.y), stack.push_back(ins.x); break;
        case RegexInstruction::Op::Jump: stack.push_back(ins.x); break;
        case RegexInstruction::Op::Assert:
          if (holds(static_cast<RegexAssertion>(ins.x), s, at)) stack.push_back(pc + 1);
          break;
        default: states.push_back(pc);
      }
    }
  };
  add(current, 0, 0);
  for (size_t at = 0; at < s.size() && !current.empty(); ++at) {
    next.clear();
    const unsigned char c = static_cast<unsigned char>(s[at]);
    for (int32_t pc : current)
      if (code[pc].op == RegexInstruction::Op::Bytes && has_byte(program.sets[code[pc].x], c)) add(next, pc + 1, at + 1);
    current.swap(next);
  }
  for (int32_t pc : current)
    if (code[pc].op == RegexInstruction::Op::Match) return true;
  return false;
}

}  // namespace lockstep
