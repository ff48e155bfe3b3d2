// The signal family (DFT 17 and 20, STFT 17, MelWeightMatrix 17): the node validated into one geometry whose
// element function both devices run (docs/arithmetic.md#signal).
#pragma once

#include "arith/dft.h"
#include "arith/elementwise.h"  // CastValue, cast_store
#include "arith/mel_weight.h"
#include "runtime/kernel.h"

namespace lockstep {

/// DFT's output element e, for either device's fill (x is the device's pointer).
struct DftElement {
  arith::DftGeometry g;
  LOCKSTEP_HD float operator()(int64_t e) const { return arith::dft_element_f32(g, e); }
};
/// Validates a DFT node (input; optional dft_length; axis: attribute before opset 20, input from 20; inverse,
/// onesided) and returns its element and output shape.
DftElement dft_plan(const KernelContext& ctx, Shape* out_shape);
/// Validates an STFT node (signal, frame_step, optional window and frame_length; onesided) and returns its element
/// and output shape (batch, frames, bins, 2).
DftElement stft_plan(const KernelContext& ctx, Shape* out_shape);

/// MelWeightMatrix's output element e in the output's Cast storage type T (float, double, arith::Half, ...).
struct MelWeightElement {
  arith::MelGeometry g;
  template <class T>
  LOCKSTEP_HD T at(int64_t e) const {
    return arith::cast_store<T>({arith::CastValue::Real, 0, 0, arith::mel_weight_f64(g, e)});
  }
};
/// Validates a MelWeightMatrix node (scalars num_mel_bins, dft_length, sample_rate: int32/int64; lower_edge_hertz,
/// upper_edge_hertz: float types; output_datatype) and returns its element, output shape and type.
MelWeightElement mel_weight_plan(const KernelContext& ctx, Shape* out_shape, DType* out_type);

namespace cpu {
void dft(KernelContext& ctx);
void stft(KernelContext& ctx);
void mel_weight_matrix(KernelContext& ctx);
}
namespace cuda {
void dft(KernelContext& ctx);
void stft(KernelContext& ctx);
void mel_weight_matrix(KernelContext& ctx);
}

}  // namespace lockstep
