// Tests of the protobuf reader (src/onnx/reader.cpp): hand-encoded messages for the encodings the onnx Python
// package never writes (unpacked repeats, missing attribute types, malformed bytes), and models written by
// tests/fixtures/make_reader_models.py for what real exporters produce.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "onnx/model.h"
#include "protobuf_writer.h"

#ifndef LOCKSTEP_SOURCE_DIR
#define LOCKSTEP_SOURCE_DIR "."
#endif

namespace fs = std::filesystem;
using lockstep::DType;
using lockstep::Error;
using lockstep::ErrorCode;
using lockstep::Tensor;
using namespace lockstep::onnx;

namespace {

// ---- a tiny protobuf encoder (tests/cpp/protobuf_writer.h) ----

using Msg = lockstep::test::ProtobufWriter;

uint64_t sx(int64_t v) { return static_cast<uint64_t>(v); }  // protobuf int32/int64: sign-extended to 64 bits

Msg tensor_header(const std::string& name, DType dtype, const std::vector<int64_t>& dims) {
  Msg t;
  for (int64_t d : dims) t.varint(1, sx(d));
  t.varint(2, static_cast<uint64_t>(dtype)).str(8, name);
  return t;
}

std::string model_of_graph(const Msg& graph) {
  Msg m;
  m.varint(1, 8).msg(8, Msg().str(1, "").varint(2, 17)).msg(7, graph);
  return m.bytes;
}

std::string model_with_initializer(const Msg& tensor) { return model_of_graph(Msg().str(2, "main").msg(5, tensor)); }

Model parse(const std::string& bytes, const std::string& dir = "") {
  return parse_model(bytes.data(), bytes.size(), dir);
}

Tensor only_initializer(const std::string& bytes, const std::string& dir = "") {
  Model m = parse(bytes, dir);
  EXPECT_EQ(m.graph.initializers.size(), 1u);
  return m.graph.initializers.begin()->second;
}

template <typename T>
std::vector<T> values_of(const Tensor& t) {
  std::vector<T> v(t.bytes() / sizeof(T));
  if (!v.empty()) std::memcpy(v.data(), t.raw(), t.bytes());
  return v;
}

void expect_error(const std::function<void()>& fn, ErrorCode code, const std::string& substring) {
  try {
    fn();
    ADD_FAILURE() << "no error; expected one containing '" << substring << "'";
  } catch (const Error& e) {
    EXPECT_EQ(static_cast<int>(e.code()), static_cast<int>(code)) << e.what();
    EXPECT_NE(std::string(e.what()).find(substring), std::string::npos) << e.what();
  }
}

void expect_parse_error(const std::string& bytes, const std::string& substring,
                        ErrorCode code = ErrorCode::InvalidGraph) {
  expect_error([&] { parse(bytes); }, code, substring);
}

// Malformed input may parse (a prefix can end on a field boundary) or throw lockstep::Error; nothing else.
bool parses_or_throws_error(const std::string& bytes) {
  try {
    parse(bytes);
    return true;
  } catch (const Error&) {
    return true;
  } catch (...) {
    return false;
  }
}

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void write_file(const fs::path& p, const std::string& bytes) {
  std::ofstream out(p, std::ios::binary);
  out << bytes;
}

struct TempDir {
  fs::path path;
  TempDir() {
    std::string tmpl = (fs::temp_directory_path() / "lockstep_reader_XXXXXX").string();
    path = mkdtemp(tmpl.data());
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

// ---- typed fields, packed and unpacked ----

TEST(ReaderTensor, FloatDataPackedAndUnpacked) {
  Msg packed = tensor_header("w", DType::Float, {2, 2});
  packed.packed_fixed<float>(4, {1.5f, -2.0f, 0.25f, 8.0f});
  Msg unpacked = tensor_header("w", DType::Float, {2, 2});
  for (float f : {1.5f, -2.0f, 0.25f, 8.0f}) unpacked.f32(4, f);
  Msg split = tensor_header("w", DType::Float, {2, 2});
  split.packed_fixed<float>(4, {1.5f, -2.0f}).f32(4, 0.25f).packed_fixed<float>(4, {8.0f});
  for (const Msg* m : {&packed, &unpacked, &split}) {
    Tensor t = only_initializer(model_with_initializer(*m));
    EXPECT_EQ(t.dtype(), DType::Float);
    EXPECT_EQ(t.shape(), (lockstep::Shape{2, 2}));
    EXPECT_EQ(values_of<float>(t), (std::vector<float>{1.5f, -2.0f, 0.25f, 8.0f}));
  }
}

TEST(ReaderTensor, Int32DataNarrowsForSmallTypes) {
  struct Case {
    DType dtype;
    std::vector<int64_t> in;
    std::vector<uint8_t> want;  // little-endian element bytes
  };
  std::vector<Case> cases = {
      {DType::Int8, {-128, -1, 127}, {0x80, 0xff, 0x7f}},
      {DType::UInt8, {0, 200, 255}, {0, 200, 255}},
      {DType::Bool, {0, 1, 5}, {0, 1, 1}},
      {DType::Int16, {-32768, -2, 300}, {0x00, 0x80, 0xfe, 0xff, 0x2c, 0x01}},
      {DType::UInt16, {65535, 1, 256}, {0xff, 0xff, 0x01, 0x00, 0x00, 0x01}},
      {DType::Float16, {0x3c00, 0xc000, 0x7bff}, {0x00, 0x3c, 0x00, 0xc0, 0xff, 0x7b}},
      {DType::BFloat16, {0x3f80, 0xc020, 0x0000}, {0x80, 0x3f, 0x20, 0xc0, 0x00, 0x00}},
      {DType::Int32, {-2147483648LL, -1, 2147483647}, {0, 0, 0, 0x80, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f}},
  };
  for (const Case& c : cases) {
    std::vector<uint64_t> encoded;
    for (int64_t v : c.in) encoded.push_back(sx(v));
    Msg packed = tensor_header("t", c.dtype, {3});
    packed.packed_varints(5, encoded);
    Msg unpacked = tensor_header("t", c.dtype, {3});
    for (uint64_t v : encoded) unpacked.varint(5, v);
    for (const Msg* m : {&packed, &unpacked}) {
      Tensor t = only_initializer(model_with_initializer(*m));
      EXPECT_EQ(t.dtype(), c.dtype);
      EXPECT_EQ(values_of<uint8_t>(t), c.want) << lockstep::dtype_name(c.dtype);
    }
  }
}

TEST(ReaderTensor, Int64Uint64DoubleFields) {
  Msg i64 = tensor_header("a", DType::Int64, {3});
  i64.varint(7, sx(-5)).packed_varints(7, {sx(INT64_MIN), sx(INT64_MAX)});
  EXPECT_EQ(values_of<int64_t>(only_initializer(model_with_initializer(i64))),
            (std::vector<int64_t>{-5, INT64_MIN, INT64_MAX}));

  Msg u64 = tensor_header("b", DType::UInt64, {2});
  u64.varint(11, UINT64_MAX).varint(11, 3);
  EXPECT_EQ(values_of<uint64_t>(only_initializer(model_with_initializer(u64))), (std::vector<uint64_t>{UINT64_MAX, 3}));

  Msg u32 = tensor_header("c", DType::UInt32, {2});
  u32.packed_varints(11, {4294967295u, 7});
  EXPECT_EQ(values_of<uint32_t>(only_initializer(model_with_initializer(u32))),
            (std::vector<uint32_t>{4294967295u, 7}));

  Msg dbl = tensor_header("d", DType::Double, {2});
  double x = -1e300;
  uint64_t bits;
  std::memcpy(&bits, &x, 8);
  dbl.fixed64(10, bits).packed_fixed<double>(10, {0.5});
  EXPECT_EQ(values_of<double>(only_initializer(model_with_initializer(dbl))), (std::vector<double>{-1e300, 0.5}));
}

TEST(ReaderTensor, RawDataEveryType) {
  for (DType d : {DType::Float, DType::UInt8, DType::Int8, DType::UInt16, DType::Int16, DType::Int32, DType::Int64,
                  DType::Bool, DType::Float16, DType::Double, DType::UInt32, DType::UInt64, DType::BFloat16,
                  DType::Float8E4M3FN, DType::Float8E4M3FNUZ, DType::Float8E5M2, DType::Float8E5M2FNUZ}) {
    size_t n = 2 * 3 * lockstep::dtype_size(d);
    std::string raw;
    for (size_t i = 0; i < n; ++i) raw.push_back(static_cast<char>(d == DType::Bool ? i % 2 : i * 7 + 1));
    Msg t = tensor_header("r", d, {2, 3});
    t.str(9, raw);
    Tensor got = only_initializer(model_with_initializer(t));
    EXPECT_EQ(got.dtype(), d);
    EXPECT_EQ(got.shape(), (lockstep::Shape{2, 3}));
    EXPECT_EQ(std::string(static_cast<const char*>(got.raw()), got.bytes()), raw) << lockstep::dtype_name(d);
  }
}

// int4/uint4/float4e2m1 (two a byte) and int2/uint2 (four) are unpacked to one element a byte, low bits first, from
// raw_data and from int32_data (one packed byte per value); an odd count leaves the last byte partly used.
TEST(ReaderTensor, SubByteTypesAreUnpacked) {
  Msg raw4 = tensor_header("i4", DType::Int4, {3});
  raw4.str(9, std::string("\x21\x0f", 2));
  Tensor t = only_initializer(model_with_initializer(raw4));
  EXPECT_EQ(std::string(static_cast<const char*>(t.raw()), t.bytes()), std::string("\x01\x02\x0f", 3));
  Msg typed2 = tensor_header("u2", DType::UInt2, {5});
  typed2.packed_varints(5, {0xe4, 0x03});  // 0, 1, 2, 3 | 3
  Tensor u = only_initializer(model_with_initializer(typed2));
  EXPECT_EQ(std::string(static_cast<const char*>(u.raw()), u.bytes()), std::string("\x00\x01\x02\x03\x03", 5));
  Msg short4 = tensor_header("f4", DType::Float4E2M1, {3});
  short4.str(9, "x");
  expect_parse_error(model_with_initializer(short4), "2 bytes expected, raw_data has 1");
}

TEST(ReaderTensor, PackedAndUnpackedDims) {
  Msg t;
  t.packed_varints(1, {2, 3}).varint(2, 1).str(8, "p").str(9, std::string(24, '\0'));
  EXPECT_EQ(only_initializer(model_with_initializer(t)).shape(), (lockstep::Shape{2, 3}));
}

TEST(ReaderTensor, EmptyAndScalarTensors) {
  Tensor empty = only_initializer(model_with_initializer(tensor_header("e", DType::Float, {0, 3})));
  EXPECT_EQ(empty.shape(), (lockstep::Shape{0, 3}));
  EXPECT_EQ(empty.numel(), 0);
  Msg huge_empty = tensor_header("h", DType::Float, {0, int64_t{1} << 40, int64_t{1} << 20});
  EXPECT_EQ(only_initializer(model_with_initializer(huge_empty)).numel(), 0);
  Msg scalar = tensor_header("s", DType::Int64, {});
  scalar.varint(7, 9);
  Tensor s = only_initializer(model_with_initializer(scalar));
  EXPECT_EQ(s.rank(), 0);
  EXPECT_EQ(values_of<int64_t>(s), std::vector<int64_t>{9});
}

TEST(ReaderTensor, DimsThatDisagreeWithData) {
  Msg short_raw = tensor_header("w", DType::Float, {2, 3});
  short_raw.str(9, std::string(20, '\0'));
  expect_parse_error(model_with_initializer(short_raw), "tensor 'w' has dims [2,3] that disagree with the data");
  Msg few = tensor_header("w", DType::Int64, {4});
  few.packed_varints(7, {1, 2, 3});
  expect_parse_error(model_with_initializer(few), "dims [4] that disagree with the data");
  Msg many = tensor_header("w", DType::Float, {1});
  many.packed_fixed<float>(4, {1, 2});
  expect_parse_error(model_with_initializer(many), "disagree with the data");
  // A huge claimed size with no data must fail without trying to allocate it.
  expect_parse_error(model_with_initializer(tensor_header("big", DType::Float, {int64_t{1} << 40})),
                     "tensor 'big' has dims [1099511627776] that disagree");
  expect_parse_error(model_with_initializer(tensor_header("neg", DType::Float, {-1})), "negative dim");
  Msg overflowing = tensor_header("ovf", DType::Float, {int64_t{1} << 40, int64_t{1} << 40, 0});
  expect_parse_error(model_with_initializer(overflowing), "overflows");
}

TEST(ReaderTensor, WrongOrConflictingDataFields) {
  Msg wrong = tensor_header("w", DType::Int64, {1});
  wrong.f32(4, 1.0f);
  expect_parse_error(model_with_initializer(wrong), "tensor 'w' of type int64 stores data in float_data");
  Msg both = tensor_header("w", DType::Float, {1});
  both.f32(4, 1.0f).str(9, std::string(4, '\0'));
  expect_parse_error(model_with_initializer(both), "both raw_data and float_data");
  Msg no_type;
  no_type.varint(1, 1).str(8, "n").str(9, std::string(4, '\0'));
  expect_parse_error(model_with_initializer(no_type), "tensor 'n' has no data_type");
  Msg packed_float_bad = tensor_header("w", DType::Float, {1});
  packed_float_bad.str(4, "abc");
  expect_parse_error(model_with_initializer(packed_float_bad), "not a multiple of 4");
}

TEST(ReaderTensor, StringTensorsHoldTheirStrings) {
  Msg s = tensor_header("words", DType::String, {3});
  s.str(6, "hi").str(6, "").str(6, std::string("a\0b", 3));
  Model m = parse(model_with_initializer(s));
  const Tensor& t = m.graph.initializers.at("words");
  ASSERT_EQ(t.dtype(), DType::String);
  EXPECT_EQ(t.data<std::string>()[0], "hi");
  EXPECT_EQ(t.data<std::string>()[1], "");
  EXPECT_EQ(t.data<std::string>()[2], std::string("a\0b", 3));
  Tensor copy = t.clone();
  EXPECT_EQ(copy.data<std::string>()[0], "hi");
  EXPECT_NE(copy.raw(), t.raw());
  Msg short_strings = tensor_header("w2", DType::String, {2});
  short_strings.str(6, "x");
  expect_parse_error(model_with_initializer(short_strings), "2 elements expected, string_data has 1");
  Msg raw = tensor_header("w3", DType::String, {1});
  raw.str(9, "x");
  expect_parse_error(model_with_initializer(raw), "string tensor 'w3' has raw_data");
}

TEST(ReaderTensor, UnsupportedTypesNameTheTensor) {
  Msg c64 = tensor_header("c64", static_cast<DType>(14), {1});  // complex64
  c64.str(9, "x");
  expect_parse_error(model_with_initializer(c64), "tensor 'c64' has data type 14", ErrorCode::NotImplemented);
  Msg seg = tensor_header("seg", DType::Float, {0});
  seg.msg(3, Msg().varint(1, 0));
  expect_parse_error(model_with_initializer(seg), "segmented", ErrorCode::NotImplemented);
}

// ---- attributes ----

Msg node_with_attributes(const std::vector<Msg>& attrs) {
  Msg n;
  n.str(1, "x").str(2, "y").str(3, "n0").str(4, "Custom").str(7, "test");
  for (const Msg& a : attrs) n.msg(5, a);
  return n;
}

Node parse_single_node(const Msg& node) {
  Model m = parse(model_of_graph(Msg().msg(1, node).str(2, "main")));
  EXPECT_EQ(m.graph.nodes.size(), 1u);
  return m.graph.nodes.at(0);
}

Msg sub_graph(const std::string& name) {
  return Msg().msg(1, Msg().str(1, "a").str(2, "b").str(4, "Relu")).str(2, name);
}

TEST(ReaderAttribute, EveryTypeDeclaredPackedAndUnpacked) {
  Msg t = tensor_header("at", DType::Int32, {2});
  t.packed_varints(5, {sx(-1), 4});
  for (bool packed : {true, false}) {
    Msg floats = Msg().str(1, "floats").varint(20, 6);
    Msg ints = Msg().str(1, "ints").varint(20, 7);
    if (packed) {
      floats.packed_fixed<float>(7, {1.0f, -0.5f});
      ints.packed_varints(8, {sx(-3), 5});
    } else {
      floats.f32(7, 1.0f).f32(7, -0.5f);
      ints.varint(8, sx(-3)).varint(8, 5);
    }
    Node n = parse_single_node(node_with_attributes({
        Msg().str(1, "f").varint(20, 1).f32(2, 0.75f),
        Msg().str(1, "i").varint(20, 2).varint(3, sx(-42)),
        Msg().str(1, "s").varint(20, 3).str(4, "text"),
        Msg().str(1, "t").varint(20, 4).msg(5, t),
        Msg().str(1, "g").varint(20, 5).msg(6, sub_graph("body")),
        floats,
        ints,
        Msg().str(1, "strings").varint(20, 8).str(9, "a").str(9, ""),
        Msg().str(1, "tensors").varint(20, 9).msg(10, t).msg(10, t),
        Msg().str(1, "graphs").varint(20, 10).msg(11, sub_graph("g0")).msg(11, sub_graph("g1")),
    }));
    EXPECT_EQ(n.name, "n0");
    EXPECT_EQ(n.op_type, "Custom");
    EXPECT_EQ(n.domain, "test");
    EXPECT_EQ(n.inputs, std::vector<std::string>{"x"});
    EXPECT_EQ(n.attr_float("f", 0), 0.75f);
    EXPECT_EQ(n.attr_int("i", 0), -42);
    EXPECT_EQ(n.attr_string("s", ""), "text");
    EXPECT_EQ(values_of<int32_t>(*n.attr_tensor("t")), (std::vector<int32_t>{-1, 4}));
    ASSERT_NE(n.attr_graph("g"), nullptr);
    EXPECT_EQ(n.attr_graph("g")->name, "body");
    EXPECT_EQ(n.attr_graph("g")->nodes.at(0).op_type, "Relu");
    EXPECT_EQ(n.attr_floats("floats"), (std::vector<float>{1.0f, -0.5f}));
    EXPECT_EQ(n.attr_ints("ints"), (std::vector<int64_t>{-3, 5}));
    EXPECT_EQ(n.find("strings")->strings, (std::vector<std::string>{"a", ""}));
    EXPECT_EQ(n.find("tensors")->tensors.size(), 2u);
    ASSERT_EQ(n.find("graphs")->graphs.size(), 2u);
    EXPECT_EQ(n.find("graphs")->graphs[1]->name, "g1");
  }
}

TEST(ReaderAttribute, MissingTypeIsInferred) {
  Node n = parse_single_node(node_with_attributes({
      Msg().str(1, "f").f32(2, 0.5f),
      Msg().str(1, "i").varint(3, 3),
      Msg().str(1, "s").str(4, "x"),
      Msg().str(1, "t").msg(5, tensor_header("e", DType::Float, {0})),
      Msg().str(1, "g").msg(6, sub_graph("b")),
      Msg().str(1, "floats").f32(7, 1.0f),
      Msg().str(1, "ints").packed_varints(8, {1, 2}),
      Msg().str(1, "strings").str(9, "q"),
      Msg().str(1, "tensors").msg(10, tensor_header("e", DType::Float, {0})),
      Msg().str(1, "graphs").msg(11, sub_graph("b")),
  }));
  std::map<std::string, Attribute::Type> want = {
      {"f", Attribute::Float},     {"i", Attribute::Int},         {"s", Attribute::String},
      {"t", Attribute::TensorT},   {"g", Attribute::GraphT},      {"floats", Attribute::Floats},
      {"ints", Attribute::Ints},   {"strings", Attribute::Strings}, {"tensors", Attribute::Tensors},
      {"graphs", Attribute::Graphs},
  };
  for (const auto& [name, type] : want) EXPECT_EQ(n.find(name)->type, type) << name;
}

TEST(ReaderAttribute, RejectsRefAttrNameAndBadAttributes) {
  Msg ref = Msg().str(1, "alpha").str(21, "outer").varint(20, 1);
  expect_parse_error(model_of_graph(Msg().msg(1, node_with_attributes({ref}))),
                     "attribute 'alpha' refers to function attribute 'outer'");
  expect_parse_error(model_of_graph(Msg().msg(1, node_with_attributes({Msg().varint(20, 2).varint(3, 1)}))),
                     "attribute without a name");
  expect_parse_error(model_of_graph(Msg().msg(1, node_with_attributes({Msg().str(1, "a").varint(20, 99)}))),
                     "unknown type 99");
  Msg a1 = Msg().str(1, "a").varint(3, 1), a2 = Msg().str(1, "a").varint(3, 2);
  expect_parse_error(model_of_graph(Msg().msg(1, node_with_attributes({a1, a2}))), "duplicate attribute 'a'");
}

// ---- graph-level structure ----

TEST(ReaderGraph, SparseInitializerBothIndexLayouts) {
  Msg values = tensor_header("sp", DType::Float, {2});
  values.packed_fixed<float>(4, {5.0f, 6.0f});
  Msg linear_idx = tensor_header("", DType::Int64, {2});
  linear_idx.packed_varints(7, {1, 5});
  Msg coord_idx = tensor_header("", DType::Int64, {2, 2});
  coord_idx.packed_varints(7, {0, 1, 1, 2});
  std::vector<float> want = {0, 5, 0, 0, 0, 6};
  for (const Msg* idx : {&linear_idx, &coord_idx}) {
    Msg sparse = Msg().msg(1, values).msg(2, *idx).varint(3, 2).varint(3, 3);
    Model m = parse(model_of_graph(Msg().str(2, "main").msg(15, sparse)));
    const Tensor& t = m.graph.initializers.at("sp");
    EXPECT_EQ(t.shape(), (lockstep::Shape{2, 3}));
    EXPECT_EQ(values_of<float>(t), want);
  }
  Msg bad_idx = tensor_header("", DType::Int64, {2});
  bad_idx.packed_varints(7, {1, 6});
  expect_parse_error(model_of_graph(Msg().msg(15, Msg().msg(1, values).msg(2, bad_idx).varint(3, 2).varint(3, 3))),
                     "sparse tensor 'sp' has index 6 out of range");
  expect_parse_error(model_of_graph(Msg().msg(15, Msg().msg(1, values).varint(3, int64_t{1} << 40))),
                     "bytes, more than the");
}

TEST(ReaderGraph, ValueInfosAndNonTensorTypes) {
  Msg shape = Msg().msg(1, Msg().str(2, "batch")).msg(1, Msg().varint(1, 3)).msg(1, Msg());
  Msg x = Msg().str(1, "x").msg(2, Msg().msg(1, Msg().varint(1, 1).msg(2, shape))).str(3, "input doc");
  Msg unranked = Msg().str(1, "u").msg(2, Msg().msg(1, Msg().varint(1, 7)));
  Msg seq = Msg().str(1, "s").msg(2, Msg().msg(4, Msg().msg(1, Msg().msg(1, Msg().varint(1, 1)))));
  Msg map = Msg().str(1, "m").msg(2, Msg().msg(5, Msg().varint(1, 7)));
  Msg opt = Msg().str(1, "o").msg(2, Msg().msg(9, Msg()));
  Msg graph = Msg().str(2, "main").msg(11, x).msg(11, unranked).msg(11, seq).msg(12, map).msg(13, opt);
  Model m = parse(model_of_graph(graph));
  ASSERT_EQ(m.graph.inputs.size(), 3u);
  const ValueInfo& vx = m.graph.inputs[0];
  EXPECT_EQ(vx.dtype, DType::Float);
  EXPECT_TRUE(vx.has_shape);
  ASSERT_EQ(vx.dims.size(), 3u);
  EXPECT_EQ(vx.dims[0].param, "batch");
  EXPECT_FALSE(vx.dims[0].value.has_value());
  EXPECT_EQ(vx.dims[1].value, 3);
  EXPECT_FALSE(vx.dims[2].value.has_value());
  EXPECT_TRUE(vx.dims[2].param.empty());
  EXPECT_EQ(vx.doc_string, "input doc");
  EXPECT_EQ(m.graph.inputs[1].dtype, DType::Int64);
  EXPECT_FALSE(m.graph.inputs[1].has_shape);
  EXPECT_EQ(m.graph.inputs[2].dtype, DType::Float);  // seq(tensor(float)): the element type, marked a sequence
  EXPECT_TRUE(m.graph.inputs[2].sequence);
  EXPECT_FALSE(m.graph.inputs[2].optional);
  EXPECT_EQ(m.graph.outputs.at(0).dtype, DType::Undefined);  // a map
  EXPECT_EQ(m.graph.value_info.at(0).name, "o");
  EXPECT_TRUE(m.graph.value_info.at(0).optional);
}

TEST(ReaderGraph, OptionalSequencesAndNestingLimits) {
  Msg float_tensor = Msg().msg(1, Msg().varint(1, 1));
  Msg seq_type = Msg().msg(4, Msg().msg(1, float_tensor));
  Msg opt_seq = Msg().str(1, "os").msg(2, Msg().msg(9, Msg().msg(1, seq_type)));
  Model m = parse(model_of_graph(Msg().str(2, "main").msg(11, opt_seq)));
  EXPECT_EQ(m.graph.inputs.at(0).dtype, DType::Float);
  EXPECT_TRUE(m.graph.inputs[0].sequence);
  EXPECT_TRUE(m.graph.inputs[0].optional);
  Msg seq_of_seq = Msg().str(1, "ss").msg(2, Msg().msg(4, Msg().msg(1, seq_type)));
  expect_parse_error(model_of_graph(Msg().str(2, "main").msg(11, seq_of_seq)), "nested sequence and optional types",
                     ErrorCode::NotImplemented);
}

TEST(ReaderGraph, UnknownFieldsOfEveryWireTypeAreSkipped) {
  auto noise = [](Msg m) { return m.varint(999, 5).fixed32(998, 1).fixed64(997, 2).str(996, "zz"); };
  Msg tensor = noise(tensor_header("w", DType::Float, {1}));
  tensor.f32(4, 2.0f);
  Msg node = noise(Msg().str(4, "Relu").msg(5, noise(Msg().str(1, "a").varint(3, 1))));
  Msg graph = noise(Msg().str(2, "main").msg(5, tensor).msg(1, node).msg(11, noise(Msg().str(1, "x"))));
  Msg model = noise(Msg().varint(1, 9)).msg(7, graph).msg(8, noise(Msg().varint(2, 13)));
  model.msg(25, Msg().str(1, "a_function"));  // FunctionProto: not read
  Model m = parse(model.bytes);
  EXPECT_EQ(m.ir_version, 9);
  EXPECT_EQ(m.default_opset(), 13);
  EXPECT_EQ(values_of<float>(m.graph.initializers.at("w")), std::vector<float>{2.0f});
  EXPECT_EQ(m.graph.nodes.at(0).attr_int("a", 0), 1);
}

TEST(ReaderGraph, DuplicateInitializerAndMissingGraph) {
  Msg t = tensor_header("w", DType::Float, {0});
  expect_parse_error(model_of_graph(Msg().str(2, "main").msg(5, t).msg(5, t)), "duplicate initializer 'w'");
  expect_parse_error(Msg().varint(1, 8).bytes, "model has no graph");
  expect_parse_error(model_of_graph(Msg().msg(5, tensor_header("", DType::Float, {0}))), "initializer without a name");
}

Msg nested_graphs(int levels) {
  Msg g = Msg().str(2, "leaf");
  for (int i = 1; i < levels; ++i) {
    Msg attr = Msg().str(1, "body").varint(20, 5).msg(6, g);
    g = Msg().msg(1, Msg().str(4, "Loop").msg(5, attr)).str(2, "level");
  }
  return g;
}

TEST(ReaderGraph, NestingIsCapped) {
  EXPECT_NO_THROW(parse(model_of_graph(nested_graphs(64))));
  expect_parse_error(model_of_graph(nested_graphs(65)), "graphs nested deeper than 64 levels");
  expect_parse_error(model_of_graph(nested_graphs(1000)), "nested deeper");
}

// ---- malformed bytes ----

TEST(ReaderMalformed, ErrorsSayWhatAndWhere) {
  expect_error([] { parse_model("", 0, ""); }, ErrorCode::InvalidGraph, "empty model");
  expect_error([] { parse_model(nullptr, 0, ""); }, ErrorCode::InvalidGraph, "empty model");

  std::string good = model_of_graph(Msg().str(2, "main").msg(1, Msg().str(4, "Relu")));
  std::string cut = good.substr(0, good.size() - 2);
  expect_parse_error(cut, "truncated length-delimited field 7");

  // A node whose bytes claim more than the graph holds: the message names the graph and byte offset.
  Msg graph = Msg().str(2, "main");
  graph.bytes += Msg().tag(1, 2).bytes + Msg::varint_bytes(50) + "xx";
  expect_parse_error(model_of_graph(graph),
                     "truncated length-delimited field 1 (length 50, 2 bytes left) in GraphProto 'main' in ModelProto "
                     "at byte");

  expect_parse_error(std::string(11, '\x80') + "\x01", "varint longer than 10 bytes");
  expect_parse_error(Msg().tag(1, 0).bytes + std::string(12, '\xff'), "varint longer than 10 bytes in varint field 1");
  expect_parse_error(Msg().tag(1, 0).bytes + "\x80", "truncated varint field 1");
  expect_parse_error(Msg().tag(7, 3).bytes, "groups (wire type 3) are not supported");
  expect_parse_error(Msg().tag(7, 4).bytes, "groups (wire type 4)");
  expect_parse_error(Msg().tag(7, 6).bytes, "invalid wire type 6");
  expect_parse_error(std::string("\x00", 1), "invalid field number 0");
  expect_parse_error(Msg().tag(3, 5).bytes + "ab", "truncated fixed32 field 3");
  expect_parse_error(Msg().tag(3, 1).bytes + "abcd", "truncated fixed64 field 3");
  expect_parse_error(Msg().varint(7, 1).bytes, "field 7 (graph) has wire type varint, expected length-delimited");
  expect_parse_error(Msg().str(1, "x").bytes, "field 1 (ir_version) has wire type length-delimited, expected varint");
  expect_parse_error(model_of_graph(Msg().str(2, "g").msg(1, Msg().str(3, "nn").str(4, "Add").varint(1, 3))),
                     "field 1 (input) has wire type varint, expected length-delimited in NodeProto 'nn' (Add) in "
                     "GraphProto 'g'");
  Msg attr = Msg().str(1, "alpha").varint(2, 1);
  expect_parse_error(model_of_graph(Msg().msg(1, node_with_attributes({attr}))), "in AttributeProto 'alpha'");
  Msg bad_packed = tensor_header("w", DType::Int64, {1});
  bad_packed.str(7, "\x80");
  expect_parse_error(model_with_initializer(bad_packed), "truncated packed varint in field 7 in TensorProto 'w'");
}

std::vector<std::string> fixture_free_models() {
  Msg t = tensor_header("w", DType::Float, {2});
  t.packed_fixed<float>(4, {1, 2});
  Msg sparse = Msg().msg(1, tensor_header("sp", DType::Float, {0})).varint(3, 4);
  Msg g = Msg().msg(1, node_with_attributes({Msg().str(1, "g").msg(6, sub_graph("b")), Msg().str(1, "t").msg(5, t)}));
  g.str(2, "main").msg(5, t).msg(15, sparse).msg(11, Msg().str(1, "x").msg(2, Msg().msg(1, Msg().varint(1, 1))));
  return {model_of_graph(g)};
}

TEST(ReaderMalformed, EveryTruncationPrefixThrowsOrParses) {
  for (const std::string& model : fixture_free_models()) {
    int errors = 0;
    for (size_t n = 0; n < model.size(); ++n) {
      std::string prefix = model.substr(0, n);
      ASSERT_TRUE(parses_or_throws_error(prefix)) << "prefix " << n;
      try {
        parse(prefix);
      } catch (const Error&) {
        ++errors;
      }
    }
    EXPECT_GT(errors, static_cast<int>(model.size() / 2));
  }
}

TEST(ReaderMalformed, RandomAndMutatedBuffersNeverCrash) {
  std::mt19937_64 rng(12345);
  for (int i = 0; i < 10000; ++i) {
    std::string buf(rng() % 300, '\0');
    for (char& c : buf) c = static_cast<char>(rng());
    ASSERT_TRUE(parses_or_throws_error(buf)) << "random buffer " << i;
  }
  std::string model = fixture_free_models()[0];
  for (int i = 0; i < 10000; ++i) {
    std::string buf = model;
    for (int k = 0, flips = 1 + rng() % 4; k < flips; ++k) buf[rng() % buf.size()] = static_cast<char>(rng());
    ASSERT_TRUE(parses_or_throws_error(buf)) << "mutation " << i;
  }
}

// ---- external data ----

Msg external_tensor(const std::string& name, const std::vector<int64_t>& dims, const std::string& location,
                    const std::string& offset = "", const std::string& length = "") {
  Msg t = tensor_header(name, DType::Float, dims);
  t.msg(13, Msg().str(1, "location").str(2, location));
  if (!offset.empty()) t.msg(13, Msg().str(1, "offset").str(2, offset));
  if (!length.empty()) t.msg(13, Msg().str(1, "length").str(2, length));
  t.varint(14, 1);
  return t;
}

std::string floats_bytes(const std::vector<float>& v) {
  return std::string(reinterpret_cast<const char*>(v.data()), v.size() * 4);
}

TEST(ReaderExternal, ReadsInsideTheModelFolder) {
  TempDir dir;
  fs::create_directories(dir.path / "sub");
  write_file(dir.path / "sub" / "w.bin", "PAD!" + floats_bytes({1, 2, 3}) + "tail");
  write_file(dir.path / "m.onnx", model_with_initializer(external_tensor("w", {3}, "sub/w.bin", "4", "12")));
  Model m = load_model_file((dir.path / "m.onnx").string());
  EXPECT_EQ(values_of<float>(m.graph.initializers.at("w")), (std::vector<float>{1, 2, 3}));
  // No length: the tensor's own size, read from the offset.
  Tensor t = only_initializer(model_with_initializer(external_tensor("w", {2}, "./sub/../sub/w.bin", "8")),
                              dir.path.string());
  EXPECT_EQ(values_of<float>(t), (std::vector<float>{2, 3}));
  // A symlink that stays inside the folder is fine.
  fs::create_symlink(dir.path / "sub" / "w.bin", dir.path / "link.bin");
  EXPECT_NO_THROW(
      only_initializer(model_with_initializer(external_tensor("w", {3}, "link.bin", "4")), dir.path.string()));
}

TEST(ReaderExternal, RejectsLocationsOutsideTheFolder) {
  TempDir dir;
  fs::create_directories(dir.path / "model");
  write_file(dir.path / "outside.bin", floats_bytes({1}));
  std::string model_dir = (dir.path / "model").string();
  auto load = [&](const std::string& location) {
    return [=] { only_initializer(model_with_initializer(external_tensor("w", {1}, location)), model_dir); };
  };
  expect_error(load("../outside.bin"), ErrorCode::InvalidGraph,
               "tensor 'w' has external data location '../outside.bin'");
  expect_error(load("../outside.bin"), ErrorCode::InvalidGraph, "outside the model folder");
  expect_error(load("a/../../outside.bin"), ErrorCode::InvalidGraph, "outside the model folder");
  expect_error(load((dir.path / "outside.bin").string()), ErrorCode::InvalidGraph, "is an absolute path");
  expect_error(load("."), ErrorCode::InvalidGraph, "outside the model folder");
  fs::create_symlink(dir.path / "outside.bin", dir.path / "model" / "escape.bin");
  expect_error(load("escape.bin"), ErrorCode::InvalidGraph, "outside the model folder");
  fs::create_directories(dir.path / "model2");  // a sibling whose name extends the folder's
  write_file(dir.path / "model2" / "x.bin", floats_bytes({1}));
  expect_error(load("../model2/x.bin"), ErrorCode::InvalidGraph, "outside the model folder");
}

TEST(ReaderExternal, MissingShortAndMalformed) {
  TempDir dir;
  write_file(dir.path / "w.bin", floats_bytes({1, 2}));
  std::string d = dir.path.string();
  auto load = [&](Msg t) { return [=] { only_initializer(model_with_initializer(t), d); }; };
  expect_error(load(external_tensor("w", {2}, "nope.bin")), ErrorCode::NoSuchFile, "nope.bin");
  expect_error(load(external_tensor("w", {2}, "nope.bin")), ErrorCode::NoSuchFile, "tensor 'w'");
  expect_error(load(external_tensor("w", {3}, "w.bin")), ErrorCode::InvalidGraph, "which has only 8 bytes");
  expect_error(load(external_tensor("w", {1}, "w.bin", "8", "4")), ErrorCode::InvalidGraph, "at offset 8");
  expect_error(load(external_tensor("w", {1}, "w.bin", "99999999999999999999")), ErrorCode::InvalidGraph,
               "not a valid integer");
  expect_error(load(external_tensor("w", {1}, "w.bin", "-4")), ErrorCode::InvalidGraph, "not a valid integer");
  expect_error(load(external_tensor("w", {1}, "w.bin", "0", "8")), ErrorCode::InvalidGraph, "disagree with the data");
  expect_error(load(external_tensor("w", {1}, "")), ErrorCode::InvalidGraph, "without a location");
  Msg inline_too = external_tensor("w", {1}, "w.bin");
  inline_too.str(9, std::string(4, '\0'));
  expect_error(load(inline_too), ErrorCode::InvalidGraph, "both external and inline data");
  // From bytes without a folder there is nothing to resolve against.
  expect_error([] { parse(model_with_initializer(external_tensor("w", {1}, "w.bin"))); }, ErrorCode::InvalidGraph,
               "must be loaded from a path");
}

// SessionOptions::external_files_in_memory: read instead of the folder, so a model from bytes may have external data.
TEST(ReaderExternal, FilesInMemory) {
  const std::string data = "PAD!" + floats_bytes({1, 2, 3});
  const std::map<std::string, std::string_view> files{{"w.bin", data}};
  auto parse_with = [&](const Msg& tensor) {
    std::string bytes = model_with_initializer(tensor);
    return parse_model(bytes.data(), bytes.size(), "", {nullptr, &files});
  };
  EXPECT_EQ(values_of<float>(parse_with(external_tensor("w", {3}, "./w.bin", "4")).graph.initializers.at("w")),
            (std::vector<float>{1, 2, 3}));
  expect_error([&] { parse_with(external_tensor("w", {4}, "w.bin", "4")); }, ErrorCode::InvalidGraph,
               "tensor 'w' reads 16 bytes at offset 4 of in-memory external file 'w.bin', which has only 16 bytes");
  expect_error([&] { parse_with(external_tensor("w", {1}, "w.bin", "0", "8")); }, ErrorCode::InvalidGraph,
               "disagree with the data");
  expect_error([&] { parse_with(external_tensor("w", {1}, "x.bin")); }, ErrorCode::InvalidGraph,
               "add_external_initializers_from_files_in_memory");
}

// SessionOptions::external_initializers: main-graph initializers with external data, whose file is then not read.
TEST(ReaderExternal, SuppliedInitializers) {
  const std::vector<float> seven_eight{7, 8};
  const std::map<std::string, Tensor> given{{"w", Tensor::from_bytes(DType::Float, {2}, seven_eight.data())}};
  auto parse_with = [&](const Msg& tensor) {
    std::string bytes = model_with_initializer(tensor);
    return parse_model(bytes.data(), bytes.size(), "", {&given, nullptr});
  };
  EXPECT_EQ(values_of<float>(parse_with(external_tensor("w", {2}, "missing.bin")).graph.initializers.at("w")),
            seven_eight);
  expect_error([&] { parse_with(external_tensor("w", {3}, "missing.bin")); }, ErrorCode::InvalidArgument,
               "add_external_initializers: 'w' is float[2], the model's initializer float[3]");
  auto inline_tensor = [&](const std::string& name) {
    Msg t = tensor_header(name, DType::Float, {2});
    t.str(9, floats_bytes({1, 2}));
    return t;
  };
  expect_error([&] { parse_with(inline_tensor("v")); }, ErrorCode::InvalidArgument,
               "the model has no initializer 'w' in its main graph");
  expect_error([&] { parse_with(inline_tensor("w")); }, ErrorCode::InvalidArgument,
               "initializer 'w' has its data inline");
}

TEST(ReaderExternal, OffsetsBeyondTwoGigabytes) {
  TempDir dir;
  const uint64_t offset = (uint64_t{5} << 30) + 12;  // 5 GiB: past any 32-bit offset
  {
    std::ofstream out(dir.path / "big.bin", std::ios::binary);
    out.seekp(static_cast<std::streamoff>(offset));
    std::string data = floats_bytes({4, 5});
    out.write(data.data(), static_cast<std::streamsize>(data.size()));
    if (!out) GTEST_SKIP() << "the temp filesystem cannot hold a sparse 5 GiB file";
  }
  Tensor t = only_initializer(model_with_initializer(external_tensor("w", {2}, "big.bin", std::to_string(offset), "8")),
                              dir.path.string());
  EXPECT_EQ(values_of<float>(t), (std::vector<float>{4, 5}));
}

TEST(ReaderFile, MissingAndDirectory) {
  expect_error([] { load_model_file("/nonexistent/dir/model.onnx"); }, ErrorCode::NoSuchFile,
               "/nonexistent/dir/model.onnx");
  TempDir dir;
  expect_error([&] { load_model_file(dir.path.string()); }, ErrorCode::NoSuchFile, "not a regular file");
  write_file(dir.path / "empty.onnx", "");
  expect_error([&] { load_model_file((dir.path / "empty.onnx").string()); }, ErrorCode::InvalidGraph, "empty model");
}

// ---- models written by the onnx package ----

class ReaderFixtures : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new TempDir();
    std::string cmd = "python3 " LOCKSTEP_SOURCE_DIR "/tests/fixtures/make_reader_models.py " + dir_->path.string();
    available_ = std::system(cmd.c_str()) == 0;
  }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }
  void SetUp() override {
    if (!available_) GTEST_SKIP() << "python3 with the onnx package is needed to write the fixture models";
  }
  static fs::path path(const std::string& file) { return dir_->path / file; }
  static std::string expected(const std::string& model, const std::string& tensor) {
    fs::path p = path("expected/" + model + "__" + tensor + ".bin");
    EXPECT_TRUE(fs::exists(p)) << p;
    return read_file(p);
  }
  static std::string bytes_of(const Tensor& t) { return std::string(static_cast<const char*>(t.raw()), t.bytes()); }

