// CUDA kernels of the signal family: DFT and STFT one thread per output element through arith::dft_element_f32,
// MelWeightMatrix through arith::mel_weight_f64, the functions the CPU kernels call.
#include "cuda/common.cuh"
#include "ops/elementwise.h"  // dispatch_cast_type
#include "ops/signal.h"

namespace lockstep::cuda {

// Contract: arith::dft_element_f32, one thread per output element; see docs/arithmetic.md#signal.
void dft(KernelContext& ctx) {
  Shape out_shape;
  DftElement element = dft_plan(ctx, &out_shape);
  fill_output_f32(ctx, out_shape, element);
}

// Contract: arith::dft_element_f32 over each windowed frame, one thread per output element; see
// docs/arithmetic.md#signal.
void stft(KernelContext& ctx) {
  Shape out_shape;
  DftElement element = stft_plan(ctx, &out_shape);
  fill_output_f32(ctx, out_shape, element);
}

namespace {

// Contract: arith::mel_weight_f64 converted as Cast converts a double, one thread per output element.
template <class T>
__global__ void mel_weight_kernel(MelWeightElement element, T* __restrict__ y, int64_t n) {
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    y[i] = element.at<T>(i);
}

}  // namespace

// Contract: arith::mel_weight_f64 converted as Cast converts a double; see docs/arithmetic.md#melweightmatrix-17.
void mel_weight_matrix(KernelContext& ctx) {
  Shape shape;
  DType type;
  const MelWeightElement element = mel_weight_plan(ctx, &shape, &type);
  Tensor& y = ctx.output(0, type, shape);
  const int64_t n = y.numel();
  if (n == 0) return;
  const unsigned blocks = static_cast<unsigned>(std::min<int64_t>(blocks_for(n), 1 << 20));
  dispatch_cast_type(ctx, type, [&](auto tag) {
    using T = decltype(tag);
    mel_weight_kernel<T><<<blocks, kThreadsPerBlock, 0, stream_of(ctx)>>>(element, static_cast<T*>(y.raw()), n);
    check_launch(ctx);
  });
}

}  // namespace lockstep::cuda
