// A reader for the protobuf wire format of ONNX models, written against onnx.proto without libprotobuf.
// Every failure on malformed input is an Error(InvalidGraph) that says what was wrong and where; allocations are
// bounded by the bytes actually present (the input or an external file), never by a count the input claims.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <limits>
#include <new>
#include <set>
#include <utility>

#include "onnx/model.h"
#include "onnx/packed.h"

namespace lockstep::onnx {
namespace {

static_assert(std::endian::native == std::endian::little, "raw_data is little-endian; a big-endian host needs swaps");

namespace fs = std::filesystem;

constexpr int kMaxGraphDepth = 64;
// Sparse tensors densify to more bytes than their encoding holds. To keep a few malformed bytes from allocating
// gigabytes, all of a model's sparse tensors together may densify to at most kDenseSlackBytes + kDenseRatio times the
// model's size (a float tensor at 0.1% density is ~350 times its encoding).
constexpr uint64_t kDenseSlackBytes = uint64_t{16} << 20;
constexpr uint64_t kDenseRatio = 1024;

enum Wire : int { kVarint = 0, kFixed64 = 1, kBytes = 2, kGroupStart = 3, kGroupEnd = 4, kFixed32 = 5 };

const char* wire_name(int wire) {
  switch (wire) {
    case kVarint: return "varint";
    case kFixed64: return "fixed64";
    case kBytes: return "length-delimited";
    case kFixed32: return "fixed32";
    default: return "group";
  }
}

struct Span {
  size_t begin = 0;
  size_t end = 0;
  size_t size() const { return end - begin; }
};

struct Field {
  uint32_t number = 0;
  int wire = 0;
  uint64_t value = 0;  // the varint, fixed32 or fixed64 payload
  Span bytes;          // the length-delimited payload
  size_t at = 0;       // offset of the tag in the model bytes
};

// TensorProto data fields, by field number.
enum TensorField : uint32_t {
  kFloatData = 4, kInt32Data = 5, kStringData = 6, kInt64Data = 7, kRawData = 9, kDoubleData = 10, kUint64Data = 11,
};

const char* tensor_field_name(uint32_t number) {
  switch (number) {
    case kFloatData: return "float_data";
    case kInt32Data: return "int32_data";
    case kStringData: return "string_data";
    case kInt64Data: return "int64_data";
    case kRawData: return "raw_data";
    case kDoubleData: return "double_data";
    case kUint64Data: return "uint64_data";
    default: return "?";
  }
}

// The typed field onnx.proto assigns to each element type.
uint32_t typed_field_for(DType t) {
  switch (t) {
    case DType::Float: return kFloatData;
    case DType::Int64: return kInt64Data;
    case DType::Double: return kDoubleData;
    case DType::UInt32: case DType::UInt64: return kUint64Data;
    case DType::String: return kStringData;
    default: return kInt32Data;
  }
}

// Malformed input can carry millions of dims; an error message shows the first few.
std::string dims_string(const std::vector<int64_t>& dims) {
  constexpr size_t kShown = 16;
  std::string out = "[";
  for (size_t i = 0; i < std::min(dims.size(), kShown); ++i) out += (i ? "," : "") + std::to_string(dims[i]);
  if (dims.size() > kShown) out += ",... (" + std::to_string(dims.size()) + " dims)";
  return out + "]";
}

uint64_t saturating_mul(uint64_t a, uint64_t b) {
  uint64_t r;
  return __builtin_mul_overflow(a, b, &r) ? std::numeric_limits<uint64_t>::max() : r;
}

struct NamedTensor {
  std::string name;
  Tensor tensor;
};

// What the first pass over a TensorProto found; the data itself is decoded in a second pass once its size is
// known to match the dims.
struct TensorFields {
  std::string name;
  std::vector<int64_t> dims;
  int32_t data_type = 0;
  bool has_raw = false;
  Span raw;
  uint64_t count[12] = {};  // elements per typed data field, indexed by field number
  int64_t data_location = 0;
  std::vector<std::pair<std::string, std::string>> external;
  bool segmented = false;
};

class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() { if (fd_ >= 0) ::close(fd_); }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

// Reads exactly `size` bytes at `offset`; pread may return short counts, and one call moves at most ~2 GB.
bool pread_all(int fd, void* out, uint64_t size, uint64_t offset) {
  auto* p = static_cast<char*>(out);
  while (size > 0) {
    size_t chunk = static_cast<size_t>(std::min<uint64_t>(size, uint64_t{1} << 30));
    ssize_t n = ::pread(fd, p, chunk, static_cast<off_t>(offset));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    size -= static_cast<uint64_t>(n);
    offset += static_cast<uint64_t>(n);
  }
  return true;
}

// External tensors of at least this size are memory-mapped instead of read.
constexpr uint64_t kMapAtLeastBytes = uint64_t{1} << 20;

// t with its packed bytes (at the start of its buffer) spread to one element per byte; other types as they are.
Tensor unpacked(Tensor t) {
  if (dtype_bits(t.dtype()) < 8)
    unpack_in_place(static_cast<uint8_t*>(t.raw()), static_cast<uint64_t>(t.numel()), dtype_bits(t.dtype()));
  return t;
}

// A large external tensor is mapped, not read, so that session creation does not hold a heap copy of the weights
// besides the page cache's (a 2 GB model would otherwise need 2 GB more at its peak). MAP_PRIVATE: nothing is ever
// written back to the file. Returns an undefined Tensor where mapping does not apply (small, misaligned, failed).
Tensor map_external(int fd, DType dtype, const Shape& dims, uint64_t offset, uint64_t nbytes) {
  if (nbytes < kMapAtLeastBytes || offset % dtype_size(dtype) != 0 || dtype_bits(dtype) < 8) return {};
  const uint64_t page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
  const uint64_t start = offset / page * page, span = nbytes + (offset - start);
  void* base = ::mmap(nullptr, span, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, static_cast<off_t>(start));
  if (base == MAP_FAILED) return {};
  std::shared_ptr<void> mapping(base, [span](void* p) { ::munmap(p, span); });
  return Tensor::wrap(dtype, dims, static_cast<char*>(base) + (offset - start), Device::CPU, 0, std::move(mapping));
}

// "./w.bin" and "w.bin" name the same in-memory file, as in onnxruntime.
std::string normal_location(const std::string& location) { return fs::path(location).lexically_normal().string(); }

class Parser {
 public:
  Parser(const uint8_t* data, size_t size, std::string model_dir, const ExternalSources& sources)
      : data_(data), size_(size), model_dir_(std::move(model_dir)), supplied_(sources.initializers),
        dense_budget_(kDenseSlackBytes + saturating_mul(kDenseRatio, size)) {
    if (sources.files)
      for (const auto& [location, bytes] : *sources.files) memory_files_[normal_location(location)] = bytes;
  }

