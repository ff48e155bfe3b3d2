// The elementwise family's device-independent definition: which op a table row is, its attributes, output
// shapes and the broadcasting plan that both devices' loops follow. Per-element formulas: src/arith/elementwise.h.
#pragma once

#include <string>
#include <type_traits>
#include <utility>

#include "arith/elementwise.h"
#include "ops/common.h"
#include "ops/registry.h"
#include "runtime/kernel.h"

namespace lockstep {

/// OpEntry::variant of the `unary` kernel rows.
enum class UnaryOp : int {
  Relu, LeakyRelu, Elu, Selu, Sigmoid, HardSigmoid, HardSwish, Tanh, Erf, Gelu, Softplus, Exp, Log, Sqrt,
  Reciprocal, Neg, Abs, Floor, Ceil, Round, Sign, Sin, Cos, Tan, Asin, Acos, Atan, Sinh, Cosh, Asinh, Acosh, Atanh,
  IsNaN, IsInf, Not, BitwiseNot, ThresholdedRelu, Swish, Celu, Softsign, Shrink, Mish,
  Silu,           // lockstep.Silu, made by the graph rewrites only
  GeluErfChain,   // lockstep.GeluErfChain, likewise
  GeluTanhChain,  // lockstep.GeluTanhChain, likewise
  QuickGelu,      // com.microsoft: Swish with alpha 1.702 by default
};
/// OpEntry::variant of the `binary` kernel rows.
enum class BinaryOp : int {
  Add, Sub, Mul, Div, Pow, Mod, PRelu, Max, Min, Equal, Greater, Less, GreaterOrEqual, LessOrEqual, And, Or, Xor,
  BitwiseAnd, BitwiseOr, BitwiseXor,
  BitShift, SwiGLU,
  BiasGelu, FastGelu,  // com.microsoft; FastGelu's bias input is optional (without it: Gelu's tanh approximation)
};
/// OpEntry::variant of the `variadic` kernel rows.
enum class VariadicOp : int { Sum, Mean, Max, Min };

/// Attributes of the unary and binary ops, read once by the definition.
struct ElementwiseParams {
  float alpha = 0, beta = 0, gamma = 0, delta = 0;
  bool flag_a = false, flag_b = false;  // Gelu: tanh approximation; IsInf: detect_negative, detect_positive;
                                        // Mod: fmod; BitShift: direction LEFT
};
ElementwiseParams unary_params(const KernelContext& ctx, UnaryOp op);
ElementwiseParams binary_params(const KernelContext& ctx, BinaryOp op);

constexpr int kMaxBroadcastInputs = 3;

/// How one output element finds its operands: the output's index space with dims of size 1 dropped and
/// contiguous runs merged, and each input's element strides over it (0 on broadcast dims).
struct BroadcastPlan {
  enum Kind : int { Strided = 0, Linear = 1, Scalar = 2 };  // Linear: same shape as the output
  int rank = 1;
  int num_inputs = 0;
  int64_t numel = 0;
  int64_t dims[kMaxRank] = {};
  int64_t strides[kMaxBroadcastInputs][kMaxRank] = {};
  int kind[kMaxBroadcastInputs] = {};

  /// True when no input needs strided indexing.
  LOCKSTEP_HD bool flat() const {
    for (int k = 0; k < num_inputs; ++k)
      if (kind[k] == Strided) return false;
    return true;
  }
  /// Element offset of input k for output element i.
  LOCKSTEP_HD int64_t offset(int k, int64_t i) const {
    if (kind[k] == Linear) return i;
    if (kind[k] == Scalar) return 0;
    // 32-bit divisions where the coordinates fit: a 64-bit one is a long subroutine on the GPU.
    return numel <= int64_t(UINT32_MAX) ? strided_offset<uint32_t>(k, uint32_t(i)) : strided_offset<int64_t>(k, i);
  }

