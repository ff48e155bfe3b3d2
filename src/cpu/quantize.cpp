// CPU kernel of the quantize family: one shared per-element formula per output element, split over elements.
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
};

}  // namespace

void quantize(KernelContext& ctx) { run_quantize<CpuQuantize>(ctx); }
void dequantize(KernelContext& ctx) { run_dequantize<CpuQuantize>(ctx); }

}  // namespace lockstep::cpu
