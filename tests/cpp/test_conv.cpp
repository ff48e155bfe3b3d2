// The CPU kernels of the conv and gemm families against direct scalar evaluations of the contract
// (dot_chunked_f32, docs/arithmetic.md#conv, #gemm, #convtranspose), byte for byte, on every ISA this host has.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "arith/dot.h"
#include "arith/reduce.h"
#include "cpu/isa.h"
#include "ops/conv.h"
#include "ops/gemm.h"
#include "ops/registry.h"
#include "runtime/thread_pool.h"

#include "kernel_harness.h"

#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

using namespace lockstep;
using namespace lockstep::test;

TEST(GemmCore, MatchesDotChunkedByteForByte) {
  ThreadPool pool(3);
  const int64_t sizes[][3] = {{1, 1, 1},   {7, 13, 63},  {9, 33, 64}, {17, 31, 65}, {6, 16, 128},
                              {25, 47, 130}, {3, 100, 300}, {50, 5, 77}, {13, 9, 0},   {1, 70, 1000},
                              {50, 5, 1100}};  // transposed, its tiles kept over k-blocks of every ISA
  for (auto isa : isas())
    for (auto& s : sizes) {
      const int64_t M = s[0], N = s[1], K = s[2];
      auto a = random_floats(M * K, 1), b = random_floats(K * N, 2), init = random_floats(M, 3);
      if (M * K > 3) a[3] = -0.0f;
      ForceIsa force(isa);
      for (bool trans : {false, true})
        for (bool with_init : {false, true}) {
          std::vector<float> c(M * N, 123.0f), ref(M * N);
          // A(m,k) row-major (or transposed storage), B(k,n) row-major.
          int64_t a_rs = trans ? 1 : K, a_cs = trans ? M : 1;
          std::vector<float> at(a);
          if (trans)
            for (int64_t m = 0; m < M; ++m)
              for (int64_t k = 0; k < K; ++k) at[k * M + m] = a[m * K + k];
          for (int64_t m = 0; m < M; ++m)
            for (int64_t n = 0; n < N; ++n)
              ref[m * N + n] = arith::dot_chunked_f32(
                  K, with_init ? init[m] : 0.0f, [&](int64_t k) { return a[m * K + k]; },
                  [&](int64_t k) { return b[k * N + n]; });
          cpu::GemmOut out{c.data(), N, 1, with_init ? init.data() : nullptr};
          cpu::gemm_f32_strided(&pool, M, N, K, at.data(), a_rs, a_cs, b.data(), N, 1, out);
          int64_t bad = -1;
          EXPECT_TRUE(same_bits(c.data(), ref.data(), M * N, &bad))
              << "isa " << int(isa) << " M=" << M << " N=" << N << " K=" << K << " trans=" << trans
              << " first bad " << bad;
        }
    }
}

TEST(GemmCore, SignedZeroAndSpecials) {
  // All-zero products with a -0 init: chunked sums give (-0) + (+0) = +0; a NaN or inf term propagates.
  for (auto isa : isas()) {
    ForceIsa force(isa);
    const int64_t M = 3, N = 5, K = 70;
    std::vector<float> a(M * K, 0.0f), b(K * N, -0.0f), init = {-0.0f, -0.0f, -0.0f};
    a[1 * K + 65] = std::numeric_limits<float>::infinity();
    b[2] = std::numeric_limits<float>::quiet_NaN();
    std::vector<float> c(M * N), ref(M * N);
    for (int64_t m = 0; m < M; ++m)
      for (int64_t n = 0; n < N; ++n)
        ref[m * N + n] = arith::dot_chunked_f32(K, init[m], [&](int64_t k) { return a[m * K + k]; },
                                                [&](int64_t k) { return b[k * N + n]; });
    cpu::gemm_f32_strided(nullptr, M, N, K, a.data(), K, 1, b.data(), N, 1, cpu::GemmOut{c.data(), N, 1, init.data()});
    EXPECT_TRUE(same_bits(c.data(), ref.data(), M * N));
  }
}

