// The conv family (Conv, ConvTranspose, Col2Im, DeformConv): attribute parsing, validation and output shapes shared
// by both devices, and the kernels of each device. Contract: docs/arithmetic.md#conv,
// docs/arithmetic.md#convtranspose, docs/arithmetic.md#col2im, docs/arithmetic.md#deformconv.
#pragma once

#include <cstdint>

#include "arith/col2im.h"
#include "arith/deform_conv.h"
#include "arith/dot.h"
#include "ops/common.h"
#include "ops/epilogue.h"
#include "runtime/kernel.h"

namespace lockstep {

/// Conv geometry, padded to 3 spatial dims: a 1-D conv has in = {1, 1, L}, a 2-D conv in = {1, H, W}; the
/// padding dims have kernel 1, stride 1, dilation 1, pad 0. Output pixel o reads input o*stride - pad + r*dil.
struct ConvGeom {
  int64_t batch = 0, c_in = 0, c_out = 0, group = 1, cin_g = 0, cout_g = 0;
  int64_t in[3] = {1, 1, 1}, out[3] = {1, 1, 1}, kernel[3] = {1, 1, 1};
  int64_t stride[3] = {1, 1, 1}, dilation[3] = {1, 1, 1}, pad[3] = {0, 0, 0};  // pad: begin pads
  bool has_bias = false;
  Shape out_shape;
  int64_t in_pixels() const { return in[0] * in[1] * in[2]; }
  int64_t out_pixels() const { return out[0] * out[1] * out[2]; }
  int64_t taps() const { return kernel[0] * kernel[1] * kernel[2]; }
  /// The reduction length of one output: cin_g * kernel taps, in the order (c, kd, kh, kw).
  int64_t K() const { return cin_g * taps(); }
  /// The plain fields, for CUDA kernels (a Shape must not travel to the device).
  arith::ConvDims dims() const {
    arith::ConvDims d{batch, c_in, c_out, group, cin_g, cout_g, {}, {}, {}, {}, {}, {}};
    for (int i = 0; i < 3; ++i) {
      d.in[i] = in[i], d.out[i] = out[i], d.kernel[i] = kernel[i];
      d.stride[i] = stride[i], d.dilation[i] = dilation[i], d.pad[i] = pad[i];
    }
    return d;
  }
};

/// Validates a Conv node (inputs X, W, optional B) and computes its geometry.
ConvGeom conv_geometry(const KernelContext& ctx);
/// The geometry of X (input 0) and W (input 1) alone, whatever their element types (Conv, ConvInteger).
ConvGeom conv_window_geometry(const KernelContext& ctx, int w_input = 1);
/// Validates a ConvTranspose node and computes its geometry (pads may be negative when output_shape asks for
/// more than the natural size).
arith::ConvDims conv_transpose_geometry(const KernelContext& ctx, Shape* out_shape);

/// Col2Im's image element e, for either device's fill (x is the device's pointer).
struct Col2ImElement {
  arith::Col2ImGeometry g;
  const float* x;
  LOCKSTEP_HD float operator()(int64_t e) const { return arith::col2im_element_f32(g, x, e); }
};
/// Validates a Col2Im node (input, image_shape, block_shape; dilations, pads, strides) and returns its element
/// and output shape.
Col2ImElement col2im_plan(const KernelContext& ctx, Shape* out_shape);

/// CausalConvWithState's two outputs, for either device's fill (pointers are the device's).
struct CausalConvOutput {
  arith::CausalConvGeometry g;
  LOCKSTEP_HD float operator()(int64_t e) const { return arith::causal_conv_element_f32(g, e); }
};
struct CausalConvState {
  arith::CausalConvGeometry g;
  LOCKSTEP_HD float operator()(int64_t e) const { return arith::causal_conv_state_element_f32(g, e); }
};
/// Validates a CausalConvWithState node (input, weight, optional bias and past_state; activation) and returns its
/// geometry and the shapes of output and present_state.
arith::CausalConvGeometry causal_conv_plan(const KernelContext& ctx, Shape* out_shape, Shape* state_shape);

/// DeformConv's output element, for either device's fill (pointers are the device's).
struct DeformConvElement {
  arith::DeformConvGeometry g;
  LOCKSTEP_HD float operator()(int64_t e) const { return arith::deform_conv_element_f32(g, e); }
};
/// Validates a DeformConv node (X, W, offset, optional B and mask; dilations, group, kernel_shape, offset_group,
/// pads, strides; 2-D only) and returns its element and output shape.
DeformConvElement deform_conv_plan(const KernelContext& ctx, Shape* out_shape);

namespace cpu {
void conv(KernelContext& ctx);
void deform_conv(KernelContext& ctx);
void col2im(KernelContext& ctx);
void causal_conv_with_state(KernelContext& ctx);
/// Conv of geometry g into yd (g.out_shape elements, not empty), each output through the epilogue (FusedConv; its
/// addend, if any, has the output's layout).
void conv_into(KernelContext& ctx, const ConvGeom& g, float* yd, const StoreEpilogue& epilogue);
void conv_transpose(KernelContext& ctx);
}  // namespace cpu

namespace cuda {
/// Conv as an implicit GEMM on the shared tiled kernel (src/cuda/gemm.cu); x, w, bias, y are device pointers.
void conv_implicit_gemm(const KernelContext& ctx, const ConvGeom& g, const float* x, const float* w,
                        const float* bias, float* y, const StoreEpilogue& epilogue);
void conv(KernelContext& ctx);
/// Conv of geometry g into y (g.out_shape elements, not empty), each output through the epilogue (FusedConv).
void conv_into(KernelContext& ctx, const ConvGeom& g, float* y, const StoreEpilogue& epilogue);
void conv_transpose(KernelContext& ctx);
void col2im(KernelContext& ctx);
void causal_conv_with_state(KernelContext& ctx);
void deform_conv(KernelContext& ctx);
}  // namespace cuda

}  // namespace lockstep
