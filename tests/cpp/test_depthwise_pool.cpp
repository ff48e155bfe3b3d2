// The CPU depthwise Conv and pool kernels (src/cpu/conv/depthwise*, src/cpu/pool/*) against direct scalar
// evaluations of the contract, byte for byte (NaN equals NaN), on every ISA this host has and at 1 and 3
// threads: dot_chunked_f32 per output for Conv, arith::maxpool_window / avgpool_window_f32 per output for pools.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "arith/reduce_ops.h"
#include "cpu/conv/depthwise.h"
#include "ops/conv.h"
#include "ops/pool.h"
#include "ops/registry.h"

#include "kernel_harness.h"

using namespace lockstep;
using namespace lockstep::test;

namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

/// Sprinkles NaN, +-inf and -0 over v (every `every`-th element, offset by `phase`).
void add_specials(std::vector<float>& v, size_t every, size_t phase) {
  const float specials[] = {kNaN, kInf, -kInf, -0.0f};
  for (size_t i = phase, s = 0; i < v.size(); i += every, ++s) v[i] = specials[s % 4];
}

ConvGeom conv_geom_of(const std::vector<onnx::Attribute>& attrs, const std::vector<const Tensor*>& ins) {
  onnx::Node node;
  node.op_type = "Conv";
  for (auto& a : attrs) node.attributes[a.name] = a;
  KernelContext ctx{node, *find_op("Conv", 17)};
  ctx.inputs = ins;
  return conv_geometry(ctx);
}

struct DepthwiseCase {
  Shape x;
  int64_t multiplier, kh, kw;
  std::vector<onnx::Attribute> attrs;
  bool bias = true, specials = false;
};

std::string describe(const Shape& s) {
  std::string out;
  for (int64_t d : s) out += std::to_string(d) + "x";
  return out;
}

void check_depthwise(const DepthwiseCase& dc, uint32_t seed) {
  const int64_t c = dc.x[1], c_out = c * dc.multiplier;
  Shape ws = dc.x.size() == 3 ? Shape{c_out, 1, dc.kw} : Shape{c_out, 1, dc.kh, dc.kw};
  auto x = random_floats(shape_numel(dc.x), seed), w = random_floats(shape_numel(ws), seed + 1);
  auto bias = random_floats(c_out, seed + 2);
  if (dc.specials) {
    add_specials(x, 29, 3);
    add_specials(w, 17, 5);
    add_specials(bias, 7, 1);
  }
  std::vector<onnx::Attribute> attrs = dc.attrs;
  attrs.push_back(int_attr("group", c));
  Tensor xt = tensor_of(x, dc.x), wt = tensor_of(w, ws), bt = tensor_of(bias, {c_out});
  std::vector<const Tensor*> ins = {&xt, &wt};
  if (dc.bias) ins.push_back(&bt);
  const ConvGeom g = conv_geom_of(attrs, ins);
  ASSERT_TRUE(cpu::is_depthwise(g)) << describe(dc.x);
  const auto ref = conv_reference(g, x, w, dc.bias ? bias.data() : nullptr);
  for (auto isa : isas())
    for (int threads : {1, 3}) {
      ForceIsa force(isa);
      Tensor y = run_cpu("Conv", attrs, ins, threads);
      ASSERT_EQ(y.shape(), g.out_shape);
      int64_t bad = -1;
      EXPECT_TRUE(same_bits(y.data<float>(), ref.data(), y.numel(), &bad))
          << "x " << describe(dc.x) << " k " << dc.kh << "x" << dc.kw << " isa " << cpu::cpu_isa_name(isa)
          << " threads " << threads << " first bad " << bad;
    }
}

}  // namespace

TEST(DepthwiseCpu, EveryWidthAndKernel) {
  uint32_t seed = 100;
  for (int64_t width = 1; width <= 37; ++width)
    for (int64_t k : {3, 5})
      check_depthwise({{1, 3, 5, width}, 1, k, k, {ints_attr("pads", {k / 2, k / 2, k / 2, k / 2})}}, seed++);
}

// Stride 2 on both axes: channel blocks (AVX2 and AVX-512) with one channel per input channel; with a channel
// multiplier, narrow outputs (up to 16 wide) read a framed plane, each tap's inputs taken from two loads
// (depthwise_stride2_plane), wider ones phase planes: every width on both sides of that line, both kernel sizes.
TEST(DepthwiseCpu, EveryWidthAtStrideTwo) {
  uint32_t seed = 200;
  for (int64_t width = 1; width <= 70; ++width)
    for (int64_t k : {3, 5})
      check_depthwise({{1, 2, 7, width}, width % 3 == 0 ? 2 : 1, k, k,
                       {ints_attr("strides", {2, 2}), ints_attr("pads", {k / 2, k / 2 - 1 + width % 2, k / 2, k / 2})}},
                      seed++);
}

