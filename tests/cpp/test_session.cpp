// Tests of the public C++ API (include/lockstep/session.h): a model built as hand-encoded protobuf bytes (no
// Python needed), loaded from memory and from a file, run, and fed badly.
//
// The model ("main", opset 17, plus an unused com.microsoft import):
//   inputs  x: float [N,3]   s: int64 [2]        initializer bias: float [3] = {0.5, -1, 2}
//   y  = Add(x, bias)                             output y: float [N,3]
//   y2 = Mul(y, Constant(2.0))
//   z  = Reshape(y2, s)                           output z: float, no declared shape
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "lockstep/device.h"
#include "lockstep/session.h"
#include "protobuf_writer.h"

namespace fs = std::filesystem;
using lockstep::DType;
using lockstep::Error;
using lockstep::ErrorCode;
using lockstep::Session;
using lockstep::SessionOptions;
using lockstep::Tensor;

namespace {

// ---- a tiny protobuf writer (tests/cpp/protobuf_writer.h) ----

using Pb = lockstep::test::ProtobufWriter;

// onnx.proto field numbers used below.
namespace model_f { enum { ir_version = 1, producer_name = 2, producer_version = 3, domain = 4, model_version = 5,
                           doc_string = 6, graph = 7, opset_import = 8, metadata_props = 14 }; }
namespace graph_f { enum { node = 1, name = 2, initializer = 5, doc_string = 10, input = 11, output = 12 }; }
namespace node_f { enum { input = 1, output = 2, name = 3, op_type = 4, attribute = 5 }; }
namespace attr_f { enum { name = 1, t = 5, type = 20 }; }
namespace tensor_f { enum { dims = 1, data_type = 2, name = 8, raw_data = 9 }; }

Pb tensor_proto(const std::string& name, DType dtype, const std::vector<int64_t>& dims, const void* data,
                size_t bytes) {
  Pb t;
  for (int64_t d : dims) t.varint(tensor_f::dims, d);
  t.varint(tensor_f::data_type, static_cast<int64_t>(dtype)).str(tensor_f::name, name);
  t.str(tensor_f::raw_data, std::string(static_cast<const char*>(data), bytes));
  return t;
}

// A dim: an int for a fixed size, a string for a symbol.
struct Dim {
  int64_t value = -1;
  std::string param;
  Dim(int64_t v) : value(v) {}  // NOLINT
  Dim(const char* p) : param(p) {}  // NOLINT
};

Pb value_info(const std::string& name, DType dtype, const std::vector<Dim>* dims) {
  Pb tensor_type;
  tensor_type.varint(1, static_cast<int64_t>(dtype));  // elem_type
  if (dims) {
    Pb shape;
    for (const Dim& d : *dims) {
      Pb dim;
      if (d.param.empty()) dim.varint(1, d.value);  // dim_value
      else dim.str(2, d.param);                      // dim_param
      shape.msg(1, dim);
    }
    tensor_type.msg(2, shape);
  }
  return Pb().str(1, name).msg(2, Pb().msg(1, tensor_type));  // ValueInfoProto{name, type{tensor_type}}
}

Pb node(const std::string& op, const std::vector<std::string>& ins, const std::vector<std::string>& outs,
        const std::string& name) {
  Pb n;
  for (const auto& i : ins) n.str(node_f::input, i);
  for (const auto& o : outs) n.str(node_f::output, o);
  return n.str(node_f::name, name).str(node_f::op_type, op);
}

const float kBias[3] = {0.5f, -1.0f, 2.0f};

std::string test_model_bytes() {
  const float two = 2.0f;
  Pb constant = node("Constant", {}, {"two"}, "const0");
  constant.msg(node_f::attribute, Pb().str(attr_f::name, "value")
                                      .msg(attr_f::t, tensor_proto("two_value", DType::Float, {1}, &two, 4))
                                      .varint(attr_f::type, 4));  // AttributeProto.TENSOR
  std::vector<Dim> x_dims = {"N", 3}, s_dims = {2}, y_dims = {"N", 3};
  Pb graph;
  graph.msg(graph_f::node, node("Add", {"x", "bias"}, {"y"}, "add0"))
      .msg(graph_f::node, constant)
      .msg(graph_f::node, node("Mul", {"y", "two"}, {"y2"}, "mul0"))
      .msg(graph_f::node, node("Reshape", {"y2", "s"}, {"z"}, "reshape0"))
      .str(graph_f::name, "main")
      .msg(graph_f::initializer, tensor_proto("bias", DType::Float, {3}, kBias, sizeof kBias))
      .str(graph_f::doc_string, "graph doc")
      .msg(graph_f::input, value_info("x", DType::Float, &x_dims))
      .msg(graph_f::input, value_info("s", DType::Int64, &s_dims))
      .msg(graph_f::output, value_info("y", DType::Float, &y_dims))
      .msg(graph_f::output, value_info("z", DType::Float, nullptr));
  Pb model;
  model.varint(model_f::ir_version, 8)
      .str(model_f::producer_name, "cpp-tests")
      .str(model_f::producer_version, "1.2")
      .str(model_f::domain, "ai.lockstep.test")
      .varint(model_f::model_version, 7)
      .str(model_f::doc_string, "model doc")
      .msg(model_f::graph, graph)
      .msg(model_f::opset_import, Pb().str(1, "").varint(2, 17))
      .msg(model_f::opset_import, Pb().str(1, "com.microsoft").varint(2, 1))
      .msg(model_f::metadata_props, Pb().str(1, "author").str(2, "tests"))
      .msg(model_f::metadata_props, Pb().str(1, "license").str(2, "MIT"));
  return model.bytes;
}

// A model whose run uses the thread pool (a 96x64x64 MatMul, then per-row Softmax), for the concurrency tests:
//   y = Softmax(Sigmoid(MatMul(x, W) + b)), x: float [96,64], W: [64,64], b: [64].
std::string threaded_model_bytes() {
  std::vector<float> w(64 * 64), b(64);
  for (size_t i = 0; i < w.size(); ++i) w[i] = std::sin(0.37f * static_cast<float>(i));
  for (size_t i = 0; i < b.size(); ++i) b[i] = 0.01f * static_cast<float>(i);
  std::vector<Dim> x_dims = {96, 64}, y_dims = {96, 64};
  Pb graph;
  graph.msg(graph_f::node, node("MatMul", {"x", "W"}, {"h"}, "matmul0"))
      .msg(graph_f::node, node("Add", {"h", "b"}, {"h2"}, "add0"))
      .msg(graph_f::node, node("Sigmoid", {"h2"}, {"h3"}, "sigmoid0"))
      .msg(graph_f::node, node("Softmax", {"h3"}, {"y"}, "softmax0"))
      .str(graph_f::name, "threaded")
      .msg(graph_f::initializer, tensor_proto("W", DType::Float, {64, 64}, w.data(), w.size() * 4))
      .msg(graph_f::initializer, tensor_proto("b", DType::Float, {64}, b.data(), b.size() * 4))
      .msg(graph_f::input, value_info("x", DType::Float, &x_dims))
      .msg(graph_f::output, value_info("y", DType::Float, &y_dims));
  Pb model;
  model.varint(model_f::ir_version, 8).msg(model_f::graph, graph).msg(model_f::opset_import, Pb().str(1, "").varint(2, 17));
  return model.bytes;
}

Session make_session(const SessionOptions& options = {}) {
  static const std::string bytes = test_model_bytes();
  return Session(bytes.data(), bytes.size(), options);
}

Tensor floats(const std::vector<int64_t>& shape, const std::vector<float>& v) {
  return Tensor::from_bytes(DType::Float, shape, v.data());
}
Tensor int64s(const std::vector<int64_t>& shape, const std::vector<int64_t>& v) {
  return Tensor::from_bytes(DType::Int64, shape, v.data());
}

template <typename T>
std::vector<T> values_of(const Tensor& t) {
  std::vector<T> v(t.bytes() / sizeof(T));
  if (!v.empty()) std::memcpy(v.data(), t.raw(), t.bytes());
  return v;
}

const std::vector<float> kX = {1.0f, 2.0f, 3.0f, -4.0f, 0.25f, -0.75f};  // [2,3]

std::map<std::string, Tensor> good_feeds() { return {{"x", floats({2, 3}, kX)}, {"s", int64s({2}, {3, 2})}}; }

std::vector<float> expected_y() {
  std::vector<float> y(kX.size());
  for (size_t i = 0; i < y.size(); ++i) y[i] = kX[i] + kBias[i % 3];
  return y;
}

std::vector<float> expected_z() {
  std::vector<float> z = expected_y();
  for (float& v : z) v *= 2.0f;
  return z;
}

void expect_good_run(Session& s) {
  std::vector<Tensor> out = s.run(good_feeds());
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].dtype(), DType::Float);
  EXPECT_EQ(out[0].shape(), (lockstep::Shape{2, 3}));
  EXPECT_EQ(values_of<float>(out[0]), expected_y());
  EXPECT_EQ(out[1].dtype(), DType::Float);
  EXPECT_EQ(out[1].shape(), (lockstep::Shape{3, 2}));
  EXPECT_EQ(values_of<float>(out[1]), expected_z());
}

