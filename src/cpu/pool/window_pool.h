// MaxPool (values only) and AveragePool of float32 2-D (and 1-D) planes across the output width: 8 or 16
// output columns per SIMD register, each lane running its own output's canonical sequence
// (docs/arithmetic.md#pool). The ISA row kernels only see packed tap pointers; geometry, packing, borders and
// threading live in window_pool.cpp. ResNet's 3x3 stride-2 MaxPool has a plane kernel of its own on AVX-512. Other pools (3-D, int8/uint8, with Indices, the scalar ISA) stay on the
// per-output path of src/cpu/pool.cpp.
#pragma once

#include <cstdint>

namespace lockstep {
class ThreadPool;
namespace arith {
struct PoolGeom;
}
}  // namespace lockstep

namespace lockstep::cpu {

/// tap_src[t][ow] is tap t's input for output column ow of one output row (taps in row-major (kh, kw) order),
/// readable for 16 floats from any ow below the row's end. MaxPool's rows read -inf where a tap is not inside
/// the input (-inf never replaces the running maximum, so it is exactly a skipped tap).
// out[ow] = the sequential max over all `taps` for ow in [0, out_w).
void max_pool_row_f32_avx2(const float* const* tap_src, int64_t taps, int64_t out_w, float* out);
void max_pool_row_f32_avx512(const float* const* tap_src, int64_t taps, int64_t out_w, float* out);
// out[ow] = S(tap_src[0][ow], ..., tap_src[terms-1][ow]) / terms for ow in [ow_begin, ow_end).
void average_pool_row_f32_avx2(const float* const* tap_src, int64_t terms, int64_t ow_begin, int64_t ow_end,
                               float* out);
void average_pool_row_f32_avx512(const float* const* tap_src, int64_t terms, int64_t ow_begin, int64_t ow_end,
                                 float* out);

/// One plane of a 3x3 MaxPool with stride 2, dilation 1 and padding 1 before (ResNet's): output (oh, ow) takes input
/// rows 2oh-1 .. 2oh+1 and columns 2ow-1 .. 2ow+1, -inf outside the input, read straight from the plane: each pair
/// of 16-float loads of a row is split into its even and odd columns by permutes, where the packed phase rows cost
/// a copy of the plane (43% of the pool's time). AVX-512 only.
struct MaxPool3x3Stride2Plane {
  const float* x;
  int64_t in_h, in_w;
  float* y;
  int64_t out_h, out_w;
};
// y = the sequential max over the taps in row-major (kh, kw) order, as max_pool_row_f32_avx512.
void max_pool_3x3_stride2_plane_f32_avx512(const MaxPool3x3Stride2Plane& p);

/// Whether the vector kernels serve this float pool on the current ISA (a 2-D or 1-D window, a SIMD ISA).
bool window_pool_serves(const arith::PoolGeom& g);

void max_pool_f32_rows(ThreadPool& pool, const arith::PoolGeom& g, const float* x, float* y);
void average_pool_f32_rows(ThreadPool& pool, const arith::PoolGeom& g, const float* x, float* y);

}  // namespace lockstep::cpu
