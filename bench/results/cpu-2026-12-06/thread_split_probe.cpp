// Probe (2026-12-06): gemm_f32_packed_rows (Conv's product with B read in place) on 1 thread and on a pool of 2,
// 3000 calls each, 3 rounds: min and median. Default shape M=480, K=80, N=196 (a 1x1 80->480 conv on 14x14 pixels).
// Build from the repository root after a dev build: g++ -O2 -std=c++20 -Isrc -Iinclude thread_split_probe.cpp
//   build/dev/liblockstep.a -lpthread -o probe; ./probe [M K N]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>
#include "ops/gemm.h"
#include "runtime/thread_pool.h"
using namespace lockstep; using namespace lockstep::cpu;
double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }
int main(int argc, char** argv) {
  int64_t M = 480, K = 80, N = 196;
  if (argc > 3) { M = atoll(argv[1]); K = atoll(argv[2]); N = atoll(argv[3]); }
  std::vector<float> w(M * K, 0.01f), x(K * N + 64, 0.5f), y(M * N), bias(M, 0.1f);
  std::vector<const float*> rows(K);
  for (int64_t k = 0; k < K; ++k) rows[k] = x.data() + k * N;
  ThreadPool pool2(2);
  PackedA a = pack_a(nullptr, M, K, strided_panels({w.data(), K, 1}, K));
  for (int round = 0; round < 3; ++round)
    for (ThreadPool* p : {static_cast<ThreadPool*>(nullptr), &pool2}) {
      std::vector<double> t;
      for (int r = 0; r < 3000; ++r) {
        double t0 = now();
        gemm_f32_packed_rows(p, a, N, rows.data(), GemmOut{y.data(), N, 1, bias.data()});
        t.push_back(now() - t0);
      }
      std::sort(t.begin(), t.end());
      std::printf("%s: min %.1f us  p50 %.1f us  (%.1f GFLOP/s at p50)\n", p ? "2 threads" : "1 thread ", t[0] * 1e6,
                  t[t.size() / 2] * 1e6, 2.0 * M * N * K / t[t.size() / 2] / 1e9);
    }
}
