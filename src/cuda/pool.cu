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

// Contract: MaxPool, sequential rule over the taps inside the input in row-major kernel order (maxpool_window's
// order and rule: arith::maxpool_takes); one thread per output of a 2-D pool without indices. The generic kernel's
// 64-bit index divisions took most of its time (ResNet-50's 3x3/2 pool at batch 128: 1.24 ms, 3x torch's).
template <typename T>
__global__ void max_pool_2d_thread(const T* x, T* y, arith::PoolGeom g, T lowest, int outputs) {
  const int o = static_cast<int>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (o >= outputs) return;
  const int out_h = int(g.out[1]), out_w = int(g.out[2]), in_h = int(g.in[1]), in_w = int(g.in[2]);
  const int plane = o / (out_h * out_w), r = o - plane * (out_h * out_w), oh = r / out_w, ow = r - oh * out_w;
  const T* xp = x + int64_t(plane) * g.in_plane;
  const int kernel_h = int(g.kernel[1]), kernel_w = int(g.kernel[2]);
  const int h0 = oh * int(g.stride[1]) - int(g.pad_begin[1]), w0 = ow * int(g.stride[2]) - int(g.pad_begin[2]);
  T m = lowest;
  bool any = false;
  for (int kh = 0; kh < kernel_h; ++kh) {
    const int ih = h0 + kh * int(g.dilation[1]);
    if (ih < 0 || ih >= in_h) continue;
    for (int kw = 0; kw < kernel_w; ++kw) {
      const int iw = w0 + kw * int(g.dilation[2]);
      if (iw < 0 || iw >= in_w) continue;
      const T t = xp[ih * in_w + iw];
      if (arith::maxpool_takes(t, m, any)) m = t;
      any = true;
    }
  }
  y[o] = m;
}

/// Whether a MaxPool runs max_pool_2d_thread: 2-D, no indices, every index within 32 bits.
bool fits_max_pool_2d(const arith::PoolGeom& g, const int64_t* indices) {
  constexpr int64_t kMax = INT32_MAX;
  return !indices && g.in[0] == 1 && g.kernel[0] == 1 && g.planes * g.out_plane <= kMax && g.in_plane <= kMax &&
         g.stride[1] * g.out[1] + g.dilation[1] * g.kernel[1] <= kMax &&
         g.stride[2] * g.out[2] + g.dilation[2] * g.kernel[2] <= kMax;
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
    if (fits_max_pool_2d(g, indices)) {
      const int64_t outputs = g.planes * g.out_plane;
      max_pool_2d_thread<T><<<blocks_for(outputs), kThreadsPerBlock, 0, stream_of(ctx)>>>(x, y, g, lowest,
                                                                                         static_cast<int>(outputs));
      return check_launch(ctx);
    }
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
