// Helpers shared by the CUDA kernels of every family.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <memory>
#include <string>

#include "ops/common.h"
#include "runtime/kernel.h"

namespace lockstep::cuda {

inline cudaStream_t stream_of(const KernelContext& ctx) { return static_cast<cudaStream_t>(ctx.stream); }

/// Throws RuntimeError naming the node if a launch or call failed.
inline void check(const KernelContext& ctx, cudaError_t status, const char* what) {
  if (status != cudaSuccess)
    throw ctx.error(std::string(what) + ": " + cudaGetErrorString(status), ErrorCode::RuntimeError);
}
inline void check_launch(const KernelContext& ctx) { check(ctx, cudaGetLastError(), "CUDA kernel launch"); }

/// A device copy of host bytes, on the kernel's stream (pageable source: staged before cudaMemcpyAsync returns).
inline std::shared_ptr<Buffer> upload(KernelContext& ctx, const void* host, size_t bytes) {
  std::shared_ptr<Buffer> buf = ctx.allocator->allocate(bytes ? bytes : 1);
  if (bytes)
    check(ctx, cudaMemcpyAsync(buf->data, host, bytes, cudaMemcpyHostToDevice, stream_of(ctx)), "cudaMemcpyAsync");
  return buf;
}

constexpr int kThreadsPerBlock = 256;
inline unsigned blocks_for(int64_t n) { return static_cast<unsigned>((n + kThreadsPerBlock - 1) / kThreadsPerBlock); }

/// Shapes and strides passed by value to kernels (rank <= kMaxRank).
struct IndexMap {
  int rank = 0;
  int64_t out_dims[kMaxRank];
  int64_t in_strides[kMaxRank];
};

/// y[i] = element(i) for i < n, a grid-stride loop (element: a functor with a __device__ call, passed by value).
template <typename Element>
__global__ void fill_f32_kernel(Element element, float* __restrict__ y, int64_t n) {
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    y[i] = element(i);
}

/// Allocates output `output` as float32 of `shape` and sets element i to element(i), for the ops whose output
/// element is one shared arith function of its index (Col2Im, GridSample, CausalConvWithState).
template <typename Element>
void fill_output_f32(KernelContext& ctx, const Shape& shape, const Element& element, int output = 0) {
  Tensor& y = ctx.output(output, DType::Float, shape);
  const int64_t n = y.numel();
  if (n == 0) return;
  unsigned blocks = static_cast<unsigned>(std::min<int64_t>((n + kThreadsPerBlock - 1) / kThreadsPerBlock, 1 << 20));
  fill_f32_kernel<<<blocks, kThreadsPerBlock, 0, stream_of(ctx)>>>(element, y.data<float>(), n);
  check_launch(ctx);
}

}  // namespace lockstep::cuda
