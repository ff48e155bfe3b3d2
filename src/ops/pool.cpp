// The pool family's definition: attributes per opset, output sizes, padding, op rows.
#include "ops/pool.h"

#include <string>

#include "ops/reduce.h"
#include "ops/registry.h"

namespace lockstep {

void require_pool_dtype(const KernelContext& ctx, DType t, bool is_max) {
  if (is_max) require_dtype(ctx, t, {DType::Float, DType::Int8, DType::UInt8});
  else require_dtype(ctx, t, {DType::Float});
}

namespace {

int64_t floor_div(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }
int64_t ceil_div(int64_t a, int64_t b) { return -floor_div(-a, b); }

std::vector<int64_t> ints_or(const KernelContext& ctx, const char* name, size_t n, int64_t fallback) {
  std::vector<int64_t> v = ctx.node.attr_ints(name, std::vector<int64_t>(n, fallback));
  if (v.size() != n)
    throw ctx.error(std::string(name) + " has " + std::to_string(v.size()) + " values, expected " + std::to_string(n),
                    ErrorCode::InvalidGraph);
  return v;
}

}  // namespace

arith::PoolGeom plan_pool(const KernelContext& ctx, bool is_max, Shape& out_shape) {
  const Tensor& x = ctx.input(0);
  if (x.rank() < 3) throw ctx.error("input must have rank >= 3 (N, C, spatial...), got " + shape_string(x.shape()));
  const int nsp = x.rank() - 2;
  if (nsp > arith::kPoolDims)
    throw ctx.error("pools over more than 3 spatial dims are not supported", ErrorCode::NotImplemented);
  std::vector<int64_t> kernel = ctx.node.attr_ints("kernel_shape");
  if (kernel.size() != static_cast<size_t>(nsp))
    throw ctx.error("kernel_shape must have " + std::to_string(nsp) + " values", ErrorCode::InvalidGraph);
  std::vector<int64_t> strides = ints_or(ctx, "strides", nsp, 1);
  std::vector<int64_t> dilations = ints_or(ctx, "dilations", nsp, 1);
  std::vector<int64_t> pads = ints_or(ctx, "pads", 2 * nsp, 0);
  const std::string auto_pad = ctx.node.attr_string("auto_pad", "NOTSET");
  const bool ceil_mode = ctx.node.attr_int("ceil_mode", 0) != 0;

  arith::PoolGeom g;
  g.planes = x.dim(0) * x.dim(1);
  g.count_include_pad = !is_max && ctx.node.attr_int("count_include_pad", 0) != 0;
  g.column_major_indices = is_max && ctx.node.attr_int("storage_order", 0) != 0;
  out_shape = {x.dim(0), x.dim(1)};
  const int lead = arith::kPoolDims - nsp;
  for (int d = 0; d < arith::kPoolDims; ++d) {
    g.in[d] = g.out[d] = g.kernel[d] = g.stride[d] = g.dilation[d] = 1;
    g.pad_begin[d] = g.pad_end[d] = 0;
  }
  for (int s = 0; s < nsp; ++s) {
    const int d = lead + s;
    const int64_t in = x.dim(2 + s), k = kernel[s], st = strides[s], dl = dilations[s];
    if (k <= 0 || st <= 0 || dl <= 0) throw ctx.error("kernel_shape, strides and dilations must be positive");
    int64_t pb = pads[s], pe = pads[nsp + s];
    if (pb < 0 || pe < 0) throw ctx.error("pads must be non-negative");
    const int64_t eff = (k - 1) * dl + 1;
    int64_t out;
    if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      out = ceil_div(in, st);
      int64_t total = std::max<int64_t>(0, (out - 1) * st + eff - in);
      pb = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
      pe = total - pb;
    } else {
      if (auto_pad == "VALID") pb = pe = 0;
      else if (auto_pad != "NOTSET") throw ctx.error("unknown auto_pad '" + auto_pad + "'", ErrorCode::InvalidGraph);
      const int64_t span = in + pb + pe - eff;
      if (span < 0)
        throw ctx.error("the pooling window (" + std::to_string(eff) + ") is larger than the padded input (" +
                        std::to_string(in + pb + pe) + ")");
      out = (ceil_mode ? ceil_div(span, st) : floor_div(span, st)) + 1;
      // The last window must start inside the input or its leading padding (as onnxruntime does).
      if (ceil_mode && (out - 1) * st >= in + pb) --out;
    }
    g.in[d] = in;
    g.out[d] = out;
    g.kernel[d] = k;
    g.stride[d] = st;
    g.dilation[d] = dl;
    g.pad_begin[d] = pb;
    g.pad_end[d] = pe;
    out_shape.push_back(out);
  }
  g.in_plane = g.in[0] * g.in[1] * g.in[2];
  g.out_plane = g.out[0] * g.out[1] * g.out[2];
  return g;
}

GlobalPlan plan_global_pool(const KernelContext& ctx, Shape& out_shape) {
  const Tensor& x = ctx.input(0);
  if (x.rank() < 2) throw ctx.error("input must have rank >= 2 (N, C, spatial...), got " + shape_string(x.shape()));
  GlobalPlan p;
  p.planes = x.dim(0) * x.dim(1);
  out_shape = x.shape();
  for (int d = 2; d < x.rank(); ++d) {
    p.spatial *= x.dim(d);
    out_shape[d] = 1;
  }
  return p;
}

namespace {
const OpEntry kRows[] = {
    {"MaxPool", 7, kNewestOpset, &cpu::max_pool, LOCKSTEP_CUDA_KERNEL(max_pool)},
    {"AveragePool", 7, kNewestOpset, &cpu::average_pool, LOCKSTEP_CUDA_KERNEL(average_pool)},
    {"LpPool", 7, kNewestOpset, &cpu::lp_pool, LOCKSTEP_CUDA_KERNEL(lp_pool)},
    {"GlobalAveragePool", 7, kNewestOpset, &cpu::global_pool, LOCKSTEP_CUDA_KERNEL(global_pool), int(GlobalKind::Average)},
    {"GlobalMaxPool", 7, kNewestOpset, &cpu::global_pool, LOCKSTEP_CUDA_KERNEL(global_pool), int(GlobalKind::Max)},
};
}  // namespace

std::span<const OpEntry> pool_ops() { return kRows; }

}  // namespace lockstep
