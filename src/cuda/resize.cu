// CUDA kernel of the resize family: one thread per output element. The per-axis taps are the host plan's
// (src/ops/resize.cpp), uploaded as-is, so coordinates and weights are the CPU's bits; the per-element sequence is
// arith::resize_separable_f32, the same function the CPU calls.
#include "cuda/common.cuh"
#include "ops/resize.h"

namespace lockstep::cuda {

namespace {

struct ResizeArgs {
  int rank;
  int64_t out_dims[kMaxRank];
  int64_t axis_start[kMaxRank];
};

// Resolves each axis's taps for output element e; false if any axis is outside (tf_crop_and_resize).
__device__ bool element_taps(const ResizeArgs& a, const arith::ResizeTaps* taps, int64_t e,
                             const arith::ResizeTaps** out) {
  bool inside = true;
  for (int k = a.rank - 1; k >= 0; --k) {
    int64_t o = e % a.out_dims[k];
    e /= a.out_dims[k];
    out[k] = &taps[a.axis_start[k] + o];
    inside = inside && out[k]->outside == 0;
  }
  return inside;
}

// Contract: exact copy of the nearest element; see docs/arithmetic.md#nearest.
template <typename T>
__global__ void resize_nearest_kernel(ResizeArgs a, const arith::ResizeTaps* __restrict__ taps,
                                      const T* __restrict__ in, T* __restrict__ out, T extra, int64_t n) {
  int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (e >= n) return;
  const arith::ResizeTaps* t[kMaxRank];
  if (!element_taps(a, taps, e, t)) {
    out[e] = extra;
    return;
  }
  int64_t s = 0;
  for (int k = 0; k < a.rank; ++k) s += t[k]->off[0];
  out[e] = in[s];
}

// Contract: arith::resize_separable_f32, innermost axis first; see docs/arithmetic.md#interpolation.
__global__ void resize_interpolate_f32_kernel(ResizeArgs a, const arith::ResizeTaps* __restrict__ taps,
                                              const float* __restrict__ in, float* __restrict__ out, float extra,
                                              int64_t n) {
  int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (e >= n) return;
  const arith::ResizeTaps* t[kMaxRank];
  out[e] = element_taps(a, taps, e, t) ? arith::resize_separable_f32<kMaxRank>(in, a.rank, t) : extra;
}

template <typename T>
void launch_nearest(KernelContext& ctx, const ResizeArgs& a, const arith::ResizeTaps* taps, const ResizePlan& p,
                    const Tensor& x, Tensor& out) {
  T extra;
  memcpy(&extra, &p.extrapolation_bits, sizeof(T));
  int64_t n = out.numel();
  resize_nearest_kernel<T><<<blocks_for(n), kThreadsPerBlock, 0, stream_of(ctx)>>>(a, taps, x.data<T>(),
                                                                                     out.data<T>(), extra, n);
}

}  // namespace

// Contract: docs/arithmetic.md#resize (taps from the host plan, then nearest copy or separable interpolation).
void resize(KernelContext& ctx) {
  ResizePlan p = resize_plan(ctx);
  const Tensor& x = ctx.input(0);
  Tensor& out = ctx.output(0, p.dtype, p.out_shape);
  if (out.numel() == 0) return;
  // The taps table lives in scratch memory, ordered on this stream: it is released when this returns, and the
  // allocator hands it out again only to work queued after this kernel on the same stream.
  size_t bytes = p.taps.size() * sizeof(arith::ResizeTaps);
  std::shared_ptr<Buffer> scratch = ctx.allocator->allocate(bytes);
  check(ctx, cudaMemcpyAsync(scratch->data, p.taps.data(), bytes, cudaMemcpyHostToDevice, stream_of(ctx)),
        "cudaMemcpyAsync");
  auto* taps = static_cast<const arith::ResizeTaps*>(scratch->data);
  ResizeArgs a{p.rank, {}, {}};
  for (int k = 0; k < p.rank; ++k) {
    a.out_dims[k] = p.out_dims[k];
    a.axis_start[k] = p.axis_start[k];
  }
  int64_t n = out.numel();
  if (!p.nearest) {
    resize_interpolate_f32_kernel<<<blocks_for(n), kThreadsPerBlock, 0, stream_of(ctx)>>>(
        a, taps, x.data<float>(), out.data<float>(), p.extrapolation, n);
  } else {
    switch (dtype_size(p.dtype)) {
      case 1: launch_nearest<uint8_t>(ctx, a, taps, p, x, out); break;
      case 2: launch_nearest<uint16_t>(ctx, a, taps, p, x, out); break;
      case 4: launch_nearest<uint32_t>(ctx, a, taps, p, x, out); break;
      default: launch_nearest<uint64_t>(ctx, a, taps, p, x, out); break;
    }
  }
  check_launch(ctx);
}

}  // namespace lockstep::cuda
