// CPU kernels of the pool family. Contract: docs/arithmetic.md#pool.
#include <algorithm>
#include <limits>
#include <type_traits>

#include "arith/reduce_ops.h"
#include "cpu/pool/window_pool.h"
#include "ops/pool.h"
#include "ops/reduce.h"
#include "ops/registry.h"
#include "runtime/thread_pool.h"

namespace lockstep::cpu {

namespace {

int64_t grain_for(int64_t n) { return std::max<int64_t>(1, 16384 / std::max<int64_t>(1, n)); }

int64_t window_size(const arith::PoolGeom& g) { return g.kernel[0] * g.kernel[1] * g.kernel[2]; }

// Contract: MaxPool, sequential rule over the taps inside the input; docs/arithmetic.md#pool.
template <typename T>
void max_pool_typed(KernelContext& ctx, const arith::PoolGeom& g, const T* x, T* y, int64_t* indices) {
  const T lowest = std::numeric_limits<T>::has_infinity ? -std::numeric_limits<T>::infinity()
                                                        : std::numeric_limits<T>::lowest();
  ctx.pool->parallel_for(
      g.planes * g.out_plane,
      [&](int64_t begin, int64_t end) {
        for (int64_t o = begin; o < end; ++o) {
          const int64_t plane = o / g.out_plane;
          int64_t at = -1;
          y[o] = arith::maxpool_window(g, x + plane * g.in_plane, o % g.out_plane, lowest, &at);
          if (indices) indices[o] = at < 0 ? -1 : plane * g.in_plane + at;
        }
      },
      grain_for(window_size(g)));
}

struct CpuPool {
  template <typename T>
  static void max_pool(KernelContext& ctx, const arith::PoolGeom& g, const T* x, T* y, int64_t* indices) {
    if constexpr (std::is_same_v<T, float>)
      if (!indices && window_pool_serves(g)) return max_pool_f32_rows(*ctx.pool, g, x, y);
    max_pool_typed(ctx, g, x, y, indices);
  }
  static void average_pool(KernelContext& ctx, const arith::PoolGeom& g, const float* x, float* y) {
    if (window_pool_serves(g)) return average_pool_f32_rows(*ctx.pool, g, x, y);
    ctx.pool->parallel_for(
        g.planes * g.out_plane,
        [&](int64_t begin, int64_t end) {
          for (int64_t o = begin; o < end; ++o)
            y[o] = arith::avgpool_window_f32(g, x + (o / g.out_plane) * g.in_plane, o % g.out_plane);
        },
        grain_for(window_size(g)));
  }
  static void lp_pool(KernelContext& ctx, const arith::PoolGeom& g, int64_t p, const float* x, float* y) {
    ctx.pool->parallel_for(
        g.planes * g.out_plane,
        [&](int64_t begin, int64_t end) {
          for (int64_t o = begin; o < end; ++o)
            y[o] = arith::lppool_window_f32(g, x + (o / g.out_plane) * g.in_plane, o % g.out_plane, p);
        },
        grain_for(window_size(g)));
  }
  static void global_pool(KernelContext& ctx, const GlobalPlan& p, bool is_max, const float* x, float* y) {
    const float ninf = -std::numeric_limits<float>::infinity();
    ctx.pool->parallel_for(
        p.planes,
        [&](int64_t begin, int64_t end) {
          for (int64_t r = begin; r < end; ++r) {
            const float* plane = x + r * p.spatial;
            y[r] = is_max ? arith::extreme_seq_f32<true>(p.spatial, ninf, [plane](int64_t i) { return plane[i]; })
                          : sum_contiguous_f32(plane, p.spatial) / static_cast<float>(p.spatial);
          }
        },
        grain_for(p.spatial));
  }
};

}  // namespace

// Contract: MaxPool = MAX(inside taps) in row-major kernel order (arith::maxpool_window); see docs/arithmetic.md#pool.
void max_pool(KernelContext& ctx) { run_max_pool<CpuPool>(ctx); }

// Contract: AveragePool, canonical sum of the window's terms / their count; docs/arithmetic.md#pool.
void average_pool(KernelContext& ctx) { run_average_pool<CpuPool>(ctx); }

// Contract: LpPool = lp_root(S(|x|^p over the window, padding taps +0)); docs/arithmetic.md#lppool.
void lp_pool(KernelContext& ctx) { run_lp_pool<CpuPool>(ctx); }

// Contract: GlobalAveragePool = S(plane) / spatial, GlobalMaxPool = sequential max; docs/arithmetic.md#pool.
void global_pool(KernelContext& ctx) { run_global_pool<CpuPool>(ctx); }

}  // namespace lockstep::cpu
