// CUDA kernels of the reduce family, mirroring src/cpu/reduce.cpp operation by operation.
// Contract: docs/arithmetic.md#reduce. Long rows: one warp per output (the canonical reduction's 32 lanes);
// short rows: one thread per output calling the reference templates directly. Both give the reference bits.
#include <cstdint>
#include <limits>
#include <type_traits>

#include "arith/elementwise.h"
#include "arith/math.h"
#include "arith/reduce.h"
#include "arith/reduce_ops.h"
#include "cuda/common.cuh"
#include "ops/reduce.h"
#include "ops/registry.h"

namespace lockstep::cuda {

namespace {

using arith::ReduceKind;

constexpr int64_t kWarpRowMin = 64;  // rows at least this long get a warp
constexpr int kWarpsPerBlock = kThreadsPerBlock / 32;
constexpr float kInf = __builtin_huge_valf();

__device__ __forceinline__ int64_t term_at(const ReducePlan& p, int64_t i) {
  return p.contiguous() ? i : reduce_term_offset(p, i);
}

__device__ __forceinline__ float term_of(ReduceKind k, float x) {
  if (k == ReduceKind::L1) return arith::l1_term_f32(x);
  if (k == ReduceKind::L2 || k == ReduceKind::SumSquare) return arith::square_f32(x);
  return x;
}

__device__ __forceinline__ float finish(ReduceKind k, float s, int64_t n) {
  if (k == ReduceKind::Mean) return s / static_cast<float>(n);
  if (k == ReduceKind::L2) return __fsqrt_rn(s);
  if (k == ReduceKind::LogSum) return arith::log_f32(s);
  return s;
}

// Contract: one output of a float Reduce*, thread version (reference templates); docs/arithmetic.md#reduce.
__device__ float reduce_output_thread(const float* x, const ReducePlan& p, ReduceKind k) {
  const int64_t n = p.n_red;
  auto load = [&](int64_t i) { return x[term_at(p, i)]; };
  if (k == ReduceKind::Max) return arith::extreme_seq_f32<true>(n, -kInf, load);
  if (k == ReduceKind::Min) return arith::extreme_seq_f32<false>(n, kInf, load);
  if (k == ReduceKind::Prod) return arith::product_canonical_f32(n, load);
  if (k == ReduceKind::LogSumExp) {
    const float m = arith::extreme_seq_f32<true>(n, -kInf, load);
    if (n == 0) return -kInf;
    if (arith::lse_direct_f32(m)) return m;
    float s = arith::sum_canonical_f32(n, [&](int64_t i) { return arith::exp_f32(load(i) - m); });
    return arith::log_f32(s) + m;
  }
  float s = arith::sum_canonical_f32(n, [&](int64_t i) { return term_of(k, load(i)); });
  return finish(k, s, n);
}

__global__ void reduce_f32_thread(const float* x, float* y, ReducePlan p, ReduceKind k) {
  int64_t o = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (o >= p.n_out) return;
  y[o] = reduce_output_thread(x + reduce_base_offset(p, o), p, k);
}

// Contract: one output of a float Reduce*, warp version (lane j takes terms j mod 32); docs/arithmetic.md#reduce.
__global__ void reduce_f32_warp(const float* x, float* y, ReducePlan p, ReduceKind k) {
  const int64_t o = static_cast<int64_t>(blockIdx.x) * kWarpsPerBlock + threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  if (o >= p.n_out) return;  // whole warps leave together
  const float* b = x + reduce_base_offset(p, o);
  const int64_t n = p.n_red;
  float r;
  if (k == ReduceKind::Max || k == ReduceKind::Min || k == ReduceKind::LogSumExp) {
    const bool is_min = k == ReduceKind::Min;
    float v = 0.0f;
    int64_t at = -1;
    for (int64_t i = lane; i < n; i += 32) {
      if (is_min) arith::extreme_pick_f32<false>(v, at, b[term_at(p, i)], i);
      else arith::extreme_pick_f32<true>(v, at, b[term_at(p, i)], i);
    }
    r = is_min ? arith::warp_extreme_f32<false>(v, at, kInf) : arith::warp_extreme_f32<true>(v, at, -kInf);
    if (k == ReduceKind::LogSumExp && !arith::lse_direct_f32(r)) {
      const float m = r;
      float s = 0.0f;
      for (int64_t i = lane; i < n; i += 32) s = s + arith::exp_f32(b[term_at(p, i)] - m);
      s = arith::warp_tree_f32(s, arith::AddF32{});
      r = arith::log_f32(s) + m;
    }
  } else if (k == ReduceKind::Prod) {
    float v = 1.0f;
    for (int64_t i = lane; i < n; i += 32) v = v * b[term_at(p, i)];
    r = arith::warp_tree_f32(v, arith::MulF32{});
  } else {
    float v = 0.0f;
    for (int64_t i = lane; i < n; i += 32) v = v + term_of(k, b[term_at(p, i)]);
    r = finish(k, arith::warp_tree_f32(v, arith::AddF32{}), n);
  }
  if (lane == 0) y[o] = r;
}

// Contract: one output of a double Reduce* per thread, arith::reduce_output_f64 (the CPU's function);
// docs/arithmetic.md#double-reductions.
__global__ void reduce_f64_thread(const double* x, double* y, ReducePlan p, ReduceKind k) {
  const int64_t o = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (o >= p.n_out) return;
  const double* b = x + reduce_base_offset(p, o);
  y[o] = arith::reduce_output_f64(k, p.n_red, [&](int64_t i) { return b[term_at(p, i)]; });
}

// Integer reductions are exact (wrapping sums and products), so one thread per output in any order.
template <typename T>
__global__ void reduce_int_thread(const T* x, T* y, ReducePlan p, ReduceKind k, T lowest, T highest) {
  using U = typename std::make_unsigned<T>::type;
  int64_t o = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (o >= p.n_out) return;
  const T* b = x + reduce_base_offset(p, o);
  T r;
  if (k == ReduceKind::Max || k == ReduceKind::Min) {
    r = k == ReduceKind::Max ? lowest : highest;
    for (int64_t i = 0; i < p.n_red; ++i) {
      T t = b[term_at(p, i)];
      r = k == ReduceKind::Max ? (t > r ? t : r) : (t < r ? t : r);
    }
  } else {
    U acc = k == ReduceKind::Prod ? U(1) : U(0);
    for (int64_t i = 0; i < p.n_red; ++i) {
      const T v = b[term_at(p, i)];
      U t = static_cast<U>(v);
      if constexpr (std::is_signed<T>::value) {
        if (k == ReduceKind::L1 && v < 0) t = U(0) - t;
      }
      if (k == ReduceKind::Prod) acc = static_cast<U>(acc * t);
      else if (k == ReduceKind::SumSquare) acc = static_cast<U>(acc + static_cast<U>(t * t));
      else acc = static_cast<U>(acc + t);
    }
    r = static_cast<T>(acc);
    if (k == ReduceKind::Mean) r = p.n_red == 0 ? T(0) : static_cast<T>(r / static_cast<T>(p.n_red));
  }
  y[o] = r;
}

// Contract: ArgMax/ArgMin, sequential rule ascending (descending with select_last_index); one thread per output.
template <typename T>
__global__ void arg_reduce_thread(const T* x, int64_t* y, AxisPlan p, bool is_max, bool last) {
  int64_t r = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (r >= p.rows()) return;
  const T* row = x + p.row_base(r);
  int64_t best = last ? p.len - 1 : 0;
  T m = row[best * p.inner];
  for (int64_t k = 1; k < p.len; ++k) {
    int64_t i = last ? p.len - 1 - k : k;
    T t = row[i * p.inner];
    bool take;
    if constexpr (std::is_floating_point<T>::value)
      take = is_max ? arith::max_takes_f32(t, m) : arith::min_takes_f32(t, m);
    else
      take = is_max ? t > m : t < m;
    if (take) {
      m = t;
      best = i;
    }
  }
  y[r] = best;
}

// Contract: Softmax/LogSoftmax of one row per warp; docs/arithmetic.md#softmax--logsoftmax.
// m: sequential max rule (warp pick); e_i = exp_f32(x_i - m) summed canonically (lane j: i = j mod 32);
// y_i = e_i / s, or (x_i - m) - log_f32(s); then, with replace_nan, arith::nan_replaced_f32(y_i, nan_value)
// (SoftmaxReplacingNaN's selection). kCached > 0: the row, at most 32 * kCached long, is read once into registers
// and e_i kept there; kCached = 0: read again by each pass and e_i recomputed (same bits either way).
template <int kCached>
__global__ void softmax_warp(const float* x, float* y, AxisPlan p, bool log, bool replace_nan, float nan_value) {
  const int64_t r = static_cast<int64_t>(blockIdx.x) * kWarpsPerBlock + threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  if (r >= p.rows()) return;
  const int64_t base = p.row_base(r);
  const float* xr = x + base;
  float* yr = y + base;
  auto put = [&](int64_t i, float v) { yr[i * p.inner] = replace_nan ? arith::nan_replaced_f32(v, nan_value) : v; };
  float v = 0.0f;
  int64_t at = -1;
  if constexpr (kCached > 0) {
    float xs[kCached], es[kCached];
#pragma unroll
    for (int j = 0; j < kCached; ++j) {
      const int64_t i = lane + 32 * j;
      xs[j] = i < p.len ? xr[i * p.inner] : 0.0f;
      if (i < p.len) arith::extreme_pick_f32<true>(v, at, xs[j], i);
    }
    const float m = arith::warp_extreme_f32<true>(v, at, 0.0f);
    float s = 0.0f;
#pragma unroll
    for (int j = 0; j < kCached; ++j)
      if (lane + 32 * j < p.len) es[j] = arith::exp_f32(xs[j] - m), s = s + es[j];
    s = arith::warp_tree_f32(s, arith::AddF32{});
    const float ls = log ? arith::log_f32(s) : 0.0f;
#pragma unroll
    for (int j = 0; j < kCached; ++j)
      if (lane + 32 * j < p.len) put(lane + 32 * j, log ? (xs[j] - m) - ls : es[j] / s);
  } else {
    for (int64_t i = lane; i < p.len; i += 32) arith::extreme_pick_f32<true>(v, at, xr[i * p.inner], i);
    const float m = arith::warp_extreme_f32<true>(v, at, 0.0f);
    float s = 0.0f;
    for (int64_t i = lane; i < p.len; i += 32) s = s + arith::exp_f32(xr[i * p.inner] - m);
    s = arith::warp_tree_f32(s, arith::AddF32{});
    if (log) {
      const float ls = arith::log_f32(s);
      for (int64_t i = lane; i < p.len; i += 32) put(i, (xr[i * p.inner] - m) - ls);
    } else {
      for (int64_t i = lane; i < p.len; i += 32) put(i, arith::exp_f32(xr[i * p.inner] - m) / s);
    }
  }
}

// Contract: one line per thread, the arith row functor itself (Hardmax, LpNormalization, CumSum/CumProd).
template <typename T, class Row>
__global__ void lines_thread(const T* x, T* y, AxisPlan p, Row row) {
  int64_t r = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (r >= p.rows()) return;
  row(x + p.row_base(r), y + p.row_base(r), p.len, p.inner);
}

struct CudaReduce {
  static void copy(KernelContext& ctx, const Tensor& x, Tensor& y) {
    check(ctx, cudaMemcpyAsync(y.raw(), x.raw(), x.bytes(), cudaMemcpyDeviceToDevice, stream_of(ctx)), "copy");
  }
  template <typename T>
  static void reduce(KernelContext& ctx, const ReducePlan& p, ReduceKind k, const T* x, T* y) {
    if constexpr (std::is_same_v<T, float>) {
      if (p.n_red >= kWarpRowMin) {
        unsigned blocks = static_cast<unsigned>((p.n_out + kWarpsPerBlock - 1) / kWarpsPerBlock);
        reduce_f32_warp<<<blocks, kThreadsPerBlock, 0, stream_of(ctx)>>>(x, y, p, k);
      } else {
        reduce_f32_thread<<<blocks_for(p.n_out), kThreadsPerBlock, 0, stream_of(ctx)>>>(x, y, p, k);
      }
    } else if constexpr (std::is_same_v<T, double>) {
      reduce_f64_thread<<<blocks_for(p.n_out), kThreadsPerBlock, 0, stream_of(ctx)>>>(x, y, p, k);
    } else {
      reduce_int_thread<T><<<blocks_for(p.n_out), kThreadsPerBlock, 0, stream_of(ctx)>>>(
          x, y, p, k, std::numeric_limits<T>::lowest(), std::numeric_limits<T>::max());
    }
    check_launch(ctx);
  }
  template <typename T>
  static void arg_reduce(KernelContext& ctx, const AxisPlan& p, bool is_max, bool last, const T* x, int64_t* y) {
    arg_reduce_thread<T><<<blocks_for(p.rows()), kThreadsPerBlock, 0, stream_of(ctx)>>>(x, y, p, is_max, last);
    check_launch(ctx);
  }
  static void softmax(KernelContext& ctx, const AxisPlan& p, bool log, const float* x, float* y,
                      std::optional<float> nan_value) {
    softmax_rows(ctx, p, log, x, y, nan_value);
  }
  template <typename T, class Row>
  static void lines(KernelContext& ctx, const AxisPlan& p, Row row, const T* x, T* y) {
    lines_thread<T, Row><<<blocks_for(p.rows()), kThreadsPerBlock, 0, stream_of(ctx)>>>(x, y, p, row);
    check_launch(ctx);
  }
};

}  // namespace

void softmax_rows(KernelContext& ctx, const AxisPlan& p, bool log, const float* x, float* y,
                  std::optional<float> nan_value) {
  if (p.rows() == 0 || p.len == 0) return;
  const unsigned blocks = static_cast<unsigned>((p.rows() + kWarpsPerBlock - 1) / kWarpsPerBlock);
  const bool replace = nan_value.has_value();
  const float value = nan_value.value_or(0.0f);
  // Rows up to 256 long (attention's scores, a classifier's logits) stay in registers: one read of the input.
  if (p.len <= 32 * 8)
    softmax_warp<8><<<blocks, kThreadsPerBlock, 0, stream_of(ctx)>>>(x, y, p, log, replace, value);
  else
    softmax_warp<0><<<blocks, kThreadsPerBlock, 0, stream_of(ctx)>>>(x, y, p, log, replace, value);
  check_launch(ctx);
}

// Contract: Reduce* per docs/arithmetic.md#reduce.
void reduce(KernelContext& ctx) { run_reduce<CudaReduce>(ctx); }

// Contract: ArgMax/ArgMin, sequential max/min rule per row; see docs/arithmetic.md#argmax--argmin.
void arg_reduce(KernelContext& ctx) { run_arg_reduce<CudaReduce>(ctx); }

// Contract: Softmax/LogSoftmax, one warp per row (softmax_warp); see docs/arithmetic.md#softmax--logsoftmax.
void softmax(KernelContext& ctx) { run_softmax<CudaReduce>(ctx); }

// Contract: Hardmax, LpNormalization, CumSum/CumProd, one thread per line; docs/arithmetic.md#lines.
void lines(KernelContext& ctx) { run_lines<CudaReduce>(ctx); }

}  // namespace lockstep::cuda