// Runs fn, which must throw lockstep::Error with `code` and a message containing every one of `parts`.
void expect_error(const std::function<void()>& fn, ErrorCode code, const std::vector<std::string>& parts) {
  try {
    fn();
  } catch (const Error& e) {
    EXPECT_EQ(static_cast<int>(e.code()), static_cast<int>(code)) << e.what();
    for (const auto& p : parts) EXPECT_NE(std::string(e.what()).find(p), std::string::npos) << e.what();
    return;
  } catch (const std::exception& e) {
    ADD_FAILURE() << "threw a non-lockstep exception: " << e.what();
    return;
  }
  ADD_FAILURE() << "did not throw";
}

}  // namespace

TEST(SessionTest, LoadsFromBytesAndRuns) {
  Session s = make_session();
  expect_good_run(s);
}

TEST(SessionTest, LoadsFromFile) {
  fs::path dir = fs::temp_directory_path() / ("lockstep_session_test_" + std::to_string(getpid()));
  fs::create_directories(dir);
  fs::path path = dir / "model.onnx";
  {
    std::string bytes = test_model_bytes();
    std::ofstream(path, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  }
  Session s(path.string());
  expect_good_run(s);
  EXPECT_EQ(s.metadata().producer_name, "cpp-tests");
  fs::remove_all(dir);
}

TEST(SessionTest, MissingFileIsNoSuchFile) {
  expect_error([] { Session s("/nonexistent/lockstep/nope.onnx"); }, ErrorCode::NoSuchFile, {"nope.onnx"});
}

TEST(SessionTest, GarbageBytesThrowLockstepError) {
  const std::string garbage = "definitely not a protobuf model \xff\xff\xff";
  EXPECT_THROW(Session(garbage.data(), garbage.size()), Error);
  std::string good = test_model_bytes();
  for (size_t cut : {size_t{1}, good.size() / 3, good.size() / 2, good.size() - 1})
    EXPECT_THROW(Session(good.data(), cut), Error) << "cut at " << cut;
}

TEST(SessionTest, InputsOutputsMetadata) {
  SessionOptions options;
  options.intra_op_num_threads = 2;
  options.graph_optimization_level = 0;
  Session s = make_session(options);

  const auto& in = s.inputs();
  ASSERT_EQ(in.size(), 2u);  // the initializer 'bias' is not an input
  EXPECT_EQ(in[0].name, "x");
  EXPECT_EQ(in[0].dtype, DType::Float);
  EXPECT_TRUE(in[0].has_shape);
  EXPECT_EQ(in[0].dims, (std::vector<int64_t>{-1, 3}));
  EXPECT_EQ(in[0].dim_params, (std::vector<std::string>{"N", ""}));
  EXPECT_EQ(in[1].name, "s");
  EXPECT_EQ(in[1].dtype, DType::Int64);
  EXPECT_EQ(in[1].dims, (std::vector<int64_t>{2}));

  const auto& out = s.outputs();
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].name, "y");
  EXPECT_EQ(out[0].dims, (std::vector<int64_t>{-1, 3}));
  EXPECT_EQ(out[0].dim_params, (std::vector<std::string>{"N", ""}));
  EXPECT_EQ(out[1].name, "z");
  EXPECT_EQ(out[1].dtype, DType::Float);
  EXPECT_FALSE(out[1].has_shape);
  EXPECT_TRUE(out[1].dims.empty());

  const auto& m = s.metadata();
  EXPECT_EQ(m.producer_name, "cpp-tests");
  EXPECT_EQ(m.graph_name, "main");
  EXPECT_EQ(m.domain, "ai.lockstep.test");
  EXPECT_EQ(m.description, "model doc");
  EXPECT_EQ(m.graph_description, "graph doc");
  EXPECT_EQ(m.version, 7);
  EXPECT_EQ(m.custom_metadata_map, (std::map<std::string, std::string>{{"author", "tests"}, {"license", "MIT"}}));
  using Opset = std::pair<std::string, int64_t>;
  EXPECT_EQ(m.opset_imports, (std::vector<Opset>{{"", 17}, {"com.microsoft", 1}}));

  EXPECT_EQ(s.options().intra_op_num_threads, 2);
  EXPECT_EQ(s.options().graph_optimization_level, 0);
  EXPECT_EQ(s.options().provider, lockstep::Device::CPU);
  EXPECT_TRUE(s.fallback_ops().empty());
}