  static TempDir* dir_;
  static bool available_;
};

TempDir* ReaderFixtures::dir_ = nullptr;
bool ReaderFixtures::available_ = false;

TEST_F(ReaderFixtures, EveryDtypeTypedAndRaw) {
  const std::map<std::string, DType> dtypes = {
      {"t_float", DType::Float},   {"t_double", DType::Double},     {"t_uint8", DType::UInt8},
      {"t_int8", DType::Int8},     {"t_uint16", DType::UInt16},     {"t_int16", DType::Int16},
      {"t_int32", DType::Int32},   {"t_int64", DType::Int64},       {"t_uint32", DType::UInt32},
      {"t_uint64", DType::UInt64}, {"t_bool", DType::Bool},         {"t_float16", DType::Float16},
      {"t_bfloat16", DType::BFloat16},
  };
  for (const std::string model : {"typed", "raw"}) {
    Model m = load_model_file(path(model + ".onnx").string());
    EXPECT_EQ(m.graph.initializers.size(), dtypes.size() + 2);
    for (const auto& [name, dtype] : dtypes) {
      const Tensor& t = m.graph.initializers.at(name);
      EXPECT_EQ(t.dtype(), dtype) << model << " " << name;
      EXPECT_EQ(t.shape(), (lockstep::Shape{2, 3})) << model << " " << name;
      EXPECT_EQ(bytes_of(t), expected(model, name)) << model << " " << name;
    }
    EXPECT_EQ(m.graph.initializers.at("empty").shape(), (lockstep::Shape{0, 3}));
    EXPECT_EQ(bytes_of(m.graph.initializers.at("scalar")), expected(model, "scalar"));
    EXPECT_EQ(m.graph.initializers.at("scalar").rank(), 0);
  }
}

