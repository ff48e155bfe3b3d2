// The quantize family (QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear, QLinearMatMul, MatMulInteger,
// ConvInteger, QLinearConv): attributes, validation, scale granularity and the drivers
// shared by both devices. Per-element formulas: src/arith/quantize.h; contract: docs/arithmetic.md#quantize.
#pragma once

#include <cstdint>
#include <type_traits>

#include "arith/quantize.h"
#include "arith/reduce_ops.h"
#include "ops/common.h"
#include "ops/conv.h"
#include "ops/gemm.h"
#include "runtime/kernel.h"

namespace lockstep {

/// A validated node: the quantized type, the scale index of every element and whether a zero point is given.
struct QuantizePlan {
  DType quantized = DType::UInt8;
  arith::ScaleIndex index;
  bool has_zero_point = false;
};
QuantizePlan quantize_plan(const KernelContext& ctx);    // QuantizeLinear
QuantizePlan dequantize_plan(const KernelContext& ctx);  // DequantizeLinear

/// Calls fn(Q{}) for the types the quantize family computes on (arith::Low<K> for the low-precision ones); throws
/// NotImplemented naming others.
template <class Fn>
void dispatch_quantized(const KernelContext& ctx, DType t, bool allow_int32, Fn&& fn) {
  using arith::Low;
  using arith::LowType;
  switch (t) {
    case DType::Int8: return fn(int8_t{});
    case DType::UInt8: return fn(uint8_t{});
    case DType::Int16: return fn(int16_t{});
    case DType::UInt16: return fn(uint16_t{});
    case DType::Int32:
      if (allow_int32) return fn(int32_t{});
      break;
    case DType::Int4: return fn(Low<LowType::Int4>{});
    case DType::UInt4: return fn(Low<LowType::UInt4>{});
    case DType::Int2: return fn(Low<LowType::Int2>{});
    case DType::UInt2: return fn(Low<LowType::UInt2>{});
    case DType::Float8E4M3FN: return fn(Low<LowType::E4M3FN>{});
    case DType::Float8E4M3FNUZ: return fn(Low<LowType::E4M3FNUZ>{});
    case DType::Float8E5M2: return fn(Low<LowType::E5M2>{});
    case DType::Float8E5M2FNUZ: return fn(Low<LowType::E5M2FNUZ>{});
    case DType::Float4E2M1: return fn(Low<LowType::E2M1>{});
    default: break;
  }
  throw ctx.error(std::string("quantized type ") + dtype_name(t) +
                      " is not supported (lockstep quantizes to int8, uint8, int16, uint16, int4, uint4, int2, uint2, "
                      "float8 and float4e2m1)",
                  ErrorCode::NotImplemented);
}

/// Calls fn(S{}) for DequantizeLinear's scale (and output) type: float, arith::Half or arith::BHalf.
template <class Fn>
void dispatch_dequantize_scale(const KernelContext& ctx, DType t, Fn&& fn) {
  switch (t) {
    case DType::Float: return fn(float{});
    case DType::Float16: return fn(arith::Half{});
    case DType::BFloat16: return fn(arith::BHalf{});
    default:
      throw ctx.error(std::string("x_scale has element type ") + dtype_name(t) +
                          "; lockstep's DequantizeLinear takes float, float16 or bfloat16",
                      ErrorCode::NotImplemented);
  }
}

// The drivers, shared by both devices. `Dev` holds the loop:
//   map<In, Out, Q>(ctx, x, scale, zero_point or null, y, n, index, f)   y[e] = f(x[e], scale[s], zero_point[s] or Q{})
// (the scale's element type S deduced: float, or DequantizeLinear's Half/BHalf)
template <class Dev>
void run_quantize(KernelContext& ctx) {
  const QuantizePlan p = quantize_plan(ctx);
  const Tensor& x = ctx.input(0);
  Tensor& y = ctx.output(0, p.quantized, x.shape());
  dispatch_quantized(ctx, p.quantized, false, [&](auto tag) {
    using Q = decltype(tag);
    const Q* zp = p.has_zero_point ? ctx.inputs[2]->data<Q>() : nullptr;
    arith::QuantizeOp<Q> f;
    f.saturate = ctx.node.attr_int("saturate", 1) != 0;
    if (x.numel() > 0)
      Dev::template map<float, Q, Q>(ctx, x.data<float>(), ctx.input(1).data<float>(), zp, y.data<Q>(), x.numel(),
                                     p.index, f);
  });
}

template <class Dev>
void run_dequantize(KernelContext& ctx) {
  const QuantizePlan p = dequantize_plan(ctx);
  const Tensor& x = ctx.input(0);
  Tensor& y = ctx.output(0, ctx.input(1).dtype(), x.shape());
  dispatch_dequantize_scale(ctx, ctx.input(1).dtype(), [&](auto scale_tag) {
    using S = decltype(scale_tag);
    dispatch_quantized(ctx, p.quantized, true, [&](auto tag) {
      using Q = decltype(tag);
      const Q* zp = p.has_zero_point ? ctx.inputs[2]->data<Q>() : nullptr;
      if (x.numel() > 0)
        Dev::template map<Q, S, Q>(ctx, x.data<Q>(), ctx.input(1).data<S>(), zp, y.data<S>(), x.numel(), p.index,
                                   arith::DequantizeOp<Q, S>{});
    });
  });
}

/// A validated QLinearMatMul: A (batch..., M, K) times B (K, N) or (batch..., K, N), per-tensor scales and zero
/// points read on the host, the multiplier (a_scale*b_scale)/y_scale computed there once in float.
struct QLinearDims {  // plain data: CUDA kernels take it by value
  int64_t M = 0, N = 0, K = 0, batch = 1;
  bool b_shared = true;  // B is one matrix for every batch
  int32_t a_zp = 0, b_zp = 0, y_zp = 0;
  float multiplier = 0;
};
struct QLinearMatMulPlan {
  QLinearDims dims;
  DType a_type = DType::UInt8, b_type = DType::UInt8, y_type = DType::UInt8;
  Shape out_shape;
};
QLinearMatMulPlan qlinear_matmul_plan(const KernelContext& ctx);

/// Output e (row-major over batch, M, N) of QLinearMatMul; both devices call it.
template <class Y, class A, class B>
LOCKSTEP_HD Y qlinear_output(const QLinearDims& p, const A* a, const B* b, int64_t e) {
  const int64_t n = e % p.N, m = (e / p.N) % p.M, batch = e / (p.N * p.M);
  const A* row = a + (batch * p.M + m) * p.K;
  const B* col = b + (p.b_shared ? 0 : batch * p.K * p.N) + n;
  return arith::qlinear_dot<Y>(p.K, [&](int64_t k) { return int32_t(row[k]); }, p.a_zp,
                               [&](int64_t k) { return int32_t(col[k * p.N]); }, p.b_zp, p.multiplier, p.y_zp);
}

/// Calls fn(int8_t{}) or fn(uint8_t{}) for the type t of operand `what`; throws NotImplemented naming it otherwise.
template <class Fn>
void dispatch_eight_bit(const KernelContext& ctx, DType t, const char* what, Fn&& fn) {
  if (t == DType::Int8) return fn(int8_t{});
  if (t == DType::UInt8) return fn(uint8_t{});
  throw ctx.error(ctx.node.op_type + " takes int8 or uint8, got " + what + " of type " + dtype_name(t),
                  ErrorCode::NotImplemented);
}

/// Calls fn(A{}, B{}, Y{}) for QLinearMatMul's int8/uint8 operand types.
template <class Fn>
void dispatch_qlinear(const KernelContext& ctx, const QLinearMatMulPlan& p, Fn&& fn) {
  dispatch_eight_bit(ctx, p.a_type, "a", [&](auto a) {
    dispatch_eight_bit(ctx, p.b_type, "b", [&](auto b) {
      dispatch_eight_bit(ctx, p.y_type, "y", [&](auto y) { fn(a, b, y); });
    });
  });
}

/// Calls fn(A{}, B{}) for the int8/uint8 types of inputs 0 and 1 (MatMulInteger, ConvInteger), named first, second.
template <class Fn>
void dispatch_integer_pair(const KernelContext& ctx, const char* first, const char* second, Fn&& fn) {
  dispatch_eight_bit(ctx, ctx.input(0).dtype(), first, [&](auto a) {
    dispatch_eight_bit(ctx, ctx.input(1).dtype(), second, [&](auto b) { fn(a, b); });
  });
}

/// The zero points of one integer operand, read on the host: one for the whole tensor, or one per row (A of
/// MatMulInteger), per column (B) or per output channel (W of ConvInteger).
/// The same values as plain data for either device's loop (values on that device): count 1 is one for the tensor.
struct ZeroPointView {
  const int32_t* values = nullptr;
  int64_t count = 1;
  LOCKSTEP_HD int32_t of(int64_t i) const { return count == 1 ? values[0] : values[i]; }
};
struct ZeroPoints {
  std::vector<int32_t> values{0};
  int32_t of(int64_t i) const { return values.size() == 1 ? values[0] : values[i]; }
  ZeroPointView host_view() const { return {values.data(), static_cast<int64_t>(values.size())}; }
};

/// A validated MatMulInteger: A and B int8 or uint8 (each), numpy matmul shapes, an int32 output.
struct MatMulIntegerPlan {
  MatMulParams shapes;
  ZeroPoints a_zp, b_zp;  // A: per tensor or per row (M values); B: per tensor or per column (N values)
};
MatMulIntegerPlan matmul_integer_plan(const KernelContext& ctx);

/// A validated ConvInteger: x and w int8 or uint8 (each), Conv's geometry, an int32 output.
struct ConvIntegerPlan {
  ConvGeom geom;
  int32_t x_zp = 0;
  ZeroPoints w_zp;  // per tensor or per output channel
};
ConvIntegerPlan conv_integer_plan(const KernelContext& ctx);

/// A validated QLinearConv (x, x_scale, x_zero_point, w, w_scale, w_zero_point, y_scale, y_zero_point, B): x, w
/// and y int8 or uint8, scales and zero points per tensor (w's also per output channel), read on the host; each
/// output channel's multiplier (x_scale * w_scale[m]) / y_scale computed there once in float.
struct QLinearConvPlan {
  ConvIntegerPlan conv;
  std::vector<float> multipliers;  // per output channel
  std::vector<int32_t> bias;       // per output channel (zeros without B)
  int32_t y_zp = 0;
  DType y_type = DType::UInt8;
};
QLinearConvPlan qlinear_conv_plan(const KernelContext& ctx);

/// Calls fn(X{}, W{}, Y{}) for QLinearConv's int8/uint8 types of x, w and y.
template <class Fn>
void dispatch_qlinear_conv(const KernelContext& ctx, const QLinearConvPlan& p, Fn&& fn) {
  dispatch_eight_bit(ctx, ctx.input(0).dtype(), "x", [&](auto x) {
    dispatch_eight_bit(ctx, ctx.input(3).dtype(), "w", [&](auto w) {
      dispatch_eight_bit(ctx, p.y_type, "y", [&](auto y) { fn(x, w, y); });
    });
  });
}

/// QLinearConv's output e: ConvInteger's sum plus the channel's bias (int32, wrapping), one rounding to float, times
/// the channel's multiplier, then round_saturate with y's zero point.
template <class Y, class X, class W>
LOCKSTEP_HD Y qlinear_conv_output(const arith::ConvDims& g, const X* x, int32_t x_zp, const W* w, ZeroPointView w_zp,
                                  const int32_t* bias, const float* multipliers, Y y_zp, int64_t e) {
  const int64_t m = e / (g.out[0] * g.out[1] * g.out[2]) % g.c_out;
  const int32_t acc = static_cast<int32_t>(static_cast<uint32_t>(conv_integer_output(g, x, x_zp, w, w_zp, e)) +
                                           static_cast<uint32_t>(bias[m]));
  return arith::round_saturate<Y>(static_cast<float>(acc) * multipliers[m], y_zp);
}

/// MatMulInteger's output (m, n) of one matrix product, on either device: row is A's row m, col B's column n
/// (stride N), a_zp and b_zp the zero points of that row and column.
template <class A, class B>
LOCKSTEP_HD int32_t matmul_integer_output(int64_t K, int64_t N, const A* row, int32_t a_zp, const B* col,
                                          int32_t b_zp) {
  return arith::integer_dot_i32(K, [&](int64_t k) { return int32_t(row[k]) - a_zp; },
                                [&](int64_t k) { return int32_t(col[k * N]) - b_zp; });
}

/// ConvInteger's output e (row-major over N, C_out, out...), on either device: arith::integer_dot_i32 over
/// k = (c, kd, kh, kw) ascending, a padding tap contributing 0 (x_zero_point less itself).
template <class X, class W>
LOCKSTEP_HD int32_t conv_integer_output(const arith::ConvDims& g, const X* x, int32_t x_zp, const W* w,
                                        ZeroPointView w_zp, int64_t e) {
  const int64_t taps = g.kernel[0] * g.kernel[1] * g.kernel[2], K = g.cin_g * taps;
  const int64_t out_pixels = g.out[0] * g.out[1] * g.out[2], in_pixels = g.in[0] * g.in[1] * g.in[2];
  const int64_t pixel = e % out_pixels, m = (e / out_pixels) % g.c_out, n = e / (out_pixels * g.c_out);
  const int64_t o[3] = {pixel / (g.out[1] * g.out[2]), pixel / g.out[2] % g.out[1], pixel % g.out[2]};
  const X* image = x + (n * g.c_in + m / g.cout_g * g.cin_g) * in_pixels;
  const W* filter = w + m * K;
  const int32_t filter_zp = w_zp.of(m);
  auto input_tap = [&](int64_t k) {
    const int64_t c = k / taps, r[3] = {k % taps / (g.kernel[1] * g.kernel[2]), k / g.kernel[2] % g.kernel[1],
                                         k % g.kernel[2]};
    int64_t offset = c;
    for (int d = 0; d < 3; ++d) {
      const int64_t i = o[d] * g.stride[d] - g.pad[d] + r[d] * g.dilation[d];
      if (i < 0 || i >= g.in[d]) return int32_t{0};  // a padding tap: x_zero_point less itself
      offset = offset * g.in[d] + i;
    }
    return int32_t(int32_t(image[offset]) - x_zp);
  };
  return arith::integer_dot_i32(K, input_tap, [&](int64_t k) { return int32_t(filter[k]) - filter_zp; });
}

//   qmatmul<A, B, Y>(ctx, plan, a, b, y)   y[e] = arith::qlinear_dot for output e of batch*M*N
template <class Dev>
void run_qlinear_matmul(KernelContext& ctx) {
  const QLinearMatMulPlan p = qlinear_matmul_plan(ctx);
  Tensor& y = ctx.output(0, p.y_type, p.out_shape);
  if (y.numel() == 0) return;
  dispatch_qlinear(ctx, p, [&](auto a, auto b, auto q) {
    using A = decltype(a);
    using B = decltype(b);
    using Y = decltype(q);
    Dev::template qmatmul<A, B, Y>(ctx, p.dims, ctx.input(0).data<A>(), ctx.input(3).data<B>(), y.data<Y>());
  });
}

/// DynamicQuantizeLinear's scale and zero point, from the input read on the host (float only).
arith::DynamicRange dynamic_quantize_range(const KernelContext& ctx);

//   upload(ctx, host, out)   out's bytes = host's bytes (one-element outputs)
template <class Dev>
void run_dynamic_quantize(KernelContext& ctx) {
  const arith::DynamicRange r = dynamic_quantize_range(ctx);
  const Tensor& x = ctx.input(0);
  Tensor& y = ctx.output(0, DType::UInt8, x.shape());
  Tensor& scale = ctx.output(1, DType::Float, {});
  Tensor& zero_point = ctx.output(2, DType::UInt8, {});
  Dev::upload(ctx, Tensor::from_bytes(DType::Float, {}, &r.scale), scale);
  Dev::upload(ctx, Tensor::from_bytes(DType::UInt8, {}, &r.zero_point), zero_point);
  if (x.numel() > 0)
    Dev::template map<float, uint8_t, uint8_t>(ctx, x.data<float>(), scale.data<float>(), zero_point.data<uint8_t>(),
                                               y.data<uint8_t>(), x.numel(), arith::ScaleIndex{},
                                               arith::QuantizeOp<uint8_t>{});
}

namespace cpu {
void dynamic_quantize(KernelContext& ctx);
void quantize(KernelContext& ctx);
void dequantize(KernelContext& ctx);
void qlinear_matmul(KernelContext& ctx);
void matmul_integer(KernelContext& ctx);
void conv_integer(KernelContext& ctx);
void qlinear_conv(KernelContext& ctx);
}  // namespace cpu
namespace cuda {
void dynamic_quantize(KernelContext& ctx);
void quantize(KernelContext& ctx);
void dequantize(KernelContext& ctx);
void qlinear_matmul(KernelContext& ctx);
void matmul_integer(KernelContext& ctx);
void conv_integer(KernelContext& ctx);
void qlinear_conv(KernelContext& ctx);
}  // namespace cuda

}  // namespace lockstep