  Model model();

 private:
  // Pushes a "where" frame for error messages for the lifetime of the scope.
  class Scope {
   public:
    Scope(Parser& p, std::string frame) : p_(p) { p_.where_.push_back(std::move(frame)); }
    ~Scope() { p_.where_.pop_back(); }
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    Parser& p_;
  };

  // Iterates over the fields of one message.
  class Fields {
   public:
    Fields(const Parser& p, Span s) : p_(p), pos_(s.begin), end_(s.end) {}
    bool next(Field& f);

   private:
    const Parser& p_;
    size_t pos_;
    size_t end_;
  };

  std::string location() const;
  [[noreturn]] void parse_error(const std::string& what, size_t at) const;
  [[noreturn]] void model_error(ErrorCode code, const std::string& what) const;

  uint64_t read_varint(size_t& pos, size_t end, const char* what, int64_t field) const;
  uint64_t read_fixed(size_t pos, size_t end, int bytes, uint32_t field) const;
  void expect_wire(const Field& f, int wire, const char* name) const;
  int64_t as_int64(const Field& f, const char* name) const;
  int32_t as_int32(const Field& f, const char* name) const { return static_cast<int32_t>(as_int64(f, name)); }
  float as_float(const Field& f, const char* name) const;
  std::string as_string(const Field& f, const char* name) const;
  Span as_message(const Field& f, const char* name) const;
  std::string peek_string(Span s, uint32_t number) const;

  template <typename Fn> void for_each_varint(const Field& f, const char* name, Fn&& fn) const;
  template <typename Fn> void for_each_fixed(const Field& f, int bytes, const char* name, Fn&& fn) const;
  uint64_t count_varints(const Field& f, const char* name) const;
  uint64_t count_fixed(const Field& f, int bytes, const char* name) const;

  void read_graph(Span s, int depth, Graph& g);
  void add_initializer(Graph& g, NamedTensor t, size_t at);
  Node read_node(Span s, int depth);
  Attribute read_attribute(Span s, int depth);
  void set_attribute_type(Attribute& a, int64_t declared, const bool (&seen)[24]);
  ValueInfo read_value_info(Span s);
  void read_type(Span s, ValueInfo& vi);
  void read_tensor_type(Span s, ValueInfo& vi);
  void read_map_type(Span s, ValueInfo& vi);
  Dim read_dim(Span s);
  OpsetImport read_opset(Span s);
  std::pair<std::string, std::string> read_string_pair(Span s);

  NamedTensor read_tensor(Span s, bool replaceable = false);
  TensorFields scan_tensor(Span s);
  void count_tensor_data(const Field& f, TensorFields& tf);
  DType tensor_dtype(const TensorFields& tf) const;
  uint64_t checked_numel(const std::vector<int64_t>& dims, const std::string& what) const;
  [[noreturn]] void dims_mismatch(const TensorFields& tf, DType dtype, const std::string& stored) const;
  Tensor string_data(Span s, const TensorFields& tf, uint64_t numel);
  Tensor inline_data(Span s, const TensorFields& tf, DType dtype, uint64_t numel);
  void decode_typed(Span s, uint32_t number, DType dtype, uint8_t* out);
  Tensor external_data(const TensorFields& tf, DType dtype, uint64_t numel, bool replaceable);
  Tensor supplied_initializer(const TensorFields& tf, DType dtype);
  Tensor file_data(const TensorFields& tf, DType dtype, const std::string& location, uint64_t offset,
                   uint64_t nbytes) const;
  Tensor memory_file_data(const TensorFields& tf, DType dtype, const std::string& location, uint64_t offset,
                          uint64_t nbytes) const;
  void check_range(const std::string& tensor, const std::string& file, uint64_t offset, uint64_t nbytes,
                   uint64_t file_size) const;
  void check_supplied_used(const Graph& main) const;
  fs::path resolve_external(const std::string& tensor, const std::string& location) const;
  uint64_t parse_decimal(const std::string& tensor, const std::string& key, const std::string& text) const;

  NamedTensor read_sparse(Span s);
  Tensor densify(const NamedTensor& values, const NamedTensor* indices, const std::vector<int64_t>& dims);

