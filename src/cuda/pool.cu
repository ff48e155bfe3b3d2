// CUDA kernels of the pool family, mirroring src/cpu/pool.cpp: both call the window functions of
// src/arith/reduce_ops.h. Contract: docs/arithmetic.md#pool.
#include <cstdint>
#include <limits>

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

// Contract: AveragePool, canonical sum of the window's terms / their count; one thread per output.
__global__ void average_pool_thread(const float* x, float* y, arith::PoolGeom g) {
  const int64_t o = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (o >= g.planes * g.out_plane) return;
  y[o] = arith::avgpool_window_f32(g, x + (o / g.out_plane) * g.in_plane, o % g.out_plane);
}

// Contract: LpPool = lp_root(S(|x|^p over the window, padding taps +0)); one thread per output.
__global__ void lp_pool_thread(const float* x, float* y, arith::PoolGeom g, int64_t p) {
  const int64_t o = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (o >= g.planes * g.out_plane) return;
  y[o] = arith::lppool_window_f32(g, x + (o / g.out_plane) * g.in_plane, o % g.out_plane, p);
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

struct CudaPool {
  template <typename T>
  static void max_pool(KernelContext& ctx, const arith::PoolGeom& g, const T* x, T* y, int64_t* indices) {
    const T lowest = std::numeric_limits<T>::has_infinity ? -std::numeric_limits<T>::infinity()
                                                          : std::numeric_limits<T>::lowest();
    max_pool_thread<T><<<blocks_for(g.planes * g.out_plane), kThreadsPerBlock, 0, stream_of(ctx)>>>(x, y, indices, g,
                                                                                                  lowest);
    check_launch(ctx);
  }
  static void average_pool(KernelContext& ctx, const arith::PoolGeom& g, const float* x, float* y) {
    average_pool_thread<<<blocks_for(g.planes * g.out_plane), kThreadsPerBlock, 0, stream_of(ctx)>>>(x, y, g);
    check_launch(ctx);
  }
  static void lp_pool(KernelContext& ctx, const arith::PoolGeom& g, int64_t p, const float* x, float* y) {
    lp_pool_thread<<<blocks_for(g.planes * g.out_plane), kThreadsPerBlock, 0, stream_of(ctx)>>>(x, y, g, p);
    check_launch(ctx);
  }
  static void global_pool(KernelContext& ctx, const GlobalPlan& p, bool is_max, const float* x, float* y) {
    unsigned blocks = static_cast<unsigned>((p.planes + kWarpsPerBlock - 1) / kWarpsPerBlock);
    global_pool_warp<<<blocks, kThreadsPerBlock, 0, stream_of(ctx)>>>(x, y, p, is_max);
    check_launch(ctx);
  }
};

}  // namespace

// Contract: MaxPool = MAX(inside taps) in row-major kernel order (arith::maxpool_window); see docs/arithmetic.md#pool.
void max_pool(KernelContext& ctx) { run_max_pool<CudaPool>(ctx); }

// Contract: AveragePool = S(terms) / float(count) (arith::avgpool_window_f32); see docs/arithmetic.md#pool.
void average_pool(KernelContext& ctx) { run_average_pool<CudaPool>(ctx); }

// Contract: LpPool = lp_root(S(|x|^p over the window, padding taps +0)); docs/arithmetic.md#lppool.
void lp_pool(KernelContext& ctx) { run_lp_pool<CudaPool>(ctx); }

// Contract: GlobalAveragePool = S(plane) / float(m), GlobalMaxPool = MAX(plane); see docs/arithmetic.md#pool.
void global_pool(KernelContext& ctx) { run_global_pool<CudaPool>(ctx); }

}  // namespace lockstep::cuda