TEST_F(ReaderFixtures, ModelFieldsAndValueInfos) {
  Model m = load_model_file(path("typed.onnx").string());
  EXPECT_EQ(m.ir_version, 10);
  EXPECT_EQ(m.producer_name, "maker");
  EXPECT_EQ(m.producer_version, "1.0");
  EXPECT_EQ(m.domain, "test.domain");
  EXPECT_EQ(m.model_version, 3);
  EXPECT_EQ(m.doc_string, "model doc");
  EXPECT_EQ(m.default_opset(), 17);
  ASSERT_EQ(m.opset_imports.size(), 2u);
  EXPECT_EQ(m.opset_imports[1].domain, "com.x");
  EXPECT_EQ(m.opset_imports[1].version, 2);
  EXPECT_EQ(m.metadata, (std::map<std::string, std::string>{{"k1", "v1"}, {"k2", "v2"}}));
  EXPECT_EQ(m.graph.name, "g_typed");
  EXPECT_EQ(m.graph.doc_string, "graph doc");
  ASSERT_EQ(m.graph.nodes.size(), 1u);
  EXPECT_EQ(m.graph.nodes[0].op_type, "Identity");
  ASSERT_EQ(m.graph.inputs.size(), 5u);
  const ValueInfo& x = m.graph.inputs[0];
  EXPECT_EQ(x.name, "x");
  EXPECT_EQ(x.dtype, DType::Float);
  ASSERT_EQ(x.dims.size(), 3u);
  EXPECT_EQ(x.dims[0].param, "batch");
  EXPECT_EQ(x.dims[1].value, 3);
  EXPECT_FALSE(x.dims[2].value.has_value());
  EXPECT_FALSE(m.graph.inputs[1].has_shape);
  // seq(tensor(float)), map(int64, tensor(float)), optional(tensor(float)), in the fixture's order.
  std::map<std::string, const ValueInfo*> by_name;
  for (const ValueInfo& v : m.graph.inputs) by_name[v.name] = &v;
  ASSERT_TRUE(by_name.count("seq_in") && by_name.count("map_in") && by_name.count("opt_in"));
  EXPECT_EQ(by_name["seq_in"]->dtype, DType::Float);
  EXPECT_TRUE(by_name["seq_in"]->sequence);
  EXPECT_FALSE(by_name["seq_in"]->optional);
  EXPECT_EQ(by_name["opt_in"]->dtype, DType::Float);
  EXPECT_TRUE(by_name["opt_in"]->optional);
  EXPECT_FALSE(by_name["opt_in"]->sequence);
  EXPECT_EQ(by_name["map_in"]->dtype, DType::Float);  // a map's value type, and its key type
  EXPECT_EQ(by_name["map_in"]->map_key, DType::Int64);
  EXPECT_FALSE(by_name["map_in"]->sequence);
  EXPECT_EQ(by_name["seq_in"]->map_key, DType::Undefined);
}

