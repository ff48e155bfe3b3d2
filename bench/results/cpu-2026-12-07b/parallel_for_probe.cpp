// Probe, not part of the build: the cost of ThreadPool::parallel_for at 2 threads (empty and small tasks).
//   g++ -O2 -std=c++17 -Isrc -Iinclude bench/results/cpu-2026-12-07b/parallel_for_probe.cpp build/dev/liblockstep.a -lpthread
// Eighteenth session: 0.9-1.4 us a call with empty tasks.
#include <chrono>
#include <cstdio>
#include <vector>
#include <algorithm>
#include <atomic>
#include "runtime/thread_pool.h"
using namespace lockstep;
int main() {
  ThreadPool pool(2);
  std::vector<float> buf(1 << 20, 1.0f);
  for (int64_t n : {2, 8, 64}) for (int64_t work : {0, 1000, 4000}) {
    std::vector<double> ts;
    for (int rep = 0; rep < 20000; ++rep) {
      auto t0 = std::chrono::steady_clock::now();
      pool.parallel_for(n, [&](int64_t b, int64_t e) {
        volatile float s = 0; for (int64_t i = b * work / n; i < e * work / n; ++i) s = s + buf[i];
      }, 1, 4);
      ts.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() * 1e6);
      // gap like a kernel between calls
      auto t1 = std::chrono::steady_clock::now(); while (std::chrono::steady_clock::now() - t1 < std::chrono::microseconds(5)) {}
    }
    std::sort(ts.begin(), ts.end());
    printf("n %ld work %ld: median %.2f us p90 %.2f\n", (long)n, (long)work, ts[ts.size() / 2], ts[ts.size() * 9 / 10]);
  }
}
