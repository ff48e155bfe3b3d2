// AVX-512 instances of the lane-template unary functors (unary_f32.h), compiled with the ISA's flags
// (CMakeLists.txt).
// Contract: the functor's scalar sequence per element; see docs/arithmetic.md#scalar-function-methods
#if defined(__AVX512F__)
#include "cpu/lanes_avx512.h"  // first: see there

#include "cpu/elementwise/unary_f32.h"

namespace lockstep::cpu {

namespace {
struct Avx512Registers {
  static constexpr int64_t kWidth = 16;
  static __m512 load(const float* p) { return _mm512_loadu_ps(p); }
  static void store(float* p, __m512 v) { _mm512_storeu_ps(p, v); }
};
}  // namespace

template <class F>
void unary_f32_avx512(const F& f, const float* x, float* y, int64_t n) {
  const int64_t i = unary_f32_whole_registers<Avx512Registers>(f, x, y, n);
  if (i == n) return;
  const __mmask16 tail = static_cast<__mmask16>((1u << (n - i)) - 1u);
  _mm512_mask_storeu_ps(y + i, tail, f(_mm512_maskz_loadu_ps(tail, x + i)));
}

#define LOCKSTEP_INSTANTIATE(F) template void unary_f32_avx512<F>(const F&, const float*, float*, int64_t);
LOCKSTEP_LANE_UNARY_FUNCTORS(LOCKSTEP_INSTANTIATE)
#undef LOCKSTEP_INSTANTIATE

}  // namespace lockstep::cpu
#endif
