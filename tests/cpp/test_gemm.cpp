// The CPU GEMM core (src/cpu/gemm.cpp) against dot_chunked_f32 evaluated per output, byte for byte (NaN equals
// NaN), on every ISA this host has, inline and on a 3-thread pool: odd sizes, tails of every panel and chunk, K
// long enough for several k-blocks (run inside or outside the groups of B panels), the transposed (narrow N) path,
// an init row, a B packed ahead, A read in place by columns, one-row products (the row kernels) with each kind
// of init, and every fused epilogue.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "arith/reduce.h"
#include "cpu/isa.h"
#include "ops/gemm.h"
#include "runtime/thread_pool.h"

using namespace lockstep;

namespace {

struct Problem {
  int64_t M, N, K;
};

std::vector<float> random_values(size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (auto& x : v) x = u(rng);
  return v;
}

std::vector<float> reference(const Problem& p, const std::vector<float>& a, const std::vector<float>& b,
                             const float* init_row) {
  std::vector<float> c(p.M * p.N);
  for (int64_t m = 0; m < p.M; ++m)
    for (int64_t n = 0; n < p.N; ++n)
      c[m * p.N + n] = arith::dot_chunked_f32(
          p.K, init_row ? init_row[m] : 0.0f, [&](int64_t k) { return a[m * p.K + k]; },
          [&](int64_t k) { return b[k * p.N + n]; });
  return c;
}

bool same_bytes(const std::vector<float>& x, const std::vector<float>& y) {
  return x.size() == y.size() && std::memcmp(x.data(), y.data(), x.size() * sizeof(float)) == 0;
}

const Problem kProblems[] = {{1, 1, 1},     {7, 5, 3},     {8, 32, 64},   {9, 33, 65},   {17, 70, 200},
                             {130, 47, 130}, {3, 300, 129}, {100, 2, 77}, {64, 96, 1100}, {250, 260, 700},
                             {5, 40, 0},    {1, 200, 130}, {1, 3, 5},    {13, 37, 2300}, {9, 48, 65},
                             {16, 49, 192}, {8, 193, 64}, {17, 64, 130},
                             {100, 200, 3000}};  // packed A over 1 MB, B packed ahead: k-blocks outside the groups

}  // namespace

TEST(GemmCore, MatchesDotChunkedOnEveryIsaAndThreadCount) {
  ThreadPool pool(3);
  for (const Problem& p : kProblems) {
    const auto a = random_values(p.M * p.K, 1), b = random_values(p.K * p.N, 2), init = random_values(p.M, 3);
    const auto want = reference(p, a, b, nullptr), want_init = reference(p, a, b, init.data());
    for (int isa = 0; isa <= static_cast<int>(cpu::cpu_best_isa()); ++isa) {
      cpu::force_cpu_isa(static_cast<cpu::CpuIsa>(isa));
      for (ThreadPool* threads : {static_cast<ThreadPool*>(nullptr), &pool}) {
        const std::string where = std::to_string(p.M) + "x" + std::to_string(p.N) + "x" + std::to_string(p.K) +
                                  " isa " + cpu::cpu_isa_name(static_cast<cpu::CpuIsa>(isa)) +
                                  (threads ? " 3 threads" : " inline");
        std::vector<float> c(p.M * p.N, 12345.0f);
        cpu::gemm_f32_strided(threads, p.M, p.N, p.K, a.data(), p.K, 1, b.data(), p.N, 1, {c.data(), p.N, 1});
        EXPECT_TRUE(same_bytes(c, want)) << where;
        const cpu::PanelFn a_panels = cpu::strided_panels({a.data(), p.K, 1}, p.K);
        const cpu::PanelFn b_panels = cpu::strided_panels({b.data(), 1, p.N}, p.K);
        std::fill(c.begin(), c.end(), 12345.0f);
        cpu::gemm_f32(threads, p.M, p.N, p.K, a_panels, b_panels, {c.data(), p.N, 1, init.data()});
        EXPECT_TRUE(same_bytes(c, want_init)) << where << " init row";
        std::fill(c.begin(), c.end(), 12345.0f);
        cpu::gemm_f32_packed_b(threads, p.M, a_panels, cpu::pack_b(threads, p.N, p.K, b_panels), {c.data(), p.N, 1});
        EXPECT_TRUE(same_bytes(c, want)) << where << " B packed ahead";
      }
    }
    cpu::reset_cpu_isa();
  }
}

