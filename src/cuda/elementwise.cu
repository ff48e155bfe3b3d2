// CUDA kernels of the elementwise family: the same functors as src/cpu/elementwise.cpp, one thread per output
// element, grid-stride loops. Nothing here does arithmetic of its own: every float operation is in the functor.
#include "cuda/common.cuh"
#include "ops/elementwise.h"

namespace lockstep::cuda {

namespace {

unsigned grid_for(int64_t n) {
  int64_t blocks = (n + kThreadsPerBlock - 1) / kThreadsPerBlock;
  return static_cast<unsigned>(blocks < 65536 * 8 ? blocks : 65536 * 8);
}

// Contract: one functor call per element, elementwise; see docs/arithmetic.md#elementwise
template <class Out, class In, class F>
__global__ void map1_kernel(const In* __restrict__ in, Out* __restrict__ out, int64_t n, F f) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    out[i] = f(in[i]);
}

// Contract: out[i] = f(a[i'], b[i'']) with numpy broadcasting; see docs/arithmetic.md#elementwise
template <class Out, class T, class F>
__global__ void map2_kernel(const T* __restrict__ a, const T* __restrict__ b, Out* __restrict__ out,
                            BroadcastPlan plan, F f) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < plan.numel;
       i += int64_t(gridDim.x) * blockDim.x)
    out[i] = f(a[plan.offset(0, i)], b[plan.offset(1, i)]);
}

// Contract: a selection, no arithmetic; see docs/arithmetic.md#where
template <class T>
__global__ void where_kernel(const uint8_t* __restrict__ c, const T* __restrict__ x, const T* __restrict__ y,
                             T* __restrict__ out, BroadcastPlan plan) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < plan.numel;
       i += int64_t(gridDim.x) * blockDim.x)
    out[i] = c[plan.offset(0, i)] != 0 ? x[plan.offset(1, i)] : y[plan.offset(2, i)];
}

// Contract: cast_element<D>(s) per element; see docs/arithmetic.md#cast
template <class D>
__global__ void cast_kernel(const void* __restrict__ in, DType src, D* __restrict__ out, int64_t n, bool saturate) {
  using arith::Low;
  using arith::LowType;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    arith::CastValue v;
    switch (src) {
      case DType::Float: v = arith::cast_load(static_cast<const float*>(in)[i]); break;
      case DType::Double: v = arith::cast_load(static_cast<const double*>(in)[i]); break;
      case DType::Float16: v = arith::cast_load(static_cast<const arith::Half*>(in)[i]); break;
      case DType::BFloat16: v = arith::cast_load(static_cast<const arith::BHalf*>(in)[i]); break;
      case DType::Int8: v = arith::cast_load(static_cast<const int8_t*>(in)[i]); break;
      case DType::Int16: v = arith::cast_load(static_cast<const int16_t*>(in)[i]); break;
      case DType::Int32: v = arith::cast_load(static_cast<const int32_t*>(in)[i]); break;
      case DType::Int64: v = arith::cast_load(static_cast<const int64_t*>(in)[i]); break;
      case DType::UInt8: v = arith::cast_load(static_cast<const uint8_t*>(in)[i]); break;
      case DType::UInt16: v = arith::cast_load(static_cast<const uint16_t*>(in)[i]); break;
      case DType::UInt32: v = arith::cast_load(static_cast<const uint32_t*>(in)[i]); break;
      case DType::UInt64: v = arith::cast_load(static_cast<const uint64_t*>(in)[i]); break;
      case DType::Float8E4M3FN: v = arith::cast_load(static_cast<const Low<LowType::E4M3FN>*>(in)[i]); break;
      case DType::Float8E4M3FNUZ: v = arith::cast_load(static_cast<const Low<LowType::E4M3FNUZ>*>(in)[i]); break;
      case DType::Float8E5M2: v = arith::cast_load(static_cast<const Low<LowType::E5M2>*>(in)[i]); break;
      case DType::Float8E5M2FNUZ: v = arith::cast_load(static_cast<const Low<LowType::E5M2FNUZ>*>(in)[i]); break;
      case DType::Float4E2M1: v = arith::cast_load(static_cast<const Low<LowType::E2M1>*>(in)[i]); break;
      case DType::Int4: v = arith::cast_load(static_cast<const Low<LowType::Int4>*>(in)[i]); break;
      case DType::UInt4: v = arith::cast_load(static_cast<const Low<LowType::UInt4>*>(in)[i]); break;
      case DType::Int2: v = arith::cast_load(static_cast<const Low<LowType::Int2>*>(in)[i]); break;
      case DType::UInt2: v = arith::cast_load(static_cast<const Low<LowType::UInt2>*>(in)[i]); break;
      default: v = arith::cast_load(static_cast<const arith::Boolean*>(in)[i]); break;
    }
    out[i] = arith::cast_store<D>(v, saturate);
  }
}

