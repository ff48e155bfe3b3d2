// CPU kernels of the elementwise family. One loop per arity, instantiated with the shared functors of
// src/arith/elementwise.h; work is split over output elements, so the thread count cannot change a bit.
#include <algorithm>
#include <array>
#include <cstring>
#include <utility>
#include <type_traits>

#include "cpu/elementwise/unary_f32.h"
#include "ops/elementwise.h"
#include "runtime/thread_pool.h"

namespace lockstep::cpu {

namespace {

constexpr int64_t kGrain = 16384;

/// The grain of a memory-bound op (a binary op, Where, Cast) over n elements: all of them below 64K, where a split
/// cost more than it saved, in the handoff and in the cache lines the other core then fetches (2 threads of a 2-vCPU
/// VM: an SE block's Mul of 72 x 28 x 28 by one value a channel 12.8-14.3 us in 16K ranges, 11.1-12.1 whole; an Add
/// of 40 x 28 x 28 9.7-15.9 against 9.1-9.4); kGrain above, whose ranges the threads claim as they finish (two
/// halves of 672 x 14 x 14 ran slower than eight ranges: a thread that starts late holds the other back). Unary maps
/// keep kGrain: they may cost 10 to 50 vector operations an element (Sigmoid, Tanh; Sin in binary64).
int64_t memory_bound_grain(int64_t n) { return n < 65536 ? std::max<int64_t>(1, n) : kGrain; }
/// A binary op's grain: Pow (binary64 math) and Mod (long division on the significands) cost as much as unary math.
template <class F>
int64_t binary_grain(int64_t n) {
  if constexpr (std::is_same_v<F, arith::PowOp> || std::is_same_v<F, arith::ModOp>) return kGrain;
  return memory_bound_grain(n);
}

// The scalar loop of one range. `restrict`: when Out is a byte (IsNaN's bool), its stores could otherwise alias the
// input, and the compiler would not vectorise the loop. Input and output are the same array or do not overlap
// (a donated input is the output itself, element for element).
template <class Out, class In, class F>
void map1_range(const In* in, Out* out, int64_t n, F f) {
  if (static_cast<const void*>(in) == static_cast<const void*>(out)) {
    for (int64_t i = 0; i < n; ++i) out[i] = f(in[i]);
    return;
  }
  const In* __restrict a = in;
  Out* __restrict o = out;
  for (int64_t i = 0; i < n; ++i) o[i] = f(a[i]);
}

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
  ctx.pool->parallel_for(x.numel(), [&](int64_t b, int64_t e) { map1_range(in + b, out + b, e - b, f); }, kGrain);
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
      binary_grain<F>(plan.numel));
}


// n outputs of Where from operands of strides SC, SX, SY (0 or 1), known at compile time so that the compiler
// vectorises the selection (`restrict`: the output's stores never change the condition's bytes).
template <int SC, int SX, int SY, class T>
void where_row(const uint8_t* c, const T* x, const T* y, T* out, int64_t n) {
  const uint8_t* __restrict cc = c;
  for (int64_t j = 0; j < n; ++j) out[j] = cc[j * SC] != 0 ? x[j * SX] : y[j * SY];
}

template <class T>
using WhereRowFn = void (*)(const uint8_t*, const T*, const T*, T*, int64_t);
template <class T, int... Bits>
constexpr std::array<WhereRowFn<T>, 8> where_rows(std::integer_sequence<int, Bits...>) {
  return {where_row<(Bits >> 2) & 1, (Bits >> 1) & 1, Bits & 1, T>...};
}
template <class T>
inline constexpr std::array<WhereRowFn<T>, 8> kWhereRows = where_rows<T>(std::make_integer_sequence<int, 8>());

// Contract: a selection, no arithmetic; see docs/arithmetic.md#where
template <class T>
void where_f(KernelContext& ctx, const BroadcastPlan& plan, const uint8_t* c, const T* x, const T* y, T* out) {
  // Each operand's stride along the rows taken: 1 or 0 (flat: the whole range is one row).
  const bool flat = plan.flat();
  int64_t s[3];
  for (int k = 0; k < 3; ++k)
    s[k] = flat ? (plan.kind[k] == BroadcastPlan::Scalar ? 0 : 1) : plan.strides[k][plan.rank - 1];
  const WhereRowFn<T> row = kWhereRows<T>[s[0] << 2 | s[1] << 1 | s[2]];
  const int64_t inner = flat ? plan.numel : plan.dims[plan.rank - 1];
  ctx.pool->parallel_for(
      plan.numel,
      [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end;) {
          const int64_t n = std::min(inner - i % inner, end - i);
          if (flat) row(c + s[0] * i, x + s[1] * i, y + s[2] * i, out + i, n);
          else row(c + plan.offset(0, i), x + plan.offset(1, i), y + plan.offset(2, i), out + i, n);
          i += n;
        }
      },
      memory_bound_grain(plan.numel));
}

template <class S, class D>
void cast_f(KernelContext& ctx, const S* in, D* out, int64_t n, arith::CastMode mode) {
  ctx.pool->parallel_for(
      n,
      [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) out[i] = arith::cast_element<D>(in[i], mode);
      },
      memory_bound_grain(n));
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
  static void cast(KernelContext& ctx, const Tensor& x, Tensor& y, arith::CastMode mode) {
    dispatch_cast_type(ctx, x.dtype(), [&](auto src) {
      using S = decltype(src);
      dispatch_cast_type(ctx, y.dtype(), [&](auto dst) {
        using D = decltype(dst);
        cast_f(ctx, static_cast<const S*>(x.raw()), static_cast<D*>(y.raw()), x.numel(), mode);
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
