// CUDA kernels of the tensor family: one thread per output element, moving bytes by element size (1, 2, 4, 8),
// following the same plans (src/ops/tensor.cpp) as the CPU kernels, so the bytes moved are the same.
#include <optional>

#include "cuda/broadcast.cuh"
#include "cuda/common.cuh"
#include "ops/registry.h"
#include "ops/tensor.h"

namespace lockstep::cuda {

namespace {

// Indices up to this many elements are copied to the host and validated there (out of range is an error, as on
// the CPU); larger index tensors are clamped into range on the device instead (docs/arithmetic.md#gather).
constexpr int64_t kHostValidatedIndices = int64_t(1) << 20;

struct CopyOffsets {
  int64_t src, dst;
};

/// The source and destination offsets of element e of a strided copy.
template <class Index>
__device__ __forceinline__ CopyOffsets copy_offsets(const StridedCopy& c, Index e) {
  int64_t s = c.src_offset, d = c.dst_offset;
  for (int k = c.rank - 1; k >= 0; --k) {
    const Index q = e / Index(c.dims[k]), i = e - q * Index(c.dims[k]);
    s += int64_t(i) * c.src_strides[k];
    d += int64_t(i) * c.dst_strides[k];
    e = q;
  }
  return {s, d};
}

// Contract: exact copy; see docs/arithmetic.md#strided-copy.
template <typename T>
__global__ void strided_copy_kernel(StridedCopy c, const T* __restrict__ src, T* __restrict__ dst, int64_t n) {
  int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (e >= n) return;
  // 32-bit divisions where the coordinates fit: a 64-bit one is a long subroutine.
  const CopyOffsets o = n <= int64_t(UINT32_MAX) ? copy_offsets<uint32_t>(c, uint32_t(e)) : copy_offsets<int64_t>(c, e);
  dst[o.dst] = src[o.src];
}

/// A StridedCopy whose every offset is below 2^31, its coordinates found by multiply-high divisions
/// (ops/fast_divisor.h), counted in units of U: one element, or four consecutive ones (Quad) where the innermost
/// dim runs contiguously on both sides in whole quads.
struct StridedCopy32 {
  int rank = 0;
  uint32_t numel = 1, src_offset = 0, dst_offset = 0;
  FastDivisor dims[kCopyMaxRank];
  uint32_t src_strides[kCopyMaxRank] = {}, dst_strides[kCopyMaxRank] = {};
};

/// `c` in units of `unit` elements (1 or 4), or nothing where an offset reaches 2^31, a stride is negative (a
/// reversed Slice: strided_copy_kernel takes it) or the units do not tile it. Every dim is at least 1 (the caller
/// skips empty copies).
std::optional<StridedCopy32> copy_32bit(const StridedCopy& c, int unit) {
  constexpr int64_t kLimit = int64_t(1) << 31;
  const int last = c.rank - 1;
  if (unit > 1 && (c.rank == 0 || c.src_strides[last] != 1 || c.dst_strides[last] != 1 || c.dims[last] % unit != 0 ||
                   c.src_offset % unit != 0 || c.dst_offset % unit != 0))
    return std::nullopt;
  StridedCopy32 out;
  out.rank = c.rank;
  int64_t numel = 1, src_end = c.src_offset / unit, dst_end = c.dst_offset / unit;  // in units
  for (int k = 0; k < c.rank; ++k) {
    const bool inner = k == last;  // the quads run along it: unit stride
    if (!inner && (c.src_strides[k] % unit != 0 || c.dst_strides[k] % unit != 0)) return std::nullopt;
    const int64_t dim = inner ? c.dims[k] / unit : c.dims[k];
    const int64_t ss = inner && unit > 1 ? 1 : c.src_strides[k] / unit, ds = inner && unit > 1 ? 1 : c.dst_strides[k] / unit;
    numel *= dim, src_end += (dim - 1) * ss, dst_end += (dim - 1) * ds;
    if (numel >= kLimit || src_end >= kLimit || dst_end >= kLimit || ss < 0 || ds < 0) return std::nullopt;
    out.dims[k] = FastDivisor(uint32_t(dim));
    out.src_strides[k] = uint32_t(ss), out.dst_strides[k] = uint32_t(ds);
  }
  out.numel = uint32_t(numel);
  out.src_offset = uint32_t(c.src_offset / unit), out.dst_offset = uint32_t(c.dst_offset / unit);
  return out;
}

// Contract: exact copy; see docs/arithmetic.md#strided-copy. U: one element, or a Quad of four.
template <typename U>
__global__ void strided_copy_kernel_32bit(StridedCopy32 c, const U* __restrict__ src, U* __restrict__ dst) {
  uint32_t e = blockIdx.x * blockDim.x + threadIdx.x;
  if (e >= c.numel) return;
  uint32_t s = c.src_offset, d = c.dst_offset;
  for (int k = c.rank - 1; k >= 0; --k) {
    const uint32_t q = c.dims[k].quotient(e), i = e - q * c.dims[k].divisor;
    s += i * c.src_strides[k];
    d += i * c.dst_strides[k];
    e = q;
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

// One thread per element, on the kernel's stream; every kernel above takes the element count last.
template <typename... Params, typename... Args>
void launch_per_element(KernelContext& ctx, void (*kernel)(Params...), int64_t n, Args... args) {
  kernel<<<blocks_for(n), kThreadsPerBlock, 0, stream_of(ctx)>>>(args..., n);
  check_launch(ctx);
}

struct CudaTensor {
  template <typename T>
  static void copy(KernelContext& ctx, const StridedCopy& c, const T* src, T* dst) {
    if (c.numel() == 0) return;
    if (const auto quads = quad_aligned(src) && quad_aligned(dst) ? copy_32bit(c, 4) : std::nullopt) {
      launch_32bit(ctx, *quads, reinterpret_cast<const Quad<T>*>(src), reinterpret_cast<Quad<T>*>(dst));
    } else if (const auto singles = copy_32bit(c, 1)) {
      launch_32bit(ctx, *singles, src, dst);
    } else {
      launch_per_element(ctx, strided_copy_kernel<T>, c.numel(), c, src, dst);
    }
  }
  template <typename U>
  static void launch_32bit(KernelContext& ctx, const StridedCopy32& c, const U* src, U* dst) {
    strided_copy_kernel_32bit<U><<<blocks_for(c.numel), kThreadsPerBlock, 0, stream_of(ctx)>>>(c, src, dst);
    check_launch(ctx);
  }
  template <typename T>
  static void pad(KernelContext& ctx, const PadPlan& p, const T* src, T* dst, int64_t n) {
    launch_per_element(ctx, pad_kernel<T>, n, p, src, dst);
  }
  template <typename T, typename I>
  static void gather(KernelContext& ctx, const GatherPlan& p, const T* src, const I* idx, T* dst, int64_t n) {
    launch_per_element(ctx, gather_kernel<T, I>, n, p, src, idx, dst);
  }
  template <typename T, typename I>
  static void gather(KernelContext& ctx, const GatherElementsPlan& p, const T* src, const I* idx, T* dst, int64_t n) {
    launch_per_element(ctx, gather_elements_kernel<T, I>, n, p, src, idx, dst);
  }
  template <typename T>
  static void fill(KernelContext& ctx, T value, T* dst, int64_t n) {
    launch_per_element(ctx, fill_kernel<T>, n, value, dst);
  }
  static void check_indices(KernelContext& ctx, int64_t axis_dim) {
    if (ctx.input(1).numel() <= kHostValidatedIndices) validate_indices(ctx, ctx.host_input(1), axis_dim);
  }
  static void upload(KernelContext& ctx, const Tensor& host, Tensor& out) {
    // Pageable source: cudaMemcpyAsync returns once `host` is staged, so it may be freed when this returns.
    check(ctx, cudaMemcpyAsync(out.raw(), host.raw(), host.bytes(), cudaMemcpyHostToDevice, stream_of(ctx)),
          "cudaMemcpyAsync");
  }
};

}  // namespace

// Contract: exact copy; see docs/arithmetic.md#strided-copy.
void movement(KernelContext& ctx) { run_movement<CudaTensor>(ctx); }

// Contract: exact copy; see docs/arithmetic.md#pad.
void pad(KernelContext& ctx) { run_pad<CudaTensor>(ctx); }

// Contract: exact copy; see docs/arithmetic.md#gather and docs/arithmetic.md#gatherelements.
void gather(KernelContext& ctx) { run_gather<CudaTensor>(ctx); }

// Contract: values computed on the host by src/ops/tensor.cpp; see docs/arithmetic.md#host-computed.
void host_computed(KernelContext& ctx) { run_host_computed<CudaTensor>(ctx); }

// Contract: every element is the value's bytes; see docs/arithmetic.md#host-computed.
void constant_of_shape(KernelContext& ctx) { run_constant_of_shape<CudaTensor>(ctx); }

}  // namespace lockstep::cuda