namespace {

struct ConvCase {
  Shape x, w;
  std::vector<onnx::Attribute> attrs;
  bool bias;
};

void expect_matches_contract(const ConvCase& cc, const std::vector<float>& x, const std::vector<float>& w,
                             const std::vector<float>& bias, const std::string& label) {
  Tensor xt = tensor_of(x, cc.x), wt = tensor_of(w, cc.w), bt = tensor_of(bias, {cc.w[0]});
  std::vector<const Tensor*> ins = {&xt, &wt};
  if (cc.bias) ins.push_back(&bt);
  Tensor first;
  for (auto isa : isas())
    for (int threads : {1, 3, 4}) {
      ForceIsa force(isa);
      Tensor y = run_cpu("Conv", cc.attrs, ins, threads);
      if (!first.defined()) {
        // Geometry from the op definition, reference from the contract.
        onnx::Node node;
        node.op_type = "Conv";
        for (auto& a : cc.attrs) node.attributes[a.name] = a;
        KernelContext ctx{node, *find_op("Conv", 17)};
        ctx.inputs = ins;
        ConvGeom g = conv_geometry(ctx);
        ASSERT_EQ(g.out_shape, y.shape()) << label;
        auto ref = conv_reference(g, x, w, cc.bias ? bias.data() : nullptr);
        int64_t bad = -1;
        EXPECT_TRUE(same_bits(y.data<float>(), ref.data(), y.numel(), &bad)) << label << " bad " << bad;
        first = y;
      } else {
        EXPECT_TRUE(same_bits(y.data<float>(), first.data<float>(), y.numel()))
            << label << " isa " << int(isa) << " threads " << threads;
      }
    }
}

}  // namespace

