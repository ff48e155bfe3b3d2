// CPU kernels of the signal family: DFT and STFT one output element at a time through arith::dft_element_f32,
// MelWeightMatrix through arith::mel_weight_f64.
#include "cpu/fill.h"
#include "ops/elementwise.h"  // dispatch_cast_type
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

// Contract: arith::mel_weight_f64 converted as Cast converts a double; see docs/arithmetic.md#melweightmatrix-17.
void mel_weight_matrix(KernelContext& ctx) {
  Shape shape;
  DType type;
  const MelWeightElement element = mel_weight_plan(ctx, &shape, &type);
  Tensor& y = ctx.output(0, type, shape);
  if (y.numel() == 0) return;
  dispatch_cast_type(ctx, type, [&](auto tag) {
    using T = decltype(tag);
    T* yd = static_cast<T*>(y.raw());
    ctx.pool->parallel_for(y.numel(), [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) yd[i] = element.at<T>(i);
    }, 256);
  });
}

}  // namespace lockstep::cpu
