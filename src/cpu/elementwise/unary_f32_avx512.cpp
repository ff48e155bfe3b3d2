// AVX-512 instances of the lane-template unary functors (unary_f32.h), compiled with the ISA's flags
// (CMakeLists.txt).
// Contract: the functor's scalar sequence per element; see docs/arithmetic.md#scalar-function-methods
#if defined(__AVX512F__)
#include "cpu/lanes_avx512.h"  // first: see there

#include "cpu/elementwise/unary_f32.h"

namespace lockstep::cpu {

template <class F>
void unary_f32_avx512(const F& f, const float* x, float* y, int64_t n) {
  int64_t i = 0;
  // Four registers a step: each function is a long dependency chain, and four independent ones side by side
  // keep the FP pipes busy (with the pre-RA scheduler, CMakeLists.txt); every lane's sequence is unchanged.
  for (; i + 4 * 16 <= n; i += 4 * 16) {
    const __m512 v0 = f(_mm512_loadu_ps(x + i)), v1 = f(_mm512_loadu_ps(x + i + 16));
    const __m512 v2 = f(_mm512_loadu_ps(x + i + 32)), v3 = f(_mm512_loadu_ps(x + i + 48));
    _mm512_storeu_ps(y + i, v0);
    _mm512_storeu_ps(y + i + 16, v1);
    _mm512_storeu_ps(y + i + 32, v2);
    _mm512_storeu_ps(y + i + 48, v3);
  }
  for (; i + 16 <= n; i += 16) _mm512_storeu_ps(y + i, f(_mm512_loadu_ps(x + i)));
  if (i == n) return;
  const __mmask16 tail = static_cast<__mmask16>((1u << (n - i)) - 1u);
  _mm512_mask_storeu_ps(y + i, tail, f(_mm512_maskz_loadu_ps(tail, x + i)));
}

#define LOCKSTEP_INSTANTIATE(F) template void unary_f32_avx512<F>(const F&, const float*, float*, int64_t);
LOCKSTEP_LANE_UNARY_FUNCTORS(LOCKSTEP_INSTANTIATE)
#undef LOCKSTEP_INSTANTIATE

}  // namespace lockstep::cpu
#endif
