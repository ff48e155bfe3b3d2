// CUDA kernels of the conv family. Conv runs on the shared tiled implicit GEMM (src/cuda/gemm.cu); ConvTranspose
// runs one thread per output through arith::conv_transpose_element_f32, the same code the CPU kernel calls.
#include "arith/dot.h"
#include "cuda/common.cuh"
#include "ops/conv.h"

namespace lockstep::cuda {

namespace {

// Contract: conv_transpose_element_f32 (dot_chunked_f32 over (c, aligned taps)); see docs/arithmetic.md#convtranspose.
__global__ void conv_transpose_f32(arith::ConvDims g, const float* x, const float* w, const float* bias, float* y,
                                   int64_t total) {
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < total; i += int64_t(gridDim.x) * blockDim.x)
    y[i] = arith::conv_transpose_element_f32(g, x, w, bias, i);
}

}  // namespace

// Contract: dot_chunked_f32 over k = (c_in, kd, kh, kw) ascending, init = bias; see docs/arithmetic.md#conv.
void conv(KernelContext& ctx) {
  const ConvGeom g = conv_geometry(ctx);
  Tensor& y = ctx.output(0, DType::Float, g.out_shape);
  if (y.numel() == 0) return;
  conv_implicit_gemm(ctx, g, ctx.input(0).data<float>(), ctx.input(1).data<float>(),
                     g.has_bias ? ctx.input(2).data<float>() : nullptr, y.data<float>());
}

// Contract: conv_transpose_element_f32; see docs/arithmetic.md#convtranspose.
void conv_transpose(KernelContext& ctx) {
  Shape out_shape;
  const arith::ConvDims g = conv_transpose_geometry(ctx, &out_shape);
  Tensor& y = ctx.output(0, DType::Float, out_shape);
  const int64_t total = y.numel();
  if (total == 0) return;
  unsigned blocks = unsigned(std::min<int64_t>((total + kThreadsPerBlock - 1) / kThreadsPerBlock, 1 << 20));
  conv_transpose_f32<<<blocks, kThreadsPerBlock, 0, stream_of(ctx)>>>(
      g, ctx.input(0).data<float>(), ctx.input(1).data<float>(),
      ctx.has_input(2) ? ctx.input(2).data<float>() : nullptr, y.data<float>(), total);
  check_launch(ctx);
}

}  // namespace lockstep::cuda