TEST(ConvCpu, MatchesDirectContractByteForByte) {
  std::vector<ConvCase> cases = {
      {{1, 3, 9, 11}, {5, 3, 3, 3}, {ints_attr("pads", {1, 1, 1, 1})}, true},
      {{2, 4, 10, 7}, {6, 2, 3, 2}, {int_attr("group", 2), ints_attr("strides", {2, 1}), ints_attr("dilations", {1, 2})}, false},
      {{1, 8, 7, 7}, {8, 1, 3, 3}, {int_attr("group", 8), ints_attr("pads", {1, 1, 1, 1})}, true},  // depthwise
      // Depthwise on rows of at most half the lanes (tiles half as wide): 5x5 stride 2, 3 wide with a partial block.
      {{1, 20, 9, 9}, {20, 1, 5, 5}, {int_attr("group", 20), ints_attr("strides", {2, 2}), ints_attr("pads", {2, 2, 2, 2})}, true},
      {{1, 17, 3, 3}, {17, 1, 3, 3}, {int_attr("group", 17), ints_attr("pads", {1, 1, 1, 1})}, false},
      {{3, 17, 5, 6}, {9, 17, 1, 1}, {}, true},                                                    // pointwise
      {{2, 70, 12, 13}, {20, 70, 1, 1}, {}, true},  // pointwise, K >= 64: B packed, two chunks, a partial panel
      // 16 pixels, 40 channels: lanes on channels, taps read from framed planes (dilation, stride, uneven pads)
      {{1, 20, 9, 8}, {40, 20, 3, 2}, {ints_attr("dilations", {2, 1}), ints_attr("strides", {2, 2}),
                                         ints_attr("pads", {2, 0, 1, 1})}, true},
      {{1, 70, 6, 6}, {3, 70, 3, 3}, {ints_attr("pads", {0, 2, 1, 0}), ints_attr("strides", {2, 2})}, true},
      {{2, 3, 23}, {4, 3, 5}, {ints_attr("pads", {2, 3}), ints_attr("dilations", {2})}, true},     // 1-D
      {{1, 2, 5, 6, 7}, {3, 2, 3, 2, 3}, {ints_attr("pads", {1, 0, 1, 1, 1, 0})}, true},           // 3-D
      {{1, 3, 8, 9}, {4, 3, 3, 4}, {string_attr("auto_pad", "SAME_UPPER")}, true},
      {{1, 5, 9, 10}, {7, 5, 3, 3}, {ints_attr("strides", {2, 3}), string_attr("auto_pad", "SAME_LOWER")}, false},
      {{1, 200, 5, 5}, {33, 200, 3, 3}, {ints_attr("pads", {1, 1, 1, 1})}, true},  // K = 1800
      // The gathering's edges: runs that cross output rows, borders on both sides, rows entirely in the padding.
      {{1, 3, 13, 37}, {5, 3, 3, 3}, {ints_attr("strides", {2, 2}), ints_attr("pads", {1, 1, 1, 1})}, true},
      {{1, 2, 6, 5}, {3, 2, 3, 3}, {ints_attr("pads", {3, 2, 4, 3})}, true},      // pads larger than the kernel
      {{1, 3, 11, 9}, {4, 3, 5, 3}, {ints_attr("pads", {0, 3, 2, 1}), ints_attr("dilations", {2, 2})}, false},
      {{1, 4, 3, 3}, {6, 4, 3, 3}, {ints_attr("pads", {1, 1, 1, 1})}, true},      // rows narrower than a vector
      {{1, 4, 40, 3}, {5, 4, 2, 2}, {ints_attr("strides", {3, 2}), ints_attr("pads", {1, 0, 0, 1})}, true},
      {{2, 33, 9, 11}, {12, 33, 1, 1}, {ints_attr("strides", {2, 2})}, true},    // 1x1 stride 2, odd widths
      {{2, 6, 15, 15}, {8, 3, 7, 7}, {int_attr("group", 2), ints_attr("strides", {2, 2}), ints_attr("pads", {3, 3, 3, 3})}, true},
      {{1, 3, 1, 70}, {9, 3, 1, 5}, {ints_attr("pads", {0, 4, 0, 1}), ints_attr("strides", {1, 3})}, true},
      {{1, 100, 4, 36}, {40, 100, 1, 3}, {ints_attr("pads", {0, 1, 0, 1})}, false},  // 36 pixels: two panels
      // Few pixels, many channels: the lanes run along output channels (the transposed product), with the bias
      // per lane, channel tails, K over several chunks, groups, 1x1 planes (squeeze-excitation).
      {{1, 96, 1, 1}, {40, 96, 1, 1}, {}, true},
      {{2, 150, 1, 1}, {37, 150, 1, 1}, {}, false},
      {{1, 70, 7, 7}, {64, 70, 3, 3}, {ints_attr("pads", {1, 1, 1, 1})}, true},
      {{1, 130, 7, 7}, {40, 130, 3, 3}, {ints_attr("pads", {1, 1, 1, 1})}, true},  // K = 1170: kept tiles, k-blocks
      {{1, 150, 7, 7}, {96, 150, 1, 1}, {}, true},
      {{1, 24, 5, 9}, {96, 24, 1, 1}, {}, true},
      {{1, 16, 14, 14}, {96, 16, 3, 3}, {ints_attr("strides", {2, 2}), ints_attr("pads", {1, 1, 1, 1})}, true},
      {{2, 8, 7, 7}, {64, 4, 3, 3}, {int_attr("group", 2), ints_attr("pads", {1, 1, 1, 1})}, true},
      {{1, 9, 5, 3}, {70, 9, 2, 2}, {ints_attr("pads", {1, 0, 0, 1})}, false},
      // Patches (kernel = stride, no padding before): lanes on channels whatever the pixel count, the last patch
      // row and column cut by the input's edge or padded after.
      {{1, 3, 64, 48}, {50, 3, 4, 4}, {ints_attr("strides", {4, 4})}, true},
      {{1, 8, 98, 83}, {33, 8, 8, 8}, {ints_attr("strides", {8, 8})}, true},
      {{2, 6, 30, 30}, {20, 6, 4, 4}, {ints_attr("strides", {4, 4}), ints_attr("pads", {0, 0, 2, 2})}, false},
      // Planes of many pixels: the taps read in place from phase planes (the grid), with grid columns past the
      // output width dropped, a partial last B panel, row tails of A, strides, dilations, uneven pads, K over
      // several chunks and k-blocks, groups, and 1x1 stride-2 convs whose grid is the output itself.
      {{1, 5, 20, 23}, {7, 5, 3, 3}, {ints_attr("pads", {1, 1, 1, 1})}, true},
      {{1, 9, 31, 29}, {17, 9, 3, 3}, {ints_attr("strides", {2, 2}), ints_attr("pads", {1, 1, 1, 1})}, true},
      {{1, 3, 40, 38}, {10, 3, 7, 7}, {ints_attr("strides", {2, 2}), ints_attr("pads", {3, 3, 3, 3})}, true},
      {{1, 4, 25, 19}, {9, 4, 3, 3}, {ints_attr("dilations", {2, 2}), ints_attr("pads", {2, 1, 0, 3})}, false},
      {{1, 6, 21, 26}, {5, 6, 5, 4}, {ints_attr("strides", {3, 2}), ints_attr("pads", {2, 0, 1, 3})}, true},
      {{1, 70, 30, 22}, {12, 70, 1, 1}, {ints_attr("strides", {2, 2})}, true},
      {{2, 8, 17, 17}, {12, 4, 3, 3}, {int_attr("group", 2), ints_attr("pads", {1, 1, 1, 1})}, true},
      {{1, 300, 9, 9}, {70, 300, 3, 3}, {ints_attr("pads", {1, 1, 1, 1})}, true},  // K = 2700: several k-blocks
      // Few B panels: each thread takes one run of A panels over all of them (3 runs of 8 panels, the last partial).
      {{1, 40, 10, 10}, {60, 40, 3, 3}, {ints_attr("pads", {1, 1, 1, 1})}, true},
      {{2, 6, 300}, {5, 6, 7}, {ints_attr("pads", {3, 2}), ints_attr("strides", {2})}, true},     // 1-D
      {{1, 2, 64, 64}, {33, 2, 3, 3}, {ints_attr("pads", {1, 1, 1, 1})}, false},  // full panels only (pitch 66)
      // Runs too short for one a thread (AVX-512: 5 A panels, the last partial, and 9 B panels, the last partial):
      // threads share a run, each taking a range of its B panels (3 threads: 1 run in 3 ranges; 4: 2 runs in 2).
      {{1, 16, 20, 19}, {36, 16, 3, 3}, {ints_attr("pads", {1, 1, 1, 1})}, true},
  };
  for (size_t ci = 0; ci < cases.size(); ++ci) {
    const ConvCase& cc = cases[ci];
    auto x = random_floats(shape_numel(cc.x), 10 + ci), w = random_floats(shape_numel(cc.w), 20 + ci);
    expect_matches_contract(cc, x, w, random_floats(cc.w[0], 30 + ci), "case " + std::to_string(ci));
  }
}

