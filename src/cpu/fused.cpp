// CPU kernels of the fused product nodes (src/ops/fused.h): the product is computed by the Conv or MatMul kernel
// into the output, then one pass applies the absorbed Add and Relu in place (or, where the addend broadcasts the
// output up, from a temporary product).
#include "ops/fused.h"

#include "runtime/thread_pool.h"

namespace lockstep::cpu {

namespace {

// Contract: ProductEpilogue::apply per element, the absorbed nodes' operations in order.
struct CpuFused {
  static void apply_epilogue(KernelContext& ctx, const ProductEpilogue& e, const float* product, float* y, int64_t n) {
    ctx.pool->parallel_for(n, [&](int64_t i0, int64_t i1) {
      for (int64_t i = i0; i < i1; ++i) y[i] = e.apply(product[e.plan.offset(0, i)], i);
    }, 1 << 14);
  }
  static void conv_into(KernelContext& ctx, const ConvGeom& g, float* y, const ProductEpilogue& e) {
    cpu::conv_into(ctx, g, y);
    if (e.active()) apply_epilogue(ctx, e, y, y, shape_numel(g.out_shape));
  }
  static void matmul_with_epilogue(KernelContext& ctx, const MatMulParams&, const ProductEpilogue& e) {
    cpu::matmul(ctx);  // allocates output 0 with the product's shape, which the rewrite keeps
    Tensor& y = ctx.outputs.at(0);
    if (e.active()) apply_epilogue(ctx, e, y.data<float>(), y.data<float>(), y.numel());
  }
};

}  // namespace

void fused_conv(KernelContext& ctx) { run_fused_conv<CpuFused>(ctx); }
void fused_matmul(KernelContext& ctx) { run_fused_matmul<CpuFused>(ctx); }

}  // namespace lockstep::cpu
