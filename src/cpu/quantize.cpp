// CPU kernel of the quantize family: one shared per-element formula per output element, split over elements.
#include <cstring>

#include "ops/quantize.h"
#include "runtime/thread_pool.h"

namespace lockstep::cpu {

namespace {

constexpr int64_t kGrain = 16384;

struct CpuQuantize {
  // Contract: arith::quantize_element / dequantize_element per element; see docs/arithmetic.md#quantize.
  template <class In, class Out, class Q, class F>
  static void map(KernelContext& ctx, const In* x, const float* scale, const Q* zp, Out* y, int64_t n,
                  const arith::ScaleIndex& index, F f) {
    ctx.pool->parallel_for(n, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        int64_t s = index.of(i);
        y[i] = f(x[i], scale[s], zp ? zp[s] : Q(0));
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
      const A* row = a + s.a_offset(batch) + m * s.K;
      const B* col = b + s.b_offset(batch) + n;
      const int32_t a_zp = p.a_zp.of(m), b_zp = p.b_zp.of(n);
      y[e] = arith::integer_dot_i32(s.K, [&](int64_t k) { return int32_t(row[k]) - a_zp; },
                                    [&](int64_t k) { return int32_t(col[k * s.N]) - b_zp; });
    }
  }, 256);
}

// Contract: arith::integer_dot_i32 per output over (c, kd, kh, kw), padding taps 0; docs/arithmetic.md#quantize.
template <class X, class W>
void conv_integer_into(KernelContext& ctx, const ConvIntegerPlan& p, const X* x, const W* w, int32_t* y) {
  const ConvGeom& g = p.geom;
  const int64_t K = g.K(), taps = g.taps(), out_pixels = g.out_pixels();
  ctx.pool->parallel_for(g.batch * g.c_out * out_pixels, [&](int64_t begin, int64_t end) {
    for (int64_t e = begin; e < end; ++e) {
      const int64_t pixel = e % out_pixels, m = (e / out_pixels) % g.c_out, n = e / (out_pixels * g.c_out);
      const int64_t o[3] = {pixel / (g.out[1] * g.out[2]), pixel / g.out[2] % g.out[1], pixel % g.out[2]};
      const X* image = x + (n * g.c_in + m / g.cout_g * g.cin_g) * g.in_pixels();
      const W* filter = w + m * K;
      const int32_t w_zp = p.w_zp.of(m);
      auto input_tap = [&](int64_t k) {
        const int64_t c = k / taps, r[3] = {k % taps / (g.kernel[1] * g.kernel[2]), k / g.kernel[2] % g.kernel[1],
                                             k % g.kernel[2]};
        int64_t offset = c;
        for (int d = 0; d < 3; ++d) {
          const int64_t i = o[d] * g.stride[d] - g.pad[d] + r[d] * g.dilation[d];
          if (i < 0 || i >= g.in[d]) return int32_t{0};  // a padding tap: x_zero_point less itself
          offset = offset * g.in[d] + i;
        }
        return int32_t(image[offset]) - p.x_zp;
      };
      y[e] = arith::integer_dot_i32(K, input_tap, [&](int64_t k) { return int32_t(filter[k]) - w_zp; });
    }
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

void quantize(KernelContext& ctx) { run_linear_quantize<CpuQuantize, false>(ctx); }
void dynamic_quantize(KernelContext& ctx) { run_dynamic_quantize<CpuQuantize>(ctx); }
void dequantize(KernelContext& ctx) { run_linear_quantize<CpuQuantize, true>(ctx); }
void qlinear_matmul(KernelContext& ctx) { run_qlinear_matmul<CpuQuantize>(ctx); }

}  // namespace lockstep::cpu
