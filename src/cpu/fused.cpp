// CPU kernels of the fused product nodes (src/ops/fused.h). Where the addend is read at the output's element or
// column, the Add and activation are applied to each finished tile by the GEMM core (the conv) or in one pass over the
// rows (the MatMul); other broadcasts take the general pass, from a temporary product where the addend broadcasts
// the output up.
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
    StoreEpilogue store;
    if (as_store_epilogue(e, 0, false, &store)) return cpu::conv_into(ctx, g, y, store);
    cpu::conv_into(ctx, g, y, {});
    apply_epilogue(ctx, e, y, y, shape_numel(g.out_shape));
  }
  static void matmul_with_epilogue(KernelContext& ctx, const MatMulParams& p, const ProductEpilogue& e) {
    cpu::matmul(ctx);  // allocates output 0 with the product's shape, which the rewrite keeps
    Tensor& y = ctx.outputs.at(0);
    float* yd = y.data<float>();
    StoreEpilogue store;
    if (!e.active() || y.numel() == 0) return;
    if (!as_store_epilogue(e, p.N, true, &store)) return apply_epilogue(ctx, e, yd, yd, y.numel());
    const GemmOut out{yd, p.N, 1, nullptr, nullptr, store};
    ctx.pool->parallel_for(y.numel() / p.N, [&](int64_t r0, int64_t r1) {
      apply_gemm_epilogue(out, yd + r0 * p.N, p.N, r1 - r0, p.N, r0, 0);
    }, std::max<int64_t>(1, (int64_t(1) << 14) / p.N));
  }
};

}  // namespace

void fused_conv(KernelContext& ctx) { run_fused_conv<CpuFused>(ctx); }
void fused_matmul(KernelContext& ctx) { run_fused_matmul<CpuFused>(ctx); }

}  // namespace lockstep::cpu
