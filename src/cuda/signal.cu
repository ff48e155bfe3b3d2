// CUDA kernel of the signal family: DFT one thread per output element through arith::dft_element_f32, the
// function the CPU kernel calls.
#include "cuda/common.cuh"
#include "ops/signal.h"

namespace lockstep::cuda {

// Contract: arith::dft_element_f32, one thread per output element; see docs/arithmetic.md#dft.
void dft(KernelContext& ctx) {
  Shape out_shape;
  DftElement element = dft_plan(ctx, &out_shape);
  fill_output_f32(ctx, out_shape, element);
}

}  // namespace lockstep::cuda