// A read in place by its columns (element (m, k) at a[m + k * lda]: a transposed Conv's input planes, pixels along
// m), with B packed ahead: row-major C, and C written transposed from per-column inits as Conv writes its output
// (kept tiles on small M, whole-K tiles on large M), on every ISA, inline and on 3 threads.
TEST(GemmCore, AReadByColumnsMatchesDotChunked) {
  ThreadPool pool(3);
  for (const Problem& p : kProblems) {
    const int64_t lda = p.M + 3;  // columns apart by more than M: nothing assumes they abut
    const auto a_cols = random_values(lda * p.K, 7), b = random_values(p.K * p.N, 8), cols = random_values(p.N, 9);
    std::vector<float> a(p.M * p.K);  // the same A row-major, for the reference
    for (int64_t m = 0; m < p.M; ++m)
      for (int64_t k = 0; k < p.K; ++k) a[m * p.K + k] = a_cols[m + k * lda];
    const auto want = reference(p, a, b, nullptr);
    std::vector<float> want_t(p.M * p.N);  // C transposed (n-major), from cols[n]
    for (int64_t m = 0; m < p.M; ++m)
      for (int64_t n = 0; n < p.N; ++n)
        want_t[n * p.M + m] = arith::dot_chunked_f32(p.K, cols[n], [&](int64_t k) { return a[m * p.K + k]; },
                                                     [&](int64_t k) { return b[k * p.N + n]; });
    for (int isa = 0; isa <= static_cast<int>(cpu::cpu_best_isa()); ++isa) {
      cpu::force_cpu_isa(static_cast<cpu::CpuIsa>(isa));
      const cpu::PackedB packed = cpu::pack_b(nullptr, p.N, p.K, cpu::strided_panels({b.data(), 1, p.N}, p.K));
      for (ThreadPool* threads : {static_cast<ThreadPool*>(nullptr), &pool}) {
        const std::string where = std::to_string(p.M) + "x" + std::to_string(p.N) + "x" + std::to_string(p.K) +
                                  " isa " + cpu::cpu_isa_name(static_cast<cpu::CpuIsa>(isa)) +
                                  (threads ? " 3 threads" : " inline");
        std::vector<float> c(p.M * p.N, 12345.0f);
        cpu::gemm_f32_a_columns_packed_b(threads, p.M, a_cols.data(), lda, packed, {c.data(), p.N, 1});
        EXPECT_TRUE(same_bytes(c, want)) << where;
        std::fill(c.begin(), c.end(), 12345.0f);
        cpu::gemm_f32_a_columns_packed_b(threads, p.M, a_cols.data(), lda, packed,
                                         {c.data(), 1, p.M, nullptr, cols.data()});
        EXPECT_TRUE(same_bytes(c, want_t)) << where << " C transposed";
      }
    }
    cpu::reset_cpu_isa();
  }
}