TEST(SessionTest, NodeAssignmentsNameEachNodeAndItsProvider) {
  using Named = std::pair<std::string, std::string>;
  auto nodes = [](const Session& s) {
    std::vector<Named> out;
    for (const lockstep::NodeAssignment& a : s.node_assignments()) {
      EXPECT_EQ(a.provider, "CPUExecutionProvider");
      EXPECT_EQ(a.domain, "");
      out.push_back({a.name, a.op_type});
    }
    return out;
  };
  // Constant folding leaves the Constant out of the graph that runs.
  EXPECT_EQ(nodes(make_session()), (std::vector<Named>{{"add0", "Add"}, {"mul0", "Mul"}, {"reshape0", "Reshape"}}));
  SessionOptions unoptimized;
  unoptimized.graph_optimization_level = 0;
  std::vector<Named> all = nodes(make_session(unoptimized));
  std::sort(all.begin(), all.end());
  EXPECT_EQ(all, (std::vector<Named>{{"add0", "Add"}, {"const0", "Constant"}, {"mul0", "Mul"}, {"reshape0", "Reshape"}}));
}

TEST(SessionTest, SelectedOutputs) {
  Session s = make_session();
  std::vector<Tensor> z = s.run(good_feeds(), {"z"});
  ASSERT_EQ(z.size(), 1u);
  EXPECT_EQ(values_of<float>(z[0]), expected_z());
  std::vector<Tensor> zy = s.run(good_feeds(), {"z", "y"});
  ASSERT_EQ(zy.size(), 2u);
  EXPECT_EQ(values_of<float>(zy[0]), expected_z());
  EXPECT_EQ(values_of<float>(zy[1]), expected_y());
  expect_error([&] { s.run(good_feeds(), {"nope"}); }, ErrorCode::InvalidArgument, {"Invalid output name: nope"});
}

