// MaxPool / AveragePool row kernels for AVX2 (compiled with the ISA's flags; see CMakeLists.txt). Lane j of a
// vector holds one output column and runs that output's canonical sequence; see pool_simd.inc.
#if defined(__AVX2__)
#include <immintrin.h>

#include <cstdint>

#include "cpu/pool/window_pool.h"

namespace lockstep::cpu {

namespace {
#include "cpu/simd_avx2.inc"
#include "cpu/pool/pool_simd.inc"
}  // namespace

// Contract: MaxPool = MAX(taps) with the sequential rule, row-major kernel order; docs/arithmetic.md#pool.
void max_pool_row_f32_avx2(const float* const* tap_src, int64_t taps, int64_t out_w, float* out) {
  max_pool_row(tap_src, taps, out_w, out);
}

// Contract: AveragePool = S(terms) / float(count); docs/arithmetic.md#pool.
void average_pool_row_f32_avx2(const float* const* tap_src, int64_t terms, int64_t ow_begin, int64_t ow_end,
                               float* out) {
  average_pool_row(tap_src, terms, ow_begin, ow_end, out);
}

}  // namespace lockstep::cpu
#endif
