// The recurrent family (RNN, GRU, LSTM): attributes, validation, shapes and the step driver shared by both devices.
// Per-unit formulas: src/arith/recurrent.h; contract: docs/arithmetic.md#recurrent.
#pragma once

#include <cstdint>
#include <utility>

#include "arith/recurrent.h"
#include "ops/common.h"
#include "runtime/kernel.h"

namespace lockstep {

/// Input and output positions of the ONNX recurrent ops.
enum RecurrentInput : int { kX = 0, kW, kR, kB, kSequenceLens, kInitialH, kInitialC, kPeepholes };
enum RecurrentOutput : int { kY = 0, kYH, kYC };

/// A validated recurrent node.
struct RecurrentPlan {
  arith::CellKind kind = arith::CellKind::Rnn;
  int64_t gates = 1;                   // 1, 3 or 4
  int64_t seq = 0, batch = 0, input = 0, hidden = 0, dirs = 1;
  bool batch_first = false;            // layout = 1: X (batch, seq, input), Y (batch, seq, dirs, hidden)
  bool first_reverse = false;          // direction = "reverse": the one direction runs backwards
  arith::Activation act[2][3];         // per direction: f, g, h
  bool has_clip = false;
  float clip = 0;
  bool linear_before_reset = false, input_forget = false;

