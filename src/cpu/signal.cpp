// CPU kernels of the signal family: DFT and STFT one output element at a time through arith::dft_element_f32.
#include "cpu/fill.h"
#include "ops/signal.h"

namespace lockstep::cpu {

// Contract: arith::dft_element_f32 (dot_chunked_f32 over the signal, t ascending); see docs/arithmetic.md#signal.
void dft(KernelContext& ctx) {
  Shape out_shape;
  DftElement element = dft_plan(ctx, &out_shape);
  fill_output_f32(ctx, out_shape, 64, element);
}

// Contract: arith::dft_element_f32 over each windowed frame; see docs/arithmetic.md#signal.
void stft(KernelContext& ctx) {
  Shape out_shape;
  DftElement element = stft_plan(ctx, &out_shape);
  fill_output_f32(ctx, out_shape, 64, element);
}

}  // namespace lockstep::cpu
