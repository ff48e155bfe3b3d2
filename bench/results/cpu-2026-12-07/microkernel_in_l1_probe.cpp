// Probe, not part of the build: the AVX-512 8x48 micro-kernel loop of src/cpu/gemm.cpp (same loop, chunk stores
// and all) with its A and B panels hot in L1, against 12 independent fma chains in the same process.
//   g++ -O2 -o uk bench/results/cpu-2026-12-07/microkernel_in_l1_probe.cpp && ./uk 64; ./uk 128; ./uk 256
// Seventeenth session, development machine: 92-93% (K = 64), 89-90% (K = 128), 85% (K = 256: B is 48 KB, L1
// is 48 KB) of the fma peak.
#include <immintrin.h>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <algorithm>
// Standalone 8x48 micro-kernel timing with panels hot in L1.
template <int NV>
__attribute__((target("avx512f"), noinline)) void k8(long K, const float* pa, const float* pb, float* c, long ldc) {
  for (long k0 = 0; k0 < K; k0 += 64) {
    long k1 = std::min(K, k0 + 64);
    __m512 acc[8][NV];
#pragma GCC unroll 8
    for (int i = 0; i < 8; ++i)
#pragma GCC unroll 3
      for (int v = 0; v < NV; ++v) acc[i][v] = _mm512_setzero_ps();
    for (long k = k0; k < k1; ++k) {
      const float* b = pb + k * 16 * NV;
      __m512 bv[NV];
#pragma GCC unroll 3
      for (int v = 0; v < NV; ++v) bv[v] = _mm512_loadu_ps(b + 16 * v);
      const float* a = pa + k * 8;
#pragma GCC unroll 8
      for (int i = 0; i < 8; ++i) {
        __m512 av = _mm512_set1_ps(a[i]);
#pragma GCC unroll 3
        for (int v = 0; v < NV; ++v) acc[i][v] = _mm512_fmadd_ps(av, bv[v], acc[i][v]);
      }
    }
#pragma GCC unroll 8
    for (int i = 0; i < 8; ++i)
#pragma GCC unroll 3
      for (int v = 0; v < NV; ++v)
        _mm512_storeu_ps(c + i * ldc + 16 * v, _mm512_add_ps(_mm512_loadu_ps(c + i * ldc + 16 * v), acc[i][v]));
  }
}
__attribute__((target("avx512f"), noinline)) double peak(long n) {
  __m512 a[12]; for (int i = 0; i < 12; ++i) a[i] = _mm512_set1_ps(i);
  __m512 m = _mm512_set1_ps(1.0f), s = _mm512_set1_ps(1e-9f);
  for (long j = 0; j < n; ++j)
#pragma GCC unroll 12
    for (int i = 0; i < 12; ++i) a[i] = _mm512_fmadd_ps(a[i], m, s);
  float r = 0; for (int i = 0; i < 12; ++i) r += _mm512_reduce_add_ps(a[i]);
  return r;
}
int main(int argc, char** argv) {
  long K = argc > 1 ? atol(argv[1]) : 128;
  float* pa = (float*)aligned_alloc(64, K * 8 * 4);
  float* pb = (float*)aligned_alloc(64, K * 48 * 4);
  float* c = (float*)aligned_alloc(64, 8 * 48 * 4);
  for (long i = 0; i < K * 8; ++i) pa[i] = 0.001f * (i % 7);
  for (long i = 0; i < K * 48; ++i) pb[i] = 0.001f * (i % 5);
  memset(c, 0, 8 * 48 * 4);
  auto t0 = std::chrono::steady_clock::now();
  long n = 20000000; volatile double sink = peak(n);
  double tp = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  double peak_lanes = n * 12.0 * 16 / tp;
  for (int rep = 0; rep < 3; ++rep) {
    long calls = 2000000000L / (K * 24 * 16);
    t0 = std::chrono::steady_clock::now();
    for (long i = 0; i < calls; ++i) k8<3>(K, pa, pb, c, 48);
    double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    double lanes = calls * (double)K * 24 * 16 / t;
    printf("K=%ld 8x48: %.1f%% of fma peak (%.1f G lanes/s, peak %.1f)\n", K, 100 * lanes / peak_lanes, lanes / 1e9, peak_lanes / 1e9);
  }
  (void)sink;
}
