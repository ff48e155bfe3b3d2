// A vmaskmovps store of 7 lanes against the three plain stores (4, 2, 1 lanes) that replace it in
// src/cpu/simd_avx2.inc, in ns per store.
#include <immintrin.h>
#include <chrono>
#include <cstdio>
__attribute__((target("avx2"))) int main() {
  alignas(64) static float buf[4096];
  __m256 v = _mm256_set1_ps(1.0f);
  __m256i m = _mm256_setr_epi32(-1,-1,-1,-1,-1,-1,-1,0);
  for (int pass = 0; pass < 3; ++pass) {
    auto t0 = std::chrono::steady_clock::now();
    for (int it = 0; it < 100000; ++it)
      for (int r = 0; r < 64; ++r) _mm256_maskstore_ps(buf + r * 9, m, v);
    double a = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    t0 = std::chrono::steady_clock::now();
    for (int it = 0; it < 100000; ++it)
      for (int r = 0; r < 64; ++r) {
        float* p = buf + r * 9;
        __m128 lo = _mm256_castps256_ps128(v), hi = _mm256_extractf128_ps(v, 1);
        _mm_storeu_ps(p, lo); _mm_storel_pi((__m64*)(p + 4), hi); _mm_store_ss(p + 6, _mm_movehl_ps(hi, hi));
      }
    double b = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    printf("maskstore %.2f ns/store, pieces %.2f ns/store\n", a / 6.4e6 * 1e9, b / 6.4e6 * 1e9);
  }
}
