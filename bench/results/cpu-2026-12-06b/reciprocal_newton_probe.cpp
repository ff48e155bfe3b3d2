// Probe (2026-12-06, eleventh session): is 1/d from the hardware estimate refined by Newton steps the IEEE quotient?
// AVX-512: rcp14 + 2 steps y + y(1 - d y) (fmas); AVX2: rcpps + 3 steps. Every normal d whose reciprocal is normal
// (pass any argument; without one, d in [1, 2) only). Result on the development machine (Intel, model 207): both
// differ from 1.0f / d only where d's significand is all ones (one d per binade: 252 of them). Not used: the
// division is about 8% of sigmoid_f32's time there, and the estimate's bits are the CPU vendor's (the error bound
// alone does not prove the refined value correctly rounded), so the contract keeps the division.
// Build: g++ -O2 -mavx512f -mfma -mavx2 reciprocal_newton_probe.cpp -o probe
#include <immintrin.h>
#include <cstdio>
#include <cstdint>
#include <cstring>
int main(int argc, char**) {
  long bad = 0, badavx2 = 0;
  for (uint32_t e = (argc > 1 ? 1 : 127); e < (argc > 1 ? 253 : 128); ++e) {
  for (uint32_t m = 0; m < (1u << 23); m += 16) {
    alignas(64) float d[16], ref[16], got[16], got2[16];
    for (int i = 0; i < 16; ++i) { uint32_t b = (e << 23) | (m + i); std::memcpy(&d[i], &b, 4); ref[i] = 1.0f / d[i]; }
    __m512 D = _mm512_load_ps(d), one = _mm512_set1_ps(1.0f);
    __m512 r = _mm512_rcp14_ps(D);
    __m512 err = _mm512_fnmadd_ps(D, r, one); r = _mm512_fmadd_ps(r, err, r);
    err = _mm512_fnmadd_ps(D, r, one); r = _mm512_fmadd_ps(r, err, r);
    _mm512_store_ps(got, r);
    for (int h = 0; h < 2; ++h) {
      __m256 D2 = _mm256_load_ps(d + 8*h), one2 = _mm256_set1_ps(1.0f);
      __m256 r2 = _mm256_rcp_ps(D2);
      __m256 e2 = _mm256_fnmadd_ps(D2, r2, one2); r2 = _mm256_fmadd_ps(r2, e2, r2);
      e2 = _mm256_fnmadd_ps(D2, r2, one2); r2 = _mm256_fmadd_ps(r2, e2, r2);
      e2 = _mm256_fnmadd_ps(D2, r2, one2); r2 = _mm256_fmadd_ps(r2, e2, r2);
      _mm256_store_ps(got2 + 8*h, r2);
    }
    for (int i = 0; i < 16; ++i) {
      if (std::memcmp(&got[i], &ref[i], 4)) { if (bad < 5) printf("avx512 d=%a ref=%a got=%a\n", d[i], ref[i], got[i]); ++bad; }
      if (std::memcmp(&got2[i], &ref[i], 4)) { if (badavx2 < 5) printf("avx2 d=%a ref=%a got=%a\n", d[i], ref[i], got2[i]); ++badavx2; }
    }
  }
  }
  printf("bad avx512 %ld avx2 %ld\n", bad, badavx2);
}
