// CPU kernel of the quantize family: one shared per-element formula per output element, split over elements.
#include <cstring>

#include "ops/quantize.h"
#include "runtime/thread_pool.h"

namespace lockstep::cpu {

namespace {

constexpr int64_t kGrain = 16384;

struct CpuQuantize {
  // Contract: arith::quantize_element / dequantize_element per element; see docs/arithmetic.md#quantize.
  template <class In, class Out, class Q, class S, class F>
  static void map(KernelContext& ctx, const In* x, const S* scale, const Q* zp, Out* y, int64_t n,
                  const arith::ScaleIndex& index, F f) {
    ctx.pool->parallel_for(n, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        int64_t s = index.of(i);
        y[i] = f(x[i], scale[s], zp ? zp[s] : Q{});
      }
    }, kGrain);
  }
  static void upload(KernelContext&, const Tensor& host, Tensor& out) { std::memcpy(out.raw(), host.raw(), host.bytes()); }
  // Contract: arith::qlinear_dot per output; see docs/arithmetic.md#quantize.
  template <class A, class B, class Y>
  static void qmatmul(KernelContext& ctx, const QLinearDims& p, const A* a, const B* b, Y* y) {
    ctx.pool->parallel_for(p.batch * p.M * p.N, [&](int64_t begin, int64_t end) {
      for (int64_t e = begin; e < end; ++e) y[e] = qlinear_output<Y>(p, a, b, e);
    }, 256);
  }
};

// Contract: arith::integer_dot_i32 per output of batch*M*N; docs/arithmetic.md#quantize.
template <class A, class B>
void matmul_integer_into(KernelContext& ctx, const MatMulIntegerPlan& p, const A* a, const B* b, int32_t* y) {
  const MatMulParams& s = p.shapes;
  ctx.pool->parallel_for(s.batch * s.M * s.N, [&](int64_t begin, int64_t end) {
    for (int64_t e = begin; e < end; ++e) {
      const int64_t n = e % s.N, m = (e / s.N) % s.M, batch = e / (s.N * s.M);
      y[e] = matmul_integer_output(s.K, s.N, a + s.a_offset(batch) + m * s.K, p.a_zp.of(m),
                                   b + s.b_offset(batch) + n, p.b_zp.of(n));
    }
  }, 256);
}

// Contract: arith::integer_dot_i32 per output over (c, kd, kh, kw), padding taps 0; docs/arithmetic.md#quantize.
template <class X, class W>
void conv_integer_into(KernelContext& ctx, const ConvIntegerPlan& p, const X* x, const W* w, int32_t* y) {
  const arith::ConvDims g = p.geom.dims();
  const ZeroPointView w_zp = p.w_zp.host_view();
  ctx.pool->parallel_for(p.geom.batch * p.geom.c_out * p.geom.out_pixels(), [&](int64_t begin, int64_t end) {
    for (int64_t e = begin; e < end; ++e) y[e] = conv_integer_output(g, x, p.x_zp, w, w_zp, e);
  }, 64);
}

}  // namespace

void matmul_integer(KernelContext& ctx) {
  const MatMulIntegerPlan p = matmul_integer_plan(ctx);
  Tensor& y = ctx.output(0, DType::Int32, p.shapes.out_shape);
  if (y.numel() == 0) return;
  dispatch_integer_pair(ctx, "A", "B", [&](auto a, auto b) {
    matmul_integer_into(ctx, p, ctx.input(0).data<decltype(a)>(), ctx.input(1).data<decltype(b)>(), y.data<int32_t>());
  });
}

void conv_integer(KernelContext& ctx) {
  const ConvIntegerPlan p = conv_integer_plan(ctx);
  Tensor& y = ctx.output(0, DType::Int32, p.geom.out_shape);
  if (y.numel() == 0) return;
  dispatch_integer_pair(ctx, "x", "w", [&](auto x, auto w) {
    conv_integer_into(ctx, p, ctx.input(0).data<decltype(x)>(), ctx.input(1).data<decltype(w)>(), y.data<int32_t>());
  });
}

// Contract: qlinear_conv_output per output (ConvInteger's sum, the bias, one rounding, the channel's multiplier,
// round_saturate); docs/arithmetic.md#quantize.
void qlinear_conv(KernelContext& ctx) {
  const QLinearConvPlan p = qlinear_conv_plan(ctx);
  Tensor& y = ctx.output(0, p.y_type, p.conv.geom.out_shape);
  if (y.numel() == 0) return;
  const arith::ConvDims g = p.conv.geom.dims();
  const ZeroPointView w_zp = p.conv.w_zp.host_view();
  dispatch_qlinear_conv(ctx, p, [&](auto x_type, auto w_type, auto y_type) {
    using X = decltype(x_type);
    using W = decltype(w_type);
    using Y = decltype(y_type);
    const X* x = ctx.input(0).data<X>();
    const W* w = ctx.input(3).data<W>();
    Y* out = y.data<Y>();
    ctx.pool->parallel_for(y.numel(), [&](int64_t begin, int64_t end) {
      for (int64_t e = begin; e < end; ++e)
        out[e] = qlinear_conv_output<Y>(g, x, p.conv.x_zp, w, w_zp, p.bias.data(), p.multipliers.data(),
                                        static_cast<Y>(p.y_zp), e);
    }, 64);
  });
}

void quantize(KernelContext& ctx) { run_quantize<CpuQuantize>(ctx); }
void dynamic_quantize(KernelContext& ctx) { run_dynamic_quantize<CpuQuantize>(ctx); }
void dequantize(KernelContext& ctx) { run_dequantize<CpuQuantize>(ctx); }
void qlinear_matmul(KernelContext& ctx) { run_qlinear_matmul<CpuQuantize>(ctx); }

}  // namespace lockstep::cpu
