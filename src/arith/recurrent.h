// Per-element formulas of the recurrent family (RNN, GRU, LSTM), shared literally by both devices
// (docs/arithmetic.md#recurrent). One call computes one hidden unit of one batch row for one time step.
#pragma once

#include <cstdint>

#include "arith/elementwise.h"
#include "arith/hd.h"
#include "arith/math.h"
#include "arith/reduce.h"

namespace lockstep::arith {

/// The activation functions the ONNX recurrent ops accept, in the spelling of their `activations` attribute.
enum class CellActivation : int {
  Relu, Tanh, Sigmoid, Affine, LeakyRelu, ThresholdedRelu, ScaledTanh, HardSigmoid, Elu, Softsign, Softplus,
};
struct Activation {
  CellActivation kind = CellActivation::Tanh;
  float alpha = 0, beta = 0;
};

LOCKSTEP_HD float activate(Activation a, float x) {
  switch (a.kind) {
    case CellActivation::Relu: return x < 0.0f ? 0.0f : x;
    case CellActivation::Tanh: return tanh_f32(x);
    case CellActivation::Sigmoid: return sigmoid_f32(x);
    case CellActivation::Affine: return a.alpha * x + a.beta;
    case CellActivation::LeakyRelu: return x >= 0.0f ? x : a.alpha * x;
    case CellActivation::ThresholdedRelu: return x > a.alpha ? x : 0.0f;
    case CellActivation::ScaledTanh: return a.alpha * tanh_f32(a.beta * x);
    case CellActivation::HardSigmoid: return hard_sigmoid_f32(x, a.alpha, a.beta);
    case CellActivation::Elu: return x >= 0.0f ? x : a.alpha * expm1_f32(x);
    case CellActivation::Softsign: return x / (1.0f + copysign_f32(x, 1.0f));
    case CellActivation::Softplus: return softplus_f32(x);
  }
  return x;
}

enum class CellKind : int { Rnn, Gru, Lstm };

/// One time step of one direction, plain data (CUDA kernels take it by value). Gate row n = gate*hidden + j of W,
/// R and the biases; gate order: RNN (the one gate), GRU (z, r, h), LSTM (i, o, f, c).
struct CellStep {
  CellKind kind = CellKind::Rnn;
  int64_t batch = 0, hidden = 0;
  int64_t t = 0;                       // the time index of this step
  const float* xw = nullptr;           // projected input of this step: row b at xw + b*xw_bs, gate row n at + n
  int64_t xw_bs = 0;
  const float* r = nullptr;            // R of the direction: (gates*hidden, hidden), row-major
  const float* wb = nullptr;           // W's and R's biases (gates*hidden each); zeros when B is absent
  const float* rb = nullptr;
  const float* p = nullptr;            // LSTM peepholes (i, o, f; 3*hidden); zeros when P is absent
  const int32_t* lens = nullptr;       // sequence_lens (batch), or null: every row runs all steps
  const float* h_prev = nullptr;       // (batch, hidden): the state before this step
  float* h_next = nullptr;             // (batch, hidden): the state after it
  float* c = nullptr;                  // LSTM cell state (batch, hidden), updated in place
  float* gate_z = nullptr;             // GRU: z and r (or r*h_prev) of this step (batch, hidden), from pass 1
  float* gate_r = nullptr;
  float* y = nullptr;                  // Y of this step and direction: row b at y + b*y_bs; null when not asked
  int64_t y_bs = 0;
  Activation f, g, h;                  // RNN: f; GRU: f, g; LSTM: f, g, h
  bool has_clip = false;
  float clip = 0;
  bool linear_before_reset = false;    // GRU
  bool input_forget = false;           // LSTM
};

LOCKSTEP_HD bool cell_row_active(const CellStep& s, int64_t b) { return !s.lens || s.t < s.lens[b]; }

/// xw + hr, where hr = dot_chunked_f32(hidden, +0, h_k, R[n][k]) over k ascending.
template <class H>
LOCKSTEP_HD float gate_sum(const CellStep& s, int64_t b, int64_t n, H h_of) {
  const float* row = s.r + n * s.hidden;
  float hr = dot_chunked_f32(s.hidden, 0.0f, h_of, [&](int64_t k) { return row[k]; });
  return s.xw[b * s.xw_bs + n] + hr;
}

/// The optional clip of a gate's pre-activation (Clip's rule, bounds -clip and clip).
LOCKSTEP_HD float cell_clip(const CellStep& s, float sum) {
  if (!s.has_clip) return sum;
  float v = sum < -s.clip ? -s.clip : sum;
  return s.clip < v ? s.clip : v;
}

/// cell_clip, then the activation.
LOCKSTEP_HD float clip_activate(const CellStep& s, float sum, Activation a) { return activate(a, cell_clip(s, sum)); }

/// The end of every gate but GRU's linear-before-reset h: + Wb, + Rb, then clip_activate.
LOCKSTEP_HD float gate_finish(const CellStep& s, float sum, int64_t n, Activation a) {
  sum = sum + s.wb[n];
  sum = sum + s.rb[n];
  return clip_activate(s, sum, a);
}

/// GRU pass 1, unit (b, j): z and r; stores z and, for linear_before_reset = 0, r*h_prev (what the h gate's
/// recurrent dot reads), else r.
LOCKSTEP_HD void gru_gates(const CellStep& s, int64_t index) {
  const int64_t b = index / s.hidden, j = index - b * s.hidden;
  if (!cell_row_active(s, b)) return;
  const float* hp = s.h_prev + b * s.hidden;
  auto h_of = [&](int64_t k) { return hp[k]; };
  float z = gate_finish(s, gate_sum(s, b, j, h_of), j, s.f);
  float r = gate_finish(s, gate_sum(s, b, s.hidden + j, h_of), s.hidden + j, s.f);
  s.gate_z[index] = z;
  s.gate_r[index] = s.linear_before_reset ? r : r * hp[j];
}

/// The new state of unit (b, j); a row past its sequence length keeps its state and outputs +0.
// Contract: docs/arithmetic.md#recurrent (per-step sequences of RNN, GRU, LSTM).
LOCKSTEP_HD void cell_unit(const CellStep& s, int64_t index) {
  const int64_t b = index / s.hidden, j = index - b * s.hidden, H = s.hidden;
  const float* hp = s.h_prev + b * H;
  if (!cell_row_active(s, b)) {
    s.h_next[index] = hp[j];
    if (s.y) s.y[b * s.y_bs + j] = 0.0f;
    return;
  }
  auto h_of = [&](int64_t k) { return hp[k]; };
  float out;
  if (s.kind == CellKind::Rnn) {
    out = gate_finish(s, gate_sum(s, b, j, h_of), j, s.f);
  } else if (s.kind == CellKind::Gru) {
    const int64_t n = 2 * H + j;
    float hh;
    if (s.linear_before_reset) {
      const float* row = s.r + n * H;
      float hr = dot_chunked_f32(H, 0.0f, h_of, [&](int64_t k) { return row[k]; });
      float u = hr + s.rb[n];
      float v = s.gate_r[index] * u;
      float sum = s.xw[b * s.xw_bs + n] + v;
      hh = clip_activate(s, sum + s.wb[n], s.g);
    } else {
      const float* rh = s.gate_r + b * H;
      hh = gate_finish(s, gate_sum(s, b, n, [&](int64_t k) { return rh[k]; }), n, s.g);
    }
    float z = s.gate_z[index];
    float keep = 1.0f - z;
    float a = keep * hh;
    float c = z * hp[j];
    out = a + c;
  } else {
    const float c_prev = s.c[index];
    float si = gate_sum(s, b, j, h_of);
    si = si + s.p[j] * c_prev;
    float i = gate_finish(s, si, j, s.f);
    float f;
    if (s.input_forget) {
      f = 1.0f - i;
    } else {
      float sf = gate_sum(s, b, 2 * H + j, h_of);
      sf = sf + s.p[2 * H + j] * c_prev;
      f = gate_finish(s, sf, 2 * H + j, s.f);
    }
    float cc = gate_finish(s, gate_sum(s, b, 3 * H + j, h_of), 3 * H + j, s.g);
    float kept = f * c_prev;
    float added = i * cc;
    float c_new = kept + added;
    float so = gate_sum(s, b, H + j, h_of);
    so = so + s.p[H + j] * c_new;
    float o = gate_finish(s, so, H + j, s.f);
    s.c[index] = c_new;
    out = o * activate(s.h, c_new);
  }
  s.h_next[index] = out;
  if (s.y) s.y[b * s.y_bs + j] = out;
}

}  // namespace lockstep::arith
