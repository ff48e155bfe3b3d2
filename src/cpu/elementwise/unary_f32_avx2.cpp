// AVX2 instances of the lane-template unary functors (unary_f32.h), compiled with the ISA's flags
// (CMakeLists.txt).
// Contract: the functor's scalar sequence per element; see docs/arithmetic.md#scalar-function-methods
#if defined(__AVX2__)
#include "cpu/lanes_avx2.h"  // first: see there

#include "cpu/elementwise/unary_f32.h"

namespace lockstep::cpu {

template <class F>
void unary_f32_avx2(const F& f, const float* x, float* y, int64_t n) {
  int64_t i = 0;
  // Four registers a step: each function is a long dependency chain, and four independent ones side by side
  // keep the FP pipes busy (with the pre-RA scheduler, CMakeLists.txt); every lane's sequence is unchanged.
  for (; i + 4 * 8 <= n; i += 4 * 8) {
    const __m256 v0 = f(_mm256_loadu_ps(x + i)), v1 = f(_mm256_loadu_ps(x + i + 8));
    const __m256 v2 = f(_mm256_loadu_ps(x + i + 16)), v3 = f(_mm256_loadu_ps(x + i + 24));
    _mm256_storeu_ps(y + i, v0);
    _mm256_storeu_ps(y + i + 8, v1);
    _mm256_storeu_ps(y + i + 16, v2);
    _mm256_storeu_ps(y + i + 24, v3);
  }
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, f(_mm256_loadu_ps(x + i)));
  if (i == n) return;
  // Lanes past n read and write nothing: maskload gives +0 there and maskstore skips them.
  const __m256i tail = _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(n - i)),
                                          _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  _mm256_maskstore_ps(y + i, tail, f(_mm256_maskload_ps(x + i, tail)));
}

#define LOCKSTEP_INSTANTIATE(F) template void unary_f32_avx2<F>(const F&, const float*, float*, int64_t);
LOCKSTEP_LANE_UNARY_FUNCTORS(LOCKSTEP_INSTANTIATE)
#undef LOCKSTEP_INSTANTIATE

}  // namespace lockstep::cpu
#endif