  const uint8_t* data_;
  size_t size_;
  std::string model_dir_;
  const std::map<std::string, Tensor>* supplied_;  // add_external_initializers' values, or null
  std::set<std::string> used_;                     // the names of supplied_ that replaced an initializer
  std::map<std::string, std::string_view> memory_files_;  // by normal_location
  std::vector<std::string> where_;
  uint64_t dense_budget_;  // bytes sparse tensors may still densify to
};

// ---- errors ----

std::string Parser::location() const {
  std::string out;
  for (auto it = where_.rbegin(); it != where_.rend(); ++it) out += " in " + *it;
  return out;
}

void Parser::parse_error(const std::string& what, size_t at) const {
  throw Error(ErrorCode::InvalidGraph, "model parse error: " + what + location() + " at byte " + std::to_string(at));
}

void Parser::model_error(ErrorCode code, const std::string& what) const { throw Error(code, what + location()); }

// ---- wire format ----

// `field` < 0: the varint is a tag, so there is no field number to name yet.
uint64_t Parser::read_varint(size_t& pos, size_t end, const char* what, int64_t field) const {
  size_t start = pos;
  uint64_t v = 0;
  for (int i = 0; i < 10; ++i) {
    if (pos >= end) break;
    uint8_t b = data_[pos++];
    v |= uint64_t(b & 0x7f) << (7 * i);
    if (!(b & 0x80)) return v;
  }
  std::string where = std::string(what) + (field >= 0 ? " " + std::to_string(field) : "");
  if (pos >= end && pos - start < 10) parse_error("truncated " + where, start);
  parse_error("varint longer than 10 bytes in " + where, start);
}

uint64_t Parser::read_fixed(size_t pos, size_t end, int bytes, uint32_t field) const {
  if (end - pos < static_cast<size_t>(bytes))
    parse_error(std::string("truncated ") + (bytes == 4 ? "fixed32" : "fixed64") + " field " + std::to_string(field),
                pos);
  uint64_t v = 0;
  std::memcpy(&v, data_ + pos, bytes);
  return v;
}

bool Parser::Fields::next(Field& f) {
  if (pos_ >= end_) return false;
  f = Field{};
  f.at = pos_;
  uint64_t tag = p_.read_varint(pos_, end_, "field tag", -1);
  f.wire = static_cast<int>(tag & 7);
  if ((tag >> 3) == 0 || (tag >> 3) > 0x1fffffff)
    p_.parse_error("invalid field number " + std::to_string(tag >> 3), f.at);
  f.number = static_cast<uint32_t>(tag >> 3);
  switch (f.wire) {
    case kVarint: f.value = p_.read_varint(pos_, end_, "varint field", f.number); break;
    case kFixed64: f.value = p_.read_fixed(pos_, end_, 8, f.number); pos_ += 8; break;
    case kFixed32: f.value = p_.read_fixed(pos_, end_, 4, f.number); pos_ += 4; break;
    case kBytes: {
      uint64_t len = p_.read_varint(pos_, end_, "length of field", f.number);
      if (len > end_ - pos_)
        p_.parse_error("truncated length-delimited field " + std::to_string(f.number) + " (length " +
                           std::to_string(len) + ", " + std::to_string(end_ - pos_) + " bytes left)",
                       f.at);
      f.bytes = {pos_, pos_ + static_cast<size_t>(len)};
      pos_ += static_cast<size_t>(len);
      break;
    }
    case kGroupStart: case kGroupEnd:
      p_.parse_error("groups (wire type " + std::to_string(f.wire) + ") are not supported, field " +
                         std::to_string(f.number),
                     f.at);
    default:
      p_.parse_error("invalid wire type " + std::to_string(f.wire) + " for field " + std::to_string(f.number), f.at);
  }
  return true;
}

void Parser::expect_wire(const Field& f, int wire, const char* name) const {
  if (f.wire != wire)
    parse_error("field " + std::to_string(f.number) + " (" + name + ") has wire type " + wire_name(f.wire) +
                    ", expected " + wire_name(wire),
                f.at);
}

int64_t Parser::as_int64(const Field& f, const char* name) const {
  expect_wire(f, kVarint, name);
  return static_cast<int64_t>(f.value);
}

float Parser::as_float(const Field& f, const char* name) const {
  expect_wire(f, kFixed32, name);
  return std::bit_cast<float>(static_cast<uint32_t>(f.value));
}

std::string Parser::as_string(const Field& f, const char* name) const {
  expect_wire(f, kBytes, name);
  return std::string(reinterpret_cast<const char*>(data_ + f.bytes.begin), f.bytes.size());
}

Span Parser::as_message(const Field& f, const char* name) const {
  expect_wire(f, kBytes, name);
  return f.bytes;
}

// A message's name field, read ahead so errors from fields before it can name the message; "" if unreadable.
std::string Parser::peek_string(Span s, uint32_t number) const {
  std::string found;
  try {
    Fields fields(*this, s);
    Field f;
    while (fields.next(f))
      if (f.number == number && f.wire == kBytes) found = as_string(f, "");
  } catch (const Error&) {
    // The real pass reports the malformation with full context.
  }
  return found;
}

// Repeated scalars arrive either one per field (unpacked) or concatenated in one length-delimited field (packed).
template <typename Fn>
void Parser::for_each_varint(const Field& f, const char* name, Fn&& fn) const {
  if (f.wire == kVarint) return fn(f.value);
  expect_wire(f, kBytes, name);
  size_t pos = f.bytes.begin;
  while (pos < f.bytes.end) fn(read_varint(pos, f.bytes.end, "packed varint in field", f.number));
}

template <typename Fn>
void Parser::for_each_fixed(const Field& f, int bytes, const char* name, Fn&& fn) const {
  if (f.wire == (bytes == 4 ? kFixed32 : kFixed64)) return fn(f.value);
  expect_wire(f, kBytes, name);
  if (f.bytes.size() % bytes)
    parse_error("packed field " + std::to_string(f.number) + " (" + name + ") has " + std::to_string(f.bytes.size()) +
                    " bytes, not a multiple of " + std::to_string(bytes),
                f.at);
  for (size_t pos = f.bytes.begin; pos < f.bytes.end; pos += bytes) fn(read_fixed(pos, f.bytes.end, bytes, f.number));
}

uint64_t Parser::count_varints(const Field& f, const char* name) const {
  uint64_t n = 0;
  for_each_varint(f, name, [&](uint64_t) { ++n; });
  return n;
}

uint64_t Parser::count_fixed(const Field& f, int bytes, const char* name) const {
  if (f.wire == kBytes && f.bytes.size() % bytes == 0) return f.bytes.size() / bytes;
  uint64_t n = 0;
  for_each_fixed(f, bytes, name, [&](uint64_t) { ++n; });
  return n;
}

// ---- model, graph, node ----

Model Parser::model() {
  Scope scope(*this, "ModelProto");
  Model m;
  bool has_graph = false;
  Fields fields(*this, {0, size_});
  Field f;
  while (fields.next(f)) {
    switch (f.number) {
      case 1: m.ir_version = as_int64(f, "ir_version"); break;
      case 2: m.producer_name = as_string(f, "producer_name"); break;
      case 3: m.producer_version = as_string(f, "producer_version"); break;
      case 4: m.domain = as_string(f, "domain"); break;
      case 5: m.model_version = as_int64(f, "model_version"); break;
      case 6: m.doc_string = as_string(f, "doc_string"); break;
      case 7: read_graph(as_message(f, "graph"), 1, m.graph); has_graph = true; break;
      case 8: m.opset_imports.push_back(read_opset(as_message(f, "opset_import"))); break;
      case 14: m.metadata.insert(read_string_pair(as_message(f, "metadata_props"))); break;
      default: break;  // training_info, functions, configuration: not used by lockstep
    }
  }
  if (!has_graph) model_error(ErrorCode::InvalidGraph, "model has no graph");
  check_supplied_used(m.graph);
  return m;
}

OpsetImport Parser::read_opset(Span s) {
  OpsetImport o;
  Fields fields(*this, s);
  Field f;
  while (fields.next(f)) {
    if (f.number == 1) o.domain = as_string(f, "OperatorSetIdProto.domain");
    if (f.number == 2) o.version = as_int64(f, "OperatorSetIdProto.version");
  }
  return o;
}

std::pair<std::string, std::string> Parser::read_string_pair(Span s) {
  std::pair<std::string, std::string> kv;
  Fields fields(*this, s);
  Field f;
  while (fields.next(f)) {
    if (f.number == 1) kv.first = as_string(f, "StringStringEntryProto.key");
    if (f.number == 2) kv.second = as_string(f, "StringStringEntryProto.value");
  }
  return kv;
}

void Parser::read_graph(Span s, int depth, Graph& g) {
  if (depth > kMaxGraphDepth)
    parse_error("graphs nested deeper than " + std::to_string(kMaxGraphDepth) + " levels", s.begin);
  Scope scope(*this, "GraphProto '" + peek_string(s, 2) + "'");
  Fields fields(*this, s);
  Field f;
  while (fields.next(f)) {
    switch (f.number) {
      case 1: g.nodes.push_back(read_node(as_message(f, "node"), depth)); break;
      case 2: g.name = as_string(f, "name"); break;
      // onnxruntime replaces only the main graph's external initializers.
      case 5: add_initializer(g, read_tensor(as_message(f, "initializer"), depth == 1), f.at); break;
      case 15: add_initializer(g, read_sparse(as_message(f, "sparse_initializer")), f.at); break;
      case 10: g.doc_string = as_string(f, "doc_string"); break;
      case 11: g.inputs.push_back(read_value_info(as_message(f, "input"))); break;
      case 12: g.outputs.push_back(read_value_info(as_message(f, "output"))); break;
      case 13: g.value_info.push_back(read_value_info(as_message(f, "value_info"))); break;
      default: break;
    }
  }
}

void Parser::add_initializer(Graph& g, NamedTensor t, size_t at) {
  if (t.name.empty()) parse_error("initializer without a name", at);
  std::string name = t.name;
  if (!g.initializers.emplace(name, std::move(t.tensor)).second)
    model_error(ErrorCode::InvalidGraph, "duplicate initializer '" + name + "'");
}

Node Parser::read_node(Span s, int depth) {
  Scope scope(*this, "NodeProto '" + peek_string(s, 3) + "' (" + peek_string(s, 4) + ")");
  Node n;
  Fields fields(*this, s);
  Field f;
  while (fields.next(f)) {
    switch (f.number) {
      case 1: n.inputs.push_back(as_string(f, "input")); break;
      case 2: n.outputs.push_back(as_string(f, "output")); break;
      case 3: n.name = as_string(f, "name"); break;
      case 4: n.op_type = as_string(f, "op_type"); break;
      case 7: n.domain = as_string(f, "domain"); break;
      case 5: {
        Attribute a = read_attribute(as_message(f, "attribute"), depth);
        std::string name = a.name;
        if (!n.attributes.emplace(name, std::move(a)).second)
          model_error(ErrorCode::InvalidGraph, "duplicate attribute '" + name + "'");
        break;
      }
      default: break;
    }
  }
  return n;
}

// ---- attributes ----

Attribute Parser::read_attribute(Span s, int depth) {
  std::string peeked_name = peek_string(s, 1);
  Scope scope(*this, "AttributeProto '" + peeked_name + "'");
  Attribute a;
  int64_t declared = 0;
  bool seen[24] = {};
  Fields fields(*this, s);
  Field f;
  while (fields.next(f)) {
    if (f.number < 24) seen[f.number] = true;
    switch (f.number) {
      case 1: a.name = as_string(f, "name"); break;
      case 20: declared = as_int64(f, "type"); break;
      case 2: a.f = as_float(f, "f"); break;
      case 3: a.i = as_int64(f, "i"); break;
      case 4: a.s = as_string(f, "s"); break;
      case 5: a.t = read_tensor(as_message(f, "t")).tensor; break;
      case 6:
        a.g = std::make_shared<Graph>();
        read_graph(as_message(f, "g"), depth + 1, *a.g);
        break;
      case 7:
        for_each_fixed(f, 4, "floats", [&](uint64_t v) { a.floats.push_back(std::bit_cast<float>(uint32_t(v))); });
        break;
      case 8: for_each_varint(f, "ints", [&](uint64_t v) { a.ints.push_back(static_cast<int64_t>(v)); }); break;
      case 9: a.strings.push_back(as_string(f, "strings")); break;
      case 10: a.tensors.push_back(read_tensor(as_message(f, "tensors")).tensor); break;
      case 11:
        a.graphs.push_back(std::make_shared<Graph>());
        read_graph(as_message(f, "graphs"), depth + 1, *a.graphs.back());
        break;
      case 21:
        model_error(ErrorCode::InvalidGraph, "attribute '" + peeked_name + "' refers to function attribute '" +
                                                 as_string(f, "ref_attr_name") +
                                                 "' (ref_attr_name), which is only allowed inside a function");
      case 22: a.t = read_sparse(as_message(f, "sparse_tensor")).tensor; break;
      default: break;  // sparse_tensors, tp, type_protos: kept as a type code without payload
    }
  }
  if (a.name.empty()) parse_error("attribute without a name", s.begin);
  set_attribute_type(a, declared, seen);
  return a;
}

// Old exporters leave `type` out; the field that is set tells it. SPARSE_TENSOR values are stored densified as TENSOR;
// SPARSE_TENSORS (12), TYPE_PROTO (13) and TYPE_PROTOS (14) keep their code so an op that needs them can say so.
void Parser::set_attribute_type(Attribute& a, int64_t declared, const bool (&seen)[24]) {
  if (declared < 0 || declared > 14)
    model_error(ErrorCode::InvalidGraph, "attribute '" + a.name + "' has unknown type " + std::to_string(declared));
  if (declared == 11) declared = Attribute::TensorT;
  if (declared != 0) {
    a.type = static_cast<Attribute::Type>(declared);
    return;
  }
  static constexpr std::pair<int, int> kFieldToType[] = {
      {2, Attribute::Float},   {3, Attribute::Int},      {4, Attribute::String},   {5, Attribute::TensorT},
      {22, Attribute::TensorT}, {6, Attribute::GraphT},  {7, Attribute::Floats},   {8, Attribute::Ints},
      {9, Attribute::Strings}, {10, Attribute::Tensors}, {11, Attribute::Graphs},  {23, 12},
      {14, 13},                {15, 14},
  };
  for (auto [field, type] : kFieldToType)
    if (seen[field]) {
      a.type = static_cast<Attribute::Type>(type);
      return;
    }
}

// ---- value infos ----

ValueInfo Parser::read_value_info(Span s) {
  Scope scope(*this, "ValueInfoProto '" + peek_string(s, 1) + "'");
  ValueInfo vi;
  Fields fields(*this, s);
  Field f;
  while (fields.next(f)) {
    if (f.number == 1) vi.name = as_string(f, "name");
    if (f.number == 2) read_type(as_message(f, "type"), vi);
    if (f.number == 3) vi.doc_string = as_string(f, "doc_string");
  }
  return vi;
}

// TypeProto: tensor_type (1), sequence_type (4) and optional_type (9) hold an element TypeProto (field 1) each;
// map_type (5) holds key_type (1) and a value TypeProto (2), which must be a tensor type; opaque (7) and sparse
// tensor (8) types are not values lockstep computes on.
void Parser::read_type(Span s, ValueInfo& vi) {
  Fields fields(*this, s);
  Field f;
  while (fields.next(f)) {
    if (f.number == 1) {
      read_tensor_type(as_message(f, "tensor_type"), vi);
    } else if (f.number == 4 || f.number == 9) {
      if (f.number == 4 ? vi.sequence : vi.optional || vi.sequence)
        model_error(ErrorCode::NotImplemented, "nested sequence and optional types are not supported");
      (f.number == 4 ? vi.sequence : vi.optional) = true;
      Fields wrapper(*this, as_message(f, f.number == 4 ? "sequence_type" : "optional_type"));
      Field e;
      while (wrapper.next(e))
        if (e.number == 1) read_type(as_message(e, "elem_type"), vi);
    } else if (f.number == 5) {
      read_map_type(as_message(f, "map_type"), vi);
    } else if (f.number == 7 || f.number == 8) {
      expect_wire(f, kBytes, "TypeProto value");
      vi.dtype = DType::Undefined;
      vi.has_shape = false;
      vi.dims.clear();
    }
  }
}

// map(K, V): V is read into vi (its dtype and shape) and must be a tensor; a map of sequences or maps is refused.
void Parser::read_map_type(Span s, ValueInfo& vi) {
  if (vi.map_key != DType::Undefined) model_error(ErrorCode::NotImplemented, "maps of maps are not supported");
  ValueInfo value;
  Fields fields(*this, s);
  Field f;
  while (fields.next(f)) {
    if (f.number == 1) vi.map_key = static_cast<DType>(as_int32(f, "key_type"));
    if (f.number == 2) read_type(as_message(f, "value_type"), value);
  }
  if (value.sequence || value.optional || value.map_key != DType::Undefined)
    model_error(ErrorCode::NotImplemented, "map values other than tensors are not supported");
  vi.dtype = value.dtype;
  vi.has_shape = value.has_shape;
  vi.dims = value.dims;
}

// Unknown element type codes are kept as they are, so the caller can name the unsupported type.
void Parser::read_tensor_type(Span s, ValueInfo& vi) {
  Fields fields(*this, s);
  Field f;
  while (fields.next(f)) {
    if (f.number == 1) vi.dtype = static_cast<DType>(as_int32(f, "elem_type"));
    if (f.number != 2) continue;
    vi.has_shape = true;
    Fields dims(*this, as_message(f, "shape"));
    Field d;
    while (dims.next(d))
      if (d.number == 1) vi.dims.push_back(read_dim(as_message(d, "dim")));
  }
}

Dim Parser::read_dim(Span s) {
  Dim d;
  Fields fields(*this, s);
  Field f;
  while (fields.next(f)) {
    if (f.number == 1) d.value = as_int64(f, "dim_value");
    // -1 is kept (some exporters write it for "unknown", as lockstep reports such dims); below that is malformed.
    if (f.number == 1 && *d.value < -1)
      model_error(ErrorCode::InvalidGraph, "dim_value " + std::to_string(*d.value) + " is negative");
    if (f.number == 2) d.param = as_string(f, "dim_param");
    if (f.number == 3) d.denotation = as_string(f, "denotation");
  }
  return d;
}

// ---- tensors ----

NamedTensor Parser::read_tensor(Span s, bool replaceable) {
  Scope scope(*this, "TensorProto '" + peek_string(s, 8) + "'");
  TensorFields tf = scan_tensor(s);
  if (tf.segmented)
    model_error(ErrorCode::NotImplemented, "tensor '" + tf.name + "' is segmented, which is not supported");
  DType dtype = tensor_dtype(tf);
  uint64_t numel = checked_numel(tf.dims, "tensor '" + tf.name + "'");
  if (tf.data_location == 1 && dtype == DType::String)
    model_error(ErrorCode::InvalidGraph, "string tensor '" + tf.name + "' has external data (onnx keeps strings in "
                                         "string_data)");
  if (tf.data_location == 1) return {tf.name, external_data(tf, dtype, numel, replaceable)};
  if (tf.data_location != 0)
    model_error(ErrorCode::InvalidGraph,
                "tensor '" + tf.name + "' has unknown data_location " + std::to_string(tf.data_location));
  return {tf.name, inline_data(s, tf, dtype, numel)};
}

TensorFields Parser::scan_tensor(Span s) {
  TensorFields tf;
  Fields fields(*this, s);
  Field f;
  while (fields.next(f)) {
    switch (f.number) {
      case 1: for_each_varint(f, "dims", [&](uint64_t v) { tf.dims.push_back(static_cast<int64_t>(v)); }); break;
      case 2: tf.data_type = as_int32(f, "data_type"); break;
      case 3: as_message(f, "segment"); tf.segmented = true; break;
      case 8: tf.name = as_string(f, "name"); break;
      case kRawData: tf.raw = as_message(f, "raw_data"); tf.has_raw = true; break;
      case 13: tf.external.push_back(read_string_pair(as_message(f, "external_data"))); break;
      case 14: tf.data_location = as_int64(f, "data_location"); break;
      case kFloatData: case kInt32Data: case kStringData: case kInt64Data: case kDoubleData: case kUint64Data:
        count_tensor_data(f, tf);
        break;
      default: break;
    }
  }
  return tf;
}

void Parser::count_tensor_data(const Field& f, TensorFields& tf) {
  const char* name = tensor_field_name(f.number);
  switch (f.number) {
    case kFloatData: tf.count[f.number] += count_fixed(f, 4, name); break;
    case kDoubleData: tf.count[f.number] += count_fixed(f, 8, name); break;
    case kStringData: expect_wire(f, kBytes, name); tf.count[f.number] += 1; break;
    default: tf.count[f.number] += count_varints(f, name); break;
  }
}

DType Parser::tensor_dtype(const TensorFields& tf) const {
  auto dtype = static_cast<DType>(tf.data_type);
  if (tf.data_type == 0) model_error(ErrorCode::InvalidGraph, "tensor '" + tf.name + "' has no data_type");
  if (dtype_size(dtype) == 0 && dtype != DType::String)
    model_error(ErrorCode::NotImplemented, "tensor '" + tf.name + "' has data type " + std::to_string(tf.data_type) +
                                               ", which lockstep does not support");
  return dtype;
}

// Rejects negative dims, and dims whose product overflows even when another dim is 0 (shape arithmetic elsewhere
// multiplies them in any order).
uint64_t Parser::checked_numel(const std::vector<int64_t>& dims, const std::string& what) const {
  uint64_t nonzero_product = 1;
  bool has_zero = false;
  for (int64_t d : dims) {
    if (d < 0) model_error(ErrorCode::InvalidGraph, what + " has a negative dim in " + dims_string(dims));
    if (d == 0) has_zero = true;
    else nonzero_product = saturating_mul(nonzero_product, static_cast<uint64_t>(d));
  }
  if (nonzero_product > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()))
    model_error(ErrorCode::InvalidGraph, what + " has dims " + dims_string(dims) + " whose product overflows");
  return has_zero ? 0 : nonzero_product;
}

void Parser::dims_mismatch(const TensorFields& tf, DType dtype, const std::string& stored) const {
  model_error(ErrorCode::InvalidGraph, "tensor '" + tf.name + "' has dims " + dims_string(tf.dims) +
                                           " that disagree with the data (" + dtype_name(dtype) + ", " + stored + ")");
}

Tensor Parser::inline_data(Span s, const TensorFields& tf, DType dtype, uint64_t numel) {
  uint32_t typed = typed_field_for(dtype);
  for (uint32_t k : {kFloatData, kInt32Data, kStringData, kInt64Data, kDoubleData, kUint64Data})
    if (k != typed && tf.count[k] > 0)
      model_error(ErrorCode::InvalidGraph, "tensor '" + tf.name + "' of type " + dtype_name(dtype) +
                                               " stores data in " + tensor_field_name(k) +
                                               ", which is not the field for that type");
  if (dtype == DType::String) return string_data(s, tf, numel);
  uint64_t want_bytes = stored_bytes(dtype, numel);
  if (tf.has_raw) {
    if (tf.count[typed] > 0)
      model_error(ErrorCode::InvalidGraph,
                  "tensor '" + tf.name + "' has both raw_data and " + tensor_field_name(typed));
    if (tf.raw.size() != want_bytes)
      dims_mismatch(tf, dtype, std::to_string(want_bytes) + " bytes expected, raw_data has " +
                                   std::to_string(tf.raw.size()));
    Tensor t = Tensor::empty(dtype, tf.dims);
    if (want_bytes > 0) std::memcpy(t.raw(), data_ + tf.raw.begin, want_bytes);
    return unpacked(t);
  }
  // A sub-byte type's int32_data holds its packed bytes, one per value.
  const bool packed = dtype_bits(dtype) < 8;
  const uint64_t values = packed ? want_bytes : numel;
  if (tf.count[typed] != values)
    dims_mismatch(tf, dtype, std::to_string(values) + (packed ? " packed bytes" : " elements") + " expected, " +
                                 tensor_field_name(typed) + " has " + std::to_string(tf.count[typed]));
  Tensor t = Tensor::empty(dtype, tf.dims);
  if (numel > 0) decode_typed(s, typed, dtype, static_cast<uint8_t*>(t.raw()));
  return unpacked(t);
}

Tensor Parser::string_data(Span s, const TensorFields& tf, uint64_t numel) {
  if (tf.has_raw) model_error(ErrorCode::InvalidGraph, "string tensor '" + tf.name + "' has raw_data");
  if (tf.count[kStringData] != numel)
    dims_mismatch(tf, DType::String, std::to_string(numel) + " elements expected, string_data has " +
                                         std::to_string(tf.count[kStringData]));
  Tensor t = Tensor::strings(tf.dims);
  std::string* out = t.data<std::string>();
  Fields fields(*this, s);
  Field f;
  while (fields.next(f))
    if (f.number == kStringData) *out++ = as_string(f, "string_data");
  return t;
}

// Every typed field holds the element's bits in the low bytes of its value (int32_data narrows to 8/16 bits and
// carries float16/bfloat16 bit patterns), so storing the low dtype_size bytes little-endian decodes them all.
void Parser::decode_typed(Span s, uint32_t number, DType dtype, uint8_t* out) {
  size_t esize = dtype_size(dtype);
  size_t i = 0;
  auto store = [&](uint64_t bits) {
    if (dtype == DType::Bool) bits = static_cast<uint32_t>(bits) != 0;
    std::memcpy(out + i * esize, &bits, esize);
    ++i;
  };
  const char* name = tensor_field_name(number);
  Fields fields(*this, s);
  Field f;
  while (fields.next(f)) {
    if (f.number != number) continue;
    if (number == kFloatData) for_each_fixed(f, 4, name, store);
    else if (number == kDoubleData) for_each_fixed(f, 8, name, store);
    else for_each_varint(f, name, store);
  }
}

// ---- external data ----

Tensor Parser::external_data(const TensorFields& tf, DType dtype, uint64_t numel, bool replaceable) {
  const std::string& name = tf.name;
  bool inline_too = tf.has_raw;
  for (uint64_t c : tf.count) inline_too = inline_too || c > 0;
  if (inline_too) model_error(ErrorCode::InvalidGraph, "tensor '" + name + "' has both external and inline data");
  if (replaceable)
    if (Tensor t = supplied_initializer(tf, dtype); t.defined()) return t;
  std::string location;
  uint64_t offset = 0;
  std::optional<uint64_t> length;
  for (const auto& [key, value] : tf.external) {
    if (key == "location") location = value;
    if (key == "offset") offset = parse_decimal(name, key, value);
    if (key == "length") length = parse_decimal(name, key, value);
  }
  if (location.empty())
    model_error(ErrorCode::InvalidGraph, "tensor '" + name + "' has external data without a location");
  uint64_t nbytes = stored_bytes(dtype, numel);
  if (length && *length != nbytes)
    dims_mismatch(tf, dtype, std::to_string(nbytes) + " bytes expected, external data has " + std::to_string(*length));
  if (memory_files_.count(normal_location(location))) return memory_file_data(tf, dtype, location, offset, nbytes);
  if (model_dir_.empty())
    model_error(ErrorCode::InvalidGraph, "tensor '" + name + "' stores its data in external file '" + location +
                                             "'; the model must be loaded from a path to resolve it, or the file "
                                             "given with add_external_initializers_from_files_in_memory");
  return file_data(tf, dtype, location, offset, nbytes);
}

Tensor Parser::file_data(const TensorFields& tf, DType dtype, const std::string& location, uint64_t offset,
                         uint64_t nbytes) const {
  const std::string& name = tf.name;
  fs::path path = resolve_external(name, location);
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) {
    int err = errno;
    ErrorCode code = err == ENOENT || err == ENOTDIR ? ErrorCode::NoSuchFile : ErrorCode::InvalidGraph;
    model_error(code, "external data file '" + path.string() + "' of tensor '" + name + "' cannot be opened: " +
                          std::strerror(err));
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode))
    model_error(ErrorCode::InvalidGraph,
                "external data file '" + path.string() + "' of tensor '" + name + "' is not a regular file");
  check_range(name, "'" + path.string() + "'", offset, nbytes, static_cast<uint64_t>(st.st_size));
  if (Tensor mapped = map_external(fd.get(), dtype, tf.dims, offset, nbytes); mapped.defined()) return mapped;
  Tensor t = Tensor::empty(dtype, tf.dims);
  if (nbytes > 0 && !pread_all(fd.get(), t.raw(), nbytes, offset))
    model_error(ErrorCode::InvalidGraph, "reading " + std::to_string(nbytes) + " bytes of tensor '" + name +
                                             "' from '" + path.string() + "' failed");
  return unpacked(t);
}