TEST(SessionTest, DynamicBatch) {
  Session s = make_session();
  std::vector<float> x(5 * 3);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i) - 7.0f;
  std::vector<Tensor> out = s.run({{"x", floats({5, 3}, x)}, {"s", int64s({2}, {-1, 5})}});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].shape(), (lockstep::Shape{5, 3}));
  EXPECT_EQ(out[1].shape(), (lockstep::Shape{3, 5}));
  std::vector<float> y = values_of<float>(out[0]), z = values_of<float>(out[1]);
  for (size_t i = 0; i < x.size(); ++i) {
    EXPECT_EQ(y[i], x[i] + kBias[i % 3]);
    EXPECT_EQ(z[i], (x[i] + kBias[i % 3]) * 2.0f);
  }
}

TEST(SessionTest, WrongInputNameIsInvalidArgument) {
  Session s = make_session();
  auto feeds = good_feeds();
  feeds["nope"] = floats({1}, {1.0f});
  expect_error([&] { s.run(feeds); }, ErrorCode::InvalidArgument, {"Invalid input name: nope"});
  expect_good_run(s);
}

TEST(SessionTest, MissingInputIsInvalidArgument) {
  Session s = make_session();
  expect_error([&] { s.run({{"x", floats({2, 3}, kX)}}); }, ErrorCode::InvalidArgument, {"missing", "s"});
  expect_error([&] { s.run({}); }, ErrorCode::InvalidArgument, {"missing", "x", "s"});
  expect_good_run(s);
}

TEST(SessionTest, WrongDtypeIsInvalidArgument) {
  Session s = make_session();
  std::vector<double> xd(kX.begin(), kX.end());
  auto feeds = good_feeds();
  feeds["x"] = Tensor::from_bytes(DType::Double, {2, 3}, xd.data());
  expect_error([&] { s.run(feeds); }, ErrorCode::InvalidArgument,
               {"input 'x'", "tensor(double)", "tensor(float)"});
  expect_good_run(s);
  feeds = good_feeds();
  std::vector<int32_t> s32 = {3, 2};
  feeds["s"] = Tensor::from_bytes(DType::Int32, {2}, s32.data());
  expect_error([&] { s.run(feeds); }, ErrorCode::InvalidArgument, {"input 's'", "tensor(int32)", "tensor(int64)"});
  expect_good_run(s);
}

TEST(SessionTest, UndefinedTensorFeedIsInvalidArgument) {
  Session s = make_session();
  auto feeds = good_feeds();
  feeds["x"] = Tensor();
  expect_error([&] { s.run(feeds); }, ErrorCode::InvalidArgument, {"x"});
  expect_good_run(s);
}

TEST(SessionTest, WrongRankIsInvalidArgument) {
  Session s = make_session();
  auto feeds = good_feeds();
  feeds["x"] = floats({2, 3, 1}, kX);
  expect_error([&] { s.run(feeds); }, ErrorCode::InvalidArgument, {"Invalid rank for input: x", "Got: 3", "Expected: 2"});
  expect_good_run(s);
  feeds = good_feeds();
  feeds["x"] = floats({6}, kX);
  expect_error([&] { s.run(feeds); }, ErrorCode::InvalidArgument, {"Invalid rank for input: x", "Got: 1"});
  expect_good_run(s);
}

TEST(SessionTest, WrongDimIsInvalidArgument) {
  Session s = make_session();
  auto feeds = good_feeds();
  feeds["x"] = floats({3, 2}, kX);
  expect_error([&] { s.run(feeds); }, ErrorCode::InvalidArgument,
               {"invalid dimensions for input: x", "index: 1", "Got: 2", "Expected: 3"});
  expect_good_run(s);
}

TEST(SessionTest, RuntimeFailureLeavesSessionUsable) {
  Session s = make_session();
  auto feeds = good_feeds();
  feeds["s"] = int64s({2}, {4, 4});  // 6 elements cannot become [4,4]
  EXPECT_THROW(s.run(feeds), Error);
  expect_good_run(s);
}

