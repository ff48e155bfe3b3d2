// CPU kernels of the elementwise family. One loop per arity, instantiated with the shared functors of
// src/arith/elementwise.h; work is split over output elements, so the thread count cannot change a bit.
#include <cstring>

#include "ops/elementwise.h"
#include "runtime/thread_pool.h"

namespace lockstep::cpu {

namespace {

constexpr int64_t kGrain = 16384;

template <class F, class T>
using OutOf = std::conditional_t<F::kBoolOut, uint8_t, T>;

Tensor new_tensor(KernelContext& ctx, DType dtype, const Shape& shape) {
  size_t bytes = static_cast<size_t>(shape_numel(shape)) * dtype_size(dtype);
  return Tensor::over(dtype, shape, ctx.allocator->allocate(bytes));
}

// Contract: one functor call per element, elementwise; see docs/arithmetic.md#elementwise
template <class Out, class In, class F>
void map1_f(KernelContext& ctx, const Tensor& x, Tensor& y, F f) {
  const In* in = x.data<In>();
  Out* out = y.data<Out>();
  ctx.pool->parallel_for(
      x.numel(), [&](int64_t b, int64_t e) { for (int64_t i = b; i < e; ++i) out[i] = f(in[i]); }, kGrain);
}

// Flat fast path (each operand is the output's shape or a scalar): the compiler vectorises these loops;
// vector lanes compute the same IEEE operations as the scalar loop.
template <bool AScalar, bool BScalar, class Out, class T, class F>
void map2_flat(const T* a, const T* b, Out* out, int64_t begin, int64_t end, F f) {
  for (int64_t i = begin; i < end; ++i) out[i] = f(a[AScalar ? 0 : i], b[BScalar ? 0 : i]);
}

// Contract: out[i] = f(a[i'], b[i'']) with numpy broadcasting; see docs/arithmetic.md#elementwise
template <class Out, class T, class F>
void map2_f(KernelContext& ctx, const BroadcastPlan& plan, const T* a, const T* b, Out* out, F f) {
  ctx.pool->parallel_for(
      plan.numel,
      [&](int64_t begin, int64_t end) {
        if (plan.flat()) {
          bool sa = plan.kind[0] == BroadcastPlan::Scalar, sb = plan.kind[1] == BroadcastPlan::Scalar;
          if (sa && !sb) return map2_flat<true, false>(a, b, out, begin, end, f);
          if (sb && !sa) return map2_flat<false, true>(a, b, out, begin, end, f);
          if (sa && sb) return map2_flat<true, true>(a, b, out, begin, end, f);
          return map2_flat<false, false>(a, b, out, begin, end, f);
        }
        // Strided: walk rows of the innermost dim; its strides are 0 or 1.
        const int64_t inner = plan.dims[plan.rank - 1];
        const int64_t sa = plan.strides[0][plan.rank - 1], sb = plan.strides[1][plan.rank - 1];
        for (int64_t i = begin; i < end;) {
          int64_t j0 = i % inner, n = std::min(inner - j0, end - i);
          const T* pa = a + plan.offset(0, i);
          const T* pb = b + plan.offset(1, i);
          for (int64_t j = 0; j < n; ++j) out[i + j] = f(pa[j * sa], pb[j * sb]);
          i += n;
        }
      },
      kGrain);
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
      if (plan.numel > 0) map2_f<Out, T>(ctx, plan, a.data<T>(), b.data<T>(), y.data<Out>(), f);
    });
  });
  return y;
}

Tensor exponent_as_float(KernelContext& ctx, const Tensor& y) {
  if (y.dtype() == DType::Float) return y;
  Tensor f = new_tensor(ctx, DType::Float, y.shape());
  dispatch_dtype<arith::kFloats | arith::kShapeInts>(ctx, y.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* in = y.data<T>();
    float* out = f.data<float>();
    for (int64_t i = 0; i < y.numel(); ++i) out[i] = arith::cast_element<float>(in[i]);
  });
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
      map1_f<OutOf<F, T>, T>(ctx, x, y, f);
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
      map1_f<T, T>(ctx, acc, mean, arith::DivideByOp{static_cast<float>(n)});
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
    map1_f<T, T>(ctx, x, ctx.output(0, x.dtype(), x.shape()), f);
  });
}

namespace {
template <class T>
void where_f(KernelContext& ctx, const BroadcastPlan& plan, const uint8_t* c, const T* x, const T* y, T* out) {
  ctx.pool->parallel_for(
      plan.numel,
      [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i)
          out[i] = c[plan.offset(0, i)] != 0 ? x[plan.offset(1, i)] : y[plan.offset(2, i)];
      },
      kGrain);
}
}  // namespace

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
    where_f<T>(ctx, plan, c.data<uint8_t>(), static_cast<const T*>(x.raw()), static_cast<const T*>(y.raw()),
               static_cast<T*>(out.raw()));
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
  if (x.numel() == 0) return;
  dispatch_cast_type(ctx, x.dtype(), [&](auto src) {
    using S = decltype(src);
    dispatch_cast_type(ctx, to, [&](auto dst) {
      using D = decltype(dst);
      const S* in = static_cast<const S*>(x.raw());
      D* out = static_cast<D*>(y.raw());
      ctx.pool->parallel_for(
          x.numel(),
          [&](int64_t b, int64_t e) { for (int64_t i = b; i < e; ++i) out[i] = arith::cast_element<D>(in[i]); },
          kGrain);
    });
  });
}

}  // namespace lockstep::cpu