TEST(ConvCpu, SpecialValuesByteForByte) {
  // NaN, infinities and -0 in X; an infinite weight that meets padding taps (so those outputs are NaN); a -0
  // bias with all-zero products, whose chunked sum is (-0) + (+0) = +0.
  const ConvCase cc = {{1, 3, 6, 7}, {4, 3, 3, 3}, {ints_attr("pads", {1, 2, 1, 1}), ints_attr("strides", {2, 1})}, true};
  auto x = random_floats(shape_numel(cc.x), 90), w = random_floats(shape_numel(cc.w), 91);
  const float inf = std::numeric_limits<float>::infinity();
  x[5] = std::numeric_limits<float>::quiet_NaN();
  x[20] = inf;
  x[50] = -inf;
  for (int i = 60; i < 126; ++i) x[i] = -0.0f;
  w[0] = inf;
  std::fill(w.begin() + 27 * 3, w.end(), -0.0f);
  expect_matches_contract(cc, x, w, {0.5f, -1.0f, 2.0f, -0.0f}, "special values");
}

TEST(ConvCpu, SpecialValuesOnTheGridByteForByte) {
  // As above on a plane of several B panels and a partial last one: NaN, infinities and -0 in X, an infinite
  // weight on padding taps, -0 weights and bias.
  const ConvCase cc = {{1, 3, 19, 21}, {9, 3, 3, 3}, {ints_attr("pads", {1, 1, 1, 1})}, true};
  auto x = random_floats(shape_numel(cc.x), 92), w = random_floats(shape_numel(cc.w), 93);
  const float inf = std::numeric_limits<float>::infinity();
  x[0] = std::numeric_limits<float>::quiet_NaN();
  x[200] = inf;
  x[420] = -inf;
  x[cc.x[2] * cc.x[3] - 1] = std::numeric_limits<float>::quiet_NaN();
  for (int i = 500; i < 700; ++i) x[i] = -0.0f;
  w[0] = inf;
  std::fill(w.begin() + 27 * 7, w.end(), -0.0f);
  std::vector<float> bias = random_floats(9, 94);
  bias[8] = -0.0f;
  expect_matches_contract(cc, x, w, bias, "special values on the grid");
}

