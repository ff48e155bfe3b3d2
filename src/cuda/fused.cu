// CUDA kernels of the fused product nodes (src/ops/fused.h): the Conv and MatMul kernels apply the epilogue as they
// store each output; a separate pass runs where the addend broadcasts the output up, and for a GELU chain (the
// GEMM's store applies the Add; the chain's code would spill the GEMM's registers: src/ops/epilogue.h).
#include "cuda/common.cuh"
#include "ops/fused.h"

namespace lockstep::cuda {

namespace {

// Contract: ProductEpilogue::apply per element, the absorbed nodes' operations in order.
__global__ void apply_epilogue_f32(ProductEpilogue e, const float* product, float* y, int64_t n) {
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    y[i] = e.apply(product[e.plan.offset(0, i)], i);
}

struct CudaFused {
  static void apply_epilogue(KernelContext& ctx, const ProductEpilogue& e, const float* product, float* y, int64_t n) {
    apply_epilogue_f32<<<unsigned(std::min<int64_t>((n + kThreadsPerBlock - 1) / kThreadsPerBlock, 1 << 20)), kThreadsPerBlock, 0,
                         stream_of(ctx)>>>(e, product, y, n);
    check_launch(ctx);
  }
  // The GEMM applies the epilogue as it stores where the addend is read at the output's element or column;
  // other broadcasts run the product plain, then the pass in place (operand 0, the product, is y itself).
  static void conv_into(KernelContext& ctx, const ConvGeom& g, float* y, const ProductEpilogue& e) {
    StoreEpilogue store;
    if (as_store_epilogue(e, 0, false, &store)) return cuda::conv_into(ctx, g, y, store);
    cuda::conv_into(ctx, g, y, {});
    apply_epilogue(ctx, e, y, y, shape_numel(g.out_shape));
  }
  static void matmul_with_epilogue(KernelContext& ctx, const MatMulParams& p, const ProductEpilogue& e) {
    // The GEMM's store takes the Add and a Relu; a GELU chain runs in the pass after it.
    ProductEpilogue in_store = e, after = e;
    after.addend = nullptr;
    if (takes_constants(e.activation))
      in_store.activation = Activation::None;
    else
      after.activation = Activation::None;
    StoreEpilogue store;
    if (!as_store_epilogue(in_store, p.N, true, &store)) store = {}, after = e;
    cuda::matmul_with_epilogue(ctx, p, store);
    if (!after.active()) return;
    Tensor& y = ctx.outputs.at(0);
    apply_epilogue(ctx, after, y.data<float>(), y.data<float>(), y.numel());
  }
};

}  // namespace

void fused_conv(KernelContext& ctx) { run_fused_conv<CudaFused>(ctx); }
void fused_matmul(KernelContext& ctx) { run_fused_matmul<CudaFused>(ctx); }

}  // namespace lockstep::cuda
