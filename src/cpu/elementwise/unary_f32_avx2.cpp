// AVX2 instances of the lane-template unary functors (unary_f32.h), compiled with the ISA's flags
// (CMakeLists.txt).
// Contract: the functor's scalar sequence per element; see docs/arithmetic.md#scalar-function-methods
#if defined(__AVX2__)
#include "cpu/lanes_avx2.h"  // first: see there

#include "cpu/elementwise/unary_f32.h"

namespace lockstep::cpu {

namespace {
struct Avx2Registers {
  static constexpr int64_t kWidth = 8;
  static __m256 load(const float* p) { return _mm256_loadu_ps(p); }
  static void store(float* p, __m256 v) { _mm256_storeu_ps(p, v); }
};
}  // namespace

template <class F>
void unary_f32_avx2(const F& f, const float* x, float* y, int64_t n) {
  const int64_t i = unary_f32_whole_registers<Avx2Registers>(f, x, y, n);
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