TEST_F(ReaderFixtures, AttributesOfEveryType) {
  Model m = load_model_file(path("attributes.onnx").string());
  ASSERT_EQ(m.graph.nodes.size(), 2u);
  const Node& n = m.graph.nodes[0];
  EXPECT_EQ(n.attr_float("f", 0), 0.25f);
  EXPECT_EQ(n.attr_int("i", 0), -7);
  EXPECT_EQ(n.attr_string("s", ""), "hello");
  EXPECT_EQ(bytes_of(*n.attr_tensor("t")), expected("attributes", "attr_t"));
  EXPECT_EQ(n.attr_tensor("t")->shape(), (lockstep::Shape{2, 3}));
  const Graph* g = n.attr_graph("g");
  ASSERT_NE(g, nullptr);
  EXPECT_EQ(g->name, "sub_g");
  EXPECT_EQ(g->nodes.at(0).op_type, "Add");
  EXPECT_EQ(values_of<float>(g->initializers.at("c")), std::vector<float>{2.0f});
  EXPECT_EQ(n.attr_floats("floats"), (std::vector<float>{1.0f, -2.5f}));
  EXPECT_EQ(n.attr_ints("ints"), (std::vector<int64_t>{1, -2, 3000000000}));
  EXPECT_EQ(n.find("strings")->strings, (std::vector<std::string>{"a", "bc"}));
  EXPECT_EQ(n.find("tensors")->tensors.size(), 2u);
  ASSERT_EQ(n.find("graphs")->graphs.size(), 2u);
  EXPECT_EQ(n.find("graphs")->graphs[0]->name, "sub_0");
  const Attribute* sp = n.find("sp");  // SPARSE_TENSOR attributes are densified into t
  ASSERT_NE(sp, nullptr);
  EXPECT_EQ(sp->type, Attribute::TensorT);
  EXPECT_EQ(values_of<float>(sp->t), (std::vector<float>{0, 5, 0, 6}));
  EXPECT_EQ(m.graph.nodes[1].attr_graph("then_branch")->name, "then");
  EXPECT_EQ(m.graph.nodes[1].attr_graph("else_branch")->name, "else");
}

