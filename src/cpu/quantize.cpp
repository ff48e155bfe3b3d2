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

}  // namespace

void quantize(KernelContext& ctx) { run_linear_quantize<CpuQuantize, false>(ctx); }
void dynamic_quantize(KernelContext& ctx) { run_dynamic_quantize<CpuQuantize>(ctx); }
void dequantize(KernelContext& ctx) { run_linear_quantize<CpuQuantize, true>(ctx); }
void qlinear_matmul(KernelContext& ctx) { run_qlinear_matmul<CpuQuantize>(ctx); }

}  // namespace lockstep::cpu