TEST(DepthwiseCpu, StridesDilationsPadsBatches) {
  const std::vector<DepthwiseCase> cases = {
      {{1, 5, 11, 17}, 1, 3, 3, {ints_attr("strides", {2, 2}), ints_attr("pads", {1, 1, 1, 1})}},
      {{2, 7, 12, 33}, 1, 3, 3, {ints_attr("strides", {2, 2}), ints_attr("pads", {0, 0, 1, 1})}},
      {{1, 3, 13, 29}, 1, 5, 5, {ints_attr("strides", {3, 3}), ints_attr("pads", {2, 1, 0, 2})}},
      {{1, 4, 10, 23}, 1, 3, 3, {ints_attr("dilations", {2, 2}), ints_attr("pads", {2, 2, 2, 2})}},
      {{1, 3, 9, 31}, 1, 3, 5, {ints_attr("strides", {1, 2}), ints_attr("dilations", {2, 3}), ints_attr("pads", {1, 3, 2, 0})}},
      {{1, 2, 15, 19}, 1, 7, 7, {ints_attr("pads", {3, 3, 3, 3})}},
      {{1, 3, 12, 21}, 1, 9, 9, {ints_attr("pads", {4, 4, 4, 4})}, true},   // 81 taps: two chunks
      {{1, 2, 20, 20}, 1, 9, 9, {ints_attr("strides", {2, 2}), ints_attr("pads", {1, 4, 3, 0})}, false},
      {{2, 9, 8, 8}, 1, 3, 3, {}},                                                  // no padding
      {{1, 4, 7, 9}, 2, 3, 3, {ints_attr("pads", {1, 1, 1, 1})}},                   // channel multiplier 2
      {{2, 3, 6, 13}, 3, 5, 3, {ints_attr("strides", {2, 1}), ints_attr("pads", {2, 1, 2, 1})}, false},
      {{1, 6, 3, 2}, 1, 3, 3, {ints_attr("pads", {2, 2, 2, 2})}},                   // output wider than input
      {{2, 5, 40}, 1, 1, 7, {ints_attr("pads", {3, 2}), ints_attr("strides", {2})}},  // 1-D
      {{1, 96, 14, 14}, 1, 3, 3, {ints_attr("pads", {1, 1, 1, 1})}},
      // Channel blocks (AVX2, AVX-512): blocks of 8 (16) channels and a partial last one, rows wider than a tile with
      // tails, asymmetric pads, an input row no tap reads, stride 2 with 5x5; at 3 threads, these and the 57-row
      // plane below are also cut into bands of output rows.
      {{2, 19, 21, 27}, 1, 3, 3, {ints_attr("pads", {0, 2, 2, 1})}},
      {{1, 13, 18, 35}, 1, 5, 5, {ints_attr("strides", {2, 2}), ints_attr("pads", {2, 1, 1, 2})}},
      {{1, 16, 9, 40}, 1, 5, 5, {ints_attr("pads", {2, 2, 2, 2})}, true, true},
      {{1, 24, 12, 12}, 1, 3, 3, {ints_attr("strides", {2, 2})}},
      {{1, 40, 10, 33}, 1, 3, 3, {ints_attr("pads", {1, 1, 1, 1})}},  // AVX-512: two blocks of 16 and one of 8
      // The phase-plane grid: pitches well above the output width, several vectors per row or rows per vector,
      // taps of one kernel in different stride phases, a 1-row plane, kernels that touch one phase only.
      {{1, 5, 7, 7}, 1, 5, 5, {ints_attr("pads", {2, 2, 2, 2})}},
      {{1, 3, 14, 14}, 1, 5, 5, {ints_attr("strides", {2, 2}), ints_attr("pads", {2, 2, 2, 2})}},
      {{1, 2, 9, 30}, 1, 3, 3, {ints_attr("strides", {2, 3}), ints_attr("dilations", {3, 2}), ints_attr("pads", {3, 1, 2, 4})}},
      {{1, 2, 1, 17}, 1, 1, 3, {ints_attr("pads", {0, 1, 0, 1})}},
      {{1, 3, 6, 8}, 8, 3, 3, {ints_attr("pads", {1, 1, 1, 1})}},                   // channel multiplier 8
      {{1, 4, 23, 23}, 1, 3, 3, {ints_attr("strides", {2, 2}), ints_attr("pads", {1, 1, 1, 1})}},
      {{1, 3, 9, 10}, 1, 1, 1, {ints_attr("strides", {2, 2})}},
      {{1, 2, 13, 13}, 1, 3, 3, {ints_attr("strides", {2, 2}), ints_attr("dilations", {2, 2}), ints_attr("pads", {2, 2, 2, 2})}},
      {{1, 3, 57, 113}, 1, 3, 3, {ints_attr("strides", {2, 2}), ints_attr("pads", {0, 1, 1, 0})}},
      {{3, 2, 4, 3}, 1, 3, 2, {ints_attr("strides", {1, 2}), ints_attr("pads", {2, 0, 1, 3})}},
  };
  uint32_t seed = 300;
  for (const auto& dc : cases) check_depthwise(dc, seed += 3);
}

