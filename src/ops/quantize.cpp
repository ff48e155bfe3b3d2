// The quantize family: attributes, validation, scale granularity and the op table.
#include "ops/quantize.h"

#include <string>

#include "ops/registry.h"

namespace lockstep {

namespace {

void require_float32_input(const KernelContext& ctx, int input, const char* name) {
  DType t = ctx.input(input).dtype();
  if (t != DType::Float)
    throw ctx.error(std::string(name) + " has element type " + dtype_name(t) + "; lockstep's " + ctx.node.op_type +
                        " takes float only",
                    ErrorCode::NotImplemented);
}

// Per tensor (a scale of one element, rank <= 1), per axis (1-D, the axis' length) or blocked (block_size > 0:
// x's rank, x's dims but ceil(D/block_size) on the axis).
arith::ScaleIndex scale_index(const KernelContext& ctx) {
  const Shape& x = ctx.input(0).shape();
  const Shape& s = ctx.input(1).shape();
  // Per tensor, a one-element zero point of rank 0 or 1 goes with a one-element scale of either (as onnx's
  // reference and the node tests have them: scale [], zero point [1]).
  const auto per_tensor = [](const Shape& d) { return d.size() <= 1 && shape_numel(d) == 1; };
  if (ctx.has_input(2) && ctx.input(2).shape() != s && !(per_tensor(s) && per_tensor(ctx.input(2).shape())))
    throw ctx.error("the zero point's shape " + shape_string(ctx.input(2).shape()) + " differs from the scale's " +
                    shape_string(s));
  const int64_t block = ctx.node.attr_int("block_size", 0);
  arith::ScaleIndex index;
  if (block == 0 && per_tensor(s)) return index;
  const int64_t rank = static_cast<int64_t>(x.size());
  const int64_t axis = normalize_axis(ctx.node, ctx.node.attr_int("axis", 1), rank);
  for (int64_t d = axis + 1; d < rank; ++d) index.inner *= x[d];
  index.axis_dim = x[axis];
  if (block == 0) {
    if (s.size() != 1 || s[0] != x[axis])
      throw ctx.error("a per-axis scale must have shape (" + std::to_string(x[axis]) + "), got " + shape_string(s));
    index.axis_stride = 1;
    return index;
  }
  if (block < 0) throw ctx.error("block_size must be positive, got " + std::to_string(block));
  Shape expected = x;
  expected[axis] = (x[axis] + block - 1) / block;
  if (s != expected)
    throw ctx.error("a blocked scale for block_size " + std::to_string(block) + " must have shape " +
                    shape_string(expected) + ", got " + shape_string(s));
  index.block = block;
  index.inner_stride = 1;
  index.axis_stride = index.inner;
  index.outer_stride = expected[axis] * index.inner;
  return index;
}

}  // namespace

QuantizePlan quantize_plan(const KernelContext& ctx) {
  require_float32_input(ctx, 0, "x");
  require_float32_input(ctx, 1, "y_scale");
  if (ctx.node.attr_int("precision", 0) != 0 && ctx.node.attr_int("precision", 0) != int64_t(DType::Float))
    throw ctx.error("precision other than float is not supported", ErrorCode::NotImplemented);
  QuantizePlan p;
  p.has_zero_point = ctx.has_input(2);
  const int64_t out = ctx.node.attr_int("output_dtype", 0);
  if (p.has_zero_point) p.quantized = ctx.input(2).dtype();
  else if (out != 0) p.quantized = static_cast<DType>(out);
  if (out != 0 && static_cast<DType>(out) != p.quantized)
    throw ctx.error(std::string("output_dtype ") + dtype_name(static_cast<DType>(out)) +
                        " differs from the zero point's type " + dtype_name(p.quantized),
                    ErrorCode::InvalidGraph);
  dispatch_quantized(ctx, p.quantized, false, [](auto) {});
  p.index = scale_index(ctx);
  return p;
}

QuantizePlan dequantize_plan(const KernelContext& ctx) {
  const DType scale = ctx.input(1).dtype();
  dispatch_dequantize_scale(ctx, scale, [](auto) {});
  const int64_t out = ctx.node.attr_int("output_dtype", 0);
  if (out != 0 && static_cast<DType>(out) != scale)
    throw ctx.error(std::string("output_dtype ") + dtype_name(static_cast<DType>(out)) + " differs from x_scale's " +
                        dtype_name(scale) + ", which lockstep does not support",
                    ErrorCode::NotImplemented);
  QuantizePlan p;
  p.quantized = ctx.input(0).dtype();
  p.has_zero_point = ctx.has_input(2);
  if (p.has_zero_point && ctx.input(2).dtype() != p.quantized)
    throw ctx.error(std::string("x_zero_point has type ") + dtype_name(ctx.input(2).dtype()) + ", x has " +
                        dtype_name(p.quantized),
                    ErrorCode::InvalidGraph);
  dispatch_quantized(ctx, p.quantized, true, [](auto) {});
  p.index = scale_index(ctx);
  return p;
}

namespace {

// A per-tensor scale (one element: float, float16 or bfloat16), as float (exact).
float host_scale(const KernelContext& ctx, int input, const char* name) {
  Tensor t = ctx.host_input(input);
  if (t.numel() != 1)
    throw ctx.error(std::string(name) + " must hold one element (per-tensor), got shape " + shape_string(t.shape()),
                    ErrorCode::NotImplemented);
  switch (t.dtype()) {
    case DType::Float: return *t.data<float>();
    case DType::Float16: return arith::f16_bits_to_f32(*t.data<uint16_t>());
    case DType::BFloat16: return arith::bf16_bits_to_f32(*t.data<uint16_t>());
    default:
      throw ctx.error(std::string(name) + " has element type " + dtype_name(t.dtype()), ErrorCode::InvalidGraph);
  }
}

// The zero points of type `type` (one 0 when absent): one element, or `per` elements in one dim (per > 0).
ZeroPoints host_zero_points(const KernelContext& ctx, int input, DType type, const char* name, int64_t per) {
  ZeroPoints z;
  if (!ctx.has_input(input)) return z;
  Tensor t = ctx.host_input(input);
  if (t.dtype() != type)
    throw ctx.error(std::string(name) + " has type " + dtype_name(t.dtype()) + ", its tensor " + dtype_name(type),
                    ErrorCode::InvalidGraph);
  const bool one_dim = per > 0 && t.rank() >= 1 && t.numel() == per && t.dim(-1) == per;
  if (t.numel() != 1 && !one_dim)
    throw ctx.error(std::string(name) + " has shape " + shape_string(t.shape()) + "; lockstep takes one element" +
                        (per > 0 ? " or " + std::to_string(per) : std::string()),
                    ErrorCode::NotImplemented);
  z.values.resize(static_cast<size_t>(t.numel()));
  for (int64_t i = 0; i < t.numel(); ++i) z.values[i] = static_cast<int32_t>(t.int_at(i));
  return z;
}

// A per-tensor zero point of type `type` (0 when absent).
int32_t host_zero_point(const KernelContext& ctx, int input, DType type, const char* name) {
  return host_zero_points(ctx, input, type, name, 0).of(0);
}

}  // namespace

arith::DynamicRange dynamic_quantize_range(const KernelContext& ctx) {
  require_float32_input(ctx, 0, "x");
  Tensor x = ctx.host_input(0);
  const float* v = x.data<float>();
  auto at = [&](int64_t i) { return v[i]; };
  float lo = arith::extreme_seq_f32<false>(x.numel(), 0.0f, at), hi = arith::extreme_seq_f32<true>(x.numel(), 0.0f, at);
  lo = arith::min_takes_f32(0.0f, lo) ? 0.0f : lo;
  hi = arith::max_takes_f32(0.0f, hi) ? 0.0f : hi;
  return arith::dynamic_range(lo, hi);
}

QLinearMatMulPlan qlinear_matmul_plan(const KernelContext& ctx) {
  const Tensor &a = ctx.input(0), &b = ctx.input(3);
  QLinearMatMulPlan plan;
  QLinearDims& p = plan.dims;
  plan.a_type = a.dtype();
  plan.b_type = b.dtype();
  plan.y_type = ctx.has_input(7) ? ctx.input(7).dtype() : a.dtype();
  if (a.rank() < 2 || b.rank() < 2)
    throw ctx.error("a and b must have rank >= 2, got " + shape_string(a.shape()) + " and " + shape_string(b.shape()),
                    ErrorCode::NotImplemented);
  p.M = a.dim(-2);
  p.K = a.dim(-1);
  p.N = b.dim(-1);
  if (b.dim(-2) != p.K)
    throw ctx.error("a " + shape_string(a.shape()) + " and b " + shape_string(b.shape()) + " do not multiply");
  plan.out_shape = a.shape();
  plan.out_shape.back() = p.N;
  for (int d = 0; d < a.rank() - 2; ++d) p.batch *= a.dim(d);
  p.b_shared = b.rank() == 2;
  if (!p.b_shared && Shape(b.shape().begin(), b.shape().end() - 2) != Shape(a.shape().begin(), a.shape().end() - 2))
    throw ctx.error("b's batch dims must equal a's (or b be 2-D), got " + shape_string(a.shape()) + " and " +
                        shape_string(b.shape()),
                    ErrorCode::NotImplemented);
  const float a_scale = host_scale(ctx, 1, "a_scale"), b_scale = host_scale(ctx, 4, "b_scale");
  const float y_scale = host_scale(ctx, 6, "y_scale");
  p.multiplier = (a_scale * b_scale) / y_scale;
  p.a_zp = host_zero_point(ctx, 2, plan.a_type, "a_zero_point");
  p.b_zp = host_zero_point(ctx, 5, plan.b_type, "b_zero_point");
  p.y_zp = host_zero_point(ctx, 7, plan.y_type, "y_zero_point");
  dispatch_qlinear(ctx, plan, [](auto, auto, auto) {});
  return plan;
}

MatMulIntegerPlan matmul_integer_plan(const KernelContext& ctx) {
  dispatch_integer_pair(ctx, "A", "B", [](auto, auto) {});
  MatMulIntegerPlan p;
  p.shapes = matmul_shapes(ctx);
  const Tensor &a = ctx.input(0), &b = ctx.input(1);
  p.a_zp = host_zero_points(ctx, 2, a.dtype(), "a_zero_point", a.rank() >= 2 ? p.shapes.M : 0);
  p.b_zp = host_zero_points(ctx, 3, b.dtype(), "b_zero_point", b.rank() >= 2 ? p.shapes.N : 0);
  return p;
}

ConvIntegerPlan conv_integer_plan(const KernelContext& ctx) {
  dispatch_integer_pair(ctx, "x", "w", [](auto, auto) {});
  ConvIntegerPlan p;
  p.geom = conv_window_geometry(ctx);
  p.x_zp = host_zero_point(ctx, 2, ctx.input(0).dtype(), "x_zero_point");
  p.w_zp = host_zero_points(ctx, 3, ctx.input(1).dtype(), "w_zero_point", p.geom.c_out);
  return p;
}

QLinearConvPlan qlinear_conv_plan(const KernelContext& ctx) {
  QLinearConvPlan p;
  dispatch_eight_bit(ctx, ctx.input(0).dtype(), "x", [](auto) {});
  dispatch_eight_bit(ctx, ctx.input(3).dtype(), "w", [](auto) {});
  p.conv.geom = conv_window_geometry(ctx, 3);
  p.conv.x_zp = host_zero_point(ctx, 2, ctx.input(0).dtype(), "x_zero_point");
  p.conv.w_zp = host_zero_points(ctx, 5, ctx.input(3).dtype(), "w_zero_point", p.conv.geom.c_out);
  const int64_t channels = p.conv.geom.c_out;
  const float x_scale = host_scale(ctx, 1, "x_scale"), y_scale = host_scale(ctx, 6, "y_scale");
  const Tensor w_scale = ctx.host_input(4);
  if (w_scale.dtype() != DType::Float || (w_scale.numel() != 1 && w_scale.numel() != channels))
    throw ctx.error("w_scale must be float, one element or one per output channel (" + std::to_string(channels) +
                        "), got " + dtype_name(w_scale.dtype()) + shape_string(w_scale.shape()),
                    ErrorCode::NotImplemented);
  for (int64_t m = 0; m < channels; ++m)
    p.multipliers.push_back((x_scale * w_scale.data<float>()[w_scale.numel() == 1 ? 0 : m]) / y_scale);
  p.y_type = ctx.has_input(7) ? ctx.input(7).dtype() : DType::UInt8;
  dispatch_eight_bit(ctx, p.y_type, "y_zero_point", [](auto) {});
  p.y_zp = host_zero_point(ctx, 7, p.y_type, "y_zero_point");
  p.bias.assign(static_cast<size_t>(channels), 0);
  if (ctx.has_input(8)) {
    const Tensor b = ctx.host_input(8);
    if (b.dtype() != DType::Int32 || b.rank() != 1 || b.dim(0) != channels)
      throw ctx.error("B must be int32 of shape [" + std::to_string(channels) + "], got " + dtype_name(b.dtype()) +
                      shape_string(b.shape()));
    std::copy_n(b.data<int32_t>(), channels, p.bias.begin());
  }
  return p;
}

namespace {
// One row per op: axis (13), blocks, int16 and output_dtype (21) and precision (25) are read when present.
const OpEntry kRows[] = {
    {"QuantizeLinear", 10, kNewestOpset, &cpu::quantize, LOCKSTEP_CUDA_KERNEL(quantize)},
    {"DequantizeLinear", 10, kNewestOpset, &cpu::dequantize, LOCKSTEP_CUDA_KERNEL(dequantize)},
    {"DynamicQuantizeLinear", 11, kNewestOpset, &cpu::dynamic_quantize, LOCKSTEP_CUDA_KERNEL(dynamic_quantize)},
    {"QLinearMatMul", 10, kNewestOpset, &cpu::qlinear_matmul, LOCKSTEP_CUDA_KERNEL(qlinear_matmul)},
    {"MatMulInteger", 10, kNewestOpset, &cpu::matmul_integer, LOCKSTEP_CUDA_KERNEL(matmul_integer)},
    {"ConvInteger", 10, kNewestOpset, &cpu::conv_integer, LOCKSTEP_CUDA_KERNEL(conv_integer)},
    {"QLinearConv", 10, kNewestOpset, &cpu::qlinear_conv, LOCKSTEP_CUDA_KERNEL(qlinear_conv)},
};
}  // namespace

std::span<const OpEntry> quantize_ops() { return kRows; }

}  // namespace lockstep
