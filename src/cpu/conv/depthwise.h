// Depthwise Conv on the CPU (group == c_in, one input channel per group). On AVX2 and AVX-512 the common shapes (3x3
// and 5x5, stride 1 or 2, multiplier 1) run as blocks of 8 or 16 channels in the lanes (DepthwiseChannelBlock,
// below). Otherwise each input plane is packed into stride-phase planes (+0 in the padding; cpu/conv/phase_planes.h) whose rows
// share one pitch, so that an output plane becomes a flat run of "grid pixels" v = oh * pitch + ow: for every
// kernel tap, the inputs of consecutive grid pixels are consecutive floats. A SIMD lane is one grid pixel running
// its output's dot_chunked_f32 over the kernel taps (docs/arithmetic.md#conv); the grid columns ow >= out_w are
// computed and dropped. The ISA kernels only see DepthwisePlane and DepthwiseChannelBlock; the geometry, packing
// and threading live in depthwise.cpp.
#pragma once

#include <cstdint>

#include "cpu/isa.h"
#include "ops/epilogue.h"

namespace lockstep {
struct ConvGeom;
struct KernelContext;
}  // namespace lockstep

namespace lockstep::cpu {

/// Length of the chunks of the tap chain: arith::kDotChunk (checked in depthwise.cpp, which includes arith/dot.h).
constexpr int64_t kTapChunk = 64;

/// The grid is computed in blocks of kGridBlock pixels (a multiple of every ISA's lane count): `out` and every
/// tap_src[t] are readable for `pixels` rounded up to a multiple of kGridBlock.
constexpr int64_t kGridBlock = 16;

/// One output plane on the grid. tap_src[t] + v is the input kernel tap t (row-major (kh, kw)) reads for grid
/// pixel v (+0 in the padding).
struct DepthwisePlane {
  const float* const* tap_src;
  const float* weights;  // taps weights in (kh, kw) row-major order
  int64_t taps;
  float init;      // the bias, or +0
  int64_t pixels;  // out_h * pitch
  float* out;      // the grid's outputs, v = oh * pitch + ow
};

/// Computes the plane: out[v] = dot_chunked_f32(taps, init, tap_src[t][v], weights[t]).
void depthwise_plane_f32_scalar(const DepthwisePlane& p);
void depthwise_plane_f32_avx2(const DepthwisePlane& p);
void depthwise_plane_f32_avx512(const DepthwisePlane& p);

/// One output plane of a stride-2 (both axes), dilation-1 depthwise conv, read from a framed input plane: tap
/// (kh, kw) of output (oh, ow) reads frame[(2*oh + kh) * pitch + 2*ow + kw] (+0 in the frame's border). Every
/// frame row is readable up to 2 * (out_w rounded up to a multiple of kGridBlock) + kernel_w floats.
struct DepthwiseStride2Plane {
  const float* frame;
  int64_t pitch;
  const float* weights;  // kernel_h * kernel_w weights, (kh, kw) row-major
  int64_t kernel_h, kernel_w;
  float init;  // the bias, or +0
  int64_t out_h, out_w;
  float* out;  // the output plane, row pitch out_w
};

/// Computes the plane: out[oh * out_w + ow] = dot_chunked_f32(taps, init, frame tap, weight), taps (kh, kw)
/// ascending. The SIMD ISAs only: the scalar ISA runs every depthwise conv on phase planes.
void depthwise_stride2_plane_f32_avx2(const DepthwiseStride2Plane& p);
void depthwise_stride2_plane_f32_avx512(const DepthwiseStride2Plane& p);

/// One block of kLanes channels (the ISA's lanes) of a depthwise conv with channel multiplier 1, a square 3x3 or
/// 5x5 kernel, dilation 1 and stride 1 or 2 on both axes, computed with channels in the lanes: input rows are
/// transposed into rows of pixels (each pixel one aligned vector of the block's channels, +0 in the padding), every
/// output pixel is one vector of chains, and the outputs are transposed back at the store. On NCHW planes most taps'
/// loads cross cache lines (kw floats off alignment), which halves Zen 3's load-and-fma rate; here none do.
struct DepthwiseChannelBlock {
  const float* x;    // the block's first input plane (in_h x in_w); the block's planes follow it
  int64_t channels;  // planes in this block (<= the ISA's lanes)
  int64_t in_h, in_w, pad_top, pad_left, stride, kernel, out_h, out_w;
  const float* weights;  // the block's first channel's kernel*kernel weights, (kh, kw) row-major; channels follow
  const float* bias;     // the block's first bias, or null (+0)
  float* y;              // the block's first output plane (out_h x out_w)
  const float* addend;   // a fused Add's addend, laid out as y (null: none)
  bool addend_first;
  Activation activation;  // the fused activation, after the Add
  float* scratch;  // channel_block_scratch_floats(...) floats, +0 on the first call (only input pixels are written)
  int64_t out_row_begin = 0, out_row_end = INT64_MAX;  // the output rows computed: [begin, min(end, out_h))
};

/// Floats of scratch one DepthwiseChannelBlock needs for its rows: `kernel` ring rows and one row of +0, each
/// row_pixels pixels of `lanes` floats. A scratch buffer can serve block after block of the same conv.
int64_t channel_block_row_pixels(int64_t in_w, int64_t pad_left, int64_t stride, int64_t kernel, int64_t out_w);
inline int64_t channel_block_scratch_floats(int64_t row_pixels, int64_t kernel, int64_t lanes) {
  return (kernel + 1) * row_pixels * lanes;
}

/// Computes the block's outputs (rows out_row_begin up to out_row_end): blocks of 8 channels on AVX2, 16 on AVX-512.
void depthwise_channel_block_f32_avx2(const DepthwiseChannelBlock& b);
void depthwise_channel_block_f32_avx512(const DepthwiseChannelBlock& b);

/// dst[r * dst_pitch + j] = src[r * src_pitch + j * step] for r < rows, j < n (packing phase planes and tap rows,
/// unpacking the grid); reads and writes nothing else.
using CopyRowsFn = void (*)(const float* src, int64_t src_pitch, int64_t step, float* dst, int64_t dst_pitch,
                            int64_t rows, int64_t n);
void copy_rows_f32_scalar(const float* src, int64_t src_pitch, int64_t step, float* dst, int64_t dst_pitch,
                          int64_t rows, int64_t n);
void copy_rows_f32_avx2(const float* src, int64_t src_pitch, int64_t step, float* dst, int64_t dst_pitch,
                        int64_t rows, int64_t n);
void copy_rows_f32_avx512(const float* src, int64_t src_pitch, int64_t step, float* dst, int64_t dst_pitch,
                          int64_t rows, int64_t n);
/// The row copy of one ISA (defined in depthwise.cpp); also tap rows' strided copy (cpu/tap_rows.h).
CopyRowsFn copy_rows_for(CpuIsa isa);

/// Whether the CPU depthwise kernel serves this Conv (2-D or 1-D, cin_g == 1, group == c_in).
bool is_depthwise(const ConvGeom& g);

/// Runs the Conv of ctx (is_depthwise(g) holds) into y's storage, then a fused node's epilogue on each plane.
void depthwise_conv_f32(KernelContext& ctx, const ConvGeom& g, float* y, const StoreEpilogue& epilogue);

}  // namespace lockstep::cpu