// One row of A times a packed B runs on the row kernels (kRowPanels panels a call, the partial last panel in a
// tile): every panel count, tails, several chunks, and the three inits (+0, a row's init, per-column inits).
TEST(GemmCore, OneRowMatchesDotChunkedWithEveryInit) {
  ThreadPool pool(3);
  for (int64_t N : {1, 7, 16, 33, 48, 64, 97, 130, 193, 250}) {
    for (int64_t K : {1, 48, 64, 65, 200}) {
      const Problem p{1, N, K};
      const auto a = random_values(K, 4), b = random_values(K * N, 5), cols = random_values(N, 6);
      const float row_init = 0.375f;
      const auto want = reference(p, a, b, nullptr), want_row = reference(p, a, b, &row_init);
      std::vector<float> want_cols(N);
      for (int64_t n = 0; n < N; ++n)
        want_cols[n] = arith::dot_chunked_f32(K, cols[n], [&](int64_t k) { return a[k]; },
                                              [&](int64_t k) { return b[k * N + n]; });
      for (int isa = 0; isa <= static_cast<int>(cpu::cpu_best_isa()); ++isa) {
        cpu::force_cpu_isa(static_cast<cpu::CpuIsa>(isa));
        const cpu::PackedB packed = cpu::pack_b(nullptr, N, K, cpu::strided_panels({b.data(), 1, N}, K));
        for (ThreadPool* threads : {static_cast<ThreadPool*>(nullptr), &pool}) {
          const std::string where = "1x" + std::to_string(N) + "x" + std::to_string(K) + " isa " +
                                    cpu::cpu_isa_name(static_cast<cpu::CpuIsa>(isa)) +
                                    (threads ? " 3 threads" : " inline");
          std::vector<float> c(N, 12345.0f);
          cpu::gemm_f32_row_packed_b(threads, a.data(), packed, {c.data(), N, 1});
          EXPECT_TRUE(same_bytes(c, want)) << where;
          std::fill(c.begin(), c.end(), 12345.0f);
          cpu::gemm_f32_packed_b(threads, 1, cpu::strided_panels({a.data(), K, 1}, K), packed,
                                 {c.data(), N, 1, &row_init});
          EXPECT_TRUE(same_bytes(c, want_row)) << where << " init row";
          std::fill(c.begin(), c.end(), 12345.0f);
          cpu::gemm_f32_row_packed_b(threads, a.data(), packed, {c.data(), N, 1, nullptr, cols.data()});
          EXPECT_TRUE(same_bytes(c, want_cols)) << where << " init per column";
        }
      }
      cpu::reset_cpu_isa();
    }
  }
}

// Every fused epilogue (no addend, one laid out as C, one per column; either operand order; each activation, Add +
// HardSwish and the GELU chains among them) on the outputs of a product with A read by columns and B packed ahead:
// row-major C (the epilogue tiles) and C transposed as Conv writes it (kept tiles and the transposed tile store),
// against absorbed_ops_f32 per element, on every ISA.
TEST(GemmCore, EveryEpilogueMatchesAbsorbedOps) {
  for (const Problem& p : {Problem{9, 33, 65}, Problem{49, 70, 200}, Problem{250, 100, 30}}) {
    const int64_t lda = p.M;
    const auto a_cols = random_values(lda * p.K, 10), b = random_values(p.K * p.N, 11);
    auto addend = random_values(p.M * p.N, 12);
    for (size_t i = 0; i < addend.size(); ++i) addend[i] *= 8.0f;  // sums beyond +-3: every branch of HardSwish
    addend[5] = NAN;
    std::vector<float> product(p.M * p.N);  // row-major
    for (int64_t m = 0; m < p.M; ++m)
      for (int64_t n = 0; n < p.N; ++n)
        product[m * p.N + n] = arith::dot_chunked_f32(p.K, 0.0f, [&](int64_t k) { return a_cols[m + k * lda]; },
                                                      [&](int64_t k) { return b[k * p.N + n]; });
    for (int isa = 0; isa <= static_cast<int>(cpu::cpu_best_isa()); ++isa) {
      cpu::force_cpu_isa(static_cast<cpu::CpuIsa>(isa));
      const cpu::PackedB packed = cpu::pack_b(nullptr, p.N, p.K, cpu::strided_panels({b.data(), 1, p.N}, p.K));
      for (int addend_kind = 0; addend_kind < 3; ++addend_kind)  // none, laid out as C, per column
        for (bool addend_first : {false, true})
          for (Activation activation : {Activation::None, Activation::Relu, Activation::HardSwish,
                                        Activation::GeluErfChain, Activation::GeluTanhChain})
            for (bool transposed : {false, true}) {
              const int64_t rs = transposed ? 1 : p.N, cs = transposed ? p.M : 1;
              // torch's GELU constants: erf form (divisor, addend, factor), tanh form (half, cube_factor, scale, one).
              const ActivationConstants constants =
                  activation == Activation::GeluErfChain ? ActivationConstants{{1.4142135f, 1.0f, 0.5f}}
                                                         : ActivationConstants{{0.5f, 0.044715f, 0.7978846f, 1.0f}};
              const StoreEpilogue e{addend_kind ? addend.data() : nullptr, addend_kind == 2, addend_first, activation,
                                    constants};
              std::vector<float> got(p.M * p.N, 12345.0f), want(p.M * p.N);
              for (int64_t m = 0; m < p.M; ++m)
                for (int64_t n = 0; n < p.N; ++n)
                  want[m * rs + n * cs] = e.apply(product[m * p.N + n], m * rs + n * cs, n);
              cpu::gemm_f32_a_columns_packed_b(nullptr, p.M, a_cols.data(), lda, packed,
                                               {got.data(), rs, cs, nullptr, nullptr, e});
              EXPECT_TRUE(same_bytes(got, want))
                  << p.M << "x" << p.N << "x" << p.K << " isa " << cpu::cpu_isa_name(static_cast<cpu::CpuIsa>(isa))
                  << " addend " << addend_kind << (addend_first ? " first" : "") << " activation "
                  << static_cast<int>(activation) << (transposed ? " C transposed" : "");
            }
    }
    cpu::reset_cpu_isa();
  }
}