// Found by UBSan on the Python suite: Expand and Tile planned their copy (strides of the output shape) before the
// output's size was checked, so a shape from a feed whose size overflows 64 bits overflowed int64 there. Each must
// be refused with the size error, and the session run on afterwards.
TEST(SessionTest, ShapeFromAFeedThatOverflowsIsRefusedBeforePlanning) {
  for (const std::string op : {"Expand", "Tile"}) {
    std::vector<Dim> x_dims = {1, 1}, s_dims = {2};
    Pb graph;
    graph.msg(graph_f::node, node(op, {"x", "s"}, {"y"}, "grow"))
        .str(graph_f::name, "grow")
        .msg(graph_f::input, value_info("x", DType::Float, &x_dims))
        .msg(graph_f::input, value_info("s", DType::Int64, &s_dims))
        .msg(graph_f::output, value_info("y", DType::Float, nullptr));
    Pb model;
    model.varint(model_f::ir_version, 8).msg(model_f::graph, graph).msg(model_f::opset_import, Pb().str(1, "").varint(2, 17));
    Session session(model.bytes.data(), model.bytes.size());
    const Tensor x = floats({1, 1}, {2.5f});
    for (int64_t big : {int64_t{1} << 40, int64_t{1} << 62}) {
      try {
        session.run({{"x", x}, {"s", int64s({2}, {big, big})}});
        ADD_FAILURE() << op << " of " << big << " x " << big << " ran";
      } catch (const Error& e) {
        EXPECT_EQ(e.code(), ErrorCode::RuntimeError) << op << ": " << e.what();
        EXPECT_NE(std::string(e.what()).find("overflows 64 bits"), std::string::npos) << op << ": " << e.what();
        EXPECT_NE(std::string(e.what()).find("grow"), std::string::npos) << op << ": " << e.what();
      }
    }
    EXPECT_EQ(session.run({{"x", x}, {"s", int64s({2}, {2, 3})}})[0].shape(), (lockstep::Shape{2, 3})) << op;
  }
}

TEST(SessionTest, ThreadCountsGiveSameBytes) {
  std::vector<float> x(64 * 3);
  for (size_t i = 0; i < x.size(); ++i) x[i] = std::sin(static_cast<float>(i)) * 100.0f;
  std::map<std::string, Tensor> feeds = {{"x", floats({64, 3}, x)}, {"s", int64s({2}, {3, -1})}};
  SessionOptions one;
  one.intra_op_num_threads = 1;
  Session reference = make_session(one);
  std::vector<Tensor> want = reference.run(feeds);
  for (int threads : {2, 3, 8}) {
    SessionOptions options;
    options.intra_op_num_threads = threads;
    Session s = make_session(options);
    std::vector<Tensor> got = s.run(feeds);
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) {
      ASSERT_EQ(got[i].shape(), want[i].shape());
      EXPECT_EQ(std::memcmp(got[i].raw(), want[i].raw(), want[i].bytes()), 0) << "threads " << threads;
    }
  }
}

TEST(SessionTest, MovedSessionStillRuns) {
  Session a = make_session();
  Session b = std::move(a);
  expect_good_run(b);
  Session c = make_session();
  c = std::move(b);
  expect_good_run(c);
}

TEST(SessionTest, AvailableProvidersListsCpu) {
  std::vector<std::string> p = lockstep::available_providers();
  EXPECT_NE(std::find(p.begin(), p.end(), "CPUExecutionProvider"), p.end());
}

// ---- device-resident values (lockstep/device.h and run() with output devices) ----

namespace {

// inputs x: float [2,3]; initializer c: float [3] = kBias. a = Identity(x), b = Identity(c), r = Reshape(x, [3,2]):
// every output shares a buffer with a feed or a constant unless run() copies it.
std::string alias_model_bytes() {
  const int64_t shape[2] = {3, 2};
  std::vector<Dim> x_dims = {2, 3}, c_dims = {3}, r_dims = {3, 2};
  Pb graph;
  graph.msg(graph_f::node, node("Identity", {"x"}, {"a"}, "id_x"))
      .msg(graph_f::node, node("Identity", {"c"}, {"b"}, "id_c"))
      .msg(graph_f::node, node("Reshape", {"x", "shape"}, {"r"}, "reshape_x"))
      .str(graph_f::name, "aliases")
      .msg(graph_f::initializer, tensor_proto("c", DType::Float, {3}, kBias, sizeof kBias))
      .msg(graph_f::initializer, tensor_proto("shape", DType::Int64, {2}, shape, sizeof shape))
      .msg(graph_f::input, value_info("x", DType::Float, &x_dims))
      .msg(graph_f::output, value_info("a", DType::Float, &x_dims))
      .msg(graph_f::output, value_info("b", DType::Float, &c_dims))
      .msg(graph_f::output, value_info("r", DType::Float, &r_dims));
  Pb model;
  model.varint(model_f::ir_version, 8).msg(model_f::graph, graph).msg(model_f::opset_import, Pb().str(1, "").varint(2, 17));
  return model.bytes;
}

bool cuda_usable() {
  std::vector<std::string> p = lockstep::available_providers();
  return std::find(p.begin(), p.end(), "CUDAExecutionProvider") != p.end();
}

void expect_outputs_unshared(Session& s) {
  std::vector<float> x = kX;
  Tensor feed = Tensor::wrap(DType::Float, {2, 3}, x.data(), lockstep::Device::CPU, 0, nullptr);
  std::vector<Tensor> out = s.run({{"x", feed}}, {"a", "b", "r", "a"}, std::vector<lockstep::Device>(4));
  ASSERT_EQ(out.size(), 4u);
  std::set<const void*> addresses = {x.data()};
  for (const Tensor& t : out) EXPECT_TRUE(addresses.insert(t.raw()).second) << "an output shares memory";
  EXPECT_EQ(values_of<float>(out[0]), kX);
  EXPECT_EQ(values_of<float>(out[1]), std::vector<float>(kBias, kBias + 3));
  EXPECT_EQ(values_of<float>(out[2]), kX);
  EXPECT_EQ(out[2].shape(), (lockstep::Shape{3, 2}));
  EXPECT_EQ(values_of<float>(out[3]), kX);
  // Writing to the outputs changes neither the caller's feed nor the constant the next run returns.
  std::fill_n(out[0].data<float>(), 6, 9.0f);
  std::fill_n(out[1].data<float>(), 3, 9.0f);
  EXPECT_EQ(x, kX);
  std::vector<Tensor> again = s.run({{"x", feed}}, {"b"});
  EXPECT_EQ(values_of<float>(again[0]), std::vector<float>(kBias, kBias + 3));
}

}  // namespace

