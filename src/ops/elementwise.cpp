// The elementwise family: attributes, validation, broadcasting plans and the op table.
#include "ops/elementwise.h"

#include <cfloat>
#include <limits>

#include "ops/registry.h"

namespace lockstep {

[[noreturn]] void unsupported_dtype(const KernelContext& ctx, DType t) {
  throw ctx.error(std::string("element type ") + dtype_name(t) + " is not supported by lockstep's " +
                      ctx.node.op_type + " kernel",
                  ErrorCode::NotImplemented);
}

ElementwiseParams unary_params(const KernelContext& ctx, UnaryOp op) {
  const onnx::Node& n = ctx.node;
  ElementwiseParams p;
  switch (op) {
    case UnaryOp::LeakyRelu: p.alpha = n.attr_float("alpha", 0.01f); break;
    case UnaryOp::ThresholdedRelu: case UnaryOp::Swish: case UnaryOp::Celu:
      p.alpha = n.attr_float("alpha", 1.0f);
      break;
    case UnaryOp::QuickGelu: p.alpha = n.attr_float("alpha", 1.702f); break;
    case UnaryOp::Shrink:
      p.alpha = n.attr_float("lambd", 0.5f);
      p.beta = n.attr_float("bias", 0.0f);
      break;
    case UnaryOp::Elu: p.alpha = n.attr_float("alpha", 1.0f); break;
    case UnaryOp::GeluErfChain:  // the constants of the fused nodes (src/graph/fuse.cpp)
      p.alpha = n.attr_float("divisor", 0.0f);
      p.beta = n.attr_float("addend", 0.0f);
      p.gamma = n.attr_float("factor", 0.0f);
      break;
    case UnaryOp::GeluTanhChain:
      p.alpha = n.attr_float("half", 0.0f);
      p.beta = n.attr_float("cube_factor", 0.0f);
      p.gamma = n.attr_float("scale", 0.0f);
      p.delta = n.attr_float("one", 0.0f);
      break;
    case UnaryOp::Selu:
      p.alpha = n.attr_float("alpha", 1.67326319217681884765625f);
      p.gamma = n.attr_float("gamma", 1.05070102214813232421875f);
      break;
    case UnaryOp::HardSigmoid:
      p.alpha = n.attr_float("alpha", 0.2f);
      p.beta = n.attr_float("beta", 0.5f);
      break;
    case UnaryOp::Gelu: {
      std::string a = n.attr_string("approximate", "none");
      if (a != "none" && a != "tanh") throw ctx.error("approximate must be \"none\" or \"tanh\", got \"" + a + "\"");
      p.flag_a = a == "tanh";
      break;
    }
    case UnaryOp::IsInf:
      p.flag_a = n.attr_int("detect_negative", 1) != 0;
      p.flag_b = n.attr_int("detect_positive", 1) != 0;
      break;
    default: break;
  }
  return p;
}

ElementwiseParams binary_params(const KernelContext& ctx, BinaryOp op) {
  ElementwiseParams p;
  if (op == BinaryOp::Mod) {
    int64_t f = ctx.node.attr_int("fmod", 0);
    if (f != 0 && f != 1) throw ctx.error("fmod must be 0 or 1, got " + std::to_string(f));
    p.flag_a = f == 1;
  }
  if (op == BinaryOp::SwiGLU) p.alpha = ctx.node.attr_float("alpha", 1.0f);
  if (op == BinaryOp::BitShift) {
    std::string d = ctx.node.attr_string("direction", "");
    if (d != "LEFT" && d != "RIGHT") throw ctx.error("direction must be \"LEFT\" or \"RIGHT\", got \"" + d + "\"");
    p.flag_a = d == "LEFT";
  }
  return p;
}

void validate_binary(const KernelContext& ctx, BinaryOp op, DType dtype, const ElementwiseParams& p) {
  bool is_float = dtype == DType::Float || dtype == DType::Double || dtype == DType::Float16;
  if (op == BinaryOp::Mod && is_float && !p.flag_a && ctx.opset < 28)
    throw ctx.error("fmod must be 1 for floating-point inputs");
  bool is_signed = dtype == DType::Int8 || dtype == DType::Int16 || dtype == DType::Int32 || dtype == DType::Int64;
  if (op == BinaryOp::BitShift && is_signed && ctx.opset < 28)
    throw ctx.error(std::string("BitShift takes unsigned integers before opset 28, got ") + dtype_name(dtype),
                    ErrorCode::InvalidGraph);
}

void require_same_dtype(const KernelContext& ctx, std::initializer_list<const Tensor*> inputs) {
  DType first = (*inputs.begin())->dtype();
  for (const Tensor* t : inputs)
    if (t->dtype() != first)
      throw ctx.error(std::string("inputs must have the same element type, got ") + dtype_name(first) + " and " +
                          dtype_name(t->dtype()),
                      ErrorCode::InvalidGraph);
}

void require_unidirectional(const KernelContext& ctx, const Shape& x, const Shape& out) {
  if (x != out)
    throw ctx.error("slope does not broadcast to X's shape " + shape_string(x) + " (got " + shape_string(out) + ")");
}

Tensor new_tensor(KernelContext& ctx, DType dtype, const Shape& shape) {
  size_t bytes = static_cast<size_t>(shape_numel(shape)) * dtype_size(dtype);
  return Tensor::over(dtype, shape, ctx.allocator->allocate(bytes));
}

int variadic_inputs(const KernelContext& ctx) {
  const int n = ctx.num_inputs();
  if (n < 1) throw ctx.error("needs at least one input", ErrorCode::InvalidGraph);
  for (int k = 0; k < n; ++k) {
    ctx.input(k);
    require_same_dtype(ctx, {&ctx.input(0), &ctx.input(k)});
  }
  return n;
}

BroadcastPlan plan_where(KernelContext& ctx, Tensor*& out) {
  const Tensor &c = ctx.input(0), &x = ctx.input(1), &y = ctx.input(2);
  if (c.dtype() != DType::Bool) throw ctx.error("condition must be bool", ErrorCode::InvalidGraph);
  require_same_dtype(ctx, {&x, &y});
  if (dtype_size(x.dtype()) == 0) unsupported_dtype(ctx, x.dtype());
  Shape shape;
  BroadcastPlan plan = plan_broadcast(ctx, {&c, &x, &y}, shape);
  out = &ctx.output(0, x.dtype(), shape);
  return plan;
}

BroadcastPlan plan_broadcast_shapes(const KernelContext& ctx, const std::vector<Shape>& inputs, Shape& out_shape) {
  BroadcastPlan plan;
  plan.num_inputs = static_cast<int>(inputs.size());
  out_shape = {};
  for (const Shape& s : inputs) out_shape = broadcast_shapes(ctx.node, out_shape, s);
  plan.numel = shape_numel(out_shape);

  // Drop dims of size 1, then merge dim d into d+1 wherever every input is contiguous across the pair.
  std::vector<int64_t> dims;
  std::vector<std::vector<int64_t>> strides(inputs.size());
  std::vector<std::vector<int64_t>> full;
  for (const Shape& s : inputs) full.push_back(broadcast_strides(s, out_shape));
  for (size_t d = 0; d < out_shape.size(); ++d) {
    if (out_shape[d] == 1) continue;
    bool merge = !dims.empty();
    for (size_t k = 0; merge && k < inputs.size(); ++k)
      merge = strides[k].back() == full[k][d] * out_shape[d];
    if (merge) {
      dims.back() *= out_shape[d];
      for (size_t k = 0; k < inputs.size(); ++k) strides[k].back() = full[k][d];
    } else {
      dims.push_back(out_shape[d]);
      for (size_t k = 0; k < inputs.size(); ++k) strides[k].push_back(full[k][d]);
    }
  }
  if (dims.empty()) {
    dims.push_back(1);
    for (auto& s : strides) s.push_back(0);
  }
  if (dims.size() > static_cast<size_t>(kMaxRank))
    throw ctx.error("broadcasting over more than " + std::to_string(kMaxRank) + " non-contiguous dims",
                    ErrorCode::NotImplemented);
  plan.rank = static_cast<int>(dims.size());
  for (int d = 0; d < plan.rank; ++d) plan.dims[d] = dims[d];
  int k = 0;
  for (const Shape& s : inputs) {
    for (int d = 0; d < plan.rank; ++d) plan.strides[k][d] = strides[k][d];
    int64_t n = shape_numel(s);
    plan.kind[k] = n == plan.numel ? BroadcastPlan::Linear : n == 1 ? BroadcastPlan::Scalar : BroadcastPlan::Strided;
    ++k;
  }
  return plan;
}

BroadcastPlan plan_broadcast(const KernelContext& ctx, std::initializer_list<const Tensor*> inputs,
                             Shape& out_shape) {
  std::vector<Shape> shapes;
  for (const Tensor* t : inputs) shapes.push_back(t->shape());
  return plan_broadcast_shapes(ctx, shapes, out_shape);
}

namespace {

double lowest_of(DType t) {
  switch (t) {
    case DType::Float: return -FLT_MAX;
    case DType::Double: return -DBL_MAX;
    default: return -std::numeric_limits<double>::infinity();
  }
}

int64_t int_limit(DType t, bool high) {
  switch (t) {
    case DType::Int8: return high ? INT8_MAX : INT8_MIN;
    case DType::UInt8: return high ? UINT8_MAX : 0;
    case DType::Int16: return high ? INT16_MAX : INT16_MIN;
    case DType::UInt16: return high ? UINT16_MAX : 0;
    case DType::Int32: return high ? INT32_MAX : INT32_MIN;
    case DType::UInt32: return high ? int64_t{UINT32_MAX} : 0;
    default: return high ? INT64_MAX : INT64_MIN;
  }
}

}  // namespace

ClipBounds clip_bounds(const KernelContext& ctx, DType dtype) {
  ClipBounds b{lowest_of(dtype), -lowest_of(dtype), int_limit(dtype, false), int_limit(dtype, true)};
  if (ctx.opset < 11) {
    b.lo = ctx.node.attr_float("min", -FLT_MAX);
    b.hi = ctx.node.attr_float("max", FLT_MAX);
    return b;
  }
  for (int i = 1; i <= 2; ++i) {
    if (!ctx.has_input(i)) continue;
    Tensor t = ctx.host_input(i);
    if (t.dtype() != dtype)
      throw ctx.error(std::string("min/max must have the input's element type ") + dtype_name(dtype),
                      ErrorCode::InvalidGraph);
    if (t.numel() != 1) throw ctx.error("min/max must be scalars, got shape " + shape_string(t.shape()));
    double v;
    int64_t vi = 0;
    if (dtype == DType::Float) v = *t.data<float>();
    else if (dtype == DType::Double) v = *t.data<double>();
    else v = static_cast<double>(vi = t.int_at(0));
    (i == 1 ? b.lo : b.hi) = v;
    (i == 1 ? b.lo_i : b.hi_i) = vi;
  }
  return b;
}

bool cast_supported(DType t) {
  switch (t) {
    case DType::Float: case DType::Double: case DType::Float16: case DType::BFloat16: case DType::Int8:
    case DType::Int16: case DType::Int32: case DType::Int64: case DType::UInt8: case DType::UInt16:
    case DType::UInt32: case DType::UInt64: case DType::Bool: case DType::Float8E4M3FN: case DType::Float8E4M3FNUZ:
    case DType::Float8E5M2: case DType::Float8E5M2FNUZ: case DType::Float4E2M1: case DType::Int4: case DType::UInt4:
    case DType::Int2: case DType::UInt2: case DType::Float8E8M0:
      return true;
    default: return false;
  }
}

arith::CastMode cast_mode(const KernelContext& ctx) {
  const std::string round = ctx.node.attr_string("round_mode", "up");
  arith::E8M0Round mode = arith::E8M0Round::Up;
  if (round == "down") mode = arith::E8M0Round::Down;
  else if (round == "nearest") mode = arith::E8M0Round::Nearest;
  else if (round != "up")
    throw ctx.error("round_mode '" + round + "' must be 'up', 'down' or 'nearest'", ErrorCode::InvalidGraph);
  return {ctx.node.attr_int("saturate", 1) != 0, mode};
}

DType cast_target(const KernelContext& ctx) {
  DType to;
  if (ctx.node.op_type == "CastLike") {
    to = ctx.input(1).dtype();
  } else {
    if (!ctx.node.has("to")) throw ctx.error("missing required attribute 'to'", ErrorCode::InvalidGraph);
    to = static_cast<DType>(ctx.node.attr_int("to", 0));
  }
  if (!cast_supported(to)) unsupported_dtype(ctx, to);
  if (!cast_supported(ctx.input(0).dtype())) unsupported_dtype(ctx, ctx.input(0).dtype());
  return to;
}

namespace {

#define LOCKSTEP_ROW(name, since, kernel, variant) \
  {name, since, kNewestOpset, &cpu::kernel, LOCKSTEP_CUDA_KERNEL(kernel), int(variant)}
#define U(name, since) LOCKSTEP_ROW(#name, since, unary, UnaryOp::name)
#define B(name, since) LOCKSTEP_ROW(#name, since, binary, BinaryOp::name)
#define V(name, since) LOCKSTEP_ROW(#name, since, variadic, VariadicOp::name)

// One row per op: the kernels read the opset-dependent parts (Clip's bounds) from ctx.opset.
const OpEntry kRows[] = {
    U(Relu, 7), U(LeakyRelu, 7), U(Elu, 7), U(Selu, 7), U(Sigmoid, 7), U(HardSigmoid, 7), U(HardSwish, 14),
    U(Tanh, 7), U(Erf, 9), U(Gelu, 20), U(Softplus, 7), U(Exp, 7), U(Log, 7), U(Sqrt, 7), U(Reciprocal, 7),
    U(Neg, 7), U(Abs, 7), U(Floor, 7), U(Ceil, 7), U(Round, 11), U(Sign, 9), U(Sin, 7), U(Cos, 7),
    U(Tan, 7), U(Asin, 7), U(Acos, 7), U(Atan, 7), U(Sinh, 9), U(Cosh, 9), U(Asinh, 9), U(Acosh, 9), U(Atanh, 9),
    U(IsNaN, 9), U(IsInf, 10), U(Not, 7), U(BitwiseNot, 18), U(ThresholdedRelu, 10), U(Swish, 24),
    U(Celu, 12), U(Softsign, 7), U(Shrink, 9), U(Mish, 18),
    B(Add, 7), B(Sub, 7), B(Mul, 7), B(Div, 7), B(Pow, 7), B(Mod, 10), B(PRelu, 7), B(Equal, 7), B(Greater, 7),
    B(Less, 7), B(GreaterOrEqual, 12), B(LessOrEqual, 12), B(And, 7), B(Or, 7), B(Xor, 7), B(BitwiseAnd, 18),
    B(BitwiseOr, 18), B(BitwiseXor, 18), B(BitShift, 11), B(SwiGLU, 28),
    V(Sum, 7), V(Mean, 7), V(Max, 7), V(Min, 7),
    LOCKSTEP_ROW("Clip", 7, clip, 0), LOCKSTEP_ROW("Where", 9, where, 0), LOCKSTEP_ROW("Cast", 7, cast, 0),
    LOCKSTEP_ROW("CastLike", 15, cast, 0),
};

#undef U
#undef B
#undef V
#undef LOCKSTEP_ROW

// The ops of the lockstep domain that the graph rewrites create (src/graph/fuse.cpp).
const OpEntry kFusedRows[] = {
    {"Silu", 1, kNewestOpset, &cpu::unary, LOCKSTEP_CUDA_KERNEL(unary), int(UnaryOp::Silu)},
    {"GeluErfChain", 1, kNewestOpset, &cpu::unary, LOCKSTEP_CUDA_KERNEL(unary), int(UnaryOp::GeluErfChain)},
    {"GeluTanhChain", 1, kNewestOpset, &cpu::unary, LOCKSTEP_CUDA_KERNEL(unary), int(UnaryOp::GeluTanhChain)},
};

// com.microsoft (onnxruntime's contrib ops): Gelu is the default domain's (erf), QuickGelu x * sigmoid(alpha x).
const OpEntry kMicrosoftRows[] = {
    {"Gelu", 1, kNewestOpset, &cpu::unary, LOCKSTEP_CUDA_KERNEL(unary), int(UnaryOp::Gelu)},
    {"QuickGelu", 1, kNewestOpset, &cpu::unary, LOCKSTEP_CUDA_KERNEL(unary), int(UnaryOp::QuickGelu)},
    {"BiasGelu", 1, kNewestOpset, &cpu::binary, LOCKSTEP_CUDA_KERNEL(binary), int(BinaryOp::BiasGelu)},
    {"FastGelu", 1, kNewestOpset, &cpu::binary, LOCKSTEP_CUDA_KERNEL(binary), int(BinaryOp::FastGelu)},
};

}  // namespace

std::span<const OpEntry> elementwise_ops() { return kRows; }
std::span<const OpEntry> microsoft_elementwise_ops() { return kMicrosoftRows; }
std::span<const OpEntry> fused_elementwise_ops() { return kFusedRows; }

}  // namespace lockstep