struct CudaElementwise {
  template <class Out, class In, class F>
  static void map1(KernelContext& ctx, const Tensor& x, Tensor& y, F f) {
    int64_t n = x.numel();
    if (n == 0) return;
    map1_kernel<Out, In><<<grid_for(n), kThreadsPerBlock, 0, stream_of(ctx)>>>(x.data<In>(), y.data<Out>(), n, f);
    check_launch(ctx);
  }
  template <class Out, class T, class F>
  static void map2(KernelContext& ctx, const BroadcastPlan& plan, const T* a, const T* b, Out* out, F f) {
    map2_kernel<Out, T><<<grid_for(plan.numel), kThreadsPerBlock, 0, stream_of(ctx)>>>(a, b, out, plan, f);
    check_launch(ctx);
  }
  template <class T>
  static void where(KernelContext& ctx, const BroadcastPlan& plan, const uint8_t* c, const T* x, const T* y,
                    T* out) {
    where_kernel<T><<<grid_for(plan.numel), kThreadsPerBlock, 0, stream_of(ctx)>>>(c, x, y, out, plan);
    check_launch(ctx);
  }
  static void cast(KernelContext& ctx, const Tensor& x, Tensor& y, bool saturate) {
    const int64_t n = x.numel();
    dispatch_cast_type(ctx, y.dtype(), [&](auto dst) {
      using D = decltype(dst);
      cast_kernel<D><<<grid_for(n), kThreadsPerBlock, 0, stream_of(ctx)>>>(x.raw(), x.dtype(),
                                                                           static_cast<D*>(y.raw()), n, saturate);
      check_launch(ctx);
    });
  }
  static Tensor exponent_as_float(KernelContext& ctx, const Tensor& y) {
    if (y.dtype() == DType::Float) return y;
    dispatch_dtype<arith::kFloats | arith::kInts>(ctx, y.dtype(), [](auto) {});
    Tensor f = new_tensor(ctx, DType::Float, y.shape());
    if (y.numel() == 0) return f;
    cast_kernel<float><<<grid_for(y.numel()), kThreadsPerBlock, 0, stream_of(ctx)>>>(y.raw(), y.dtype(),
                                                                                        f.data<float>(), y.numel(), true);
    check_launch(ctx);
    return f;
  }
};

}  // namespace

// Contract: the op's per-element formula; see docs/arithmetic.md#elementwise-unary
void unary(KernelContext& ctx) { run_unary<CudaElementwise>(ctx); }

// Contract: out = f(a, b) with broadcasting; see docs/arithmetic.md#elementwise-binary
void binary(KernelContext& ctx) { run_binary<CudaElementwise>(ctx); }

// Contract: left fold acc = step(acc, x_k), Mean then acc / n; see docs/arithmetic.md#variadic-sum-mean-max-min
void variadic(KernelContext& ctx) { run_variadic<CudaElementwise>(ctx); }

// Contract: v = x < lo ? lo : x; hi < v ? hi : v; see docs/arithmetic.md#clip
void clip(KernelContext& ctx) { run_clip<CudaElementwise>(ctx); }

// Contract: a selection, no arithmetic; see docs/arithmetic.md#where
void where(KernelContext& ctx) { run_where<CudaElementwise>(ctx); }

// Contract: cast_element<D>(s) per element; see docs/arithmetic.md#cast
void cast(KernelContext& ctx) { run_cast<CudaElementwise>(ctx); }

}  // namespace lockstep::cuda