void Parser::check_range(const std::string& tensor, const std::string& file, uint64_t offset, uint64_t nbytes,
                         uint64_t file_size) const {
  if (offset > file_size || nbytes > file_size - offset)
    model_error(ErrorCode::InvalidGraph, "tensor '" + tensor + "' reads " + std::to_string(nbytes) +
                                             " bytes at offset " + std::to_string(offset) + " of " + file +
                                             ", which has only " + std::to_string(file_size) + " bytes");
}

// add_external_initializers' value for this initializer, or an undefined Tensor when none was given.
Tensor Parser::supplied_initializer(const TensorFields& tf, DType dtype) {
  if (!supplied_) return {};
  auto it = supplied_->find(tf.name);
  if (it == supplied_->end()) return {};
  check_replacement("add_external_initializers", tf.name, it->second, dtype, tf.dims);
  used_.insert(tf.name);
  return it->second;
}

// The session copies what it reads, so the caller's buffer need only outlive session creation.
Tensor Parser::memory_file_data(const TensorFields& tf, DType dtype, const std::string& location, uint64_t offset,
                                uint64_t nbytes) const {
  std::string_view file = memory_files_.at(normal_location(location));
  check_range(tf.name, "in-memory external file '" + location + "'", offset, nbytes, file.size());
  Tensor t = Tensor::empty(dtype, tf.dims);
  if (nbytes > 0) std::memcpy(t.raw(), file.data() + offset, nbytes);
  return unpacked(t);
}