TEST(ConvCpu, WeightsPackedOnceAndRepackedPerIsa) {
  Shape xs = {1, 20, 9, 8}, ws = {11, 20, 3, 3};
  auto x = random_floats(shape_numel(xs), 95), w = random_floats(shape_numel(ws), 96), b = random_floats(11, 97);
  Tensor xt = tensor_of(x, xs), wt = tensor_of(w, ws), bt = tensor_of(b, {11});
  std::vector<onnx::Attribute> attrs = {ints_attr("pads", {1, 1, 1, 1})};
  Tensor plain = run_cpu("Conv", attrs, {&xt, &wt, &bt}, 2);
  NodeState state;
  // The same node over runs, the ISA changing in between (the packing differs per ISA).
  for (auto isa : {cpu::cpu_best_isa(), cpu::cpu_best_isa(), cpu::CpuIsa::Scalar, cpu::cpu_best_isa()}) {
    ForceIsa force(isa);
    Tensor y = run_cpu("Conv", attrs, {&xt, &wt, &bt}, 2, 17, &state);
    EXPECT_TRUE(same_bits(y.data<float>(), plain.data<float>(), y.numel())) << "isa " << int(isa);
  }
}

TEST(ConvCpu, KeptWeightsFollowTheOrientation) {
  // One node whose input size changes between runs: 16x16 pixels run the plain product, 7x7 the transposed one
  // (lanes along the 64 output channels); the kept packing must follow, and the bits match a fresh node's.
  Shape ws = {64, 20, 3, 3};
  auto w = random_floats(shape_numel(ws), 98), b = random_floats(64, 99);
  Tensor wt = tensor_of(w, ws), bt = tensor_of(b, {64});
  std::vector<onnx::Attribute> attrs = {ints_attr("pads", {1, 1, 1, 1})};
  NodeState state;
  int run = 0;
  for (Shape xs : {Shape{1, 20, 16, 16}, Shape{1, 20, 7, 7}, Shape{1, 20, 16, 16}, Shape{1, 20, 7, 7}}) {
    auto x = random_floats(shape_numel(xs), 100 + run++);
    Tensor xt = tensor_of(x, xs);
    Tensor plain = run_cpu("Conv", attrs, {&xt, &wt, &bt}, 2);
    Tensor kept = run_cpu("Conv", attrs, {&xt, &wt, &bt}, 2, 17, &state);
    ASSERT_EQ(kept.shape(), plain.shape());
    EXPECT_TRUE(same_bits(kept.data<float>(), plain.data<float>(), kept.numel())) << "run " << run;
  }
}

