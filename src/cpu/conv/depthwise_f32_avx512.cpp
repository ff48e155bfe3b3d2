// Depthwise Conv kernels for AVX-512 (compiled with the ISA's flags; see CMakeLists.txt): the plane kernels (lane j
// of a vector holds grid pixel v0 + j and runs that output's canonical chain; see depthwise_simd.inc) and the
// channel-block kernel (lane c holds channel c of one output pixel; see depthwise_channel_lanes.inc).
#if defined(__AVX512F__)
#include "cpu/lanes_avx512.h"  // first: see there

#include <immintrin.h>

#include <cstdint>

#include "cpu/conv/depthwise.h"

namespace lockstep::cpu {

namespace {
#include "cpu/simd_avx512.inc"
#include "cpu/conv/depthwise_simd.inc"
#include "cpu/conv/depthwise_channel_lanes.inc"
}  // namespace

// Contract: dot_chunked_f32 over the taps (kh, kw) ascending, init = bias; see docs/arithmetic.md#conv.
void depthwise_plane_f32_avx512(const DepthwisePlane& p) { depthwise_plane(p); }

// Contract: dot_chunked_f32 over the taps (kh, kw) ascending, init = bias; see docs/arithmetic.md#conv.
void depthwise_stride2_plane_f32_avx512(const DepthwiseStride2Plane& p) { depthwise_stride2_plane(p); }

// Contract: dot_chunked_f32 over the taps (kh, kw) ascending, init = bias, then absorbed_ops_f32; see
// docs/arithmetic.md#conv.
void depthwise_channel_block_f32_avx512(const DepthwiseChannelBlock& b) { depthwise_channel_block(b); }

void copy_rows_f32_avx512(const float* src, int64_t src_pitch, int64_t step, float* dst, int64_t dst_pitch,
                      int64_t rows, int64_t n) {
  copy_rows(src, src_pitch, step, dst, dst_pitch, rows, n);
}

}  // namespace lockstep::cpu
#endif
