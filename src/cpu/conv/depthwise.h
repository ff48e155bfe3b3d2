// Depthwise Conv on the CPU (group == c_in, one input channel per group): the output plane of each channel is
// computed across the output width, 8 or 16 output columns per SIMD register, each lane running its own
// output's dot_chunked_f32 over the kernel taps (docs/arithmetic.md#conv). The ISA kernels only see
// DepthwisePlane; the geometry, packing and threading live in depthwise.cpp.
#pragma once

#include <cstdint>

namespace lockstep {
struct ConvGeom;
struct KernelContext;
}  // namespace lockstep

namespace lockstep::cpu {

/// Length of the chunks of the tap chain: arith::kDotChunk (checked in depthwise.cpp; the ISA files include
/// nothing of arith).
constexpr int64_t kTapChunk = 64;

/// One output plane. tap_src[oh * taps + t] points at the packed inputs of kernel tap t (row-major (kh, kw))
/// for output row oh: element ow is the input the tap reads for output column ow (+0 in the padding), and
/// the array is readable for 16 floats from any ow < out_w.
struct DepthwisePlane {
  const float* const* tap_src;
  const float* weights;  // taps weights in (kh, kw) row-major order
  int64_t taps;
  float init;  // the bias, or +0
  int64_t out_h, out_w;
  float* out;  // out_h x out_w, rows contiguous
};

/// Computes the plane: out[oh][ow] = dot_chunked_f32(taps, init, tap_src[oh*taps + t][ow], weights[t]).
void depthwise_plane_f32_scalar(const DepthwisePlane& p);
void depthwise_plane_f32_avx2(const DepthwisePlane& p);
void depthwise_plane_f32_avx512(const DepthwisePlane& p);

/// Whether the CPU depthwise kernel serves this Conv (2-D or 1-D, cin_g == 1, group == c_in).
bool is_depthwise(const ConvGeom& g);

/// Runs the Conv of ctx (is_depthwise(g) holds) into y's storage.
void depthwise_conv_f32(KernelContext& ctx, const ConvGeom& g, float* y);

}  // namespace lockstep::cpu
