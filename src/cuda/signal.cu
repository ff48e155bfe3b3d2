// CUDA kernels of the signal family: DFT and STFT one thread per output element through arith::dft_element_f32,
// the function the CPU kernels call.
#include "cuda/common.cuh"
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

}  // namespace lockstep::cuda