TEST_F(ReaderFixtures, SparseInitializers) {
  Model m = load_model_file(path("sparse.onnx").string());
  EXPECT_EQ(bytes_of(m.graph.initializers.at("sp_linear")), expected("sparse", "sp_linear"));
  EXPECT_EQ(bytes_of(m.graph.initializers.at("sp_coords")), expected("sparse", "sp_coords"));
  EXPECT_EQ(m.graph.initializers.at("sp_coords").dtype(), DType::Int64);
  EXPECT_EQ(m.graph.initializers.at("sp_coords").shape(), (lockstep::Shape{3, 4}));
}

TEST_F(ReaderFixtures, ExternalDataWrittenByOnnx) {
  Model m = load_model_file(path("external.onnx").string());
  EXPECT_EQ(bytes_of(m.graph.initializers.at("w")), expected("external", "w"));
  EXPECT_EQ(bytes_of(m.graph.initializers.at("b")), expected("external", "b"));
  EXPECT_EQ(m.graph.initializers.at("w").shape(), (lockstep::Shape{10, 100}));
  std::string bytes = read_file(path("external.onnx"));
  expect_error([&] { parse(bytes); }, ErrorCode::InvalidGraph, "must be loaded from a path");
}

TEST_F(ReaderFixtures, TruncationsAndMutationsOfRealModels) {
  std::mt19937_64 rng(7);
  for (const char* file : {"typed.onnx", "raw.onnx", "attributes.onnx", "sparse.onnx"}) {
    std::string model = read_file(path(file));
    for (size_t n = 0; n < model.size(); ++n)
      ASSERT_TRUE(parses_or_throws_error(model.substr(0, n))) << file << " prefix " << n;
    for (int i = 0; i < 3000; ++i) {
      std::string buf = model;
      for (int k = 0, flips = 1 + rng() % 4; k < flips; ++k) buf[rng() % buf.size()] = static_cast<char>(rng());
      ASSERT_TRUE(parses_or_throws_error(buf)) << file << " mutation " << i;
    }
  }
}

}  // namespace
