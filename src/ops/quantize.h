// The quantize family (QuantizeLinear, DequantizeLinear): attributes, validation, scale granularity and the drivers
// shared by both devices. Per-element formulas: src/arith/quantize.h; contract: docs/arithmetic.md#quantize.
#pragma once

#include <cstdint>

#include "arith/quantize.h"
#include "ops/common.h"
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

/// Calls fn(Q{}) for the integer types the quantize family computes on; throws NotImplemented naming others.
template <class Fn>
void dispatch_quantized(const KernelContext& ctx, DType t, bool allow_int32, Fn&& fn) {
  switch (t) {
    case DType::Int8: return fn(int8_t{});
    case DType::UInt8: return fn(uint8_t{});
    case DType::Int16: return fn(int16_t{});
    case DType::UInt16: return fn(uint16_t{});
    case DType::Int32:
      if (allow_int32) return fn(int32_t{});
      break;
    default: break;
  }
  throw ctx.error(std::string("quantized type ") + dtype_name(t) +
                      " is not supported (lockstep quantizes to int8, uint8, int16 and uint16; float8, 4-bit and "
                      "2-bit types have no lockstep tensors)",
                  ErrorCode::NotImplemented);
}

// The drivers, shared by both devices. `Dev` holds the loop:
//   map<In, Out, Q>(ctx, x, scale, zero_point or null, y, n, index, f)   y[e] = f(x[e], scale[s], zero_point[s] or 0)
template <class Dev>
void run_quantize(KernelContext& ctx) {
  const QuantizePlan p = quantize_plan(ctx);
  const Tensor& x = ctx.input(0);
  Tensor& y = ctx.output(0, p.quantized, x.shape());
  dispatch_quantized(ctx, p.quantized, false, [&](auto tag) {
    using Q = decltype(tag);
    const Q* zp = p.has_zero_point ? ctx.inputs[2]->data<Q>() : nullptr;
    if (x.numel() > 0)
      Dev::template map<float, Q, Q>(ctx, x.data<float>(), ctx.input(1).data<float>(), zp, y.data<Q>(), x.numel(),
                                     p.index, arith::QuantizeOp<Q>{});
  });
}

template <class Dev>
void run_dequantize(KernelContext& ctx) {
  const QuantizePlan p = dequantize_plan(ctx);
  const Tensor& x = ctx.input(0);
  Tensor& y = ctx.output(0, DType::Float, x.shape());
  dispatch_quantized(ctx, p.quantized, true, [&](auto tag) {
    using Q = decltype(tag);
    const Q* zp = p.has_zero_point ? ctx.inputs[2]->data<Q>() : nullptr;
    if (x.numel() > 0)
      Dev::template map<Q, float, Q>(ctx, x.data<Q>(), ctx.input(1).data<float>(), zp, y.data<float>(), x.numel(),
                                     p.index, arith::DequantizeOp<Q>{});
  });
}

namespace cpu { void quantize(KernelContext& ctx); void dequantize(KernelContext& ctx); }
namespace cuda { void quantize(KernelContext& ctx); void dequantize(KernelContext& ctx); }

}  // namespace lockstep