// Every supplied value must have replaced a main-graph initializer with external data, as in onnxruntime.
void Parser::check_supplied_used(const Graph& main) const {
  if (!supplied_) return;
  for (const auto& [name, t] : *supplied_) {
    if (used_.count(name)) continue;
    if (main.initializers.count(name))
      throw Error(ErrorCode::InvalidArgument, "add_external_initializers: the model's initializer '" + name +
                                                  "' has its data inline, not in an external file (add_initializer "
                                                  "replaces such an initializer)");
    throw Error(ErrorCode::InvalidArgument,
                "add_external_initializers: the model has no initializer '" + name + "' in its main graph");
  }
}

// The external file must lie inside the model folder once ".." and symlinks are resolved.
fs::path Parser::resolve_external(const std::string& tensor, const std::string& location) const {
  auto reject = [&](const std::string& why) {
    model_error(ErrorCode::InvalidGraph,
                "tensor '" + tensor + "' has external data location '" + location + "' that " + why);
  };
  fs::path loc(location);
  if (location.find('\0') != std::string::npos) reject("contains a NUL byte");
  if (loc.is_absolute() || loc.has_root_name() || loc.has_root_directory()) reject("is an absolute path");
  std::error_code ec;
  fs::path dir = fs::absolute(model_dir_, ec);
  if (!ec) dir = fs::weakly_canonical(dir, ec);
  if (ec) reject("cannot be resolved against model folder '" + model_dir_ + "': " + ec.message());
  if (dir.has_relative_path() && dir.filename().empty()) dir = dir.parent_path();
  fs::path full = fs::weakly_canonical(dir / loc, ec);
  if (ec) reject("cannot be resolved: " + ec.message());
  auto [d, p] = std::mismatch(dir.begin(), dir.end(), full.begin(), full.end());
  if (d != dir.end() || p == full.end() || p->empty())
    reject("resolves to '" + full.string() + "', outside the model folder '" + dir.string() + "'");
  return full;
}