TEST(DeviceValuesTest, OutputDevicesOnTheHostMatchPlainRun) {
  Session s = make_session();
  std::vector<Tensor> want = s.run(good_feeds());
  std::vector<Tensor> got = s.run(good_feeds(), {}, {lockstep::Device::CPU, lockstep::Device::CPU});
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i].device(), lockstep::Device::CPU);
    EXPECT_EQ(values_of<float>(got[i]), values_of<float>(want[i]));
  }
}

TEST(DeviceValuesTest, OutputsNeverShareMemoryWithFeedsConstantsOrEachOther) {
  const std::string bytes = alias_model_bytes();
  for (int level : {0, 99}) {  // without and with constant folding (which makes b a constant of the plan)
    SessionOptions options;
    options.graph_optimization_level = level;
    Session s(bytes.data(), bytes.size(), options);
    expect_outputs_unshared(s);
  }
}

TEST(DeviceValuesTest, BadOutputDevicesNameTheOutput) {
  Session s = make_session();
  expect_error([&] { s.run(good_feeds(), {"z"}, {lockstep::Device::CUDA}); }, ErrorCode::InvalidArgument,
               {"output 'z'", "CUDA", "runs on the CPU"});
  expect_error([&] { s.run(good_feeds(), {"z", "y"}, {lockstep::Device::CPU}); }, ErrorCode::InvalidArgument,
               {"1 output devices for 2 outputs"});
  expect_good_run(s);
}

TEST(DeviceValuesTest, HostCopies) {
  Tensor a = floats({2, 3}, kX);
  Tensor b = lockstep::copy_to_host(a);
  EXPECT_NE(b.raw(), a.raw());
  EXPECT_EQ(values_of<float>(b), kX);
  Tensor c = Tensor::empty(DType::Float, {2, 3});
  lockstep::copy_into(a, c);
  EXPECT_EQ(values_of<float>(c), kX);
  expect_error([&] { lockstep::copy_into(a, Tensor::empty(DType::Float, {3, 2})); }, ErrorCode::InvalidArgument,
               {"tensor(float)[2,3]", "tensor(float)[3,2]"});
  expect_error([&] { lockstep::copy_into(a, Tensor::empty(DType::Int32, {2, 3})); }, ErrorCode::InvalidArgument,
               {"tensor(int32)[2,3]"});
  std::vector<float> x = kX;
  Tensor wrapped = lockstep::wrap_memory(DType::Float, {2, 3}, x.data(), lockstep::Device::CPU, 0, nullptr);
  EXPECT_EQ(wrapped.raw(), x.data());
  lockstep::synchronize_device(lockstep::Device::CPU, 0);
}

// Without a GPU (or without CUDA in the build) every CUDA entry point says so instead of touching memory.
TEST(DeviceValuesTest, CudaEntryPointsFailCleanlyWithoutAGpu) {
  if (cuda_usable()) GTEST_SKIP() << "a GPU is present: tests/test_api_values.py checks these on it";
  std::vector<float> x = kX;
  EXPECT_THROW(lockstep::cuda_empty(DType::Float, {2, 3}, 0), Error);
  EXPECT_THROW(lockstep::copy_to_cuda(floats({2, 3}, kX), 0), Error);
  EXPECT_THROW(lockstep::wrap_memory(DType::Float, {2, 3}, x.data(), lockstep::Device::CUDA, 0, nullptr), Error);
  EXPECT_THROW(lockstep::synchronize_device(lockstep::Device::CUDA, 0), Error);
  SessionOptions cuda;
  cuda.provider = lockstep::Device::CUDA;
  EXPECT_THROW(make_session(cuda), Error);
}

// ---- concurrency (run under ThreadSanitizer by scripts/sanitize.sh) ----

namespace {

Tensor threaded_input(int seed) {
  std::vector<float> x(96 * 64);
  for (size_t i = 0; i < x.size(); ++i) x[i] = std::cos(static_cast<float>(i * (seed + 1))) * 4.0f;
  return floats({96, 64}, x);
}

bool same_bytes(const Tensor& a, const Tensor& b) {
  return a.shape() == b.shape() && a.bytes() == b.bytes() && std::memcmp(a.raw(), b.raw(), a.bytes()) == 0;
}

}  // namespace