  int64_t gate_rows() const { return gates * hidden; }
  bool reverse(int64_t d) const { return d == 1 || first_reverse; }
  /// Offset and row stride of direction d's (batch, hidden) rows in initial_h, initial_c, Y_h and Y_c.
  std::pair<int64_t, int64_t> state_rows(int64_t d) const {
    return batch_first ? std::pair{d * hidden, dirs * hidden} : std::pair{d * batch * hidden, hidden};
  }
  /// Offset and batch stride of time t, direction d in Y.
  std::pair<int64_t, int64_t> y_rows(int64_t t, int64_t d) const {
    return batch_first ? std::pair{(t * dirs + d) * hidden, seq * dirs * hidden}
                       : std::pair{(t * dirs + d) * batch * hidden, hidden};
  }
  /// Offset and batch stride of time t in the projected input (one row per row of X, in X's memory order).
  std::pair<int64_t, int64_t> xw_rows(int64_t t) const {
    return batch_first ? std::pair{t * gate_rows(), seq * gate_rows()}
                       : std::pair{t * batch * gate_rows(), gate_rows()};
  }
};
RecurrentPlan recurrent_plan(const KernelContext& ctx);

/// Whether output i is asked for.
inline bool wants_output(const KernelContext& ctx, int i) {
  return i < static_cast<int>(ctx.node.outputs.size()) && !ctx.node.outputs[i].empty();
}

/// Scratch of one run: projected input, two state buffers, the cell state, GRU's gates and a zero row.
struct RecurrentScratch {
  std::shared_ptr<Buffer> buffer;
  float *xw, *h[2], *c, *gate_z, *gate_r, *zeros;
};
RecurrentScratch recurrent_scratch(KernelContext& ctx, const RecurrentPlan& p);

// The driver, shared by both devices. `Dev` holds the device's loops (one Dev object per run, made from the plan,
// so that a device may keep what it prepares for a direction, such as packed weights, from one step to the next):
//   fill_zero(ctx, p, n)                                         p[0..n) = +0
//   copy_rows(ctx, dst, dst_stride, src, src_stride, rows, cols) float rows
//   project(ctx, x, rows, input, w, gate_rows, xw)               xw(m, n) = dot_chunked_f32(input, +0, x[m][k], w[n][k])
//   units(ctx, step, gates_pass)                                 cell_unit (or gru_gates) for batch*hidden units
template <class Dev>
void run_recurrent(KernelContext& ctx) {
  const RecurrentPlan p = recurrent_plan(ctx);
  const int64_t G = p.gate_rows(), H = p.hidden, units = p.batch * H;
  float* y = wants_output(ctx, kY)
                 ? ctx.output(kY, DType::Float,
                              p.batch_first ? Shape{p.batch, p.seq, p.dirs, H} : Shape{p.seq, p.dirs, p.batch, H})
                       .data<float>()
                 : nullptr;
  Shape state_shape = p.batch_first ? Shape{p.batch, p.dirs, H} : Shape{p.dirs, p.batch, H};
  float* y_h = wants_output(ctx, kYH) ? ctx.output(kYH, DType::Float, state_shape).data<float>() : nullptr;
  bool lstm = p.kind == arith::CellKind::Lstm;
  float* y_c = lstm && wants_output(ctx, kYC) ? ctx.output(kYC, DType::Float, state_shape).data<float>() : nullptr;
  if (units == 0) return;
  RecurrentScratch s = recurrent_scratch(ctx, p);
  Dev dev(p);
  Dev::fill_zero(ctx, s.zeros, G);
  auto given = [&](int i) { return ctx.has_input(i) ? ctx.inputs[i]->data<float>() : nullptr; };
  const float *bias = given(kB), *h0 = given(kInitialH), *c0 = lstm ? given(kInitialC) : nullptr;
  const float* peep = lstm ? given(kPeepholes) : nullptr;
  const int32_t* lens = ctx.has_input(kSequenceLens) ? ctx.inputs[kSequenceLens]->data<int32_t>() : nullptr;
  for (int64_t d = 0; d < p.dirs; ++d) {
    auto [st_off, st_stride] = p.state_rows(d);
    dev.project(ctx, ctx.input(kX).data<float>(), p.seq * p.batch, p.input,
                 ctx.input(kW).data<float>() + d * G * p.input, G, s.xw);
    if (h0) Dev::copy_rows(ctx, s.h[0], H, h0 + st_off, st_stride, p.batch, H);
    else Dev::fill_zero(ctx, s.h[0], units);
    if (c0) Dev::copy_rows(ctx, s.c, H, c0 + st_off, st_stride, p.batch, H);
    else if (lstm) Dev::fill_zero(ctx, s.c, units);
    arith::CellStep step;
    step.kind = p.kind;
    step.batch = p.batch;
    step.hidden = H;
    step.r = ctx.input(kR).data<float>() + d * G * H;
    step.wb = bias ? bias + d * 2 * G : s.zeros;
    step.rb = bias ? bias + d * 2 * G + G : s.zeros;
    step.p = peep ? peep + d * 3 * H : s.zeros;
    step.lens = lens;
    step.c = s.c;
    step.gate_z = s.gate_z;
    step.gate_r = s.gate_r;
    step.f = p.act[d][0];
    step.g = p.act[d][1];
    step.h = p.act[d][2];
    step.has_clip = p.has_clip;
    step.clip = p.clip;
    step.linear_before_reset = p.linear_before_reset;
    step.input_forget = p.input_forget;
    int cur = 0;
    for (int64_t i = 0; i < p.seq; ++i) {
      step.t = p.reverse(d) ? p.seq - 1 - i : i;
      auto [xw_off, xw_bs] = p.xw_rows(step.t);
      step.xw = s.xw + xw_off;
      step.xw_bs = xw_bs;
      auto [y_off, y_bs] = p.y_rows(step.t, d);
      step.y = y ? y + y_off : nullptr;
      step.y_bs = y_bs;
      step.h_prev = s.h[cur];
      step.h_next = s.h[1 - cur];
      if (p.kind == arith::CellKind::Gru) dev.units(ctx, step, true);
      dev.units(ctx, step, false);
      cur = 1 - cur;
    }
    if (y_h) Dev::copy_rows(ctx, y_h + st_off, st_stride, s.h[cur], H, p.batch, H);
    if (y_c) Dev::copy_rows(ctx, y_c + st_off, st_stride, s.c, H, p.batch, H);
  }
}

namespace cpu { void recurrent(KernelContext& ctx); }
namespace cuda { void recurrent(KernelContext& ctx); }

}  // namespace lockstep