// Gemm and MatMul keep a constant B packed in the node's state: the same bits as packing it every run, on every
// ISA, over runs that change the ISA and the batch (M).
TEST(GemmCpu, KeptPackedWeightsAcrossIsaChanges) {
  struct Case {
    const char* op;
    Shape a, b;
    std::vector<onnx::Attribute> attrs;
  };
  const std::vector<Case> cases = {
      {"Gemm", {3, 70}, {45, 70}, {int_attr("transB", 1)}},
      {"Gemm", {1, 1280}, {1280, 100}, {}},
      {"Gemm", {9, 33}, {33, 7}, {}},  // narrow: runs transposed, nothing kept
      {"MatMul", {2, 17, 99}, {99, 40}, {}},
      {"MatMul", {128, 64}, {64, 96}, {}},
  };
  for (const Case& c : cases) {
    auto bv = random_floats(shape_numel(c.b), 51);
    Tensor bt = tensor_of(bv, c.b);
    NodeState state;
    int run = 0;
    for (auto isa : {cpu::cpu_best_isa(), cpu::CpuIsa::Scalar, cpu::cpu_best_isa(), cpu::cpu_best_isa()}) {
      Shape as = c.a;
      as[0] += run % 2;  // another batch on alternate runs
      auto av = random_floats(shape_numel(as), 60 + run++);
      Tensor at = tensor_of(av, as);
      ForceIsa force(isa);
      Tensor plain = run_cpu(c.op, c.attrs, {&at, &bt}, 2);
      Tensor kept = run_cpu(c.op, c.attrs, {&at, &bt}, 2, 17, &state);
      ASSERT_EQ(kept.shape(), plain.shape());
      EXPECT_TRUE(same_bits(kept.data<float>(), plain.data<float>(), kept.numel()))
          << c.op << " run " << run << " isa " << int(isa);
    }
  }
}

TEST(ConvCpu, BatchInvariance) {
  Shape xs = {4, 6, 9, 9}, ws = {5, 6, 3, 3};
  auto x = random_floats(shape_numel(xs), 41), w = random_floats(shape_numel(ws), 42), b = random_floats(5, 43);
  Tensor xt = tensor_of(x, xs), wt = tensor_of(w, ws), bt = tensor_of(b, {5});
  std::vector<onnx::Attribute> attrs = {ints_attr("pads", {1, 1, 1, 1})};
  Tensor all = run_cpu("Conv", attrs, {&xt, &wt, &bt}, 2);
  const int64_t per = 6 * 81, out_per = 5 * 81;
  for (int64_t n = 0; n < 4; ++n) {
    std::vector<float> xn(x.begin() + n * per, x.begin() + (n + 1) * per);
    Tensor xnt = tensor_of(xn, {1, 6, 9, 9});
    Tensor one = run_cpu("Conv", attrs, {&xnt, &wt, &bt}, 2);
    EXPECT_TRUE(same_bits(one.data<float>(), all.data<float>() + n * out_per, out_per)) << "image " << n;
  }
}

TEST(ConvCpu, SeedConvAccuracy) {
  // The seed (DESIGN.md 1): 1x256x14x14 ones, W = 0.1 (256x256x3x3), bias 0.05, pads 1.
  Shape xs = {1, 256, 14, 14}, ws = {256, 256, 3, 3};
  std::vector<float> x(shape_numel(xs), 1.0f), w(shape_numel(ws), 0.1f), b(256, 0.05f);
  Tensor xt = tensor_of(x, xs), wt = tensor_of(w, ws), bt = tensor_of(b, {256});
  Tensor y = run_cpu("Conv", {ints_attr("pads", {1, 1, 1, 1})}, {&xt, &wt, &bt}, 2);
  double max_err = 0;
  const double w64 = static_cast<double>(0.1f);
  for (int64_t oc = 0; oc < 256; ++oc)
    for (int64_t i = 0; i < 14; ++i)
      for (int64_t j = 0; j < 14; ++j) {
        int64_t rows = 3 - (i == 0) - (i == 13), cols = 3 - (j == 0) - (j == 13);
        double exact = static_cast<double>(0.05f) + 256.0 * rows * cols * w64;
        max_err = std::max(max_err, std::abs(exact - y.data<float>()[(oc * 14 + i) * 14 + j]));
      }
  std::printf("seed conv: max abs error vs float64 = %.3g\n", max_err);
  EXPECT_LE(max_err, 3.3e-4);
}