 private:
  template <class Index>
  LOCKSTEP_HD int64_t strided_offset(int k, Index i) const {
    int64_t off = 0;
    for (int d = rank - 1; d >= 0; --d) {
      const Index q = i / Index(dims[d]);
      off += int64_t(i - q * Index(dims[d])) * strides[k][d];
      i = q;
    }
    return off;
  }
};

/// Multidirectional (numpy) broadcast of the inputs; `out_shape` receives the output shape.
BroadcastPlan plan_broadcast(const KernelContext& ctx, std::initializer_list<const Tensor*> inputs, Shape& out_shape);
/// The same plan from the inputs' shapes alone.
BroadcastPlan plan_broadcast_shapes(const KernelContext& ctx, const std::vector<Shape>& inputs, Shape& out_shape);
/// Throws InvalidGraph unless all given inputs have the dtype of the first.
void require_same_dtype(const KernelContext& ctx, std::initializer_list<const Tensor*> inputs);
/// Throws InvalidArgument unless x's shape is the broadcast of x and slope (PRelu's unidirectional broadcast).
void require_unidirectional(const KernelContext& ctx, const Shape& x, const Shape& out);
/// Mod on floats requires fmod = 1 before opset 28 (ONNX spec); BitShift takes signed integers from opset 28.
void validate_binary(const KernelContext& ctx, BinaryOp op, DType dtype, const ElementwiseParams& p);

/// Clip's bounds as doubles (attributes before opset 11; optional scalar inputs 1 and 2 after), with the
/// type's lowest/highest value for an absent bound. `lo_i`/`hi_i` hold exact int64 bounds for integer types.
struct ClipBounds {
  double lo, hi;
  int64_t lo_i, hi_i;
};
ClipBounds clip_bounds(const KernelContext& ctx, DType dtype);
/// Cast's target type ("to") or CastLike's (input 1's dtype); throws NotImplemented for unsupported types.
DType cast_target(const KernelContext& ctx);
/// Cast's `saturate` (default 1) and `round_mode` (default "up"; float8e8m0 only) attributes.
arith::CastMode cast_mode(const KernelContext& ctx);
/// Cast's supported element types.
bool cast_supported(DType t);

/// Throws NotImplemented naming the dtype.
[[noreturn]] void unsupported_dtype(const KernelContext& ctx, DType t);

/// Calls fn(T{}) with T the storage type of dtype t, if t is in the compile-time mask Allowed (TypeBit flags);
/// otherwise throws NotImplemented naming the dtype. Bool is stored as uint8_t.
template <unsigned Allowed, class Fn>
void dispatch_dtype(const KernelContext& ctx, DType t, Fn&& fn) {
  using namespace arith;
#define LOCKSTEP_CASE(dt, bit, T) \
  case DType::dt:                 \
    if constexpr ((Allowed & bit) != 0) return fn(T{}); \
    break;
  switch (t) {
    LOCKSTEP_CASE(Float, kF32, float)
    LOCKSTEP_CASE(Double, kF64, double)
    LOCKSTEP_CASE(Int8, kI8, int8_t)
    LOCKSTEP_CASE(Int16, kI16, int16_t)
    LOCKSTEP_CASE(Int32, kI32, int32_t)
    LOCKSTEP_CASE(Int64, kI64, int64_t)
    LOCKSTEP_CASE(UInt8, kU8, uint8_t)
    LOCKSTEP_CASE(UInt16, kU16, uint16_t)
    LOCKSTEP_CASE(UInt32, kU32, uint32_t)
    LOCKSTEP_CASE(UInt64, kU64, uint64_t)
    LOCKSTEP_CASE(Bool, kBool, uint8_t)
    default: break;
  }
#undef LOCKSTEP_CASE
  unsupported_dtype(ctx, t);
}

/// Calls fn(T{}) with T the Cast storage type of t (arith::Half, arith::BHalf, arith::Boolean, arith::Low<K> for the
/// tagged ones).
template <class Fn>
void dispatch_cast_type(const KernelContext& ctx, DType t, Fn&& fn) {
  switch (t) {
    case DType::Float: return fn(float{});
    case DType::Double: return fn(double{});
    case DType::Float16: return fn(arith::Half{});
    case DType::BFloat16: return fn(arith::BHalf{});
    case DType::Int8: return fn(int8_t{});
    case DType::Int16: return fn(int16_t{});
    case DType::Int32: return fn(int32_t{});
    case DType::Int64: return fn(int64_t{});
    case DType::UInt8: return fn(uint8_t{});
    case DType::UInt16: return fn(uint16_t{});
    case DType::UInt32: return fn(uint32_t{});
    case DType::UInt64: return fn(uint64_t{});
    case DType::Bool: return fn(arith::Boolean{});
    case DType::Float8E4M3FN: return fn(arith::Low<arith::LowType::E4M3FN>{});
    case DType::Float8E4M3FNUZ: return fn(arith::Low<arith::LowType::E4M3FNUZ>{});
    case DType::Float8E5M2: return fn(arith::Low<arith::LowType::E5M2>{});
    case DType::Float8E5M2FNUZ: return fn(arith::Low<arith::LowType::E5M2FNUZ>{});
    case DType::Float4E2M1: return fn(arith::Low<arith::LowType::E2M1>{});
    case DType::Float8E8M0: return fn(arith::Low<arith::LowType::E8M0>{});
    case DType::Int4: return fn(arith::Low<arith::LowType::Int4>{});
    case DType::UInt4: return fn(arith::Low<arith::LowType::UInt4>{});
    case DType::Int2: return fn(arith::Low<arith::LowType::Int2>{});
    case DType::UInt2: return fn(arith::Low<arith::LowType::UInt2>{});
    default: unsupported_dtype(ctx, t);
  }
}

/// The op table's variant -> functor: calls fn(functor) for the unary op (not Clip).
template <class Fn>
void visit_unary(UnaryOp op, const ElementwiseParams& p, Fn&& fn) {
  using namespace arith;
  switch (op) {
    case UnaryOp::Relu: return fn(ReluOp{});
    case UnaryOp::LeakyRelu: return fn(LeakyReluOp{p.alpha});
    case UnaryOp::Elu: return fn(EluOp{p.alpha});
    case UnaryOp::Selu: return fn(SeluOp{p.alpha, p.gamma});
    case UnaryOp::Sigmoid: return fn(SigmoidOp{});
    case UnaryOp::HardSigmoid: return fn(HardSigmoidOp{p.alpha, p.beta});
    case UnaryOp::HardSwish: return fn(HardSwishOp{});
    case UnaryOp::Tanh: return fn(TanhOp{});
    case UnaryOp::Erf: return fn(ErfOp{});
    case UnaryOp::Gelu: return fn(GeluOp{p.flag_a});
    case UnaryOp::Softplus: return fn(SoftplusOp{});
    case UnaryOp::Exp: return fn(ExpOp{});
    case UnaryOp::Log: return fn(LogOp{});
    case UnaryOp::Sqrt: return fn(SqrtOp{});
    case UnaryOp::Reciprocal: return fn(ReciprocalOp{});
    case UnaryOp::Neg: return fn(NegOp{});
    case UnaryOp::Abs: return fn(AbsOp{});
    case UnaryOp::Floor: return fn(FloorOp{});
    case UnaryOp::Ceil: return fn(CeilOp{});
    case UnaryOp::Round: return fn(RoundOp{});
    case UnaryOp::Sign: return fn(SignOp{});
    case UnaryOp::Sin: return fn(SinOp{});
    case UnaryOp::Cos: return fn(CosOp{});
    case UnaryOp::Tan: return fn(TanOp{});
    case UnaryOp::Sinh: return fn(SinhOp{});
    case UnaryOp::Cosh: return fn(CoshOp{});
    case UnaryOp::Asinh: return fn(AsinhOp{});
    case UnaryOp::Acosh: return fn(AcoshOp{});
    case UnaryOp::Atanh: return fn(AtanhOp{});
    case UnaryOp::Asin: return fn(AsinOp{});
    case UnaryOp::Acos: return fn(AcosOp{});
    case UnaryOp::Atan: return fn(AtanOp{});
    case UnaryOp::IsNaN: return fn(IsNaNOp{});
    case UnaryOp::IsInf: return fn(IsInfOp{p.flag_a, p.flag_b});
    case UnaryOp::Not: return fn(NotOp{});
    case UnaryOp::BitwiseNot: return fn(BitwiseNotOp{});
    case UnaryOp::ThresholdedRelu: return fn(ThresholdedReluOp{p.alpha});
    case UnaryOp::Swish: case UnaryOp::QuickGelu: return fn(SwishOp{p.alpha});
    case UnaryOp::Celu: return fn(CeluOp{p.alpha});
    case UnaryOp::Softsign: return fn(SoftsignOp{});
    case UnaryOp::Shrink: return fn(ShrinkOp{p.alpha, p.beta});
    case UnaryOp::Mish: return fn(MishOp{});
    case UnaryOp::Silu: return fn(SiluOp{});
    case UnaryOp::GeluErfChain: return fn(GeluErfChainOp{p.alpha, p.beta, p.gamma});
    case UnaryOp::GeluTanhChain: return fn(GeluTanhChainOp{p.alpha, p.beta, p.gamma, p.delta});
  }
}

/// The op table's variant -> functor for the binary ops.
template <class Fn>
void visit_binary(BinaryOp op, const ElementwiseParams& p, Fn&& fn) {
  using namespace arith;
  switch (op) {
    case BinaryOp::Add: return fn(AddOp{});
    case BinaryOp::Sub: return fn(SubOp{});
    case BinaryOp::Mul: return fn(MulOp{});
    case BinaryOp::Div: return fn(DivOp{});
    case BinaryOp::Pow: return fn(PowOp{});
    case BinaryOp::Mod: return fn(ModOp{p.flag_a});
    case BinaryOp::PRelu: return fn(PReluOp{});
    case BinaryOp::Max: return fn(MaxOp{});
    case BinaryOp::Min: return fn(MinOp{});
    case BinaryOp::Equal: return fn(EqualOp{});
    case BinaryOp::Greater: return fn(GreaterOp{});
    case BinaryOp::Less: return fn(LessOp{});
    case BinaryOp::GreaterOrEqual: return fn(GreaterOrEqualOp{});
    case BinaryOp::LessOrEqual: return fn(LessOrEqualOp{});
    case BinaryOp::And: return fn(AndOp{});
    case BinaryOp::Or: return fn(OrOp{});
    case BinaryOp::Xor: return fn(XorOp{});
    case BinaryOp::BitwiseAnd: return fn(BitwiseAndOp{});
    case BinaryOp::BitwiseOr: return fn(BitwiseOrOp{});
    case BinaryOp::BitwiseXor: return fn(BitwiseXorOp{});
    case BinaryOp::BitShift: return fn(BitShiftOp{p.flag_a});
    case BinaryOp::SwiGLU: return fn(SwiGLUOp{p.alpha});
    case BinaryOp::BiasGelu: return fn(BiasGeluOp{false});
    case BinaryOp::FastGelu: return fn(BiasGeluOp{true});
  }
}

/// The binary op a variadic op folds with (Sum and Mean: Add).
inline BinaryOp variadic_step(VariadicOp op) {
  return op == VariadicOp::Max ? BinaryOp::Max : op == VariadicOp::Min ? BinaryOp::Min : BinaryOp::Add;
}

/// The output element type of functor F on T: uint8_t (bool storage) for comparisons and logic.
template <class F, class T>
using OutOf = std::conditional_t<F::kBoolOut, uint8_t, T>;

/// A tensor allocated on the kernel's device but not (yet) an output: intermediates of Pow, Sum, Mean.
Tensor new_tensor(KernelContext& ctx, DType dtype, const Shape& shape);

// The kernels' drivers, shared by both devices: validation, dtype dispatch and output allocation. `Dev` holds
// only the device's loops:
//   map1<Out, In>(ctx, x, y, f)             y[i] = f(x[i])
//   map2<Out, T>(ctx, plan, a, b, out, f)   out[i] = f(a[i'], b[i'']), plan.numel > 0
//   where<T>(ctx, plan, c, x, y, out)       plan.numel > 0
//   cast(ctx, x, y)                         x.numel() > 0
//   exponent_as_float(ctx, y)               Pow's float32 exponent
template <class Dev>
void run_unary_op(KernelContext& ctx, UnaryOp op, const ElementwiseParams& params) {
  const Tensor& x = ctx.input(0);
  visit_unary(op, params, [&](auto f) {
    using F = decltype(f);
    dispatch_dtype<F::kTypes>(ctx, x.dtype(), [&](auto tag) {
      using T = decltype(tag);
      Tensor& y = ctx.output_over_input(0, 0, F::kBoolOut ? DType::Bool : x.dtype(), x.shape());
      Dev::template map1<OutOf<F, T>, T>(ctx, x, y, f);
    });
  });
}

template <class Dev>
void run_unary(KernelContext& ctx) {
  const UnaryOp op = static_cast<UnaryOp>(ctx.entry.variant);
  run_unary_op<Dev>(ctx, op, unary_params(ctx, op));
}

/// The node's output 0 for a op b: over the buffer of whichever operand is a donatable input of the node and not
/// broadcast (the output's element count and element size), else new (KernelContext::output_over_input).
inline Tensor& binary_output(KernelContext& ctx, DType dtype, const Shape& shape, const Tensor& a, const Tensor& b) {
  for (int j = 0; j < 2 && j < ctx.num_inputs(); ++j) {
    const Tensor* in = ctx.inputs[j];
    const bool operand = in && (in->buffer() == a.buffer() || in->buffer() == b.buffer());
    if (operand && ctx.may_write_over(j, dtype, shape)) return ctx.output_over_input(0, j, dtype, shape);
  }
  return ctx.output(0, dtype, shape);
}

/// a op b into a new tensor, which is also stored in *out_slot when given (the node's output 0, which may then
/// take over an operand's buffer: binary_output).
template <class Dev>
Tensor broadcast_binary(KernelContext& ctx, BinaryOp op, const ElementwiseParams& p, const Tensor& a,
                        const Tensor& b, Tensor* out_slot) {
  Shape shape;
  BroadcastPlan plan = plan_broadcast(ctx, {&a, &b}, shape);
  Tensor y;
  visit_binary(op, p, [&](auto f) {
    using F = decltype(f);
    dispatch_dtype<F::kTypes>(ctx, a.dtype(), [&](auto tag) {
      using T = decltype(tag);
      using Out = OutOf<F, T>;
      DType out_dtype = F::kBoolOut ? DType::Bool : a.dtype();
      y = out_slot == &ctx.outputs.at(0) ? binary_output(ctx, out_dtype, shape, a, b)
          : out_slot ? (*out_slot = new_tensor(ctx, out_dtype, shape)) : new_tensor(ctx, out_dtype, shape);
      if (plan.numel > 0) Dev::template map2<Out, T>(ctx, plan, a.data<T>(), b.data<T>(), y.data<Out>(), f);
    });
  });
  return y;
}

/// x converted to dtype t by the Cast rule, in a new tensor.
template <class Dev>
Tensor cast_to(KernelContext& ctx, const Tensor& x, DType t) {
  Tensor y = new_tensor(ctx, t, x.shape());
  if (x.numel() > 0) Dev::cast(ctx, x, y, true);
  return y;
}

/// Pow of an integer base and a float exponent: Cast(Pow(Cast(x, float), float(y)), x's type).
template <class Dev>
void run_int_float_pow(KernelContext& ctx, const Tensor& a, const Tensor& b) {
  Tensor base = cast_to<Dev>(ctx, a, DType::Float);
  Tensor power = broadcast_binary<Dev>(ctx, BinaryOp::Pow, {}, base, Dev::exponent_as_float(ctx, b), nullptr);
  Tensor& y = ctx.output(0, a.dtype(), power.shape());
  if (power.numel() > 0) Dev::cast(ctx, power, y, true);
}

/// Equal on string tensors (opset 19+), host only.
template <class Dev>
void run_string_equal(KernelContext& ctx, const Tensor& a, const Tensor& b) {
  require_same_dtype(ctx, {&a, &b});
  if (ctx.opset < 19) unsupported_dtype(ctx, a.dtype());
  Shape shape;
  BroadcastPlan plan = plan_broadcast(ctx, {&a, &b}, shape);
  Tensor& y = ctx.output(0, DType::Bool, shape);
  if (plan.numel > 0) Dev::equal_strings(ctx, plan, a.data<std::string>(), b.data<std::string>(), y.data<uint8_t>());
}

template <class Dev>
void run_binary(KernelContext& ctx) {
  const BinaryOp op = static_cast<BinaryOp>(ctx.entry.variant);
  if (op == BinaryOp::FastGelu && !ctx.has_input(1)) {  // no bias: Gelu's tanh approximation of X
    ElementwiseParams tanh_gelu;
    tanh_gelu.flag_a = true;
    return run_unary_op<Dev>(ctx, UnaryOp::Gelu, tanh_gelu);
  }
  const Tensor& a = ctx.input(0);
  Tensor b = ctx.input(1);
  ElementwiseParams p = binary_params(ctx, op);
  if constexpr (kHoldsStrings<Dev>)
    if (op == BinaryOp::Equal && a.dtype() == DType::String) return run_string_equal<Dev>(ctx, a, b);
  if (op == BinaryOp::Pow && a.dtype() == DType::Float) b = Dev::exponent_as_float(ctx, b);
  if (op == BinaryOp::Pow && a.dtype() != DType::Float && b.dtype() != a.dtype()) {
    if (b.dtype() == DType::Float || b.dtype() == DType::Double) return run_int_float_pow<Dev>(ctx, a, b);
    b = cast_to<Dev>(ctx, b, a.dtype());
  }
  require_same_dtype(ctx, {&a, &b});
  validate_binary(ctx, op, a.dtype(), p);
  if (op == BinaryOp::PRelu) {
    Shape out;
    plan_broadcast(ctx, {&a, &b}, out);
    require_unidirectional(ctx, a.shape(), out);
  }
  if (op == BinaryOp::SwiGLU && a.shape() != b.shape())
    throw ctx.error("A " + shape_string(a.shape()) + " and B " + shape_string(b.shape()) +
                    " must have the same shape (SwiGLU does not broadcast)");
  broadcast_binary<Dev>(ctx, op, p, a, b, &ctx.outputs.at(0));
}

/// Throws unless the variadic node has at least one input and all share a dtype; returns the input count.
int variadic_inputs(const KernelContext& ctx);

template <class Dev>
void run_variadic(KernelContext& ctx) {
  const VariadicOp op = static_cast<VariadicOp>(ctx.entry.variant);
  const int n = variadic_inputs(ctx);
  const BinaryOp step = variadic_step(op);
  Tensor acc = ctx.input(0);
  if (n == 1) {
    dispatch_dtype<arith::MaxOp::kTypes>(ctx, acc.dtype(), [](auto) {});
    return ctx.alias_output(0, acc);
  }
  for (int k = 1; k < n; ++k) acc = broadcast_binary<Dev>(ctx, step, {}, acc, ctx.input(k), nullptr);
  if (op == VariadicOp::Mean) {
    Tensor mean = new_tensor(ctx, acc.dtype(), acc.shape());
    dispatch_dtype<arith::DivideByOp::kTypes>(ctx, acc.dtype(), [&](auto tag) {
      using T = decltype(tag);
      Dev::template map1<T, T>(ctx, acc, mean, arith::DivideByOp{static_cast<float>(n)});
    });
    acc = mean;
  }
  ctx.alias_output(0, acc);
}

template <class Dev>
void run_clip(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  ClipBounds b = clip_bounds(ctx, x.dtype());
  constexpr unsigned kTypes = arith::kFloats | arith::kI8 | arith::kU8 | arith::kI32 | arith::kI64;
  dispatch_dtype<kTypes>(ctx, x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    arith::ClipOp<T> f;
    if constexpr (std::is_floating_point_v<T>) f = {static_cast<T>(b.lo), static_cast<T>(b.hi)};
    else f = {static_cast<T>(b.lo_i), static_cast<T>(b.hi_i)};
    Dev::template map1<T, T>(ctx, x, ctx.output(0, x.dtype(), x.shape()), f);
  });
}

