// CPU kernels of the conv family. Conv runs as one GEMM per (image, group) on the shared core (src/cpu/gemm.cpp):
// A = the group's weights (cout_g x K, ONNX layout, so k = (c, kd, kh, kw) ascending; packed once per node when W is
// an initializer), B = the image's taps. 1x1/stride-1 convs read B's rows from X in place; other 2-D and 1-D convs
// read them in place from phase planes of X, computing a grid of out_h x pitch pixels and dropping the columns past
// out_w (conv_on_grid); 3-D convs gather B panel by panel (im2col without the full matrix). Padding taps are +0
// terms fma'd like any other. Below 64 output pixels the product may run transposed (lanes along output channels,
// the weights as B, the bias as the column init; a pointwise conv's input planes are then A's columns, read in
// place). Packing and gathering only move values: the k order stays the contract's.

#include <algorithm>
#include <functional>
#include <limits>
#include <vector>

#include "arith/dot.h"
#include "cpu/conv/depthwise.h"
#include "cpu/conv/framed_planes.h"
#include "cpu/conv/phase_planes.h"
#include "cpu/fill.h"
#include "cpu/isa.h"
#include "cpu/tap_rows.h"
#include "ops/conv.h"
#include "ops/gemm.h"
#include "runtime/thread_pool.h"