TEST(DepthwiseCpu, SpecialValues) {
  // NaN, inf and -0 in inputs, weights and biases; an inf weight on a padding tap gives NaN (fma(+0, inf, p)).
  const std::vector<DepthwiseCase> cases = {
      {{1, 6, 9, 21}, 1, 3, 3, {ints_attr("pads", {1, 1, 1, 1})}, true, true},
      {{2, 5, 11, 18}, 2, 5, 5, {ints_attr("strides", {2, 2}), ints_attr("pads", {2, 2, 2, 2})}, true, true},
      {{1, 4, 12, 17}, 1, 9, 9, {ints_attr("pads", {4, 4, 4, 4})}, false, true},
  };
  uint32_t seed = 500;
  for (const auto& dc : cases) check_depthwise(dc, seed += 3);
}

TEST(DepthwiseCpu, NegativeZeroSums) {
  // All-zero products: each chunk's partial is +0 or -0 and the total adds it to the bias; bits must follow.
  for (auto isa : isas()) {
    ForceIsa force(isa);
    std::vector<float> x(2 * 5 * 7, -0.0f), w(2 * 9, 0.0f), bias = {-0.0f, 0.0f};
    w[4] = -0.0f;
    Tensor xt = tensor_of(x, {1, 2, 5, 7}), wt = tensor_of(w, {2, 1, 3, 3}), bt = tensor_of(bias, {2});
    std::vector<onnx::Attribute> attrs = {int_attr("group", 2), ints_attr("pads", {1, 1, 1, 1})};
    std::vector<const Tensor*> ins = {&xt, &wt, &bt};
    Tensor y = run_cpu("Conv", attrs, ins, 1);
    const auto ref = conv_reference(conv_geom_of(attrs, ins), x, w, bias.data());
    EXPECT_TRUE(same_bits(y.data<float>(), ref.data(), y.numel())) << cpu::cpu_isa_name(isa);
  }
}

