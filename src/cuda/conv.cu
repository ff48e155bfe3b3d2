// CUDA kernels of the conv family. Conv runs on the shared tiled implicit GEMM (src/cuda/gemm.cu), except
// depthwise convs (one input channel per group), which run one thread per output with the channel's weights in
// shared memory; ConvTranspose runs one thread per output through arith::conv_transpose_element_f32, the same
// code the CPU kernel calls; Col2Im one thread per image element through arith::col2im_element_f32, as the CPU,
// CausalConvWithState one thread per element through arith::causal_conv_element_f32, and DeformConv one thread
// per output through arith::deform_conv_element_f32.
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

/// Most kernel taps a depthwise conv may have here: its weights fill the block's shared memory.
constexpr int64_t kDepthwiseMaxTaps = 8192;

/// Block (x: output pixels, y: output planes (n, oc)); the weights of the plane's channel are staged in
/// shared memory. With cin_g == 1, k is just the tap (kd, kh, kw), and the chain runs in that order.
// Contract: dot_chunked_f32 over the taps (kd, kh, kw) ascending, init = bias; see docs/arithmetic.md#conv.
__global__ void depthwise_f32(arith::ConvDims g, const float* x, const float* w, const float* bias, float* y,
                              StoreEpilogue epilogue) {
  extern __shared__ float w_plane[];
  const int64_t taps = g.kernel[0] * g.kernel[1] * g.kernel[2];
  const int64_t pixels = g.out[0] * g.out[1] * g.out[2], in_pixels = g.in[0] * g.in[1] * g.in[2];
  for (int64_t plane = blockIdx.y; plane < g.batch * g.c_out; plane += gridDim.y) {
    const int64_t oc = plane % g.c_out, n = plane / g.c_out;
    __syncthreads();
    for (int64_t t = threadIdx.x; t < taps; t += blockDim.x) w_plane[t] = w[oc * taps + t];
    __syncthreads();
    const float* xc = x + (n * g.c_in + oc / g.cout_g) * in_pixels;
    for (int64_t p = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; p < pixels; p += int64_t(gridDim.x) * blockDim.x) {
      const int64_t o2 = p % g.out[2], o1 = p / g.out[2] % g.out[1], o0 = p / (g.out[2] * g.out[1]);
      float total = bias ? bias[oc] : 0.0f, part = 0.0f;
      int64_t k = 0;
      for (int64_t kd = 0; kd < g.kernel[0]; ++kd) {
        const int64_t i0 = o0 * g.stride[0] - g.pad[0] + kd * g.dilation[0];
        for (int64_t kh = 0; kh < g.kernel[1]; ++kh) {
          const int64_t i1 = o1 * g.stride[1] - g.pad[1] + kh * g.dilation[1];
          for (int64_t kw = 0; kw < g.kernel[2]; ++kw, ++k) {
            const int64_t i2 = o2 * g.stride[2] - g.pad[2] + kw * g.dilation[2];
            const bool inside = i0 >= 0 && i0 < g.in[0] && i1 >= 0 && i1 < g.in[1] && i2 >= 0 && i2 < g.in[2];
            // A padding tap is a term with input +0: the fma is performed (an inf weight there gives NaN).
            part = arith::fma_f32(inside ? xc[(i0 * g.in[1] + i1) * g.in[2] + i2] : 0.0f, w_plane[k], part);
            if ((k + 1) % arith::kDotChunk == 0) {
              total = total + part;
              part = 0.0f;
            }
          }
        }
      }
      if (taps % arith::kDotChunk != 0) total = total + part;
      const int64_t i = plane * pixels + p;
      y[i] = epilogue.active() ? epilogue.apply_without_chains(total, i, 0) : total;
    }
  }
}

void depthwise(const KernelContext& ctx, const ConvGeom& g, const float* x, const float* w, const float* bias,
               float* y, const StoreEpilogue& epilogue) {
  const unsigned pixel_blocks = unsigned(std::min<int64_t>(blocks_for(g.out_pixels()), 1024));
  const unsigned plane_blocks = unsigned(std::min<int64_t>(g.batch * g.c_out, 65535));
  const size_t shared = size_t(g.taps()) * sizeof(float);
  depthwise_f32<<<dim3(pixel_blocks, plane_blocks), kThreadsPerBlock, shared, stream_of(ctx)>>>(g.dims(), x, w, bias, y,
                                                                                                  epilogue);
  check_launch(ctx);
}

}  // namespace

// Contract: dot_chunked_f32 over k = (c_in, kd, kh, kw) ascending, init = bias; see docs/arithmetic.md#conv.
void conv(KernelContext& ctx) {
  const ConvGeom g = conv_geometry(ctx);
  Tensor& y = ctx.output(0, DType::Float, g.out_shape);
  if (y.numel() > 0) conv_into(ctx, g, y.data<float>(), {});
}

// Contract: as conv, then the epilogue per output; see docs/arithmetic.md#graph-rewrites.
void conv_into(KernelContext& ctx, const ConvGeom& g, float* y, const StoreEpilogue& epilogue) {
  const float* x = ctx.input(0).data<float>();
  const float* w = ctx.input(1).data<float>();
  const float* bias = g.has_bias ? ctx.input(2).data<float>() : nullptr;
  if (g.cin_g == 1 && g.taps() <= kDepthwiseMaxTaps) return depthwise(ctx, g, x, w, bias, y, epilogue);
  conv_implicit_gemm(ctx, g, x, w, bias, y, epilogue);
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

// Contract: col2im_element_f32, one thread per image element; see docs/arithmetic.md#col2im.
void col2im(KernelContext& ctx) {
  Shape out_shape;
  Col2ImElement element = col2im_plan(ctx, &out_shape);
  fill_output_f32(ctx, out_shape, element);
}

// Contract: deform_conv_element_f32, one thread per output element, as the CPU; see docs/arithmetic.md#deformconv.
void deform_conv(KernelContext& ctx) {
  Shape out_shape;
  const DeformConvElement element = deform_conv_plan(ctx, &out_shape);
  fill_output_f32(ctx, out_shape, element);
}

// Contract: causal_conv_element_f32, one thread per output element, as the CPU; see
// docs/arithmetic.md#causalconvwithstate.
void causal_conv_with_state(KernelContext& ctx) {
  Shape out_shape, state_shape;
  const arith::CausalConvGeometry g = causal_conv_plan(ctx, &out_shape, &state_shape);
  fill_output_f32(ctx, out_shape, CausalConvOutput{g});
  fill_output_f32(ctx, state_shape, CausalConvState{g}, 1);
}

}  // namespace lockstep::cuda
