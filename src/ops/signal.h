// The signal family (DFT 17 and 20, STFT 17): the node validated into one geometry whose element function both
// devices run (docs/arithmetic.md#signal).
#pragma once

#include "arith/dft.h"
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

namespace cpu {
void dft(KernelContext& ctx);
void stft(KernelContext& ctx);
}
namespace cuda {
void dft(KernelContext& ctx);
void stft(KernelContext& ctx);
}

}  // namespace lockstep
