// The CPU GEMM core on one thread against this core's FMA peak, measured in the same process:
// - clock: a chain of dependent integer adds (one cycle each on every x86-64 core) timed by steady_clock;
// - peak: 12 independent fma chains on 512-bit and on 256-bit registers (enough to cover the fma latency), so that
//   a core that splits a 512-bit fma into two 256-bit halves shows the same lanes per cycle for both widths;
// - gemm_f32 on each size given (N for N x N x N, or MxNxK; default 1024), A and B packed inside the timed call,
//   then with B packed ahead (as a MatMul's constant weights are), then with B packed ahead and read from memory
//   (a different copy each call, as a model reads each layer's weights once per run), best and median of 10
//   calls, for each ISA the CPU has.
//   build/cpp-tests/bench_gemm_core [size ...]      (built with -DLOCKSTEP_TESTS=ON; e.g. 1024 128x3072x768)
#include <immintrin.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "cpu/isa.h"
#include "ops/gemm.h"

using namespace lockstep;

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

double clock_ghz() {
  const int64_t adds = 400'000'000;
  double best = 1e9;
  for (int pass = 0; pass < 5; ++pass) {
    int64_t x = 0;
    const auto t0 = std::chrono::steady_clock::now();
    for (int64_t i = 0; i < adds / 8; ++i)
      asm volatile("add $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\t"
                   "add $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\tadd $1, %0" : "+r"(x));
    best = std::min(best, seconds_since(t0));
  }
  return adds / best / 1e9;  // the loop's own counter runs beside the chain, on another ALU
}

// Independent fma chains, 12 registers of the width named by reg ("zmm" or "ymm"), each fma'd iters times: enough
// chains to cover the fma latency on any core. Returns fma lanes per second (best of 5).
// (The chains start from whatever the registers hold and add a zero product, so they keep that value: no denormal
// slows a core that treats them with assists.)
#define LOCKSTEP_FMA(R, i) "vfmadd231ps %%" R "14, %%" R "15, %%" R #i "\n\t"
#define LOCKSTEP_FMA12(R)                                                                                    \
  LOCKSTEP_FMA(R, 0) LOCKSTEP_FMA(R, 1) LOCKSTEP_FMA(R, 2) LOCKSTEP_FMA(R, 3) LOCKSTEP_FMA(R, 4) LOCKSTEP_FMA(R, 5) \
  LOCKSTEP_FMA(R, 6) LOCKSTEP_FMA(R, 7) LOCKSTEP_FMA(R, 8) LOCKSTEP_FMA(R, 9) LOCKSTEP_FMA(R, 10) LOCKSTEP_FMA(R, 11)
#define LOCKSTEP_XMM_CLOBBERS                                                                                \
  "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10", "xmm11", "xmm14", "xmm15"

double fma_lanes_per_s(bool wide) {
  const int64_t iters = 50'000'000;
  double best = 1e9;
  for (int pass = 0; pass < 5; ++pass) {
    const auto t0 = std::chrono::steady_clock::now();
    asm volatile("vpxor %%xmm14, %%xmm14, %%xmm14\n\tvpxor %%xmm15, %%xmm15, %%xmm15" ::: "xmm14", "xmm15");
    for (int64_t it = 0; it < iters; ++it) {
      if (wide) asm volatile(LOCKSTEP_FMA12("zmm") ::: LOCKSTEP_XMM_CLOBBERS);
      else asm volatile(LOCKSTEP_FMA12("ymm") ::: LOCKSTEP_XMM_CLOBBERS);
    }
    best = std::min(best, seconds_since(t0));
  }
  return 12.0 * iters * (wide ? 16 : 8) / best;
}

struct GemmSize {
  int64_t m, n, k;
};

