// The recurrent family: attributes, validation, shapes and the op table.
#include "ops/recurrent.h"

#include <cctype>
#include <string>
#include <vector>

#include "ops/registry.h"

namespace lockstep {

namespace {

using arith::Activation;
using arith::CellActivation;
using arith::CellKind;

struct ActivationName {
  const char* name;
  CellActivation kind;
  bool uses_alpha, uses_beta;
  float alpha, beta;  // the defaults of the ONNX operator of the same name
};
constexpr ActivationName kActivations[] = {
    {"relu", CellActivation::Relu, false, false, 0, 0},
    {"tanh", CellActivation::Tanh, false, false, 0, 0},
    {"sigmoid", CellActivation::Sigmoid, false, false, 0, 0},
    {"affine", CellActivation::Affine, true, true, 1.0f, 0.0f},
    {"leakyrelu", CellActivation::LeakyRelu, true, false, 0.01f, 0},
    {"thresholdedrelu", CellActivation::ThresholdedRelu, true, false, 1.0f, 0},
    {"scaledtanh", CellActivation::ScaledTanh, true, true, 1.0f, 1.0f},
    {"hardsigmoid", CellActivation::HardSigmoid, true, true, 0.2f, 0.5f},
    {"elu", CellActivation::Elu, true, false, 1.0f, 0},
    {"softsign", CellActivation::Softsign, false, false, 0, 0},
    {"softplus", CellActivation::Softplus, false, false, 0, 0},
};

struct CellShape {
  CellKind kind;
  int64_t gates;
  std::vector<std::string> activations;  // the defaults, one per function of the cell
};
CellShape cell_shape(const std::string& op) {
  if (op == "GRU") return {CellKind::Gru, 3, {"Sigmoid", "Tanh"}};
  if (op == "LSTM") return {CellKind::Lstm, 4, {"Sigmoid", "Tanh", "Tanh"}};
  return {CellKind::Rnn, 1, {"Tanh"}};
}

std::string lower(std::string s) {
  for (char& ch : s) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return s;
}

// Reads `activations` with their alpha and beta lists, which are consumed in order by the functions that take them.
void read_activations(const KernelContext& ctx, const CellShape& cell, RecurrentPlan& p) {
  const size_t per_dir = cell.activations.size();
  std::vector<std::string> names = ctx.node.attr_strings("activations");
  if (names.empty())
    for (int64_t d = 0; d < p.dirs; ++d) names.insert(names.end(), cell.activations.begin(), cell.activations.end());
  if (names.size() == per_dir && p.dirs == 2) names.insert(names.end(), names.begin(), names.end());
  if (names.size() != per_dir * p.dirs)
    throw ctx.error("activations must list " + std::to_string(per_dir * p.dirs) + " functions, got " +
                    std::to_string(names.size()));
  std::vector<float> alphas = ctx.node.attr_floats("activation_alpha"), betas = ctx.node.attr_floats("activation_beta");
  size_t next_alpha = 0, next_beta = 0;
  for (size_t i = 0; i < names.size(); ++i) {
    const ActivationName* found = nullptr;
    for (const ActivationName& a : kActivations)
      if (lower(names[i]) == a.name) found = &a;
    if (!found) throw ctx.error("activation '" + names[i] + "' is not one the recurrent ops define");
    Activation& act = p.act[i / per_dir][i % per_dir];
    act = {found->kind, found->alpha, found->beta};
    if (found->uses_alpha && next_alpha < alphas.size()) act.alpha = alphas[next_alpha++];
    if (found->uses_beta && next_beta < betas.size()) act.beta = betas[next_beta++];
  }
}

void require_shape(const KernelContext& ctx, int input, const Shape& expected, const char* name) {
  const Tensor& t = ctx.input(input);
  require_float(ctx, t, name);
  if (t.shape() != expected)
    throw ctx.error(std::string(name) + " must have shape " + shape_string(expected) + ", got " +
                    shape_string(t.shape()));
}

void check_sequence_lens(const KernelContext& ctx, const RecurrentPlan& p) {
  const Tensor& t = ctx.input(kSequenceLens);
  if (t.dtype() != DType::Int32) throw ctx.error("sequence_lens must be int32", ErrorCode::InvalidGraph);
  if (t.shape() != Shape{p.batch})
    throw ctx.error("sequence_lens must have shape " + shape_string({p.batch}) + ", got " + shape_string(t.shape()));
  for (int64_t v : ctx.host_input(kSequenceLens).to_ints())
    if (v < 0 || v > p.seq)
      throw ctx.error("sequence_lens holds " + std::to_string(v) + ", outside [0, " + std::to_string(p.seq) + "]");
}

}  // namespace

RecurrentPlan recurrent_plan(const KernelContext& ctx) {
  const onnx::Node& n = ctx.node;
  const CellShape cell = cell_shape(n.op_type);
  RecurrentPlan p;
  p.kind = cell.kind;
  p.gates = cell.gates;
  std::string direction = n.attr_string("direction", "forward");
  if (direction != "forward" && direction != "reverse" && direction != "bidirectional")
    throw ctx.error("direction must be forward, reverse or bidirectional, got \"" + direction + "\"");
  p.dirs = direction == "bidirectional" ? 2 : 1;
  p.first_reverse = direction == "reverse";
  int64_t layout = n.attr_int("layout", 0);
  if (layout != 0 && layout != 1) throw ctx.error("layout must be 0 or 1, got " + std::to_string(layout));
  p.batch_first = layout == 1;
  const Tensor& x = ctx.input(kX);
  if (x.rank() != 3) throw ctx.error("X must have rank 3, got shape " + shape_string(x.shape()));
  p.seq = x.dim(p.batch_first ? 1 : 0);
  p.batch = x.dim(p.batch_first ? 0 : 1);
  p.input = x.dim(2);
  const Tensor& w = ctx.input(kW);
  if (w.rank() != 3 || w.dim(1) % p.gates != 0)
    throw ctx.error("W must have shape (directions, " + std::to_string(p.gates) + "*hidden_size, input_size), got " +
                    shape_string(w.shape()));
  p.hidden = n.attr_int("hidden_size", w.dim(1) / p.gates);
  if (p.hidden < 0) throw ctx.error("hidden_size must not be negative");
  const int64_t G = p.gate_rows(), H = p.hidden;
  require_shape(ctx, kX, x.shape(), "X");
  require_shape(ctx, kW, {p.dirs, G, p.input}, "W");
  require_shape(ctx, kR, {p.dirs, G, H}, "R");
  if (ctx.has_input(kB)) require_shape(ctx, kB, {p.dirs, 2 * G}, "B");
  if (ctx.has_input(kSequenceLens)) check_sequence_lens(ctx, p);
  Shape state = p.batch_first ? Shape{p.batch, p.dirs, H} : Shape{p.dirs, p.batch, H};
  if (ctx.has_input(kInitialH)) require_shape(ctx, kInitialH, state, "initial_h");
  if (p.kind == CellKind::Lstm) {
    if (ctx.has_input(kInitialC)) require_shape(ctx, kInitialC, state, "initial_c");
    if (ctx.has_input(kPeepholes)) require_shape(ctx, kPeepholes, {p.dirs, 3 * H}, "P");
    p.input_forget = n.attr_int("input_forget", 0) != 0;
  }
  if (p.kind == CellKind::Gru) p.linear_before_reset = n.attr_int("linear_before_reset", 0) != 0;
  p.has_clip = n.has("clip");
  p.clip = n.attr_float("clip", 0);
  if (p.has_clip && !(p.clip >= 0)) throw ctx.error("clip must not be negative");
  read_activations(ctx, cell, p);
  return p;
}

RecurrentScratch recurrent_scratch(KernelContext& ctx, const RecurrentPlan& p) {
  const int64_t units = p.batch * p.hidden, xw = p.seq * p.batch * p.gate_rows();
  RecurrentScratch s;
  s.buffer = ctx.allocator->allocate(static_cast<size_t>(xw + 5 * units + p.gate_rows()) * sizeof(float));
  float* at = static_cast<float*>(s.buffer->data);
  for (float** slot : {&s.xw, &s.h[0], &s.h[1], &s.c, &s.gate_z, &s.gate_r, &s.zeros}) {
    *slot = at;
    at += slot == &s.xw ? xw : slot == &s.zeros ? p.gate_rows() : units;
  }
  return s;
}

namespace {

#define LOCKSTEP_ROW(name) {name, 7, kNewestOpset, &cpu::recurrent, LOCKSTEP_CUDA_KERNEL(recurrent), 0}
// One row per op: layout (opset 14) defaults to 0, and 22 only widened the float types.
const OpEntry kRows[] = {LOCKSTEP_ROW("RNN"), LOCKSTEP_ROW("GRU"), LOCKSTEP_ROW("LSTM")};
#undef LOCKSTEP_ROW

}  // namespace

std::span<const OpEntry> recurrent_ops() { return kRows; }

}  // namespace lockstep