uint64_t Parser::parse_decimal(const std::string& tensor, const std::string& key, const std::string& text) const {
  uint64_t v = 0;
  bool ok = !text.empty();
  for (char c : text) {
    ok = ok && c >= '0' && c <= '9' && !__builtin_mul_overflow(v, 10, &v) && !__builtin_add_overflow(v, c - '0', &v);
    if (!ok) break;
  }
  if (!ok)
    model_error(ErrorCode::InvalidGraph,
                "tensor '" + tensor + "' has external data " + key + " '" + text + "', which is not a valid integer");
  return v;
}

// ---- sparse tensors ----

NamedTensor Parser::read_sparse(Span s) {
  Scope scope(*this, "SparseTensorProto");
  std::optional<NamedTensor> values, indices;
  std::vector<int64_t> dims;
  Fields fields(*this, s);
  Field f;
  while (fields.next(f)) {
    if (f.number == 1) values = read_tensor(as_message(f, "values"));
    if (f.number == 2) indices = read_tensor(as_message(f, "indices"));
    if (f.number == 3) for_each_varint(f, "dims", [&](uint64_t v) { dims.push_back(static_cast<int64_t>(v)); });
  }
  if (!values) parse_error("sparse tensor without values", s.begin);
  return {values->name, densify(*values, indices ? &*indices : nullptr, dims)};
}

