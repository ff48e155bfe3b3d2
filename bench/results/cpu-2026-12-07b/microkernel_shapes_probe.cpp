// Probe, not part of the build: the AVX-512 micro-kernel loop at tiles 8x48, 12x32, 14x32 and 6x64 over a whole
// product (B panel outer, A panels inner, one k-block), % of the fma peak measured in the same process.
//   g++ -O2 -o uk bench/results/cpu-2026-12-07b/microkernel_shapes_probe.cpp && ./uk 512
// Eighteenth session: 8x48 84%, 12x32 78%, 14x32 77%, 6x64 30% (spills) at K = 512.
#include <immintrin.h>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <algorithm>
template <int R, int NV>
__attribute__((target("avx512f"), noinline)) void kern(long K, const float* pa, const float* pb, float* c, long ldc) {
  for (long k0 = 0; k0 < K; k0 += 64) {
    long k1 = std::min(K, k0 + 64);
    __m512 acc[R][NV];
#pragma GCC unroll 16
    for (int i = 0; i < R; ++i)
#pragma GCC unroll 3
      for (int v = 0; v < NV; ++v) acc[i][v] = _mm512_setzero_ps();
    for (long k = k0; k < k1; ++k) {
      const float* b = pb + k * 16 * NV;
      __m512 bv[NV];
#pragma GCC unroll 3
      for (int v = 0; v < NV; ++v) bv[v] = _mm512_load_ps(b + 16 * v);
      const float* a = pa + k * R;
#pragma GCC unroll 16
      for (int i = 0; i < R; ++i) {
        __m512 av = _mm512_set1_ps(a[i]);
#pragma GCC unroll 3
        for (int v = 0; v < NV; ++v) acc[i][v] = _mm512_fmadd_ps(av, bv[v], acc[i][v]);
      }
    }
#pragma GCC unroll 16
    for (int i = 0; i < R; ++i)
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
template <int R, int NV>
void product(long M, long N, long K, double peak_lanes) {
  const long W = 16 * NV, mp = M / R, np = N / W;
  float* A = (float*)aligned_alloc(64, mp * R * K * 4);
  float* B = (float*)aligned_alloc(64, np * W * K * 4);
  float* C = (float*)aligned_alloc(64, M * N * 4 + 64);
  for (long i = 0; i < mp * R * K; ++i) A[i] = 0.001f * (i % 7);
  for (long i = 0; i < np * W * K; ++i) B[i] = 0.001f * (i % 5);
  memset(C, 0, M * N * 4);
  double best = 1e9;
  for (int rep = 0; rep < 7; ++rep) {
    auto t0 = std::chrono::steady_clock::now();
    for (long n = 0; n < np; ++n)
      for (long m = 0; m < mp; ++m) kern<R, NV>(K, A + m * R * K, B + n * W * K, C + m * R * N + n * W, N);
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  double lanes = double(mp * R) * (np * W) * K / best;
  printf("%2dx%2d  M=%ld N=%ld K=%ld: %.1f%% of fma peak (%.3f ms)\n", R, W, mp * R, np * W, K, 100 * lanes / peak_lanes, best * 1e3);
  free(A); free(B); free(C);
}
int main(int argc, char** argv) {
  long K = argc > 1 ? atol(argv[1]) : 512;
  auto t0 = std::chrono::steady_clock::now();
  long n = 20000000; volatile double sink = peak(n);
  double peak_lanes = n * 12.0 * 16 / std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  for (int r = 0; r < 2; ++r) {
    product<8, 3>(1024, 1008, K, peak_lanes);
    product<12, 2>(1020, 1024, K, peak_lanes);
    product<14, 2>(1022, 1024, K, peak_lanes);
    product<6, 4>(1020, 1024, K, peak_lanes);
  }
  (void)sink;
}
