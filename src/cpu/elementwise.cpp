// CPU kernels of the elementwise family. One loop per arity, instantiated with the shared functors of
// src/arith/elementwise.h; work is split over output elements, so the thread count cannot change a bit.
#include <cstring>
#include <type_traits>

#include "cpu/elementwise/unary_f32.h"
#include "ops/elementwise.h"
#include "runtime/thread_pool.h"

namespace lockstep::cpu {

namespace {

constexpr int64_t kGrain = 16384;

// Contract: one functor call per element, elementwise; see docs/arithmetic.md#elementwise
template <class Out, class In, class F>
void map1_f(KernelContext& ctx, const Tensor& x, Tensor& y, F f) {
  const In* in = x.data<In>();
  Out* out = y.data<Out>();
  if constexpr (std::is_same_v<In, float> && std::is_same_v<Out, float>) {
    if (const UnaryF32Kernel<F> kernel = unary_f32_kernel<F>()) {
      ctx.pool->parallel_for(x.numel(), [&](int64_t b, int64_t e) { kernel(f, in + b, out + b, e - b); }, kGrain);
      return;
    }
  }
  ctx.pool->parallel_for(
      x.numel(), [&](int64_t b, int64_t e) { for (int64_t i = b; i < e; ++i) out[i] = f(in[i]); }, kGrain);
}

// n outputs from operands of strides SA and SB (0: one value repeated, 1: contiguous), known at compile time so that
// the compiler vectorises the loop: a whole flat range (each operand the output's shape or a scalar), or one row of
// the innermost dim (a channel's scale times a plane). Vector lanes compute the scalar loop's IEEE operations.
template <int SA, int SB, class Out, class T, class F>
void map2_row(const T* a, const T* b, Out* out, int64_t n, F f) {
  for (int64_t j = 0; j < n; ++j) out[j] = f(a[j * SA], b[j * SB]);
}

template <class Out, class T, class F>
void map2_row_of_strides(int64_t sa, int64_t sb, const T* a, const T* b, Out* out, int64_t n, F f) {
  if (sa == 1 && sb == 0) map2_row<1, 0>(a, b, out, n, f);
  else if (sa == 0 && sb == 1) map2_row<0, 1>(a, b, out, n, f);
  else if (sa == 1 && sb == 1) map2_row<1, 1>(a, b, out, n, f);
  else map2_row<0, 0>(a, b, out, n, f);
}

// Contract: out[i] = f(a[i'], b[i'']) with numpy broadcasting; see docs/arithmetic.md#elementwise
template <class Out, class T, class F>
void map2_f(KernelContext& ctx, const BroadcastPlan& plan, const T* a, const T* b, Out* out, F f) {
  ctx.pool->parallel_for(
      plan.numel,
      [&](int64_t begin, int64_t end) {
        if (plan.flat()) {
          const int64_t sa = plan.kind[0] == BroadcastPlan::Scalar ? 0 : 1;
          const int64_t sb = plan.kind[1] == BroadcastPlan::Scalar ? 0 : 1;
          return map2_row_of_strides(sa, sb, a + sa * begin, b + sb * begin, out + begin, end - begin, f);
        }
        // Strided: walk rows of the innermost dim; its strides are 0 or 1.
        const int64_t inner = plan.dims[plan.rank - 1];
        const int64_t sa = plan.strides[0][plan.rank - 1], sb = plan.strides[1][plan.rank - 1];
        for (int64_t i = begin; i < end;) {
          int64_t j0 = i % inner, n = std::min(inner - j0, end - i);
          const T* pa = a + plan.offset(0, i);
          const T* pb = b + plan.offset(1, i);
          map2_row_of_strides(sa, sb, pa, pb, out + i, n, f);
          i += n;
        }
      },
      kGrain);
}


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

template <class S, class D>
void cast_f(KernelContext& ctx, const S* in, D* out, int64_t n, bool saturate) {
  ctx.pool->parallel_for(
      n,
      [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) out[i] = arith::cast_element<D>(in[i], saturate);
      },
      kGrain);
}

struct CpuElementwise {
  static constexpr bool kStrings = true;  // string tensors live on the host
  // Contract: byte-wise string equality per element, with numpy broadcasting; see docs/arithmetic.md#strings
  static void equal_strings(KernelContext& ctx, const BroadcastPlan& plan, const std::string* a, const std::string* b,
                            uint8_t* out) {
    ctx.pool->parallel_for(
        plan.numel,
        [&](int64_t begin, int64_t end) {
          for (int64_t i = begin; i < end; ++i) out[i] = a[plan.offset(0, i)] == b[plan.offset(1, i)];
        },
        kGrain);
  }
  template <class Out, class In, class F>
  static void map1(KernelContext& ctx, const Tensor& x, Tensor& y, F f) {
    map1_f<Out, In>(ctx, x, y, f);
  }
  template <class Out, class T, class F>
  static void map2(KernelContext& ctx, const BroadcastPlan& plan, const T* a, const T* b, Out* out, F f) {
    map2_f<Out, T>(ctx, plan, a, b, out, f);
  }
  template <class T>
  static void where(KernelContext& ctx, const BroadcastPlan& plan, const uint8_t* c, const T* x, const T* y,
                    T* out) {
    where_f<T>(ctx, plan, c, x, y, out);
  }
  static void cast(KernelContext& ctx, const Tensor& x, Tensor& y, bool saturate) {
    dispatch_cast_type(ctx, x.dtype(), [&](auto src) {
      using S = decltype(src);
      dispatch_cast_type(ctx, y.dtype(), [&](auto dst) {
        using D = decltype(dst);
        cast_f(ctx, static_cast<const S*>(x.raw()), static_cast<D*>(y.raw()), x.numel(), saturate);
      });
    });
  }
  static Tensor exponent_as_float(KernelContext& ctx, const Tensor& y) {
    if (y.dtype() == DType::Float) return y;
    Tensor f = new_tensor(ctx, DType::Float, y.shape());
    dispatch_dtype<arith::kFloats | arith::kInts>(ctx, y.dtype(), [&](auto tag) {
      using T = decltype(tag);
      const T* in = y.data<T>();
      float* out = f.data<float>();
      for (int64_t i = 0; i < y.numel(); ++i) out[i] = arith::cast_element<float>(in[i]);
    });
    return f;
  }
};

}  // namespace

// Contract: the op's per-element formula; see docs/arithmetic.md#elementwise-unary
void unary(KernelContext& ctx) { run_unary<CpuElementwise>(ctx); }

// Contract: out = f(a, b) with broadcasting; see docs/arithmetic.md#elementwise-binary
void binary(KernelContext& ctx) { run_binary<CpuElementwise>(ctx); }

// Contract: left fold acc = step(acc, x_k), Mean then acc / n; see docs/arithmetic.md#variadic-sum-mean-max-min
void variadic(KernelContext& ctx) { run_variadic<CpuElementwise>(ctx); }

// Contract: v = x < lo ? lo : x; hi < v ? hi : v; see docs/arithmetic.md#clip
void clip(KernelContext& ctx) { run_clip<CpuElementwise>(ctx); }

// Contract: a selection, no arithmetic; see docs/arithmetic.md#where
void where(KernelContext& ctx) { run_where<CpuElementwise>(ctx); }

// Contract: cast_element<D>(s) per element; see docs/arithmetic.md#cast
void cast(KernelContext& ctx) { run_cast<CpuElementwise>(ctx); }

}  // namespace lockstep::cpu
