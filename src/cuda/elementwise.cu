// CUDA kernels of the elementwise family: the same functors as src/cpu/elementwise.cpp, one thread per output
// element, grid-stride loops. Nothing here does arithmetic of its own: every float operation is in the functor.
#include "cuda/common.cuh"
#include "ops/elementwise.h"

namespace lockstep::cuda {

namespace {

template <class F, class T>
using OutOf = std::conditional_t<F::kBoolOut, uint8_t, T>;

unsigned grid_for(int64_t n) {
  int64_t blocks = (n + kThreadsPerBlock - 1) / kThreadsPerBlock;
  return static_cast<unsigned>(blocks < 65536 * 8 ? blocks : 65536 * 8);
}

Tensor new_tensor(KernelContext& ctx, DType dtype, const Shape& shape) {
  size_t bytes = static_cast<size_t>(shape_numel(shape)) * dtype_size(dtype);
  return Tensor::over(dtype, shape, ctx.allocator->allocate(bytes));
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

template <class Out, class In, class F>
void launch_map1(KernelContext& ctx, const Tensor& x, Tensor& y, F f) {
  int64_t n = x.numel();
  if (n == 0) return;
  map1_kernel<Out, In><<<grid_for(n), kThreadsPerBlock, 0, stream_of(ctx)>>>(x.data<In>(), y.data<Out>(), n, f);
  check_launch(ctx);
}

Tensor run_binary(KernelContext& ctx, BinaryOp op, const ElementwiseParams& p, const Tensor& a, const Tensor& b,
                  Tensor* out_slot) {
  Shape shape;
  BroadcastPlan plan = plan_broadcast(ctx, {&a, &b}, shape);
  Tensor y;
  visit_binary(op, p, [&](auto f) {
    using F = decltype(f);
    dispatch_dtype<F::kTypes>(ctx, a.dtype(), [&](auto tag) {
      using T = decltype(tag);
      using Out = OutOf<F, T>;
      DType out_dtype = F::kBoolOut ? DType::Bool : a.dtype();
      y = out_slot ? (*out_slot = new_tensor(ctx, out_dtype, shape)) : new_tensor(ctx, out_dtype, shape);
      if (plan.numel == 0) return;
      map2_kernel<Out, T><<<grid_for(plan.numel), kThreadsPerBlock, 0, stream_of(ctx)>>>(
          a.data<T>(), b.data<T>(), y.data<Out>(), plan, f);
      check_launch(ctx);
    });
  });
  return y;
}

// Contract: cast_element<D>(s) per element; see docs/arithmetic.md#cast
template <class D>
__global__ void cast_kernel(const void* __restrict__ in, DType src, D* __restrict__ out, int64_t n) {
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
      default: v = arith::cast_load(static_cast<const arith::Boolean*>(in)[i]); break;
    }
    out[i] = arith::cast_store<D>(v);
  }
}

Tensor exponent_as_float(KernelContext& ctx, const Tensor& y) {
  if (y.dtype() == DType::Float) return y;
  if (y.dtype() != DType::Double && y.dtype() != DType::Int32 && y.dtype() != DType::Int64)
    unsupported_dtype(ctx, y.dtype());
  Tensor f = new_tensor(ctx, DType::Float, y.shape());
  if (y.numel() == 0) return f;
  cast_kernel<float><<<grid_for(y.numel()), kThreadsPerBlock, 0, stream_of(ctx)>>>(y.raw(), y.dtype(),
                                                                                      f.data<float>(), y.numel());
  check_launch(ctx);
  return f;
}

}  // namespace

// Contract: the op's per-element formula; see docs/arithmetic.md#elementwise-unary
void unary(KernelContext& ctx) {
  const UnaryOp op = static_cast<UnaryOp>(ctx.entry.variant);
  const Tensor& x = ctx.input(0);
  visit_unary(op, unary_params(ctx, op), [&](auto f) {
    using F = decltype(f);
    dispatch_dtype<F::kTypes>(ctx, x.dtype(), [&](auto tag) {
      using T = decltype(tag);
      Tensor& y = ctx.output(0, F::kBoolOut ? DType::Bool : x.dtype(), x.shape());
      launch_map1<OutOf<F, T>, T>(ctx, x, y, f);
    });
  });
}