void bench_gemm(GemmSize size, double peak_flops) {
  const auto [M, N, K] = size;
  std::vector<float> a(M * K), b(K * N), c(M * N);
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  for (auto& v : a) v = u(rng);
  for (auto& v : b) v = u(rng);
  const cpu::GemmOut out{c.data(), N, 1, nullptr};
  char name[64];
  std::snprintf(name, sizeof name, "%lldx%lldx%lld", static_cast<long long>(M), static_cast<long long>(N),
                static_cast<long long>(K));
  for (int isa = 0; isa <= static_cast<int>(cpu::cpu_best_isa()); ++isa) {
    cpu::force_cpu_isa(static_cast<cpu::CpuIsa>(isa));
    if (isa == 0 && M * N * K > 512 * 512 * 512) continue;  // the scalar path takes seconds there
    // Each row: best and median of 10 timed calls (one untimed call first warms the caches and the allocator).
    auto timed = [&](const char* what, bool product, const auto& call) {
      std::vector<double> times;
      for (int i = 0; i <= 10; ++i) {
        const auto t0 = std::chrono::steady_clock::now();
        call();
        if (i > 0) times.push_back(seconds_since(t0));
      }
      std::sort(times.begin(), times.end());
      const double flops = 2.0 * M * N * K, best = times.front(), median = times[times.size() / 2];
      const char* isa_name = cpu::cpu_isa_name(static_cast<cpu::CpuIsa>(isa));
      if (!product) {
        std::printf("%-24s %-16s %-7s best %7.3f ms  median %7.3f ms\n", what, name, isa_name, best * 1e3,
                    median * 1e3);
        return;
      }
      std::printf("%-24s %-16s %-7s best %7.3f ms %6.1f GFLOP/s (%5.1f%% of peak)  median %7.3f ms %6.1f GFLOP/s\n",
                  what, name, isa_name, best * 1e3, flops / best / 1e9, 100 * flops / best / peak_flops,
                  median * 1e3, flops / median / 1e9);
    };
    const cpu::PanelFn a_panels = cpu::strided_panels({a.data(), K, 1}, K);
    const cpu::PanelFn b_panels = cpu::strided_panels({b.data(), 1, N}, K);
    timed("gemm_f32 (packs A, B)", true, [&] { cpu::gemm_f32_strided(nullptr, M, N, K, a.data(), K, 1, b.data(), N, 1, out); });
    const cpu::PackedB packed_b = cpu::pack_b(nullptr, N, K, b_panels);
    timed("B prepacked (packs A)", true, [&] { cpu::gemm_f32_packed_b(nullptr, M, a_panels, packed_b, out); });
    {
      // Weights as a model meets them: each call's B comes from memory (copies that together exceed any L3), as
      // every layer's weights do once per run.
      const int64_t copies = std::max<int64_t>(2, (int64_t(96) << 20) / (K * N * int64_t(sizeof(float))) + 1);
      std::vector<cpu::PackedB> cold;
      for (int64_t i = 0; i < copies; ++i) cold.push_back(cpu::pack_b(nullptr, N, K, b_panels));
      size_t call = 0;
      timed("B prepacked, from memory", true,
            [&] { cpu::gemm_f32_packed_b(nullptr, M, a_panels, cold[call++ % cold.size()], out); });
    }
    timed("pack A alone", false, [&] { cpu::pack_a(nullptr, M, K, a_panels); });
    timed("pack B alone", false, [&] { cpu::pack_b(nullptr, N, K, b_panels); });
  }
  cpu::reset_cpu_isa();
}

/// "N" (N x N x N) or "MxNxK".
GemmSize parse_size(const char* arg) {
  long long m = 0, n = 0, k = 0;
  if (std::sscanf(arg, "%lldx%lldx%lld", &m, &n, &k) == 3) return {m, n, k};
  const int64_t s = std::atoll(arg);
  return {s, s, s};
}

}  // namespace

int main(int argc, char** argv) {
  const double ghz = clock_ghz();
  double lanes = 0;
  if (cpu::cpu_best_isa() == cpu::CpuIsa::Avx512) {
    const double l512 = fma_lanes_per_s(true);
    std::printf("fma, 512-bit: %.1f G lanes/s = %.2f lanes/cycle\n", l512 / 1e9, l512 / 1e9 / ghz);
    lanes = l512;
  }
  if (cpu::cpu_best_isa() >= cpu::CpuIsa::Avx2) {
    const double l256 = fma_lanes_per_s(false);
    std::printf("fma, 256-bit: %.1f G lanes/s = %.2f lanes/cycle\n", l256 / 1e9, l256 / 1e9 / ghz);
    lanes = std::max(lanes, l256);
  }
  const double peak = 2 * lanes;
  std::printf("clock %.2f GHz (dependent adds); FMA peak %.1f GFLOP/s (measured lanes/s x 2)\n", ghz, peak / 1e9);
  std::vector<GemmSize> sizes;
  for (int i = 1; i < argc; ++i) sizes.push_back(parse_size(argv[i]));
  if (sizes.empty()) sizes.push_back({1024, 1024, 1024});
  for (const GemmSize& size : sizes) bench_gemm(size, peak);
}