/// Where's validation and broadcast; `out` receives the allocated output.
BroadcastPlan plan_where(KernelContext& ctx, Tensor*& out);

/// Where moves bits, so it dispatches on the element size alone.
template <class Dev>
void run_where(KernelContext& ctx) {
  Tensor* out = nullptr;
  BroadcastPlan plan = plan_where(ctx, out);
  if (plan.numel == 0) return;
  const Tensor &c = ctx.input(0), &x = ctx.input(1), &y = ctx.input(2);
  auto run = [&](auto tag) {
    using T = decltype(tag);
    Dev::template where<T>(ctx, plan, c.data<uint8_t>(), static_cast<const T*>(x.raw()),
                           static_cast<const T*>(y.raw()), static_cast<T*>(out->raw()));
  };
  switch (dtype_size(x.dtype())) {
    case 1: return run(uint8_t{});
    case 2: return run(uint16_t{});
    case 4: return run(uint32_t{});
    case 8: return run(uint64_t{});
    default: unsupported_dtype(ctx, x.dtype());
  }
}

template <class Dev>
void run_cast(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  DType to = cast_target(ctx);
  Tensor& y = ctx.output(0, to, x.shape());
  if (x.numel() > 0) Dev::cast(ctx, x, y, cast_mode(ctx));
}

namespace cpu {
void unary(KernelContext& ctx);
void binary(KernelContext& ctx);
void variadic(KernelContext& ctx);
void clip(KernelContext& ctx);
void where(KernelContext& ctx);
void cast(KernelContext& ctx);
}  // namespace cpu
namespace cuda {
void unary(KernelContext& ctx);
void binary(KernelContext& ctx);
void variadic(KernelContext& ctx);
void clip(KernelContext& ctx);
void where(KernelContext& ctx);
void cast(KernelContext& ctx);
}  // namespace cuda

}  // namespace lockstep
