// Depthwise Conv plane kernel for AVX512 (compiled with the ISA's flags; see CMakeLists.txt). Lane j of a vector
// holds output column ow0 + j and runs that output's canonical chain; see depthwise_simd.inc.
#if defined(__AVX512F__)
#include <immintrin.h>

#include <cstdint>

#include "cpu/conv/depthwise.h"

namespace lockstep::cpu {

namespace {
#include "cpu/simd_avx512.inc"
#include "cpu/conv/depthwise_simd.inc"
}  // namespace

// Contract: dot_chunked_f32 over the taps (kh, kw) ascending, init = bias; see docs/arithmetic.md#conv.
void depthwise_plane_f32_avx512(const DepthwisePlane& p) { depthwise_plane(p); }

}  // namespace lockstep::cpu
#endif