// Contract: out = f(a, b) with broadcasting; see docs/arithmetic.md#elementwise-binary
void binary(KernelContext& ctx) {
  const BinaryOp op = static_cast<BinaryOp>(ctx.entry.variant);
  const Tensor& a = ctx.input(0);
  Tensor b = ctx.input(1);
  ElementwiseParams p = binary_params(ctx, op);
  if (op == BinaryOp::Pow && a.dtype() == DType::Float) b = exponent_as_float(ctx, b);
  require_same_dtype(ctx, {&a, &b});
  validate_binary(ctx, op, a.dtype(), p);
  if (op == BinaryOp::PRelu) {
    Shape out;
    plan_broadcast(ctx, {&a, &b}, out);
    require_unidirectional(ctx, a.shape(), out);
  }
  run_binary(ctx, op, p, a, b, &ctx.outputs.at(0));
}

// Contract: left fold acc = step(acc, x_k) in input order, Mean then acc / n; see docs/arithmetic.md#variadic
void variadic(KernelContext& ctx) {
  const VariadicOp op = static_cast<VariadicOp>(ctx.entry.variant);
  const int n = ctx.num_inputs();
  if (n < 1) throw ctx.error("needs at least one input", ErrorCode::InvalidGraph);
  for (int k = 0; k < n; ++k) {
    ctx.input(k);
    require_same_dtype(ctx, {&ctx.input(0), &ctx.input(k)});
  }
  const BinaryOp step = variadic_step(op);
  Tensor acc = ctx.input(0);
  if (n == 1) {
    dispatch_dtype<arith::MaxOp::kTypes>(ctx, acc.dtype(), [](auto) {});
    return ctx.alias_output(0, acc);
  }
  for (int k = 1; k < n; ++k) acc = run_binary(ctx, step, {}, acc, ctx.input(k), nullptr);
  if (op == VariadicOp::Mean) {
    Tensor mean = new_tensor(ctx, acc.dtype(), acc.shape());
    dispatch_dtype<arith::DivideByOp::kTypes>(ctx, acc.dtype(), [&](auto tag) {
      using T = decltype(tag);
      launch_map1<T, T>(ctx, acc, mean, arith::DivideByOp{static_cast<float>(n)});
    });
    acc = mean;
  }
  ctx.alias_output(0, acc);
}

// Contract: v = x < lo ? lo : x; hi < v ? hi : v; see docs/arithmetic.md#clip
void clip(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  ClipBounds b = clip_bounds(ctx, x.dtype());
  constexpr unsigned kTypes = arith::kFloats | arith::kI8 | arith::kU8 | arith::kI32 | arith::kI64;
  dispatch_dtype<kTypes>(ctx, x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    arith::ClipOp<T> f;
    if constexpr (std::is_floating_point_v<T>) f = {static_cast<T>(b.lo), static_cast<T>(b.hi)};
    else f = {static_cast<T>(b.lo_i), static_cast<T>(b.hi_i)};
    launch_map1<T, T>(ctx, x, ctx.output(0, x.dtype(), x.shape()), f);
  });
}

// Contract: a selection, no arithmetic; see docs/arithmetic.md#where
void where(KernelContext& ctx) {
  const Tensor &c = ctx.input(0), &x = ctx.input(1), &y = ctx.input(2);
  if (c.dtype() != DType::Bool) throw ctx.error("condition must be bool", ErrorCode::InvalidGraph);
  require_same_dtype(ctx, {&x, &y});
  size_t size = dtype_size(x.dtype());
  if (size == 0) unsupported_dtype(ctx, x.dtype());
  Shape shape;
  BroadcastPlan plan = plan_broadcast(ctx, {&c, &x, &y}, shape);
  Tensor& out = ctx.output(0, x.dtype(), shape);
  if (plan.numel == 0) return;
  auto run = [&](auto tag) {
    using T = decltype(tag);
    where_kernel<T><<<grid_for(plan.numel), kThreadsPerBlock, 0, stream_of(ctx)>>>(
        c.data<uint8_t>(), static_cast<const T*>(x.raw()), static_cast<const T*>(y.raw()),
        static_cast<T*>(out.raw()), plan);
    check_launch(ctx);
  };
  switch (size) {
    case 1: return run(uint8_t{});
    case 2: return run(uint16_t{});
    case 4: return run(uint32_t{});
    case 8: return run(uint64_t{});
    default: unsupported_dtype(ctx, x.dtype());
  }
}

// Contract: cast_element<D>(s) per element; see docs/arithmetic.md#cast
void cast(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  DType to = cast_target(ctx);
  Tensor& y = ctx.output(0, to, x.shape());
  int64_t n = x.numel();
  if (n == 0) return;
  dispatch_cast_type(ctx, to, [&](auto dst) {
    using D = decltype(dst);
    cast_kernel<D><<<grid_for(n), kThreadsPerBlock, 0, stream_of(ctx)>>>(x.raw(), x.dtype(),
                                                                         static_cast<D*>(y.raw()), n);
    check_launch(ctx);
  });
}

}  // namespace lockstep::cuda
