// Probe (2026-12-06): one core's AVX-512 FMA peak, 12 independent chains. Build: g++ -O2 fma_peak_probe.cpp -o peak.
// Run two at once (taskset -c 0 ./peak & taskset -c 1 ./peak) to see whether the two vCPUs share FMA units.
#include <immintrin.h>
#include <chrono>
#include <cstdio>
__attribute__((target("avx512f"), noinline)) double peak() {
  __m512 a0=_mm512_set1_ps(1),a1=a0,a2=a0,a3=a0,a4=a0,a5=a0,a6=a0,a7=a0,a8=a0,a9=a0,a10=a0,a11=a0;
  __m512 m = _mm512_set1_ps(0.9999999f), d = _mm512_set1_ps(1e-8f);
  const long it = 100000000; auto t = std::chrono::steady_clock::now();
  for (long j = 0; j < it; ++j) {
    a0=_mm512_fmadd_ps(a0,m,d);a1=_mm512_fmadd_ps(a1,m,d);a2=_mm512_fmadd_ps(a2,m,d);a3=_mm512_fmadd_ps(a3,m,d);
    a4=_mm512_fmadd_ps(a4,m,d);a5=_mm512_fmadd_ps(a5,m,d);a6=_mm512_fmadd_ps(a6,m,d);a7=_mm512_fmadd_ps(a7,m,d);
    a8=_mm512_fmadd_ps(a8,m,d);a9=_mm512_fmadd_ps(a9,m,d);a10=_mm512_fmadd_ps(a10,m,d);a11=_mm512_fmadd_ps(a11,m,d);
  }
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
  volatile float sink = _mm512_reduce_add_ps(a0+a1+a2+a3+a4+a5+a6+a7+a8+a9+a10+a11);
  return it * 12.0 * 32 / s / 1e9;
}
int main() { std::printf("%.1f GFLOP/s\n", peak()); }