bool is_integer(DType t) {
  switch (t) {
    case DType::Int64: case DType::Int32: case DType::Int16: case DType::Int8:
    case DType::UInt32: case DType::UInt16: case DType::UInt8: case DType::UInt64: return true;
    default: return false;
  }
}

// Indices are either linear, shape [NNZ], or coordinates, shape [NNZ, rank].
Tensor Parser::densify(const NamedTensor& values, const NamedTensor* indices, const std::vector<int64_t>& dims) {
  const std::string what = "sparse tensor '" + values.name + "'";
  auto fail = [&](const std::string& why) { model_error(ErrorCode::InvalidGraph, what + " " + why); };
  const Tensor& v = values.tensor;
  if (v.dtype() == DType::String)
    model_error(ErrorCode::NotImplemented, what + " holds strings; sparse string tensors are not supported");
  uint64_t numel = checked_numel(dims, what);
  uint64_t dense_bytes = saturating_mul(numel, dtype_size(v.dtype()));
  if (dense_bytes > dense_budget_)
    fail("densifies to " + std::to_string(dense_bytes) + " bytes, more than the " + std::to_string(dense_budget_) +
         " left to the sparse tensors of a " + std::to_string(size_) + "-byte model");
  dense_budget_ -= dense_bytes;
  if (v.rank() != 1) fail("has values of shape " + dims_string(v.shape()) + "; values must be 1-D");
  int64_t nnz = v.dim(0);
  int64_t rank = static_cast<int64_t>(dims.size());
  if (indices && !is_integer(indices->tensor.dtype()))
    fail(std::string("has indices of type ") + dtype_name(indices->tensor.dtype()) + "; indices must be integers");
  bool linear = indices && indices->tensor.rank() == 1;
  bool coords = indices && indices->tensor.rank() == 2 && indices->tensor.dim(1) == rank;
  if (nnz > 0 && ((!linear && !coords) || indices->tensor.dim(0) != nnz))
    fail("has indices that are neither [NNZ] nor [NNZ, rank] for " + std::to_string(nnz) + " values and dims " +
         dims_string(dims));
  Tensor dense = Tensor::empty(v.dtype(), dims);
  size_t esize = dtype_size(v.dtype());
  if (dense.bytes() > 0) std::memset(dense.raw(), 0, dense.bytes());
  for (int64_t k = 0; k < nnz; ++k) {
    int64_t at = 0;
    if (linear) {
      at = indices->tensor.int_at(k);
      if (at < 0 || static_cast<uint64_t>(at) >= numel) fail("has index " + std::to_string(at) + " out of range");
    } else {
      for (int64_t j = 0; j < rank; ++j) {
        int64_t c = indices->tensor.int_at(k * rank + j);
        if (c < 0 || c >= dims[j])
          fail("has coordinate " + std::to_string(c) + " out of range in dim " + std::to_string(j));
        at = at * dims[j] + c;
      }
    }
    auto* to = static_cast<uint8_t*>(dense.raw()) + at * esize;
    std::memcpy(to, static_cast<const uint8_t*>(v.raw()) + k * esize, esize);
  }
  return dense;
}

