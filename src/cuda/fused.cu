// CUDA kernels of the fused product nodes (src/ops/fused.h): the Conv and MatMul kernels apply the epilogue as they
// store each output; a separate pass runs only where the addend broadcasts the output up.
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
  static void conv_into(KernelContext& ctx, const ConvGeom& g, float* y, const ProductEpilogue& e) {
    cuda::conv_into(ctx, g, y, e);
  }
  static void matmul_with_epilogue(KernelContext& ctx, const MatMulParams& p, const ProductEpilogue& e) {
    cuda::matmul_with_epilogue(ctx, p, e);
  }
};

}  // namespace

void fused_conv(KernelContext& ctx) { run_fused_conv<CudaFused>(ctx); }
void fused_matmul(KernelContext& ctx) { run_fused_matmul<CudaFused>(ctx); }

}  // namespace lockstep::cuda
