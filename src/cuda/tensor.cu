// CUDA kernels of the tensor family: one thread per output element, moving bytes by element size (1, 2, 4, 8),
// following the same plans (src/ops/tensor.cpp) as the CPU kernels, so the bytes moved are the same.
#include <cstring>

#include "cuda/common.cuh"
#include "ops/registry.h"
#include "ops/tensor.h"

namespace lockstep::cuda {

namespace {

// Indices up to this many elements are copied to the host and validated there (out of range is an error, as on
// the CPU); larger index tensors are clamped into range on the device instead (docs/arithmetic.md#gather).
constexpr int64_t kHostValidatedIndices = int64_t(1) << 20;

template <typename Fn>
void by_size(int size, Fn&& fn) {
  switch (size) {
    case 1: fn(uint8_t{}); break;
    case 2: fn(uint16_t{}); break;
    case 4: fn(uint32_t{}); break;
    default: fn(uint64_t{}); break;
  }
}

// Contract: exact copy; see docs/arithmetic.md#strided-copy.
template <typename T>
__global__ void strided_copy_kernel(StridedCopy c, const T* __restrict__ src, T* __restrict__ dst, int64_t n) {
  int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (e >= n) return;
  int64_t s = c.src_offset, d = c.dst_offset, rest = e;
  for (int k = c.rank - 1; k >= 0; --k) {
    int64_t i = rest % c.dims[k];
    rest /= c.dims[k];
    s += i * c.src_strides[k];
    d += i * c.dst_strides[k];
  }
  dst[d] = src[s];
}

// Contract: exact copy; see docs/arithmetic.md#pad.
template <typename T>
__global__ void pad_kernel(PadPlan p, const T* __restrict__ src, T* __restrict__ dst, int64_t n) {
  int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (e >= n) return;
  T value;
  memcpy(&value, &p.value_bits, sizeof(T));
  int64_t s = 0, rest = e;
  for (int k = p.rank - 1; k >= 0; --k) {
    int64_t o = rest % p.out_dims[k];
    rest /= p.out_dims[k];
    int64_t i = pad_source_index(o - p.begin[k], p.in_dims[k], p.mode);
    if (i < 0) {
      dst[e] = value;
      return;
    }
    s += i * p.in_strides[k];
  }
  dst[e] = src[s];
}

// Negative indices wrap; anything still outside [0, n) is clamped (only reachable when not host-validated).
template <typename I>
__device__ int64_t wrap_clamp(I v, int64_t n) {
  int64_t i = static_cast<int64_t>(v);
  if (i < 0) i += n;
  return i < 0 ? 0 : (i >= n ? n - 1 : i);
}

// Contract: exact copy; see docs/arithmetic.md#gather.
template <typename T, typename I>
__global__ void gather_kernel(GatherPlan p, const T* __restrict__ src, const I* __restrict__ idx, T* __restrict__ dst,
                              int64_t n) {
  int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (e >= n) return;
  int64_t r = e / p.inner, i = e % p.inner;
  int64_t o = r / p.n_idx, j = r % p.n_idx;
  dst[e] = src[(o * p.axis_dim + wrap_clamp(idx[j], p.axis_dim)) * p.inner + i];
}

// Contract: exact copy; see docs/arithmetic.md#gatherelements.
template <typename T, typename I>
__global__ void gather_elements_kernel(GatherElementsPlan p, const T* __restrict__ src, const I* __restrict__ idx,
                                       T* __restrict__ dst, int64_t n) {
  int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (e >= n) return;
  int64_t s = 0, rest = e;
  for (int k = p.rank - 1; k >= 0; --k) {
    int64_t i = rest % p.out_dims[k];
    rest /= p.out_dims[k];
    if (k == p.axis) i = wrap_clamp(idx[e], p.axis_dim);
    s += i * p.data_strides[k];
  }
  dst[e] = src[s];
}

// Contract: every element is the value's bytes; see docs/arithmetic.md#host-computed.
template <typename T>
__global__ void fill_kernel(T value, T* __restrict__ dst, int64_t n) {
  int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (e < n) dst[e] = value;
}

void validate_on_host_if_small(KernelContext& ctx, int64_t axis_dim) {
  if (ctx.input(1).numel() <= kHostValidatedIndices) validate_indices(ctx, ctx.host_input(1), axis_dim);
}

}  // namespace

// Contract: no data is touched; the output shares the input's buffer. See docs/arithmetic.md#aliases.
void alias(KernelContext& ctx) { ctx.alias_output(0, ctx.input(0).reshaped(alias_shape(ctx))); }

// Contract: exact copy; see docs/arithmetic.md#strided-copy.
void movement(KernelContext& ctx) {
  MovementPlan plan = movement_plan(ctx);
  for (size_t i = 0; i < plan.out_shapes.size(); ++i) ctx.output(static_cast<int>(i), plan.dtype, plan.out_shapes[i]);
  int size = movable_size(ctx, plan.dtype);
  for (const CopyJob& job : plan.jobs) {
    int64_t n = job.copy.numel();
    if (n == 0) continue;
    const void* src = ctx.input(job.src_input).raw();
    void* dst = ctx.outputs[job.dst_output].raw();
    by_size(size, [&](auto w) {
      using T = decltype(w);
      strided_copy_kernel<T><<<blocks_for(n), kThreadsPerBlock, 0, stream_of(ctx)>>>(
          job.copy, static_cast<const T*>(src), static_cast<T*>(dst), n);
    });
    check_launch(ctx);
  }
}

// Contract: exact copy; see docs/arithmetic.md#pad.
void pad(KernelContext& ctx) {
  Shape shape;
  PadPlan plan = pad_plan(ctx, shape);
  const Tensor& x = ctx.input(0);
  Tensor& out = ctx.output(0, x.dtype(), shape);
  int64_t n = out.numel();
  if (n == 0) return;
  by_size(movable_size(ctx, x.dtype()), [&](auto w) {
    using T = decltype(w);
    pad_kernel<T><<<blocks_for(n), kThreadsPerBlock, 0, stream_of(ctx)>>>(plan, x.data<T>(), out.data<T>(), n);
  });
  check_launch(ctx);
}

// Contract: exact copy; see docs/arithmetic.md#gather.
void gather(KernelContext& ctx) {
  Shape shape;
  GatherPlan plan = gather_plan(ctx, shape);
  validate_on_host_if_small(ctx, plan.axis_dim);
  const Tensor& x = ctx.input(0);
  const Tensor& idx = ctx.input(1);
  Tensor& out = ctx.output(0, x.dtype(), shape);
  int64_t n = out.numel();
  if (n == 0) return;
  by_size(movable_size(ctx, x.dtype()), [&](auto w) {
    using T = decltype(w);
    if (idx.dtype() == DType::Int64)
      gather_kernel<<<blocks_for(n), kThreadsPerBlock, 0, stream_of(ctx)>>>(plan, x.data<T>(), idx.data<int64_t>(),
                                                                          out.data<T>(), n);
    else
      gather_kernel<<<blocks_for(n), kThreadsPerBlock, 0, stream_of(ctx)>>>(plan, x.data<T>(), idx.data<int32_t>(),
                                                                          out.data<T>(), n);
  });
  check_launch(ctx);
}

// Contract: exact copy; see docs/arithmetic.md#gatherelements.
void gather_elements(KernelContext& ctx) {
  Shape shape;
  GatherElementsPlan plan = gather_elements_plan(ctx, shape);
  validate_on_host_if_small(ctx, plan.axis_dim);
  const Tensor& x = ctx.input(0);
  const Tensor& idx = ctx.input(1);
  Tensor& out = ctx.output(0, x.dtype(), shape);
  int64_t n = out.numel();
  if (n == 0) return;
  by_size(movable_size(ctx, x.dtype()), [&](auto w) {
    using T = decltype(w);
    if (idx.dtype() == DType::Int64)
      gather_elements_kernel<<<blocks_for(n), kThreadsPerBlock, 0, stream_of(ctx)>>>(
          plan, x.data<T>(), idx.data<int64_t>(), out.data<T>(), n);
    else
      gather_elements_kernel<<<blocks_for(n), kThreadsPerBlock, 0, stream_of(ctx)>>>(
          plan, x.data<T>(), idx.data<int32_t>(), out.data<T>(), n);
  });
  check_launch(ctx);
}

// Contract: values computed on the host by src/ops/tensor.cpp; see docs/arithmetic.md#host-computed.
void host_computed(KernelContext& ctx) {
  Tensor v = host_value(ctx, static_cast<HostOp>(ctx.entry.variant));
  Tensor& out = ctx.output(0, v.dtype(), v.shape());
  // Pageable source: cudaMemcpyAsync returns once `v` is staged, so it may be freed when this returns.
  if (v.bytes()) check(ctx, cudaMemcpyAsync(out.raw(), v.raw(), v.bytes(), cudaMemcpyHostToDevice, stream_of(ctx)),
                       "cudaMemcpyAsync");
}

// Contract: every element is the value's bytes; see docs/arithmetic.md#host-computed.
void constant_of_shape(KernelContext& ctx) {
  Shape shape;
  Tensor v = constant_of_shape_value(ctx, shape);
  Tensor& out = ctx.output(0, v.dtype(), shape);
  int64_t n = out.numel();
  if (n == 0) return;
  by_size(movable_size(ctx, v.dtype()), [&](auto w) {
    using T = decltype(w);
    T value;
    std::memcpy(&value, v.raw(), sizeof(T));
    fill_kernel<T><<<blocks_for(n), kThreadsPerBlock, 0, stream_of(ctx)>>>(value, out.data<T>(), n);
  });
  check_launch(ctx);
}

}  // namespace lockstep::cuda
