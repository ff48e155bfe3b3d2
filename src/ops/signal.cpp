// The signal family's definitions: DFT (17; 20 moved axis to an input, default -2), STFT (17) and
// MelWeightMatrix (17).
#include "ops/signal.h"

#include <string>

#include "ops/common.h"
#include "ops/registry.h"

namespace lockstep {

namespace {

// A scalar integer input (dft_length, axis), read on the host.
int64_t scalar_input(const KernelContext& ctx, int i, const char* name) {
  Tensor t = ctx.host_input(i);
  if ((t.dtype() != DType::Int64 && t.dtype() != DType::Int32) || t.numel() != 1)
    throw ctx.error(std::string(name) + " must be one int32 or int64 value, got " + dtype_name(t.dtype()) + " " +
                    shape_string(t.shape()));
  return t.int_at(0);
}

}  // namespace

DftElement dft_plan(const KernelContext& ctx, Shape* out_shape) {
  const Tensor& x = ctx.input(0);
  require_float(ctx, x, "input");
  const int64_t rank = x.rank();
  if (rank < 2 || (x.dim(-1) != 1 && x.dim(-1) != 2))
    throw ctx.error("input " + shape_string(x.shape()) + " must end in a dimension of 1 (real) or 2 (complex)");
  int64_t axis = ctx.opset >= 20 ? (ctx.has_input(2) ? scalar_input(ctx, 2, "axis") : -2)
                                 : ctx.node.attr_int("axis", 1);
  if (axis < -rank || axis > rank - 2 || axis == -1)
    throw ctx.error("axis " + std::to_string(axis) + " is outside [-" + std::to_string(rank) + ", -2] and [0, " +
                    std::to_string(rank - 2) + "]");
  axis = normalize_axis(ctx.node, axis, rank);
  const bool inverse = ctx.node.attr_int("inverse", 0) != 0, onesided = ctx.node.attr_int("onesided", 0) != 0;
  const int64_t components = x.dim(-1), length = x.dim(axis);
  if (onesided && !inverse && components != 1)
    throw ctx.error("a one-sided forward DFT takes a real input (last dimension 1)");
  if (onesided && inverse && components != 2)
    throw ctx.error("a one-sided inverse DFT takes a complex input (last dimension 2)");
  const int64_t size = ctx.has_input(1) ? scalar_input(ctx, 1, "dft_length") : onesided && inverse ? 2 * (length - 1)
                                                                                                     : length;
  if (size < 1) throw ctx.error("dft_length " + std::to_string(size) + " must be at least 1");
  arith::DftGeometry g;
  g.x = x.data<float>();
  g.outer = 1;
  for (int64_t d = 0; d < axis; ++d) g.outer *= x.dim(d);
  g.inner = 1;
  for (int64_t d = axis + 1; d < rank - 1; ++d) g.inner *= x.dim(d);
  g.length = length;
  g.components = components;
  g.size = size;
  g.kind = !inverse ? arith::DftKind::Forward
                    : onesided ? arith::DftKind::InverseOfOneSided : arith::DftKind::Inverse;
  g.bins = onesided && !inverse ? size / 2 + 1 : size;
  g.out_components = onesided && inverse ? 1 : 2;
  *out_shape = x.shape();
  (*out_shape)[axis] = g.bins;
  out_shape->back() = g.out_components;
  return {g};
}

DftElement stft_plan(const KernelContext& ctx, Shape* out_shape) {
  const Tensor& x = ctx.input(0);
  const Tensor* window = ctx.has_input(2) ? &ctx.input(2) : nullptr;
  require_float(ctx, x, "signal");
  if (window) require_float(ctx, *window, "window");
  if (x.rank() != 3 || (x.dim(2) != 1 && x.dim(2) != 2))
    throw ctx.error("signal " + shape_string(x.shape()) + " must be (batch, length, 1) or (batch, length, 2)");
  const int64_t length = x.dim(1);
  const int64_t step = scalar_input(ctx, 1, "frame_step");
  if (window && window->rank() != 1) throw ctx.error("window " + shape_string(window->shape()) + " must be 1-D");
  const int64_t frame = ctx.has_input(3) ? scalar_input(ctx, 3, "frame_length") : window ? window->dim(0) : length;
  if (window && window->dim(0) != frame)
    throw ctx.error("window " + shape_string(window->shape()) + " must have frame_length " + std::to_string(frame) +
                    " entries");
  if (step < 1 || frame < 1 || frame > length)
    throw ctx.error("frame_step " + std::to_string(step) + " and frame_length " + std::to_string(frame) +
                    " must be at least 1, the frame no longer than the signal (" + std::to_string(length) + ")");
  const bool onesided = ctx.node.attr_int("onesided", 1) != 0;
  if (onesided && x.dim(2) != 1) throw ctx.error("a one-sided STFT takes a real signal (last dimension 1)");
  arith::DftGeometry g;
  g.x = x.data<float>();
  g.outer = x.dim(0);
  g.length = length;
  g.inner = 1;
  g.components = x.dim(2);
  g.size = frame;
  g.bins = onesided ? frame / 2 + 1 : frame;
  g.out_components = 2;
  g.kind = arith::DftKind::Forward;
  g.frames = (length - frame) / step + 1;
  g.frame_step = step;
  g.window = window ? window->data<float>() : nullptr;
  *out_shape = {g.outer, g.frames, g.bins, 2};
  return {g};
}

namespace {

// A scalar float input (lower_edge_hertz, upper_edge_hertz) as double, exactly.
double scalar_real(const KernelContext& ctx, int i, const char* name) {
  Tensor t = ctx.host_input(i);
  if (t.numel() != 1) throw ctx.error(std::string(name) + " must be one value, got " + shape_string(t.shape()));
  switch (t.dtype()) {
    case DType::Float: return t.data<float>()[0];
    case DType::Double: return t.data<double>()[0];
    case DType::Float16: return arith::f16_bits_to_f32(t.data<uint16_t>()[0]);
    case DType::BFloat16: return arith::bf16_bits_to_f32(t.data<uint16_t>()[0]);
    default:
      throw ctx.error(std::string(name) + " must be float, double, float16 or bfloat16, got " + dtype_name(t.dtype()));
  }
}

}  // namespace

MelWeightElement mel_weight_plan(const KernelContext& ctx, Shape* out_shape, DType* out_type) {
  const int64_t bins = scalar_input(ctx, 0, "num_mel_bins"), dft = scalar_input(ctx, 1, "dft_length");
  const int64_t rate = scalar_input(ctx, 2, "sample_rate");
  const double lower = scalar_real(ctx, 3, "lower_edge_hertz"), upper = scalar_real(ctx, 4, "upper_edge_hertz");
  if (bins < 0 || dft < 1 || rate < 1)
    throw ctx.error("num_mel_bins " + std::to_string(bins) + ", dft_length " + std::to_string(dft) +
                    " and sample_rate " + std::to_string(rate) + " must be >= 0, >= 1 and >= 1");
  const double nyquist = static_cast<double>(rate) / 2.0;
  if (!(lower >= 0.0 && lower < upper && upper <= nyquist))
    throw ctx.error("lower_edge_hertz " + std::to_string(lower) + " and upper_edge_hertz " + std::to_string(upper) +
                    " must satisfy 0 <= lower < upper <= sample_rate / 2 = " + std::to_string(nyquist));
  const int64_t code = ctx.node.attr_int("output_datatype", static_cast<int64_t>(DType::Float));
  const DType type = static_cast<DType>(code);
  switch (type) {
    case DType::Float: case DType::Double: case DType::Float16: case DType::BFloat16: case DType::Int8:
    case DType::Int16: case DType::Int32: case DType::Int64: case DType::UInt8: case DType::UInt16:
    case DType::UInt32: case DType::UInt64: break;
    default: throw ctx.error("output_datatype " + std::to_string(code) + " is not one of MelWeightMatrix's types");
  }
  arith::MelGeometry g;
  g.mel_bins = bins;
  g.dft_length = dft;
  g.sample_rate = static_cast<double>(rate);
  g.lower_mel = arith::mel_of_hertz_f64(lower);
  g.mel_step = (arith::mel_of_hertz_f64(upper) - g.lower_mel) / static_cast<double>(bins + 2);
  *out_shape = {dft / 2 + 1, bins};
  *out_type = type;
  return {g};
}

namespace {
const OpEntry kRows[] = {
    {"DFT", 17, kNewestOpset, &cpu::dft, LOCKSTEP_CUDA_KERNEL(dft)},
    {"STFT", 17, kNewestOpset, &cpu::stft, LOCKSTEP_CUDA_KERNEL(stft)},
    {"MelWeightMatrix", 17, kNewestOpset, &cpu::mel_weight_matrix, LOCKSTEP_CUDA_KERNEL(mel_weight_matrix)},
};
}  // namespace

std::span<const OpEntry> signal_ops() { return kRows; }

}  // namespace lockstep