// onnxruntime's promise, kept: run() may be called from many threads on one session; each call returns the bytes of
// a serial run. 8 threads x 1000 runs, each thread with its own input, on one session with a 2-thread pool.
TEST(SessionConcurrency, ManyThreadsOnOneSessionGiveSerialBits) {
  constexpr int kThreads = 8, kRuns = 1000;
  static const std::string bytes = threaded_model_bytes();
  SessionOptions options;
  options.intra_op_num_threads = 2;
  Session session(bytes.data(), bytes.size(), options);
  std::vector<Tensor> inputs, want;
  for (int t = 0; t < kThreads; ++t) {
    inputs.push_back(threaded_input(t));
    want.push_back(session.run({{"x", inputs.back()}})[0]);
  }
  std::atomic<int> wrong{0}, failed{0}, done{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (int r = 0; r < kRuns; ++r) {
        try {
          if (!same_bytes(session.run({{"x", inputs[t]}})[0], want[t])) ++wrong;
          ++done;
        } catch (const std::exception&) {
          ++failed;
        }
      }
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(done.load(), kThreads * kRuns);
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(failed.load(), 0);
}

// Sessions created, run and destroyed on 8 threads at once give the bytes of one made alone.
TEST(SessionConcurrency, SessionsCreatedAndDestroyedConcurrently) {
  constexpr int kThreads = 8, kRounds = 10;
  static const std::string bytes = threaded_model_bytes();
  const Tensor x = threaded_input(3);
  const Tensor want = Session(bytes.data(), bytes.size()).run({{"x", x}})[0];
  std::atomic<int> wrong{0}, failed{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (int r = 0; r < kRounds; ++r) {
        try {
          SessionOptions options;
          options.intra_op_num_threads = 1 + (t + r) % 3;
          Session session(bytes.data(), bytes.size(), options);
          if (!same_bytes(session.run({{"x", x}})[0], want)) ++wrong;
        } catch (const std::exception&) {
          ++failed;
        }
      }
    });
  for (auto& th : threads) th.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(failed.load(), 0);
}

// RunOptions::terminate set from another thread while 4 threads run on one session: every run either returns the
// serial bytes or throws Fail with onnxruntime's message (none hangs), runs started afterwards without the flag
// are unaffected. Under ThreadSanitizer this is the flag's data-race check.
TEST(SessionConcurrency, TerminateFromAnotherThreadStopsRunsInFlight) {
  constexpr int kThreads = 4;
  static const std::string bytes = threaded_model_bytes();
  Session session(bytes.data(), bytes.size());
  const Tensor x = threaded_input(1);
  const Tensor want = session.run({{"x", x}})[0];
  lockstep::RunOptions stop;
  std::atomic<int> wrong{0}, other_errors{0}, stopped{0}, started{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&] {
      ++started;
      while (true) {
        try {
          if (!same_bytes(session.run({{"x", x}}, {}, {lockstep::Device::CPU}, &stop)[0], want)) ++wrong;
        } catch (const Error& e) {
          if (e.code() == ErrorCode::Fail && std::string(e.what()).find("terminate flag") != std::string::npos)
            ++stopped;
          else
            ++other_errors;
          return;
        }
      }
    });
  while (started.load() < kThreads) std::this_thread::yield();
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  stop.terminate = true;
  for (auto& th : threads) th.join();
  EXPECT_EQ(stopped.load(), kThreads);
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(other_errors.load(), 0);
  EXPECT_TRUE(same_bytes(session.run({{"x", x}})[0], want));
}

// Sequences through the C++ API: seq(tensor(float)) input s, float input t;
//   o = SequenceInsert(s, t) (a sequence output), n = SequenceLength(o) (int64).
TEST(SessionTest, SequencesInAndOut) {
  Pb seq_type = Pb().msg(4, Pb().msg(1, Pb().msg(1, Pb().varint(1, static_cast<int64_t>(DType::Float)))));
  Pb graph;
  graph.msg(graph_f::node, node("SequenceInsert", {"s", "t"}, {"o"}, "insert"))
      .msg(graph_f::node, node("SequenceLength", {"o"}, {"n"}, "length"))
      .str(graph_f::name, "sequences")
      .msg(graph_f::input, Pb().str(1, "s").msg(2, seq_type))
      .msg(graph_f::input, value_info("t", DType::Float, nullptr))
      .msg(graph_f::output, Pb().str(1, "o").msg(2, seq_type))
      .msg(graph_f::output, value_info("n", DType::Int64, nullptr));
  Pb model;
  model.varint(model_f::ir_version, 8).msg(model_f::graph, graph).msg(model_f::opset_import, Pb().str(1, "").varint(2, 17));
  Session s(model.bytes.data(), model.bytes.size());
  ASSERT_TRUE(s.inputs()[0].sequence);
  EXPECT_EQ(s.inputs()[0].dtype, DType::Float);
  EXPECT_FALSE(s.inputs()[1].sequence);
  Tensor a = floats({2}, {1, 2}), b = floats({3}, {3, 4, 5});
  std::vector<Tensor> out = s.run({{"s", Tensor::sequence(DType::Float, {a})}, {"t", b}});
  ASSERT_TRUE(out[0].is_sequence());
  ASSERT_EQ(out[0].items().size(), 2u);
  EXPECT_EQ(values_of<float>(out[0].items()[0]), (std::vector<float>{1, 2}));
  EXPECT_EQ(values_of<float>(out[0].items()[1]), (std::vector<float>{3, 4, 5}));
  EXPECT_NE(out[0].items()[1].raw(), b.raw());  // outputs never share memory with a feed
  EXPECT_EQ(values_of<int64_t>(out[1]), (std::vector<int64_t>{2}));
  // A tensor where the sequence belongs, and a sequence of the wrong element type, are refused naming the input.
  expect_error([&] { s.run({{"s", a}, {"t", b}}); }, ErrorCode::InvalidArgument, {"input 's'", "seq(tensor(float))"});
  expect_error([&] { s.run({{"s", Tensor::sequence(DType::Int64, {})}, {"t", b}}); }, ErrorCode::InvalidArgument,
               {"Actual: (seq(tensor(int64)))"});
  expect_error([&] { Tensor::sequence(DType::Float, {int64s({1}, {7})}); }, ErrorCode::InvalidArgument,
               {"cannot hold a int64 tensor"});
}

