// The LSTM cell of one batch row with the units in SIMD lanes (the step's recurrent dots already computed).
#pragma once

#include <cstdint>

#include "arith/recurrent.h"

namespace lockstep::cpu {

/// Whether lstm_row_f32_avx2 computes this step: the default activations (f sigmoid, g and h tanh), which are the
/// ones with lane versions; any clip, peepholes, input_forget.
inline bool lstm_row_lanes_apply(const arith::CellStep& s) {
  using arith::CellActivation;
  return s.kind == arith::CellKind::Lstm && s.f.kind == CellActivation::Sigmoid && s.g.kind == CellActivation::Tanh &&
         s.h.kind == CellActivation::Tanh;
}

/// arith::cell_unit for every unit of an active row b, 8 units a register: hr holds the row's recurrent dots
/// (gates i, o, f, c; 4*hidden). Updates the row's c and stores its output in h_next (and y).
void lstm_row_f32_avx2(const arith::CellStep& s, int64_t b, const float* hr);

}  // namespace lockstep::cpu