namespace lockstep::cpu {

namespace {

/// One output row's pixels inside a B panel: panel columns [col, col + len) are the output pixels
/// (o0, o1, o2 .. o2 + len - 1); i0, i1 are their input positions at tap 0 (o*stride - pad) on axes 0 and 1.
struct RowRun {
  int64_t col, len, o2, i0, i1;
};

/// For each kernel column kw, the output columns [lo, hi) whose tap o2*stride - pad + kw*dil is inside the
/// input row: computed once per Conv, so that gathering tests no bound per element.
struct ValidColumns {
  std::vector<int64_t> lo, hi;
};

int64_t floor_div(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

ValidColumns tap_columns(const ConvGeom& g) {
  ValidColumns t;
  const int64_t s = g.stride[2], W = g.in[2], out = g.out[2];
  for (int64_t kw = 0; kw < g.kernel[2]; ++kw) {
    const int64_t shift = kw * g.dilation[2] - g.pad[2];  // input column = o2*s + shift
    int64_t lo = std::clamp<int64_t>(floor_div(-shift + s - 1, s), 0, out);
    int64_t hi = std::clamp<int64_t>(floor_div(W - 1 - shift, s) + 1, lo, out);
    t.lo.push_back(lo);
    t.hi.push_back(hi);
  }
  return t;
}

/// Splits panel columns [0, count) of pixels n0.. into runs along output rows (at most count of them).
int split_rows(const ConvGeom& g, int64_t n0, int64_t count, RowRun* runs) {
  int n = 0;
  for (int64_t col = 0; col < count;) {
    const int64_t p = n0 + col, o2 = p % g.out[2], row = p / g.out[2];
    const int64_t o1 = row % g.out[1], o0 = row / g.out[1];
    const int64_t len = std::min(count - col, g.out[2] - o2);
    runs[n++] = {col, len, o2, o0 * g.stride[0] - g.pad[0], o1 * g.stride[1] - g.pad[1]};
    col += len;
  }
  return n;
}

/// Writes one run of one panel row: the taps at input row xrow (null: the row is padding), +0 outside
/// [lo, hi). Padding taps stay +0 terms of the chain (docs/arithmetic.md#conv), so every column keeps its k.
void gather_run(const RowRun& r, const float* xrow, int64_t lo, int64_t hi, int64_t stride, int64_t shift,
                float* d) {
  lo = std::clamp(lo - r.o2, int64_t{0}, r.len);
  hi = std::clamp(hi - r.o2, lo, r.len);
  if (!xrow) lo = hi = r.len;
  std::fill(d, d + lo, 0.0f);
  if (lo < hi) copy_strided_f32(xrow + (r.o2 + lo) * stride + shift, hi - lo, stride, d + lo);
  std::fill(d + hi, d + r.len, 0.0f);
}

/// The B panels of one image and group: B(k, n) = x[c][o*stride - pad + r*dil] with k = (c, kd, kh, kw), or +0
/// where the tap falls in the padding. Rows of k are written in ascending k; each is gathered run by run.
PanelFn conv_tap_panels(const ConvGeom& g, const ValidColumns& cols, const float* xg) {
  return [&g, &cols, xg](int64_t n0, int64_t count, int width, float* dst) {
    RowRun runs[64];
    const int nruns = split_rows(g, n0, count, runs);
    const int64_t D = g.in[0], H = g.in[1], W = g.in[2];
    float* d = dst;
    for (int64_t c = 0; c < g.cin_g; ++c) {
      const float* xc = xg + c * g.in_pixels();
      for (int64_t kd = 0; kd < g.kernel[0]; ++kd)
        for (int64_t kh = 0; kh < g.kernel[1]; ++kh)
          for (int64_t kw = 0; kw < g.kernel[2]; ++kw) {
            const int64_t shift = kw * g.dilation[2] - g.pad[2];
            for (int i = 0; i < nruns; ++i) {
              const RowRun& r = runs[i];
              const int64_t id = r.i0 + kd * g.dilation[0], ih = r.i1 + kh * g.dilation[1];
              const bool inside = static_cast<uint64_t>(id) < static_cast<uint64_t>(D) &&
                                  static_cast<uint64_t>(ih) < static_cast<uint64_t>(H);
              gather_run(r, inside ? xc + (id * H + ih) * W : nullptr, cols.lo[kw], cols.hi[kw], g.stride[2],
                         shift, d + r.col);
            }
            std::fill(d + count, d + width, 0.0f);
            d += width;
          }
    }
  };
}

/// conv_tap_panels of a 2-D (or 1-D) conv, read from framed planes: each panel row is `count` loads at offsets
/// fixed per panel, with no run splitting, clipping or calls per row (the transposed product of a 7x7 plane packs
/// its taps 6 pixels a panel: 4,608 rows of 6 for ResNet-50's 512-channel 3x3 convs).
PanelFn framed_tap_panels(const ConvGeom& g, const FramedPlanes& planes) {
  return [&g, &planes](int64_t n0, int64_t count, int width, float* dst) {
    const int64_t pitch = planes.pitch();
    int64_t pixel[48];  // width <= 48: the widest panel
    for (int64_t i = 0; i < count; ++i) {
      const int64_t p = n0 + i;
      pixel[i] = p / g.out[2] * g.stride[1] * pitch + p % g.out[2] * g.stride[2];
    }
    float* d = dst;
    for (int64_t c = 0; c < g.cin_g; ++c)
      for (int64_t kh = 0; kh < g.kernel[1]; ++kh)
        for (int64_t kw = 0; kw < g.kernel[2]; ++kw) {
          const float* src = planes.plane(c) + kh * g.dilation[1] * pitch + kw * g.dilation[2];
          for (int64_t i = 0; i < count; ++i) d[i] = src[pixel[i]];
          std::fill(d + count, d + width, 0.0f);
          d += width;
        }
  };
}

/// Whether the GEMM runs transposed, C' = taps x weights': lanes along output channels instead of output pixels.
/// Worth it for fewer pixels than two tile widths (7x7 planes, the 1x1 planes of squeeze-excitation blocks) when
/// the channels fill the lanes better; measured slower at 14x14 and 28x28, where the pixels fill them well (the
/// taps of the whole plane are packed up front). Judged on the 8 x 32 tile (AVX-512 ran it when this was measured;
/// it runs 8 x 48 now). Also for patches, 2-D convs whose taps do not overlap (kernel = stride > 1, no dilation or
/// padding before: ViT's 16x16 patch embedding): packing the taps then reads each input value once, and the product
/// runs like a MatMul's, pixels along rows, the weights' aligned panels as B (ViT-B/16's, 1 thread: 1.20 -> 1.0-1.08
/// of onnxruntime's time; 3x3 convs ran 1.3-1.9x slower that way). Every choice gives the same bits.
bool lanes_on_channels(const ConvGeom& g) {
  auto fill = [](int64_t n, int64_t width) { return double(n) / double((n + width - 1) / width * width); };
  const int64_t P = g.out_pixels();
  bool patches = is_planar(g);
  for (int i = 1; i < 3; ++i)
    patches = patches && g.kernel[i] == g.stride[i] && g.kernel[i] > 1 && g.dilation[i] == 1 && g.pad[i] == 0;
  if (patches) return true;
  return P < 2 * 32 && fill(g.cout_g, 32) * fill(P, 8) > fill(P, 32) * fill(g.cout_g, 8);
}

/// Every group's weights packed for one ISA's micro-kernel: as A = W[group] (cout_g x K, k = (c, kd, kh, kw)), or
/// as B = W[group]' (K x cout_g) when the lanes run along output channels.
struct PackedWeights {
  CpuIsa isa;
  bool on_channels;
  std::vector<PackedA> groups;
  std::vector<PackedB> groups_t;
};

PackedWeights pack_weights(ThreadPool* pool, const ConvGeom& g, const float* w) {
  PackedWeights packed{cpu_isa(), lanes_on_channels(g), {}, {}};
  const int64_t K = g.K();
  for (int64_t grp = 0; grp < g.group; ++grp) {
    const PanelFn rows = strided_panels({w + grp * g.cout_g * K, K, 1}, K);
    if (packed.on_channels) packed.groups_t.push_back(pack_b(pool, g.cout_g, K, rows));
    else packed.groups.push_back(pack_a(pool, g.cout_g, K, rows));
  }
  return packed;
}

/// The packed weights: kept in the node's state when W is a constant (packed on the first run, again only if the
/// ISA or the orientation changes), packed for this run otherwise. Packing copies values, so it cannot change a bit.
std::shared_ptr<const PackedWeights> packed_weights(KernelContext& ctx, const ConvGeom& g) {
  const float* w = ctx.input(1).data<float>();
  auto make = [&] { return pack_weights(ctx.pool, g, w); };
  if (!ctx.state || !ctx.input_is_constant(1)) return std::make_shared<const PackedWeights>(make());
  auto fits = [&](const PackedWeights& p) {
    if (p.isa != cpu_isa() || p.on_channels != lanes_on_channels(g)) return false;
    if (p.on_channels)
      return static_cast<int64_t>(p.groups_t.size()) == g.group && p.groups_t[0].N == g.cout_g && p.groups_t[0].K == g.K();
    return static_cast<int64_t>(p.groups.size()) == g.group && p.groups[0].M == g.cout_g && p.groups[0].K == g.K();
  };
  return ctx.state->get_or_make<PackedWeights>(fits, make);
}

// A pointwise conv reads its input planes in place as B's rows below this many input channels, and packs them
// like any B from it on. AVX2 on Zen 3 (2026-12-05): the packed product took 0.86-0.96 of the in-place one's time
// for K = 64..1024, and 1.08-1.15 of it for K = 16..40, where packing is most of the work per output. AVX-512 on
// Sapphire Rapids (2026-12-05, sixth session): in place for every K, ResNet-50's and MobileNetV3-L's 1x1 convs
// took 6% less at 1 thread and 11% less at 2 (no packing, and no packed B to share between threads).
int64_t pointed_pointwise_k(CpuIsa isa) { return isa == CpuIsa::Avx512 ? std::numeric_limits<int64_t>::max() : 64; }

bool is_pointwise(const ConvGeom& g) {
  for (int i = 0; i < 3; ++i)
    if (g.kernel[i] != 1 || g.stride[i] != 1 || g.pad[i] != 0 || g.out[i] != g.in[i]) return false;
  return true;
}

/// Whether the plain product reads its taps in place from phase planes (conv_on_grid) instead of gathering them.
bool runs_on_grid(const ConvGeom& g) { return is_planar(g) && !is_pointwise(g) && g.cin_g > 0; }

/// The plain product of one (image, group) with B read in place: the group's input planes packed into phase
/// planes (cpu/conv/phase_planes.h), B(k, v) = tap (kh, kw) of channel c at grid pixel v = oh*pitch + ow, k = (c,
/// kh, kw). The grid columns ow >= out_w are computed and dropped; no tap is gathered, so B is the input's size
/// instead of K x pixels.
void conv_on_grid(ThreadPool* pool, Allocator* scratch, const ConvGeom& g, const PackedA& w, const float* xg,
                  const float* bias, float* yg, const StoreEpilogue& epilogue) {
  const CopyRowsFn copy_rows = copy_rows_for(cpu_isa());
  PhasePlanes planes(g, 1, g.cin_g, scratch);
  run_range(pool, g.cin_g, [&](int64_t c0, int64_t c1) {
    for (int64_t c = c0; c < c1; ++c) planes.pack(c, xg + c * g.in_pixels(), copy_rows);
  });
  std::vector<const float*> rows;
  rows.reserve(static_cast<size_t>(g.K()));
  for (int64_t c = 0; c < g.cin_g; ++c)
    for (int64_t kh = 0; kh < g.kernel[1]; ++kh)
      for (int64_t kw = 0; kw < g.kernel[2]; ++kw) rows.push_back(planes.tap(g, kh, kw, c));
  const int64_t pitch = planes.pitch(), N = planes.pixels(), out_h = g.out[1], out_w = g.out[2];
  if (pitch == out_w) return gemm_f32_packed_rows(pool, w, N, rows.data(), GemmOut{yg, N, 1, bias, nullptr, epilogue});
  // The running totals between k-blocks, where K takes several, of the tiles that straddle a grid row's end (the
  // others accumulate in y itself): from the session's pool, uninitialized (the product writes what it reads); a
  // fresh vector would be zero-filled first, and a large one handed back to the system when freed and page-faulted
  // again every run. Those tiles' outputs leave for y through the grid's column map.
  std::shared_ptr<Buffer> totals;
  if (grid_needs_totals(w, N)) totals = scratch->allocate(static_cast<size_t>(g.cout_g * N) * sizeof(float));
  gemm_f32_packed_rows(pool, w, N, rows.data(), GemmOut{yg, out_h * out_w, 1, bias, nullptr, epilogue},
                       {pitch, out_w, totals ? static_cast<float*>(totals->data) : nullptr});
}

}  // namespace

// Contract: dot_chunked_f32 over k = (c_in, kd, kh, kw) ascending, init = bias; see docs/arithmetic.md#conv.
void conv(KernelContext& ctx) {
  const ConvGeom g = conv_geometry(ctx);
  Tensor& y = ctx.output(0, DType::Float, g.out_shape);
  if (y.numel() > 0) conv_into(ctx, g, y.data<float>(), {});
}

// Contract: as conv, then absorbed_ops_f32 per element.
void conv_into(KernelContext& ctx, const ConvGeom& g, float* yd, const StoreEpilogue& epilogue) {
  if (is_depthwise(g)) {
    depthwise_conv_f32(ctx, g, yd, epilogue);
    return;
  }
  const float* x = ctx.input(0).data<float>();
  const std::shared_ptr<const PackedWeights> weights = packed_weights(ctx, g);
  const float* bias = g.has_bias ? ctx.input(2).data<float>() : nullptr;
  const int64_t K = g.K(), P = g.out_pixels();
  const bool pointwise = is_pointwise(g);
  const ValidColumns cols = tap_columns(g);
  auto one = [&](ThreadPool* pool, int64_t item) {
    const int64_t img = item / g.group, grp = item % g.group;
    const float* xg = x + (img * g.c_in + grp * g.cin_g) * g.in_pixels();
    float* yg = yd + (img * g.c_out + grp * g.cout_g) * P;
    const float* bias_g = bias ? bias + grp * g.cout_g : nullptr;
    StoreEpilogue epilogue_g = epilogue;  // its addend laid out as y: offset as yg
    if (epilogue_g.addend) epilogue_g.addend += yg - yd;
    // The taps, pixel by pixel: B panels of the plain product, A panels of the transposed one.
    if (!weights->on_channels && runs_on_grid(g))
      return conv_on_grid(pool, ctx.allocator, g, weights->groups[grp], xg, bias_g, yg, epilogue_g);
    if (!weights->on_channels && pointwise && K < pointed_pointwise_k(weights->isa)) {
      // B(k, n) = x[c = k][n]: the input planes are B's rows already.
      std::vector<const float*> rows(static_cast<size_t>(K));
      for (int64_t c = 0; c < K; ++c) rows[c] = xg + c * P;
      return gemm_f32_packed_rows(pool, weights->groups[grp], P, rows.data(), GemmOut{yg, P, 1, bias_g, nullptr, epilogue_g});
    }
    if (weights->on_channels && is_planar(g) && !pointwise) {
      FramedPlanes planes(g, g.cin_g, 0, ctx.allocator);
      run_range(pool, g.cin_g, [&](int64_t c0, int64_t c1) {
        for (int64_t c = c0; c < c1; ++c) planes.pack(c, xg + c * g.in_pixels());
      });
      return gemm_f32_packed_b(pool, P, framed_tap_panels(g, planes), weights->groups_t[grp],
                               GemmOut{yg, 1, P, nullptr, bias_g, epilogue_g});
    }
    if (weights->on_channels && pointwise)  // the input planes are A's columns already
      return gemm_f32_a_columns_packed_b(pool, P, xg, P, weights->groups_t[grp],
                                         GemmOut{yg, 1, P, nullptr, bias_g, epilogue_g});
    PanelFn taps = pointwise ? strided_panels({xg, 1, g.in_pixels()}, K) : conv_tap_panels(g, cols, xg);
    if (weights->on_channels)
      gemm_f32_packed_b(pool, P, taps, weights->groups_t[grp], GemmOut{yg, 1, P, nullptr, bias_g, epilogue_g});
    else gemm_f32_packed(pool, weights->groups[grp], P, taps, GemmOut{yg, P, 1, bias_g, nullptr, epilogue_g});
  };
  const int64_t items = g.batch * g.group;
  if (items >= 2 * ctx.pool->size()) {
    ctx.pool->parallel_for(items, [&](int64_t i0, int64_t i1) {
      for (int64_t i = i0; i < i1; ++i) one(nullptr, i);
    }, 1);
  } else {
    for (int64_t i = 0; i < items; ++i) one(ctx.pool, i);
  }
}

// Contract: conv_transpose_element_f32 (dot_chunked_f32 over (c, aligned taps)); see docs/arithmetic.md#convtranspose.
void conv_transpose(KernelContext& ctx) {
  Shape out_shape;
  const arith::ConvDims g = conv_transpose_geometry(ctx, &out_shape);
  Tensor& y = ctx.output(0, DType::Float, out_shape);
  if (y.numel() == 0) return;
  const float* x = ctx.input(0).data<float>();
  const float* w = ctx.input(1).data<float>();
  const float* bias = ctx.has_input(2) ? ctx.input(2).data<float>() : nullptr;
  float* yd = y.data<float>();
  ctx.pool->parallel_for(y.numel(), [&](int64_t i0, int64_t i1) {
    for (int64_t i = i0; i < i1; ++i) yd[i] = arith::conv_transpose_element_f32(g, x, w, bias, i);
  }, 256);
}

// Contract: arith::col2im_element_f32 (from +0, ascending block index); see docs/arithmetic.md#col2im.
void col2im(KernelContext& ctx) {
  Shape out_shape;
  Col2ImElement element = col2im_plan(ctx, &out_shape);
  fill_output_f32(ctx, out_shape, 1024, element);
}

// Contract: arith::deform_conv_element_f32 (dot_chunked_f32 over (c, kh, kw) of the masked bilinear samples);
// see docs/arithmetic.md#deformconv.
void deform_conv(KernelContext& ctx) {
  Shape out_shape;
  const DeformConvElement element = deform_conv_plan(ctx, &out_shape);
  fill_output_f32(ctx, out_shape, 64, element);
}

// Contract: arith::causal_conv_element_f32 (taps ascending from the bias); see
// docs/arithmetic.md#causalconvwithstate.
void causal_conv_with_state(KernelContext& ctx) {
  Shape out_shape, state_shape;
  const arith::CausalConvGeometry g = causal_conv_plan(ctx, &out_shape, &state_shape);
  fill_output_f32(ctx, out_shape, 1024, CausalConvOutput{g});
  fill_output_f32(ctx, state_shape, 1024, CausalConvState{g}, 1);
}

}  // namespace lockstep::cpu