// A panel of rows that lie along k (A of a row-major product, B of a transposed one) is packed by an 8x8 transpose
// in registers on AVX2 and AVX-512 hosts: every width the micro-kernels use, partial panels, K off the 8-block.
TEST(GemmCore, PanelsOfRowsAlongKHoldTheirDefinition) {
  const int64_t stride = 75;  // rows 75 floats apart: no row starts on a vector boundary
  const auto data = random_values(40 * stride, 4);
  for (int isa = 0; isa <= static_cast<int>(cpu::cpu_best_isa()); ++isa) {
    cpu::force_cpu_isa(static_cast<cpu::CpuIsa>(isa));
    for (int width : {4, 6, 8, 16, 32})
      for (int64_t count : {int64_t(1), int64_t(width - 1), int64_t(width)})
        for (int64_t K : {1, 7, 8, 9, 64, 67}) {
          const int64_t i0 = 3;
          std::vector<float> got(K * width, 12345.0f), want(K * width);
          for (int64_t k = 0; k < K; ++k)
            for (int64_t i = 0; i < width; ++i) want[k * width + i] = i < count ? data[(i0 + i) * stride + k] : 0.0f;
          cpu::strided_panels({data.data(), stride, 1}, K)(i0, count, width, got.data());
          EXPECT_TRUE(same_bytes(got, want)) << "isa " << cpu::cpu_isa_name(static_cast<cpu::CpuIsa>(isa))
                                             << " width " << width << " count " << count << " K " << K;
        }
  }
  cpu::reset_cpu_isa();
}

TEST(GemmCore, FreedPanelBlocksComeBackForTheSameSize) {
  // A block of 1 MB freed by this thread is handed out again for the next 1 MB request, not for another size.
  constexpr size_t kMiB = size_t(1) << 20;
  void* block = cpu::allocate_cache_lines(kMiB);
  cpu::free_cache_lines(block, kMiB);
  void* other_size = cpu::allocate_cache_lines(kMiB + 64);
  EXPECT_NE(other_size, block);
  void* same_size = cpu::allocate_cache_lines(kMiB);
  EXPECT_EQ(same_size, block);
  // The thread keeps at most 8 MB: of nine 1 MB blocks freed in turn, the first is released, the last kept.
  std::vector<void*> nine;
  for (int i = 0; i < 9; ++i) nine.push_back(i == 0 ? same_size : cpu::allocate_cache_lines(kMiB));
  for (void* p : nine) cpu::free_cache_lines(p, kMiB);
  std::vector<void*> again;
  for (int i = 0; i < 8; ++i) again.push_back(cpu::allocate_cache_lines(kMiB));
  EXPECT_EQ(again.front(), nine.back());
  EXPECT_EQ(std::count(again.begin(), again.end(), nine.front()), 0);
  for (void* p : again) cpu::free_cache_lines(p, kMiB);
  cpu::free_cache_lines(other_size, kMiB + 64);
}
