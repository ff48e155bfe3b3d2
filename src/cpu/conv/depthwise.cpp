// Depthwise Conv on the CPU: geometry, packing, threading and the per-ISA choice of the kernel. On AVX2 and AVX-512
// the common shapes run as channel blocks (one task per image and block of 8 or 16 channels). Otherwise each
// (image, input channel) packs its input plane once into stride-phase planes (padding taps read +0) and computes
// its channel-multiplier output planes from it on the grid of depthwise.h.
#include "cpu/conv/depthwise.h"

#include <algorithm>
#include <vector>

#include "arith/dot.h"
#include "cpu/conv/framed_planes.h"
#include "cpu/conv/phase_planes.h"
#include "cpu/isa.h"
#include "ops/conv.h"
#include "ops/gemm.h"
#include "runtime/thread_pool.h"

namespace lockstep::cpu {

static_assert(kTapChunk == arith::kDotChunk, "the depthwise chain must chunk like dot_chunked_f32");

namespace {

/// One ISA's kernels: the plane kernel, the row copy that packs phase planes and unpacks the grid, the stride-2
/// plane kernel (null: stride-2 planes run on phase planes too), the channel-block kernel with its lanes (null:
/// every conv runs on planes), and a narrower one for a last block that fills no more than its lanes (null: none).
struct DepthwiseKernels {
  void (*plane)(const DepthwisePlane&);
  CopyRowsFn copy_rows;
  void (*stride2_plane)(const DepthwiseStride2Plane&);
  void (*channel_block)(const DepthwiseChannelBlock&);
  int64_t channel_lanes;
  void (*narrow_block)(const DepthwiseChannelBlock&) = nullptr;
  int64_t narrow_lanes = 0;
};

DepthwiseKernels kernels_for(CpuIsa isa) {
#if defined(__x86_64__) || defined(__i386__)
  if (isa == CpuIsa::Avx512)
    return {depthwise_plane_f32_avx512, copy_rows_f32_avx512, depthwise_stride2_plane_f32_avx512,
            depthwise_channel_block_f32_avx512, 16, depthwise_channel_block_f32_avx2, 8};
  if (isa == CpuIsa::Avx2)
    return {depthwise_plane_f32_avx2, copy_rows_f32_avx2, depthwise_stride2_plane_f32_avx2,
            depthwise_channel_block_f32_avx2, 8};
#endif
  return {depthwise_plane_f32_scalar, copy_rows_f32_scalar, nullptr, nullptr, 0};
}

int64_t round_up(int64_t n, int64_t m) { return (n + m - 1) / m * m; }

/// Whether a stride-2 plane runs on the frame: for narrow outputs only. On Zen 3 (AVX2, 2026-12-05; paired ratios
/// against onnxruntime, 3 alternating rounds) the frame ran 3x3 240ch 28->14 at 1.66 (phase planes 1.88) and 5x5
/// 672ch 14->7 at 1.71 (2.18), but 3x3 96ch 112->56 at 1.58 (1.46) and 5x5 144ch 56->28 at 1.86 (1.62): wide rows
/// pay two loads per tap where phase planes pay one, and their packing is spread over more outputs.
bool runs_stride2(const ConvGeom& g, const DepthwiseKernels& ker) {
  return ker.stride2_plane && g.stride[1] == 2 && g.stride[2] == 2 && g.dilation[1] == 1 && g.dilation[2] == 1 &&
         g.out[2] <= kGridBlock;
}

/// Whether the conv runs as channel blocks (DepthwiseChannelBlock): an ISA with that kernel (AVX2, AVX-512: the
/// phase planes it replaces read off alignment on both), one output channel per input channel, a square 3x3 or 5x5
/// kernel (the tile's registers hold a partial per lane, 5 weights and the input), dilation 1, stride 1 or 2 on
/// both axes, and an epilogue laid out as the output.
bool runs_channel_blocks(const ConvGeom& g, const DepthwiseKernels& ker, const StoreEpilogue& epilogue) {
  return ker.channel_block && g.cout_g == 1 && g.kernel[1] == g.kernel[2] && (g.kernel[1] == 3 || g.kernel[1] == 5) &&
         g.dilation[1] == 1 && g.dilation[2] == 1 && g.stride[1] == g.stride[2] && (g.stride[1] == 1 || g.stride[1] == 2) &&
         !epilogue.per_column;
}

/// This thread's scratch of at least `floats` floats (64-byte aligned, contents left from its last use), kept
/// between calls: taken from the session's allocator, every task of every thread would pass its mutex.
float* thread_scratch(size_t floats) {
  thread_local PanelBuffer buffer;
  if (buffer.size() < floats) buffer.resize(floats);
  return buffer.data();
}

/// The conv as blocks of the ISA's lanes of channels, one task per (image, block, band of output rows).
void depthwise_channel_blocks(KernelContext& ctx, const ConvGeom& g, const DepthwiseKernels& ker, float* y,
                              const StoreEpilogue& epilogue) {
  const int64_t lanes = ker.channel_lanes;
  const float* x = ctx.input(0).data<float>();
  const float* w = ctx.input(1).data<float>();
  const float* bias = g.has_bias ? ctx.input(2).data<float>() : nullptr;
  const int64_t k = g.kernel[1], s = g.stride[1], blocks = (g.c_in + lanes - 1) / lanes;
  const int64_t row_pixels = channel_block_row_pixels(g.in[2], g.pad[2], s, k, g.out[2]);
  const size_t scratch_floats = static_cast<size_t>(channel_block_scratch_floats(row_pixels, k, lanes));
  const int64_t in_plane = g.in_pixels(), out_plane = g.out_pixels(), out_h = g.out[1];
  // Fewer blocks than two a thread (the narrow early layers: 16 channels are 2 blocks) would leave threads idle or
  // unbalanced: the output rows are then cut into bands of at least 4 rows, each band transposing its own k - s rows
  // of overlap. A band changes no output's arithmetic.
  const int64_t threads = ctx.pool->size(), blocks_total = g.batch * blocks;
  const int64_t bands = threads == 1 ? 1
                                     : std::clamp<int64_t>((2 * threads + blocks_total - 1) / blocks_total, 1,
                                                           std::max<int64_t>(1, out_h / 4));
  // A last block of at most narrow_lanes channels runs the narrow kernel (MobileNetV3-L's 72, 120, 184 and 200
  // channels end in 8 of 16 lanes on AVX-512); both give each channel the same chain. Its rows lay pixels out
  // narrow_lanes floats apart, so the scratch (whose padding must stay +0) is cleared when the width changes.
  const bool narrow_tail = ker.narrow_block && g.c_in % lanes != 0 && g.c_in % lanes <= ker.narrow_lanes;
  ctx.pool->parallel_for(blocks_total * bands, [&](int64_t i0, int64_t i1) {
    float* scratch = thread_scratch(scratch_floats);
    std::fill_n(scratch, scratch_floats, 0.0f);
    bool scratch_narrow = false;
    for (int64_t item = i0; item < i1; ++item) {
      const int64_t block = item / bands, band = item % bands;
      const int64_t img = block / blocks, c0 = block % blocks * lanes, plane = img * g.c_in + c0;
      const bool narrow = narrow_tail && g.c_in - c0 < lanes;
      if (narrow != scratch_narrow) std::fill_n(scratch, scratch_floats, 0.0f);
      scratch_narrow = narrow;
      (narrow ? ker.narrow_block : ker.channel_block)(
          {x + plane * in_plane, std::min(lanes, g.c_in - c0), g.in[1], g.in[2], g.pad[1], g.pad[2], s, k, out_h,
           g.out[2], w + c0 * k * k, bias ? bias + c0 : nullptr, y + plane * out_plane,
           epilogue.addend ? epilogue.addend + plane * out_plane : nullptr, epilogue.addend_first,
           epilogue.activation, scratch, out_h * band / bands, out_h * (band + 1) / bands});
    }
  }, 1);
}

/// A fused node's Add and activation on output plane `plane` while it is in L1 (its addend laid out as y, a plane a
/// row).
void plane_epilogue(const StoreEpilogue& epilogue, float* y, int64_t P, int64_t plane) {
  if (epilogue.active()) apply_gemm_epilogue(GemmOut{y, P, 1, nullptr, nullptr, epilogue}, y + plane * P, P, 1, P, plane, 0);
}

}  // namespace

CopyRowsFn copy_rows_for(CpuIsa isa) { return kernels_for(isa).copy_rows; }

int64_t channel_block_row_pixels(int64_t in_w, int64_t pad_left, int64_t stride, int64_t kernel, int64_t out_w) {
  // The input's columns, and every pixel a tile reads: tiles of 16 pixels (a multiple of every ISA's lanes) from
  // column 0, the last one's window ending at (tiles * 16 - 1) * stride + kernel.
  return std::max(pad_left + in_w, (round_up(out_w, kGridBlock) - 1) * stride + kernel);
}

// Contract: dot_chunked_f32 over the taps (kh, kw) ascending, init = bias; see docs/arithmetic.md#conv.
void depthwise_plane_f32_scalar(const DepthwisePlane& p) {
  for (int64_t v = 0; v < p.pixels; ++v)
    p.out[v] = arith::dot_chunked_f32(
        p.taps, p.init, [&](int64_t t) { return p.tap_src[t][v]; }, [&](int64_t t) { return p.weights[t]; });
}

void copy_rows_f32_scalar(const float* src, int64_t src_pitch, int64_t step, float* dst, int64_t dst_pitch,
                          int64_t rows, int64_t n) {
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < n; ++j) dst[r * dst_pitch + j] = src[r * src_pitch + j * step];
}

