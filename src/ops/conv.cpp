// The conv family's definitions: Conv and ConvTranspose, opsets 1..28 (11 clarified auto_pad, 22 only types);
// Col2Im (18), CausalConvWithState (27), DeformConv (19; 22 only widened the types).
#include "ops/conv.h"

#include <string>

#include "ops/registry.h"

namespace lockstep {

namespace {

struct SpatialAttrs {
  int nd = 0;  // spatial rank, 1..3
  std::vector<int64_t> kernel, stride, dilation, pads;  // pads: nd begins then nd ends
  std::string auto_pad;
  int64_t group = 1;
};

std::string ints_string(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
  return s + "]";
}

void require_float_operands(const KernelContext& ctx, const Tensor& x, const Tensor& w) {
  require_float(ctx, x, "X");
  require_float(ctx, w, "W");
}

SpatialAttrs read_attrs(const KernelContext& ctx, const Tensor& x, const Tensor& w) {
  if (x.rank() < 3 || x.rank() > 5)
    throw ctx.error("X must have rank 3, 4 or 5 (1-D to 3-D), got " + shape_string(x.shape()));
  if (w.rank() != x.rank())
    throw ctx.error("W " + shape_string(w.shape()) + " must have the rank of X " + shape_string(x.shape()));
  const onnx::Node& node = ctx.node;
  SpatialAttrs a;
  a.nd = x.rank() - 2;
  size_t nd = static_cast<size_t>(a.nd);
  a.kernel.assign(w.shape().begin() + 2, w.shape().end());
  if (node.has("kernel_shape") && node.attr_ints("kernel_shape") != a.kernel)
    throw ctx.error("kernel_shape " + ints_string(node.attr_ints("kernel_shape")) + " does not match W " +
                    shape_string(w.shape()));
  a.stride = node.attr_ints("strides", std::vector<int64_t>(nd, 1));
  a.dilation = node.attr_ints("dilations", std::vector<int64_t>(nd, 1));
  a.pads = node.attr_ints("pads", std::vector<int64_t>(2 * nd, 0));
  if (a.stride.size() != nd || a.dilation.size() != nd || a.pads.size() != 2 * nd)
    throw ctx.error("strides, dilations and pads must have " + std::to_string(nd) + ", " + std::to_string(nd) +
                    " and " + std::to_string(2 * nd) + " values");
  for (size_t i = 0; i < nd; ++i) {
    if (a.stride[i] < 1 || a.dilation[i] < 1) throw ctx.error("strides and dilations must be >= 1");
    if (a.kernel[i] < 1) throw ctx.error("W has an empty kernel " + shape_string(w.shape()));
    if (a.pads[i] < 0 || a.pads[i + nd] < 0) throw ctx.error("pads must be >= 0, got " + ints_string(a.pads));
  }
  a.auto_pad = node.attr_string("auto_pad", "NOTSET");
  if (a.auto_pad != "NOTSET" && a.auto_pad != "SAME_UPPER" && a.auto_pad != "SAME_LOWER" && a.auto_pad != "VALID")
    throw ctx.error("unknown auto_pad '" + a.auto_pad + "'");
  a.group = node.attr_int("group", 1);
  if (a.group < 1) throw ctx.error("group must be >= 1");
  return a;
}

void check_bias(const KernelContext& ctx, int64_t c_out) {
  if (!ctx.has_input(2)) return;
  const Tensor& b = ctx.input(2);
  require_float(ctx, b, "bias");
  if (b.rank() != 1 || b.dim(0) != c_out)
    throw ctx.error("bias " + shape_string(b.shape()) + " must have shape [" + std::to_string(c_out) + "]");
}

}  // namespace

ConvGeom conv_geometry(const KernelContext& ctx) {
  require_float_operands(ctx, ctx.input(0), ctx.input(1));
  ConvGeom g = conv_window_geometry(ctx);
  check_bias(ctx, g.c_out);
  g.has_bias = ctx.has_input(2);
  return g;
}

ConvGeom conv_window_geometry(const KernelContext& ctx, int w_input) {
  const Tensor& x = ctx.input(0);
  const Tensor& w = ctx.input(w_input);
  SpatialAttrs a = read_attrs(ctx, x, w);
  ConvGeom g;
  g.batch = x.dim(0);
  g.c_in = x.dim(1);
  g.c_out = w.dim(0);
  g.group = a.group;
  if (g.c_in % g.group != 0 || g.c_out % g.group != 0)
    throw ctx.error("channels (" + std::to_string(g.c_in) + " in, " + std::to_string(g.c_out) +
                    " out) are not divisible by group " + std::to_string(g.group));
  g.cin_g = g.c_in / g.group;
  g.cout_g = g.c_out / g.group;
  if (w.dim(1) != g.cin_g)
    throw ctx.error("W " + shape_string(w.shape()) + " needs " + std::to_string(g.cin_g) +
                    " input channels per group, X " + shape_string(x.shape()) + " gives that with group " +
                    std::to_string(g.group));
  g.out_shape = {g.batch, g.c_out};
  const int off = 3 - a.nd;
  for (int i = 0; i < a.nd; ++i) {
    int64_t in = x.dim(2 + i), k = a.kernel[i], s = a.stride[i], d = a.dilation[i];
    int64_t span = (k - 1) * d + 1, out = 0, begin = a.pads[i];
    if (a.auto_pad == "SAME_UPPER" || a.auto_pad == "SAME_LOWER") {
      out = (in + s - 1) / s;
      int64_t total = std::max<int64_t>(0, (out - 1) * s + span - in);
      begin = a.auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
    } else {
      int64_t padded = in + (a.auto_pad == "VALID" ? 0 : a.pads[i] + a.pads[i + a.nd]);
      if (a.auto_pad == "VALID") begin = 0;
      if (padded < span)
        throw ctx.error("the kernel span " + std::to_string(span) + " exceeds the padded input " +
                        std::to_string(padded) + " on spatial axis " + std::to_string(i));
      out = (padded - span) / s + 1;
    }
    g.in[off + i] = in;
    g.out[off + i] = out;
    g.kernel[off + i] = k;
    g.stride[off + i] = s;
    g.dilation[off + i] = d;
    g.pad[off + i] = begin;
    g.out_shape.push_back(out);
  }
  return g;
}

arith::ConvDims conv_transpose_geometry(const KernelContext& ctx, Shape* out_shape) {
  const Tensor& x = ctx.input(0);
  const Tensor& w = ctx.input(1);
  require_float_operands(ctx, x, w);
  SpatialAttrs a = read_attrs(ctx, x, w);
  const onnx::Node& node = ctx.node;
  arith::ConvDims g{};
  g.batch = x.dim(0);
  g.c_in = x.dim(1);
  g.group = a.group;
  if (w.dim(0) != g.c_in)
    throw ctx.error("W " + shape_string(w.shape()) + " must have X's " + std::to_string(g.c_in) + " input channels");
  if (g.c_in % g.group != 0) throw ctx.error("input channels are not divisible by group " + std::to_string(g.group));
  g.cin_g = g.c_in / g.group;
  g.cout_g = w.dim(1);
  g.c_out = g.cout_g * g.group;
  check_bias(ctx, g.c_out);
  size_t nd = static_cast<size_t>(a.nd);
  std::vector<int64_t> out_pad = node.attr_ints("output_padding", std::vector<int64_t>(nd, 0));
  std::vector<int64_t> target = node.attr_ints("output_shape");
  if (target.size() == nd + 2) target.erase(target.begin(), target.begin() + 2);
  if (out_pad.size() != nd) throw ctx.error("output_padding must have " + std::to_string(nd) + " values");
  if (!target.empty() && target.size() != nd)
    throw ctx.error("output_shape " + ints_string(target) + " must have " + std::to_string(nd) + " values");
  for (int i = 0; i < 3; ++i) g.in[i] = g.out[i] = g.kernel[i] = g.stride[i] = g.dilation[i] = 1, g.pad[i] = 0;
  *out_shape = {g.batch, g.c_out};
  const int off = 3 - a.nd;
  for (int i = 0; i < a.nd; ++i) {
    int64_t in = x.dim(2 + i), k = a.kernel[i], s = a.stride[i], d = a.dilation[i], op = out_pad[i];
    if (op < 0) throw ctx.error("output_padding must be >= 0");
    int64_t natural = s * (in - 1) + op + (k - 1) * d + 1;
    int64_t out = 0, begin = 0;
    bool same = a.auto_pad == "SAME_UPPER" || a.auto_pad == "SAME_LOWER";
    if (!target.empty() || same) {
      out = !target.empty() ? target[i] : in * s;
      int64_t total = natural - out;
      // Odd total padding: the extra pad goes at the end for SAME_UPPER, at the beginning otherwise
      // (ONNX ConvTranspose spec; onnxruntime agrees).
      begin = a.auto_pad == "SAME_UPPER" ? arith::floor_div(total, 2) : total - arith::floor_div(total, 2);
    } else {
      begin = a.auto_pad == "VALID" ? 0 : a.pads[i];
      int64_t end = a.auto_pad == "VALID" ? 0 : a.pads[i + a.nd];
      out = natural - begin - end;
    }
    if (out < 0) throw ctx.error("computed a negative output size on spatial axis " + std::to_string(i));
    g.in[off + i] = in;
    g.out[off + i] = out;
    g.kernel[off + i] = k;
    g.stride[off + i] = s;
    g.dilation[off + i] = d;
    g.pad[off + i] = begin;
    out_shape->push_back(out);
  }
  return g;
}

namespace {

// One of Col2Im's shape inputs: a 1-D int64 tensor of `dims` entries (dims < 0: any count), each at least 1.
std::vector<int64_t> col2im_shape_input(const KernelContext& ctx, int i, const char* name, int64_t dims) {
  Tensor t = ctx.host_input(i);
  if (t.dtype() != DType::Int64 || t.rank() != 1 || (dims >= 0 && t.numel() != dims))
    throw ctx.error(std::string("Col2Im input ") + name + " must be a 1-D int64 tensor" +
                    (dims >= 0 ? " of " + std::to_string(dims) + " entries" : "") + ", got " +
                    dtype_name(t.dtype()) + " " + shape_string(t.shape()));
  std::vector<int64_t> v = t.to_ints();
  for (int64_t d : v)
    if (d < 1) throw ctx.error(std::string("Col2Im input ") + name + " " + ints_string(v) + " has an entry below 1");
  return v;
}

// A Col2Im attribute of `n` entries, each at least `least` (fallback: n copies of `fill`).
std::vector<int64_t> col2im_attr(const KernelContext& ctx, const char* name, size_t n, int64_t fill, int64_t least) {
  std::vector<int64_t> v = ctx.node.attr_ints(name, std::vector<int64_t>(n, fill));
  if (v.size() != n) throw ctx.error(std::string("Col2Im ") + name + " " + ints_string(v) + " must have " +
                                     std::to_string(n) + " entries");
  for (int64_t d : v)
    if (d < least) throw ctx.error(std::string("Col2Im ") + name + " " + ints_string(v) + " has an entry below " +
                                   std::to_string(least));
  return v;
}

}  // namespace

Col2ImElement col2im_plan(const KernelContext& ctx, Shape* out_shape) {
  const Tensor& x = ctx.input(0);
  require_float(ctx, x, "input");
  if (x.rank() != 3) throw ctx.error("Col2Im input must have rank 3 (N, C * block size, blocks), got " +
                                     shape_string(x.shape()));
  std::vector<int64_t> image = col2im_shape_input(ctx, 1, "image_shape", -1);
  size_t nd = image.size();
  if (nd < 1 || nd > static_cast<size_t>(arith::kCol2ImMaxDims))
    throw ctx.error("Col2Im of " + std::to_string(nd) + " spatial dims", ErrorCode::NotImplemented);
  std::vector<int64_t> block = col2im_shape_input(ctx, 2, "block_shape", static_cast<int64_t>(nd));
  std::vector<int64_t> dilation = col2im_attr(ctx, "dilations", nd, 1, 1);
  std::vector<int64_t> stride = col2im_attr(ctx, "strides", nd, 1, 1);
  std::vector<int64_t> pads = col2im_attr(ctx, "pads", 2 * nd, 0, 0);
  arith::Col2ImGeometry g;
  g.dims = static_cast<int>(nd);
  for (size_t d = 0; d < nd; ++d) {
    g.image[d] = image[d], g.block[d] = block[d], g.stride[d] = stride[d];
    g.pad[d] = pads[d], g.dilation[d] = dilation[d];
    int64_t span = dilation[d] * (block[d] - 1) + 1;
    g.blocks[d] = (image[d] + pads[d] + pads[d + nd] - span) / stride[d] + 1;
    if (image[d] + pads[d] + pads[d + nd] < span)
      throw ctx.error("Col2Im block_shape " + ints_string(block) + " does not fit image_shape " + ints_string(image) +
                      " with pads " + ints_string(pads) + " and dilations " + ints_string(dilation));
    g.block_size *= block[d];
    g.num_blocks *= g.blocks[d];
    g.image_size *= image[d];
  }
  if (x.shape()[1] % g.block_size != 0 || x.shape()[2] != g.num_blocks)
    throw ctx.error("Col2Im input " + shape_string(x.shape()) + " must be (N, C * " + std::to_string(g.block_size) +
                    ", " + std::to_string(g.num_blocks) + ") for block_shape " + ints_string(block) +
                    " over image_shape " + ints_string(image));
  g.channels = x.shape()[1] / g.block_size;
  *out_shape = {x.shape()[0], g.channels};
  out_shape->insert(out_shape->end(), image.begin(), image.end());
  return {g, x.data<float>()};
}

arith::CausalConvGeometry causal_conv_plan(const KernelContext& ctx, Shape* out_shape, Shape* state_shape) {
  const Tensor& x = ctx.input(0);
  const Tensor& w = ctx.input(1);
  for (int i = 0; i < 4; ++i)
    if (ctx.has_input(i)) require_float(ctx, ctx.input(i), "input " + std::to_string(i));
  if (x.rank() != 3)
    throw ctx.error("input must have rank 3 (batch, channels, length), got " + shape_string(x.shape()));
  const int64_t channels = x.dim(1);
  if (w.rank() != 3 || w.dim(0) != channels || w.dim(1) != 1 || w.dim(2) < 1)
    throw ctx.error("weight " + shape_string(w.shape()) + " must be (channels, 1, k) with channels = " +
                    std::to_string(channels) + " and k >= 1");
  const int64_t kernel = w.dim(2);
  const Tensor* bias = ctx.has_input(2) ? &ctx.input(2) : nullptr;
  if (bias && (bias->rank() != 1 || bias->dim(0) != channels))
    throw ctx.error("bias " + shape_string(bias->shape()) + " must be (" + std::to_string(channels) + ")");
  *out_shape = x.shape();
  *state_shape = {x.dim(0), channels, kernel - 1};
  const Tensor* state = ctx.has_input(3) ? &ctx.input(3) : nullptr;
  if (state && state->shape() != *state_shape)
    throw ctx.error("past_state " + shape_string(state->shape()) + " must be " + shape_string(*state_shape) +
                    " (batch, channels, k - 1)");
  const std::string activation = ctx.node.attr_string("activation", "none");
  if (activation != "none" && activation != "silu" && activation != "swish")
    throw ctx.error("activation '" + activation + "' must be 'silu', 'swish' or 'none'");
  return {x.data<float>(), w.data<float>(), bias ? bias->data<float>() : nullptr,
          state ? state->data<float>() : nullptr, channels, x.dim(2), kernel, activation != "none"};
}

DeformConvElement deform_conv_plan(const KernelContext& ctx, Shape* out_shape) {
  const Tensor& x = ctx.input(0);
  const Tensor& w = ctx.input(1);
  const Tensor& offset = ctx.input(2);
  const Tensor* bias = ctx.has_input(3) ? &ctx.input(3) : nullptr;
  const Tensor* mask = ctx.has_input(4) ? &ctx.input(4) : nullptr;
  require_float_operands(ctx, x, w);
  require_float(ctx, offset, "offset");
  if (bias) require_float(ctx, *bias, "B");
  if (mask) require_float(ctx, *mask, "mask");
  if (x.rank() != 4)
    throw ctx.error("DeformConv of X " + shape_string(x.shape()) + ": only 2-D (X of rank 4) is implemented",
                    x.rank() >= 3 ? ErrorCode::NotImplemented : ErrorCode::InvalidArgument);
  SpatialAttrs a = read_attrs(ctx, x, w);
  if (ctx.node.has("auto_pad")) throw ctx.error("DeformConv has no auto_pad attribute", ErrorCode::InvalidGraph);
  const int64_t channels = x.dim(1), c_out = w.dim(0);
  if (channels % a.group != 0 || c_out % a.group != 0 || w.dim(1) * a.group != channels)
    throw ctx.error("X " + shape_string(x.shape()) + " and W " + shape_string(w.shape()) +
                    " do not fit group " + std::to_string(a.group) + " (C and M divisible by it, W.dim(1) = C / group)");
  const int64_t offset_groups = ctx.node.attr_int("offset_group", 1);
  if (offset_groups < 1 || channels % offset_groups != 0)
    throw ctx.error("offset_group " + std::to_string(offset_groups) + " must be >= 1 and divide the " +
                    std::to_string(channels) + " input channels");
  arith::DeformConvGeometry g{};
  g.channels = channels, g.c_out = c_out, g.cin_g = channels / a.group, g.cout_g = c_out / a.group;
  g.cin_og = channels / offset_groups;
  g.in_h = x.dim(2), g.in_w = x.dim(3), g.k_h = a.kernel[0], g.k_w = a.kernel[1];
  g.stride_h = a.stride[0], g.stride_w = a.stride[1], g.dil_h = a.dilation[0], g.dil_w = a.dilation[1];
  g.pad_h = a.pads[0], g.pad_w = a.pads[1];
  int64_t out[2];
  for (int i = 0; i < 2; ++i) {
    const int64_t padded = x.dim(2 + i) + a.pads[i] + a.pads[i + 2], span = (a.kernel[i] - 1) * a.dilation[i] + 1;
    if (padded < span)
      throw ctx.error("the kernel span " + std::to_string(span) + " exceeds the padded input " +
                      std::to_string(padded) + " on spatial axis " + std::to_string(i));
    out[i] = (padded - span) / a.stride[i] + 1;
  }
  g.out_h = out[0], g.out_w = out[1];
  const int64_t taps = g.k_h * g.k_w, n = x.dim(0);
  const Shape want_offset{n, offset_groups * taps * 2, g.out_h, g.out_w};
  if (offset.shape() != want_offset)
    throw ctx.error("offset " + shape_string(offset.shape()) + " must be " + shape_string(want_offset) +
                    " (N, offset_group * kH * kW * 2, output height, output width)");
  if (bias && (bias->rank() != 1 || bias->dim(0) != c_out))
    throw ctx.error("B " + shape_string(bias->shape()) + " must have shape [" + std::to_string(c_out) + "]");
  const Shape want_mask{n, offset_groups * taps, g.out_h, g.out_w};
  if (mask && mask->shape() != want_mask)
    throw ctx.error("mask " + shape_string(mask->shape()) + " must be " + shape_string(want_mask) +
                    " (N, offset_group * kH * kW, output height, output width)");
  g.x = x.data<float>(), g.w = w.data<float>(), g.offset = offset.data<float>();
  g.bias = bias ? bias->data<float>() : nullptr;
  g.mask = mask ? mask->data<float>() : nullptr;
  *out_shape = {n, c_out, g.out_h, g.out_w};
  return {g};
}

namespace {
const OpEntry kRows[] = {
    {"Conv", 1, kNewestOpset, &cpu::conv, LOCKSTEP_CUDA_KERNEL(conv)},
    {"ConvTranspose", 1, kNewestOpset, &cpu::conv_transpose, LOCKSTEP_CUDA_KERNEL(conv_transpose)},
    {"Col2Im", 18, kNewestOpset, &cpu::col2im, LOCKSTEP_CUDA_KERNEL(col2im)},
    {"CausalConvWithState", 27, kNewestOpset, &cpu::causal_conv_with_state,
     LOCKSTEP_CUDA_KERNEL(causal_conv_with_state)},
    {"DeformConv", 19, kNewestOpset, &cpu::deform_conv, LOCKSTEP_CUDA_KERNEL(deform_conv)},
};
}  // namespace

std::span<const OpEntry> conv_ops() { return kRows; }

}  // namespace lockstep
