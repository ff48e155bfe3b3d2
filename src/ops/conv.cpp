// The conv family's definitions: Conv and ConvTranspose, opsets 1..28 (11 clarified auto_pad, 22 only types).
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

SpatialAttrs read_attrs(const KernelContext& ctx, const Tensor& x, const Tensor& w) {
  for (const Tensor* t : {&x, &w})
    if (t->dtype() != DType::Float)
      throw ctx.error(std::string("type ") + dtype_name(t->dtype()) + " is not supported", ErrorCode::NotImplemented);
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
  if (b.dtype() != DType::Float)
    throw ctx.error(std::string("bias type ") + dtype_name(b.dtype()) + " is not supported", ErrorCode::NotImplemented);
  if (b.rank() != 1 || b.dim(0) != c_out)
    throw ctx.error("bias " + shape_string(b.shape()) + " must have shape [" + std::to_string(c_out) + "]");
}

}  // namespace

ConvGeom conv_geometry(const KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor& w = ctx.input(1);
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
  check_bias(ctx, g.c_out);
  g.has_bias = ctx.has_input(2);
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
const OpEntry kRows[] = {
    {"Conv", 1, kNewestOpset, &cpu::conv, LOCKSTEP_CUDA_KERNEL(conv)},
    {"ConvTranspose", 1, kNewestOpset, &cpu::conv_transpose, LOCKSTEP_CUDA_KERNEL(conv_transpose)},
};
}  // namespace

std::span<const OpEntry> conv_ops() { return kRows; }

}  // namespace lockstep