bool is_depthwise(const ConvGeom& g) {
  // A 2-D (or 1-D) conv: the leading padded dim is trivial. Large channel multipliers stay on the GEMM,
  // which shares one tap panel among the output channels.
  return is_planar(g) && g.cin_g == 1 && g.group == g.c_in && g.cout_g <= 8;
}

// Contract: dot_chunked_f32 over the taps (kh, kw) ascending, init = bias; see docs/arithmetic.md#conv.
void depthwise_conv_f32(KernelContext& ctx, const ConvGeom& g, float* y, const StoreEpilogue& epilogue) {
  const float* x = ctx.input(0).data<float>();
  const float* w = ctx.input(1).data<float>();
  const float* bias = g.has_bias ? ctx.input(2).data<float>() : nullptr;
  const DepthwiseKernels ker = kernels_for(cpu_isa());
  if (runs_channel_blocks(g, ker, epilogue)) return depthwise_channel_blocks(ctx, g, ker, y, epilogue);
  const int64_t taps = g.taps(), out_h = g.out[1], out_w = g.out[2], P = out_h * out_w;
  // Item = (image, input channel) = one input plane; c_in == group, so item is also the plane's index in x.
  if (runs_stride2(g, ker)) {
    // One plain copy per input row, where stride-2 phase planes take the even and odd elements apart; the pitch
    // lets DepthwiseStride2Plane read whole vectors past the last output column.
    const int64_t pitch = 2 * round_up(out_w, kGridBlock) + g.kernel[2];
    ctx.pool->parallel_for(g.batch * g.group, [&](int64_t i0, int64_t i1) {
      FramedPlanes frame(g, 1, pitch, ctx.allocator);
      for (int64_t item = i0; item < i1; ++item) {
        frame.pack(0, x + item * g.in_pixels());
        for (int64_t m = 0; m < g.cout_g; ++m) {
          const int64_t oc = item % g.group * g.cout_g + m, plane = item * g.cout_g + m;
          ker.stride2_plane({frame.plane(0), frame.pitch(), w + oc * taps, g.kernel[1], g.kernel[2],
                             bias ? bias[oc] : 0.0f, out_h, out_w, y + plane * P});
          plane_epilogue(epilogue, y, P, plane);
        }
      }
    }, 1);
    return;
  }
  ctx.pool->parallel_for(g.batch * g.group, [&](int64_t i0, int64_t i1) {
    PhasePlanes planes(g, kGridBlock, 1, ctx.allocator);
    const int64_t pitch = planes.pitch(), pixels = planes.pixels();
    std::vector<const float*> tap_src;
    for (int64_t kh = 0; kh < g.kernel[1]; ++kh)
      for (int64_t kw = 0; kw < g.kernel[2]; ++kw) tap_src.push_back(planes.tap(g, kh, kw));
    std::vector<float> grid(static_cast<size_t>(round_up(pixels, kGridBlock)));
    for (int64_t item = i0; item < i1; ++item) {
      planes.pack(0, x + item * g.in_pixels(), ker.copy_rows);
      for (int64_t m = 0; m < g.cout_g; ++m) {
        const int64_t oc = item % g.group * g.cout_g + m;
        ker.plane({tap_src.data(), w + oc * taps, taps, bias ? bias[oc] : 0.0f, pixels, grid.data()});
        const int64_t plane = item * g.cout_g + m;
        ker.copy_rows(grid.data(), pitch, 1, y + plane * P, out_w, out_h, out_w);
        plane_epilogue(epilogue, y, P, plane);
      }
    }
  }, 1);
}

}  // namespace lockstep::cpu