// Maps, as a converted scikit-learn pipeline has them (ai.onnx.ml only):
//   m: map(int64, tensor(float)) -> DictVectorizer(int64_vocabulary [3, 1]) -> v [1, 2]
//   -> ZipMap(classlabels_int64s [9, 4]) -> z: seq(map(int64, tensor(float))), each map's keys ascending.
TEST(SessionTest, MapsInAndOut) {
  const auto code = [](DType t) { return static_cast<int64_t>(t); };
  Pb map_type = Pb().msg(5, Pb().varint(1, code(DType::Int64)).msg(2, Pb().msg(1, Pb().varint(1, code(DType::Float)))));
  Pb seq_of_maps = Pb().msg(4, Pb().msg(1, map_type));
  const auto ints = [](const std::string& name, const std::vector<int64_t>& values) {
    Pb a;
    a.str(attr_f::name, name);
    for (int64_t v : values) a.varint(8, v);  // AttributeProto.ints
    return a.varint(attr_f::type, 7);          // INTS
  };
  Pb vectorizer = node("DictVectorizer", {"m"}, {"v"}, "dv");
  vectorizer.str(7, "ai.onnx.ml").msg(node_f::attribute, ints("int64_vocabulary", {3, 1}));
  Pb zipmap = node("ZipMap", {"v"}, {"z"}, "zm");
  zipmap.str(7, "ai.onnx.ml").msg(node_f::attribute, ints("classlabels_int64s", {9, 4}));
  Pb graph;
  graph.msg(graph_f::node, vectorizer).msg(graph_f::node, zipmap).str(graph_f::name, "maps")
      .msg(graph_f::input, Pb().str(1, "m").msg(2, map_type))
      .msg(graph_f::output, Pb().str(1, "z").msg(2, seq_of_maps));
  Pb model;
  model.varint(model_f::ir_version, 8).msg(model_f::graph, graph)
      .msg(model_f::opset_import, Pb().str(1, "ai.onnx.ml").varint(2, 1));
  Session s(model.bytes.data(), model.bytes.size());
  EXPECT_EQ(s.inputs()[0].map_key, DType::Int64);
  EXPECT_EQ(s.inputs()[0].dtype, DType::Float);
  EXPECT_FALSE(s.inputs()[0].sequence);
  EXPECT_TRUE(s.outputs()[0].sequence);
  EXPECT_EQ(s.outputs()[0].map_key, DType::Int64);
  Tensor m = Tensor::map(int64s({3}, {1, 2, 3}), floats({3}, {0.5f, 7, 2}));
  std::vector<Tensor> out = s.run({{"m", m}});
  ASSERT_TRUE(out[0].is_sequence());
  EXPECT_EQ(out[0].map_key(), DType::Int64);
  ASSERT_EQ(out[0].items().size(), 1u);
  const Tensor& z = out[0].items()[0];
  ASSERT_TRUE(z.is_map());
  EXPECT_EQ(values_of<int64_t>(z.map_keys()), (std::vector<int64_t>{4, 9}));
  EXPECT_EQ(values_of<float>(z.map_values()), (std::vector<float>{0.5f, 2}));  // v = [m[3], m[1]] = [2, 0.5]
  EXPECT_TRUE(z.clone().is_map());
  // A tensor, or a map of other key type, where the map belongs; keys out of order; a map in a tensor sequence.
  expect_error([&] { s.run({{"m", floats({1}, {1})}}); }, ErrorCode::InvalidArgument,
               {"input 'm'", "expected: (map(int64,tensor(float)))"});
  Tensor key = Tensor::strings({1});
  key.data<std::string>()[0] = "a";
  expect_error([&] { s.run({{"m", Tensor::map(key, floats({1}, {1}))}}); }, ErrorCode::InvalidArgument,
               {"Actual: (map(string,tensor(float)))"});
  expect_error([&] { Tensor::map(int64s({2}, {2, 1}), floats({2}, {0, 0})); }, ErrorCode::InvalidArgument,
               {"ascending order, each once"});
  expect_error([&] { Tensor::sequence(DType::Float, {floats({1}, {1}), m}); }, ErrorCode::InvalidArgument,
               {"cannot hold a map(int64, float)"});
}