TEST(ConvTransposeCpu, MatchesFloat64Scatter) {
  struct Case {
    Shape x, w;
    std::vector<onnx::Attribute> attrs;
  };
  std::vector<Case> cases = {
      {{1, 3, 4, 5}, {3, 2, 3, 3}, {ints_attr("strides", {2, 2})}},
      {{2, 4, 3, 3}, {4, 3, 3, 2}, {int_attr("group", 2), ints_attr("strides", {3, 2}), ints_attr("pads", {1, 0, 2, 1}),
                                    ints_attr("dilations", {2, 1}), ints_attr("output_padding", {1, 0})}},
      {{1, 2, 7}, {2, 3, 4}, {ints_attr("strides", {2}), ints_attr("dilations", {2})}},
      {{1, 80, 3, 3}, {80, 2, 3, 3}, {ints_attr("strides", {1, 1}), ints_attr("pads", {1, 1, 1, 1})}},
      {{1, 2, 3, 3, 3}, {2, 2, 2, 2, 2}, {ints_attr("strides", {2, 2, 2})}},
  };
  for (size_t ci = 0; ci < cases.size(); ++ci) {
    auto& cc = cases[ci];
    auto x = random_floats(shape_numel(cc.x), 50 + ci), w = random_floats(shape_numel(cc.w), 60 + ci);
    int64_t group = 1;
    for (auto& a : cc.attrs)
      if (a.name == "group") group = a.i;
    int64_t c_out = cc.w[1] * group;
    auto b = random_floats(c_out, 70 + ci);
    Tensor xt = tensor_of(x, cc.x), wt = tensor_of(w, cc.w), bt = tensor_of(b, {c_out});
    Tensor y1 = run_cpu("ConvTranspose", cc.attrs, {&xt, &wt, &bt}, 1);
    Tensor y3 = run_cpu("ConvTranspose", cc.attrs, {&xt, &wt, &bt}, 3);
    EXPECT_TRUE(same_bits(y1.data<float>(), y3.data<float>(), y1.numel()));
    // float64 scatter reference.
    onnx::Node node;
    node.op_type = "ConvTranspose";
    for (auto& a : cc.attrs) node.attributes[a.name] = a;
    KernelContext ctx{node, *find_op("ConvTranspose", 17)};
    std::vector<const Tensor*> ins = {&xt, &wt, &bt};
    ctx.inputs = ins;
    Shape os;
    arith::ConvDims g = conv_transpose_geometry(ctx, &os);
    ASSERT_EQ(os, y1.shape());
    std::vector<double> ref(y1.numel());
    int64_t OP = g.out[0] * g.out[1] * g.out[2], IP = g.in[0] * g.in[1] * g.in[2], KT = g.kernel[0] * g.kernel[1] * g.kernel[2];
    for (int64_t n = 0; n < g.batch; ++n)
      for (int64_t oc = 0; oc < g.c_out; ++oc)
        for (int64_t p = 0; p < OP; ++p) ref[(n * g.c_out + oc) * OP + p] = b[oc];
    for (int64_t n = 0; n < g.batch; ++n)
      for (int64_t ic = 0; ic < g.c_in; ++ic)
        for (int64_t ip = 0; ip < IP; ++ip)
          for (int64_t m = 0; m < g.cout_g; ++m)
            for (int64_t kt = 0; kt < KT; ++kt) {
              int64_t i[3] = {ip / (g.in[1] * g.in[2]), (ip / g.in[2]) % g.in[1], ip % g.in[2]};
              int64_t r[3] = {kt / (g.kernel[1] * g.kernel[2]), (kt / g.kernel[2]) % g.kernel[1], kt % g.kernel[2]};
              int64_t o[3];
              bool ok = true;
              for (int d = 0; d < 3; ++d) {
                o[d] = i[d] * g.stride[d] + r[d] * g.dilation[d] - g.pad[d];
                ok = ok && o[d] >= 0 && o[d] < g.out[d];
              }
              if (!ok) continue;
              int64_t oc = (ic / g.cin_g) * g.cout_g + m;
              ref[(n * g.c_out + oc) * OP + (o[0] * g.out[1] + o[1]) * g.out[2] + o[2]] +=
                  double(x[(n * g.c_in + ic) * IP + ip]) * double(w[(ic * g.cout_g + m) * KT + kt]);
            }
    double max_err = 0;
    for (int64_t i = 0; i < y1.numel(); ++i) max_err = std::max(max_err, std::abs(ref[i] - y1.data<float>()[i]));
    EXPECT_LT(max_err, 1e-5) << "case " << ci;
  }
}

