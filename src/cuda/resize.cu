// CUDA kernel of the resize family: one thread per output element. The per-axis taps are the host plan's
// (src/ops/resize.cpp), uploaded as-is, so coordinates and weights are the CPU's bits; the per-element sequence is
// arith::resize_separable_f32, the same function the CPU calls. GridSample: one thread per output element through
// arith::grid_sample_element_f32, as on the CPU.
#include "cuda/common.cuh"
#include "ops/resize.h"

namespace lockstep::cuda {

namespace {

struct ResizeArgs {
  int rank;
  int64_t out_dims[kMaxRank];
  int64_t axis_start[kMaxRank];
};

// The plan's tables in device memory (ResizePlan::spans, tap_off, tap_w).
struct TapTables {
  const arith::ResizeSpan* spans;
  const int64_t* off;
  const float* w;
};

// Resolves each axis's taps for output element e into v (out[k] = &v[k]); false if any axis is outside
// (tf_crop_and_resize).
__device__ bool element_taps(const ResizeArgs& a, const TapTables& tables, int64_t e, arith::ResizeTapView* v,
                             const arith::ResizeTapView** out) {
  bool inside = true;
  for (int k = a.rank - 1; k >= 0; --k) {
    int64_t o = e % a.out_dims[k];
    e /= a.out_dims[k];
    v[k] = arith::resize_tap_view(tables.spans[a.axis_start[k] + o], tables.off, tables.w);
    out[k] = &v[k];
    inside = inside && v[k].outside == 0;
  }
  return inside;
}

// Contract: exact copy of the nearest element; see docs/arithmetic.md#nearest.
template <typename T>
__global__ void resize_nearest_kernel(ResizeArgs a, TapTables tables, const T* __restrict__ in, T* __restrict__ out,
                                      T extra, int64_t n) {
  int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (e >= n) return;
  arith::ResizeTapView v[kMaxRank];
  const arith::ResizeTapView* t[kMaxRank];
  if (!element_taps(a, tables, e, v, t)) {
    out[e] = extra;
    return;
  }
  int64_t s = 0;
  for (int k = 0; k < a.rank; ++k) s += v[k].off[0];
  out[e] = in[s];
}

// Contract: arith::resize_separable_f32, innermost axis first; see docs/arithmetic.md#interpolation.
__global__ void resize_interpolate_f32_kernel(ResizeArgs a, TapTables tables, const float* __restrict__ in,
                                              float* __restrict__ out, float extra, int64_t n) {
  int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (e >= n) return;
  arith::ResizeTapView v[kMaxRank];
  const arith::ResizeTapView* t[kMaxRank];
  out[e] = element_taps(a, tables, e, v, t) ? arith::resize_separable_f32<kMaxRank>(in, a.rank, t) : extra;
}

// The plan's tables in device memory, with the per-axis indexing the kernels take by value.
struct DeviceTaps {
  std::shared_ptr<Buffer> scratch;
  TapTables tables;
  ResizeArgs args;
};

// The tables live in one scratch block (spans, then offsets, then weights: each part's size keeps the next
// aligned), ordered on this stream: it is released once the caller's kernel is queued, and the allocator hands it
// out again only to work queued after that kernel on the same stream.
DeviceTaps upload_taps(KernelContext& ctx, const ResizePlan& p) {
  const size_t span_bytes = p.spans.size() * sizeof(arith::ResizeSpan);
  const size_t off_bytes = p.tap_off.size() * sizeof(int64_t);
  const size_t w_bytes = p.tap_w.size() * sizeof(float);
  DeviceTaps t{ctx.allocator->allocate(span_bytes + off_bytes + w_bytes), {}, {p.rank, {}, {}}};
  char* base = static_cast<char*>(t.scratch->data);
  const std::pair<const void*, size_t> parts[] = {
      {p.spans.data(), span_bytes}, {p.tap_off.data(), off_bytes}, {p.tap_w.data(), w_bytes}};
  size_t at = 0;
  for (const auto& [host, bytes] : parts) {
    if (bytes > 0)
      check(ctx, cudaMemcpyAsync(base + at, host, bytes, cudaMemcpyHostToDevice, stream_of(ctx)), "cudaMemcpyAsync");
    at += bytes;
  }
  t.tables = {reinterpret_cast<const arith::ResizeSpan*>(base), reinterpret_cast<const int64_t*>(base + span_bytes),
              reinterpret_cast<const float*>(base + span_bytes + off_bytes)};
  for (int k = 0; k < p.rank; ++k) {
    t.args.out_dims[k] = p.out_dims[k];
    t.args.axis_start[k] = p.axis_start[k];
  }
  return t;
}

struct CudaResize {
  template <typename T>
  static void nearest(KernelContext& ctx, const ResizePlan& p, const T* in, T* out, T extra, int64_t n) {
    DeviceTaps t = upload_taps(ctx, p);
    resize_nearest_kernel<T><<<blocks_for(n), kThreadsPerBlock, 0, stream_of(ctx)>>>(t.args, t.tables, in, out, extra, n);
    check_launch(ctx);
  }
  static void interpolate_f32(KernelContext& ctx, const ResizePlan& p, const float* in, float* out, int64_t n) {
    DeviceTaps t = upload_taps(ctx, p);
    resize_interpolate_f32_kernel<<<blocks_for(n), kThreadsPerBlock, 0, stream_of(ctx)>>>(t.args, t.tables, in,
                                                                                          out, p.extrapolation, n);
    check_launch(ctx);
  }
};

}  // namespace

// Contract: docs/arithmetic.md#resize (taps from the host plan, then nearest copy or separable interpolation).
void resize(KernelContext& ctx) { run_resize<CudaResize>(ctx); }

// Contract: arith::grid_sample_element_f32, one thread per output element; see docs/arithmetic.md#gridsample.
void grid_sample(KernelContext& ctx) {
  Shape out_shape;
  GridSampleElement element = grid_sample_plan(ctx, &out_shape);
  fill_output_f32(ctx, out_shape, element);
}

// Contract: arith::affine_grid_element_f32, one thread per output element; see docs/arithmetic.md#affinegrid.
void affine_grid(KernelContext& ctx) {
  Shape out_shape;
  AffineGridElement element = affine_grid_plan(ctx, &out_shape);
  fill_output_f32(ctx, out_shape, element);
}

}  // namespace lockstep::cuda
