// Load-and-fma throughput on one core: 12 independent chains, each fma taking one operand from memory (L1), the
// loads 32-byte aligned or offset by 1 or 9 floats (half of them then cross a 64-byte line).
//   g++ -O2 split_loads.cpp -o split_loads && ./split_loads
// Zen 3 (2026-12-05, 3.2 GHz): aligned 6.3 fma/ns (2 a cycle), offset 3.2 fma/ns (1 a cycle).
#include <immintrin.h>

#include <chrono>
#include <cstdio>

namespace {

double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

alignas(64) float buffer[4096];

template <int kOffset>
__attribute__((target("avx2,fma"), noinline)) float run(long iterations) {
  __m256 acc[12];
  for (auto& a : acc) a = _mm256_setzero_ps();
  const __m256 w = _mm256_set1_ps(1.0001f);
  const float* p = buffer + kOffset;
  for (long i = 0; i < iterations; ++i) {
    asm volatile("" : "+r"(p));  // keeps the loads in the loop
#pragma GCC unroll 12
    for (int j = 0; j < 12; ++j) acc[j] = _mm256_fmadd_ps(_mm256_loadu_ps(p + 8 * j), w, acc[j]);
  }
  __m256 sum = acc[0];
  for (int j = 1; j < 12; ++j) sum = _mm256_add_ps(sum, acc[j]);
  return _mm256_cvtss_f32(sum);
}

template <int kOffset>
void report(const char* name, long iterations) {
  const double t0 = now();
  const float r = run<kOffset>(iterations);
  const double t = now() - t0;
  std::printf("%-8s %.2f fma/ns (%g)\n", name, 12.0 * iterations / t / 1e9, r);
}

}  // namespace

int main() {
  const long iterations = 100'000'000;
  for (int round = 0; round < 2; ++round) {
    report<0>("aligned", iterations);
    report<1>("offset1", iterations);
    report<9>("offset9", iterations);
  }
}
