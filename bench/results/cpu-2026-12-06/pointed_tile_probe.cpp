// Probe (2026-12-06): the pointed-rows micro-kernel of src/cpu/gemm.cpp alone, in register tiles of MR rows x 16*NV
// columns, on a 3x3 conv's taps read in place from padded planes (B rows unaligned, as on Conv's grid), k-blocks of
// 192, best of 30 passes. Build: g++ -O2 -std=c++20 pointed_tile_probe.cpp -o probe; run beside fma_peak_probe.
#include <immintrin.h>
#include <chrono>
#include <cstdio>
#include <vector>
#include <cstdint>
#include <algorithm>
constexpr int kChunk = 64;
double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }
template <int MR, int NV>
__attribute__((target("avx512f"), noinline)) void micro(int64_t K, const float* pa, const float* const* rows, int64_t n0, float* c, int64_t ldc) {
  for (int64_t k0 = 0; k0 < K; k0 += kChunk) {
    int64_t k1 = std::min(K, k0 + kChunk);
    __m512 acc[MR][NV];
#pragma GCC unroll 16
    for (int i = 0; i < MR; ++i)
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) acc[i][v] = _mm512_setzero_ps();
    for (int64_t k = k0; k < k1; ++k) {
      const float* pb = rows[k] + n0;
      _mm_prefetch((const char*)(pb + 16 * NV), _MM_HINT_T0);
      __m512 b[NV];
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) b[v] = _mm512_loadu_ps(pb + 16 * v);
      const float* a = pa + k * MR;
#pragma GCC unroll 16
      for (int i = 0; i < MR; ++i) {
        __m512 av = _mm512_set1_ps(a[i]);
#pragma GCC unroll 4
        for (int v = 0; v < NV; ++v) acc[i][v] = _mm512_fmadd_ps(av, b[v], acc[i][v]);
      }
    }
#pragma GCC unroll 16
    for (int i = 0; i < MR; ++i)
#pragma GCC unroll 4
      for (int v = 0; v < NV; ++v) {
        float* t = c + i * ldc + 16 * v;
        _mm512_storeu_ps(t, _mm512_add_ps(_mm512_loadu_ps(t), acc[i][v]));
      }
  }
}
template <int MR, int NV>
double conv(int C, int H, int M) {
  const int pitch = H + 2, NR = 16 * NV;
  std::vector<float> planes(size_t(C) * pitch * (pitch + 1) + 1024, 0.5f);
  const int64_t K = int64_t(C) * 9, grid = int64_t(H) * pitch, npan = (grid + NR - 1) / NR;
  std::vector<const float*> rows(K);
  for (int c = 0; c < C; ++c) for (int kh = 0; kh < 3; ++kh) for (int kw = 0; kw < 3; ++kw)
    rows[c * 9 + kh * 3 + kw] = planes.data() + size_t(c) * pitch * (pitch + 1) + kh * pitch + kw;
  const int64_t mpan = M / MR;
  std::vector<float> A(size_t(mpan) * MR * K, 0.01f), Cm(size_t(M) * (npan * NR + 64), 0.f);
  const int64_t ldc = npan * NR + 64;
  const int64_t kc = 192;
  double best = 1e9;
  for (int rep = 0; rep < 30; ++rep) {
    double t = now();
    for (int64_t kb = 0; kb < K; kb += kc) {
      int64_t kl = std::min(kc, K - kb);
      for (int64_t np = 0; np < npan; ++np)
        for (int64_t mp = 0; mp < mpan; ++mp)
          micro<MR, NV>(kl, A.data() + mp * MR * K + kb * MR, rows.data() + kb, np * NR, Cm.data() + mp * MR * ldc + np * NR, ldc);
    }
    best = std::min(best, now() - t);
  }
  return 2.0 * M * K * npan * NR / best / 1e9;
}
int main() {
  for (int r = 0; r < 2; ++r) {
    std::printf("GFLOP/s | 64ch56: 8x32 %.1f 8x48 %.1f 12x32 %.1f 6x64 %.1f | 256ch14: 8x32 %.1f 8x48 %.1f\n",
                conv<8, 2>(64, 56, 64), conv<8, 3>(64, 56, 64), conv<12, 2>(64, 56, 96), conv<6, 4>(64, 56, 60),
                conv<8, 2>(256, 14, 256), conv<8, 3>(256, 14, 256));
  }
}