TEST(GemmCpu, GemmAndMatMulKernels) {
  const int64_t M = 13, K = 70, N = 37;
  auto a = random_floats(K * M, 80), b = random_floats(N * K, 81), c = random_floats(N, 82);
  Tensor at = tensor_of(a, {K, M}), bt = tensor_of(b, {N, K}), ct = tensor_of(c, {N});
  const float alpha = 0.7f, beta = -1.3f;
  Tensor y = run_cpu("Gemm", {int_attr("transA", 1), int_attr("transB", 1), float_attr("alpha", alpha),
                              float_attr("beta", beta)}, {&at, &bt, &ct}, 3);
  ASSERT_EQ(y.shape(), (Shape{M, N}));
  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = 0; n < N; ++n) {
      float t = arith::dot_chunked_f32(K, 0.0f, [&](int64_t k) { return a[k * M + m]; },
                                       [&](int64_t k) { return b[n * K + k]; });
      float ref = arith::gemm_epilogue_f32(t, alpha, true, c[n], beta);
      ASSERT_EQ(std::memcmp(&ref, &y.data<float>()[m * N + n], 4), 0) << m << "," << n;
    }
  // MatMul with broadcast batch dims: (2,1,M,K) x (3,K,N) -> (2,3,M,N).
  auto a2 = random_floats(2 * M * K, 83), b2 = random_floats(3 * K * N, 84);
  Tensor a2t = tensor_of(a2, {2, 1, M, K}), b2t = tensor_of(b2, {3, K, N});
  Tensor y2 = run_cpu("MatMul", {}, {&a2t, &b2t}, 2);
  ASSERT_EQ(y2.shape(), (Shape{2, 3, M, N}));
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t j = 0; j < 3; ++j)
      for (int64_t m = 0; m < M; ++m)
        for (int64_t n = 0; n < N; ++n) {
          float ref = arith::dot_chunked_f32(K, 0.0f, [&](int64_t k) { return a2[(i * M + m) * K + k]; },
                                             [&](int64_t k) { return b2[(j * K + k) * N + n]; });
          ASSERT_EQ(std::memcmp(&ref, &y2.data<float>()[((i * 3 + j) * M + m) * N + n], 4), 0);
        }
  // 1-D x 1-D -> scalar.
  Tensor v1 = tensor_of(std::vector<float>(a.begin(), a.begin() + K), {K});
  Tensor v2 = tensor_of(std::vector<float>(b.begin(), b.begin() + K), {K});
  Tensor s = run_cpu("MatMul", {}, {&v1, &v2}, 1);
  ASSERT_EQ(s.rank(), 0);
  float ref = arith::dot_chunked_f32(K, 0.0f, [&](int64_t k) { return a[k]; }, [&](int64_t k) { return b[k]; });
  EXPECT_EQ(std::memcmp(&ref, s.data<float>(), 4), 0);
}