namespace {

struct PoolCase {
  Shape x;
  std::vector<onnx::Attribute> attrs;
  bool specials = false;
  float fill = 0.0f;  // with constant = true: every input is `fill`
  bool constant = false;
};

/// Pool of x on every ISA and at 1 and 3 threads against the per-output window function of the contract.
void check_pool(const char* op, const PoolCase& pc, uint32_t seed) {
  const bool is_max = std::string(op) == "MaxPool";
  auto x = random_floats(shape_numel(pc.x), seed);
  if (pc.constant) x.assign(x.size(), pc.fill);
  if (pc.specials) add_specials(x, 5, 2);
  Tensor xt = tensor_of(x, pc.x);
  onnx::Node node;
  node.op_type = op;
  for (auto& a : pc.attrs) node.attributes[a.name] = a;
  KernelContext ctx{node, *find_op(op, 19)};
  ctx.opset = 19;
  ctx.inputs = {&xt};
  Shape out_shape;
  const arith::PoolGeom g = plan_pool(ctx, is_max, out_shape);
  std::vector<float> ref(static_cast<size_t>(g.planes * g.out_plane));
  for (int64_t o = 0; o < static_cast<int64_t>(ref.size()); ++o) {
    const float* plane = x.data() + o / g.out_plane * g.in_plane;
    ref[o] = is_max ? arith::maxpool_window(g, plane, o % g.out_plane, -kInf, nullptr)
                    : arith::avgpool_window_f32(g, plane, o % g.out_plane);
  }
  for (auto isa : isas())
    for (int threads : {1, 3}) {
      ForceIsa force(isa);
      Tensor y = run_cpu(op, pc.attrs, {&xt}, threads, 19);
      ASSERT_EQ(y.shape(), out_shape);
      int64_t bad = -1;
      EXPECT_TRUE(same_bits(y.data<float>(), ref.data(), y.numel(), &bad))
          << op << " x " << describe(pc.x) << " isa " << cpu::cpu_isa_name(isa) << " threads " << threads
          << " first bad " << bad;
    }
}

std::vector<PoolCase> pool_cases() {
  std::vector<PoolCase> cases;
  for (int64_t width = 1; width <= 37; ++width) {
    cases.push_back({{1, 2, 5, width}, {ints_attr("kernel_shape", {3, 3}), ints_attr("pads", {1, 1, 1, 1})}});
    cases.push_back({{1, 2, 6, width + 2}, {ints_attr("kernel_shape", {3, 3}), ints_attr("strides", {2, 2}),
                                            ints_attr("pads", {1, 1, 1, 1})}});
  }
  const std::vector<PoolCase> shapes = {
      {{2, 3, 12, 19}, {ints_attr("kernel_shape", {2, 2}), ints_attr("strides", {2, 2})}},
      {{1, 3, 13, 29}, {ints_attr("kernel_shape", {5, 5}), ints_attr("strides", {3, 3}), ints_attr("pads", {2, 1, 0, 2})}},
      {{1, 2, 14, 33}, {ints_attr("kernel_shape", {3, 3}), ints_attr("dilations", {2, 2}), ints_attr("pads", {2, 2, 2, 2})}},
      {{1, 2, 11, 30}, {ints_attr("kernel_shape", {3, 4}), ints_attr("strides", {2, 3}), ints_attr("pads", {1, 2, 1, 2}),
                        int_attr("ceil_mode", 1)}},
      {{1, 2, 10, 23}, {ints_attr("kernel_shape", {3, 3}), ints_attr("strides", {3, 3}), ints_attr("pads", {1, 1, 1, 1}),
                        int_attr("ceil_mode", 1)}},
      {{1, 2, 12, 40}, {ints_attr("kernel_shape", {9, 8}), ints_attr("pads", {2, 2, 2, 2})}},  // 72 taps: > 32 lanes
      {{1, 2, 9, 20}, {ints_attr("kernel_shape", {7, 7}), ints_attr("pads", {3, 3, 3, 3})}},
      {{2, 3, 1, 41}, {ints_attr("kernel_shape", {1, 5}), ints_attr("strides", {1, 2}), ints_attr("pads", {0, 2, 0, 1})}},
      {{2, 3, 41}, {ints_attr("kernel_shape", {4}), ints_attr("strides", {3}), int_attr("ceil_mode", 1)}},  // 1-D
      {{1, 3, 11, 26}, {ints_attr("kernel_shape", {3, 3}), ints_attr("pads", {1, 1, 1, 1})}, true},
      {{1, 3, 12, 27}, {ints_attr("kernel_shape", {3, 3}), ints_attr("strides", {2, 2}), ints_attr("pads", {1, 1, 1, 1})}, true},
      {{1, 2, 12, 40}, {ints_attr("kernel_shape", {9, 8}), ints_attr("pads", {2, 2, 2, 2})}, true},
      // 3x3 stride 2 with padding 1 before (read straight from the plane on AVX-512): ceil mode, no padding after,
      // ResNet's width with special values.
      {{1, 2, 9, 35}, {ints_attr("kernel_shape", {3, 3}), ints_attr("strides", {2, 2}), ints_attr("pads", {1, 1, 1, 1}),
                       int_attr("ceil_mode", 1)}, true},
      {{1, 2, 7, 70}, {ints_attr("kernel_shape", {3, 3}), ints_attr("strides", {2, 2}), ints_attr("pads", {1, 1, 0, 0})}},
      {{1, 2, 8, 112}, {ints_attr("kernel_shape", {3, 3}), ints_attr("strides", {2, 2}), ints_attr("pads", {1, 1, 1, 1})},
       true},
  };
  cases.insert(cases.end(), shapes.begin(), shapes.end());
  return cases;
}

}  // namespace

TEST(PoolCpu, MaxPoolMatchesWindowRule) {
  uint32_t seed = 700;
  for (const auto& pc : pool_cases()) check_pool("MaxPool", pc, seed++);
}

TEST(PoolCpu, AveragePoolMatchesCanonicalSum) {
  uint32_t seed = 900;
  for (int cip : {0, 1})
    for (auto pc : pool_cases()) {
      pc.attrs.push_back(int_attr("count_include_pad", cip));
      check_pool("AveragePool", pc, seed++);
    }
}

TEST(PoolCpu, NegativeZeroAndEmptyWindows) {
  // -0 terms: each lane is +0 + (-0) = +0. Windows wholly in the padding (pads larger than the kernel reach):
  // MaxPool gives -inf, AveragePool without count_include_pad 0/0 = NaN.
  PoolCase zeros{{1, 2, 3, 5}, {ints_attr("kernel_shape", {2, 2}), ints_attr("pads", {1, 1, 1, 1})}, false, -0.0f, true};
  for (const char* op : {"MaxPool", "AveragePool"}) check_pool(op, zeros, 1100);
  PoolCase empty{{1, 1, 4, 4}, {ints_attr("kernel_shape", {2, 2}), ints_attr("strides", {3, 3}),
                                ints_attr("pads", {2, 2, 2, 2})}};
  for (const char* op : {"MaxPool", "AveragePool"}) check_pool(op, empty, 1101);
}
