// CUDA kernels of the pool family, mirroring src/cpu/pool.cpp: both call the window functions of
// src/arith/reduce_ops.h. Contract: docs/contract/pool.md.
#include <cstdint>

#include "arith/reduce.h"
#include "arith/reduce_ops.h"
#include "cuda/common.cuh"
#include "ops/pool.h"
#include "ops/reduce.h"
#include "ops/registry.h"

namespace lockstep::cuda {

namespace {

constexpr int kWarpsPerBlock = kThreadsPerBlock / 32;
constexpr float kInf = __builtin_huge_valf();

// Contract: MaxPool, sequential rule over the taps inside the input; one thread per output.
template <typename T>
__global__ void max_pool_thread(const T* x, T* y, int64_t* indices, arith::PoolGeom g, T lowest) {
  const int64_t o = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (o >= g.planes * g.out_plane) return;
  const int64_t plane = o / g.out_plane;
  int64_t at = -1;
  y[o] = arith::maxpool_window(g, x + plane * g.in_plane, o % g.out_plane, lowest, &at);
  if (indices) indices[o] = at < 0 ? -1 : plane * g.in_plane + at;
}

template <typename T>
void launch_max(KernelContext& ctx, const arith::PoolGeom& g, const Tensor& x, Tensor& y, int64_t* indices, T lowest) {
  max_pool_thread<T><<<blocks_for(y.numel()), kThreadsPerBlock, 0, stream_of(ctx)>>>(x.data<T>(), y.data<T>(),
                                                                                    indices, g, lowest);
}

// Contract: AveragePool, canonical sum of the window's terms / their count; one thread per output.
__global__ void average_pool_thread(const float* x, float* y, arith::PoolGeom g) {
  const int64_t o = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (o >= g.planes * g.out_plane) return;
  y[o] = arith::avgpool_window_f32(g, x + (o / g.out_plane) * g.in_plane, o % g.out_plane);
}

// Contract: GlobalAveragePool = S(plane)/spatial (warp: lane j takes j mod 32); GlobalMaxPool = sequential rule.
__global__ void global_pool_warp(const float* x, float* y, GlobalPlan p, bool is_max) {
  const int64_t r = static_cast<int64_t>(blockIdx.x) * kWarpsPerBlock + threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  if (r >= p.planes) return;
  const float* plane = x + r * p.spatial;
  float out;
  if (is_max) {
    float v = 0.0f;
    int64_t at = -1;
    for (int64_t i = lane; i < p.spatial; i += 32) arith::extreme_pick_f32<true>(v, at, plane[i], i);
    out = arith::warp_extreme_f32<true>(v, at, -kInf);
  } else {
    float s = 0.0f;
    for (int64_t i = lane; i < p.spatial; i += 32) s = s + plane[i];
    out = arith::warp_tree_f32(s, arith::AddF32{}) / static_cast<float>(p.spatial);
  }
  if (lane == 0) y[r] = out;
}

}  // namespace

void max_pool(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  require_dtype(ctx, x.dtype(), {DType::Float, DType::Int8, DType::UInt8});
  Shape out_shape;
  arith::PoolGeom g = plan_pool(ctx, true, out_shape);
  Tensor& y = ctx.output(0, x.dtype(), out_shape);
  int64_t* indices = nullptr;
  if (ctx.node.outputs.size() > 1 && !ctx.node.outputs[1].empty())
    indices = ctx.output(1, DType::Int64, out_shape).data<int64_t>();
  if (y.numel() == 0) return;
  switch (x.dtype()) {
    case DType::Float: launch_max<float>(ctx, g, x, y, indices, -kInf); break;
    case DType::Int8: launch_max<int8_t>(ctx, g, x, y, indices, INT8_MIN); break;
    default: launch_max<uint8_t>(ctx, g, x, y, indices, 0); break;
  }
  check_launch(ctx);
}

void average_pool(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  require_dtype(ctx, x.dtype(), {DType::Float});
  Shape out_shape;
  arith::PoolGeom g = plan_pool(ctx, false, out_shape);
  Tensor& y = ctx.output(0, DType::Float, out_shape);
  if (y.numel() == 0) return;
  average_pool_thread<<<blocks_for(y.numel()), kThreadsPerBlock, 0, stream_of(ctx)>>>(x.data<float>(),
                                                                                    y.data<float>(), g);
  check_launch(ctx);
}

void global_pool(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  require_dtype(ctx, x.dtype(), {DType::Float});
  Shape out_shape;
  GlobalPlan p = plan_global_pool(ctx, out_shape);
  Tensor& y = ctx.output(0, DType::Float, out_shape);
  if (y.numel() == 0) return;
  const bool is_max = static_cast<GlobalKind>(ctx.entry.variant) == GlobalKind::Max;
  unsigned blocks = static_cast<unsigned>((p.planes + kWarpsPerBlock - 1) / kWarpsPerBlock);
  global_pool_warp<<<blocks, kThreadsPerBlock, 0, stream_of(ctx)>>>(x.data<float>(), y.data<float>(), p, is_max);
  check_launch(ctx);
}

}  // namespace lockstep::cuda