// ---- files ----

std::vector<uint8_t> read_whole_file(const std::string& path) {
  Fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) {
    int err = errno;
    throw Error(ErrorCode::NoSuchFile, "cannot open model file '" + path + "': " + std::strerror(err));
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode))
    throw Error(ErrorCode::NoSuchFile, "model file '" + path + "' is not a regular file");
  std::vector<uint8_t> bytes(static_cast<size_t>(st.st_size));
  if (!bytes.empty() && !pread_all(fd.get(), bytes.data(), bytes.size(), 0))
    throw Error(ErrorCode::Fail, "reading model file '" + path + "' failed");
  return bytes;
}

}  // namespace

Model parse_model(const void* bytes, size_t size, const std::string& model_dir, const ExternalSources& sources) {
  if (bytes == nullptr || size == 0) throw Error(ErrorCode::InvalidGraph, "model parse error: empty model");
  try {
    return Parser(static_cast<const uint8_t*>(bytes), size, model_dir, sources).model();
  } catch (const std::bad_alloc&) {
    throw Error(ErrorCode::RuntimeError, "out of memory while reading the model");
  }
}

Model load_model_file(const std::string& path, const ExternalSources& sources) {
  std::vector<uint8_t> bytes = read_whole_file(path);
  std::string dir = fs::path(path).parent_path().string();
  if (bytes.empty()) throw Error(ErrorCode::InvalidGraph, "model parse error: empty model file '" + path + "'");
  return parse_model(bytes.data(), bytes.size(), dir.empty() ? "." : dir, sources);
}

void check_replacement(const char* api, const std::string& name, const Tensor& given, DType dtype, const Shape& dims) {
  if (given.device() != Device::CPU)
    throw Error(ErrorCode::InvalidArgument, std::string(api) + ": '" + name + "' must be a host tensor");
  if (given.dtype() != dtype || given.shape() != dims)
    throw Error(ErrorCode::InvalidArgument, std::string(api) + ": '" + name + "' is " + dtype_name(given.dtype()) +
                                                shape_string(given.shape()) + ", the model's initializer " +
                                                dtype_name(dtype) + shape_string(dims));
}

}  // namespace lockstep::onnx
