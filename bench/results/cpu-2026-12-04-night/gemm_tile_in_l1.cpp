// One GEMM tile (M x N outputs, K long) repeated: the micro-kernel with its operands in L1, B read in place
// (pointed rows) and from a packed panel (which also packs A on every call), in GFLOP/s.
//   ./tile M N K REPEATS
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>
#include <algorithm>
#include "cpu/isa.h"
#include "ops/gemm.h"
using namespace lockstep;
int main(int argc, char** argv) {
  int64_t M = atoll(argv[1]), N = atoll(argv[2]), K = atoll(argv[3]); int reps = atoi(argv[4]);
  std::vector<float> w(M * K), x(K * N), c(M * N);
  std::mt19937 rng(7); std::uniform_real_distribution<float> u(-1, 1);
  for (auto& v : w) v = u(rng); for (auto& v : x) v = u(rng);
  auto pa = cpu::pack_a(nullptr, M, K, cpu::strided_panels({w.data(), K, 1}, K));
  std::vector<const float*> rows(K); for (int64_t k = 0; k < K; ++k) rows[k] = x.data() + k * N;
  auto pb = cpu::pack_b(nullptr, N, K, cpu::strided_panels({x.data(), 1, N}, K));
  cpu::GemmOut out{c.data(), N, 1, nullptr};
  for (int mode = 0; mode < 2; ++mode) {
    double best = 1e9;
    for (int t = 0; t < 5; ++t) {
      auto t0 = std::chrono::steady_clock::now();
      for (int i = 0; i < reps; ++i) {
        if (mode == 0) cpu::gemm_f32_packed_rows(nullptr, pa, N, rows.data(), out);
        else cpu::gemm_f32_packed_b(nullptr, M, cpu::strided_panels({w.data(), K, 1}, K), pb, out);
      }
      best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    printf("%s M%lld N%lld K%lld: %.1f GF\n", mode ? "packed B (packs A per call)" : "pointed rows", (long long)M, (long long)N, (long long)K, 2.0 * M * N * K * reps / best / 1e9);
  }
}
