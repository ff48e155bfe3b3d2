// The reduce family's definition: axes and attributes per opset, output shapes, iteration plans, op rows.
#include "ops/reduce.h"

#include <algorithm>
#include <string>

#include "ops/registry.h"

namespace lockstep {

void require_dtype(const KernelContext& ctx, DType t, std::initializer_list<DType> allowed) {
  for (DType a : allowed)
    if (a == t) return;
  throw ctx.error(std::string("input type ") + dtype_name(t) + " is not supported", ErrorCode::NotImplemented);
}

void require_reduce_dtype(const KernelContext& ctx, arith::ReduceKind kind, DType t) {
  using arith::ReduceKind;
  const bool int_kind = kind != ReduceKind::L2 && kind != ReduceKind::LogSumExp && kind != ReduceKind::LogSum;
  const bool small_kind = kind == ReduceKind::Max || kind == ReduceKind::Min;
  if (t != DType::Float && t != DType::Double && !(int_kind && (t == DType::Int32 || t == DType::Int64)) &&
      !(small_kind && (t == DType::Int8 || t == DType::UInt8 || t == DType::Bool)))
    require_dtype(ctx, t, {});
}

bool reduce_copies_input(const ReducePlan& p, arith::ReduceKind kind) {
  using arith::ReduceKind;
  return p.noop && (kind == ReduceKind::Sum || kind == ReduceKind::Mean || kind == ReduceKind::Prod ||
                    kind == ReduceKind::Max || kind == ReduceKind::Min);
}

namespace {

// Opset from which Reduce* take their axes as an input: 13 for ReduceSum, 18 for the others.
int64_t axes_input_since(const std::string& op) { return op == "ReduceSum" ? 13 : 18; }

std::vector<int64_t> read_axes(const KernelContext& ctx, bool& noop) {
  noop = false;
  if (ctx.opset < axes_input_since(ctx.node.op_type)) return ctx.node.attr_ints("axes");
  std::vector<int64_t> axes;
  if (ctx.has_input(1)) {
    Tensor t = ctx.host_input(1);
    if (t.dtype() != DType::Int64) throw ctx.error("axes must be int64", ErrorCode::InvalidGraph);
    axes = t.to_ints();
  }
  noop = axes.empty() && ctx.node.attr_int("noop_with_empty_axes", 0) != 0;
  return axes;
}

struct MergedDim {
  int64_t dim, stride;
  bool reduced;
};

}  // namespace

ReducePlan plan_reduce(const KernelContext& ctx, Shape& out_shape) {
  const Tensor& x = ctx.input(0);
  const int64_t rank = x.rank();
  bool noop = false;
  std::vector<int64_t> axes = read_axes(ctx, noop);
  std::vector<bool> reduced(rank, axes.empty() && !noop);
  for (int64_t a : axes) {
    int64_t n = normalize_axis(ctx.node, a, rank);
    if (rank == 0) continue;
    if (reduced[n]) throw ctx.error("axis " + std::to_string(a) + " appears twice in axes");
    reduced[n] = true;
  }
  const bool keepdims = ctx.node.attr_int("keepdims", 1) != 0;
  out_shape.clear();
  for (int64_t d = 0; d < rank; ++d) {
    if (!reduced[d]) out_shape.push_back(x.dim(d));
    else if (keepdims) out_shape.push_back(1);
  }

  ReducePlan p;
  p.noop = noop;
  p.n_out = shape_numel(out_shape);
  p.n_red = 1;
  std::vector<int64_t> strides = strides_of(x.shape());
  std::vector<MergedDim> merged;
  for (int64_t d = 0; d < rank; ++d) {
    if (reduced[d]) p.n_red *= x.dim(d);
    if (x.dim(d) == 1) continue;
    if (!merged.empty() && merged.back().reduced == reduced[d]) {
      merged.back().dim *= x.dim(d);
      merged.back().stride = strides[d];
    } else {
      merged.push_back({x.dim(d), strides[d], static_cast<bool>(reduced[d])});
    }
  }
  for (const MergedDim& m : merged) {
    int& r = m.reduced ? p.red_rank : p.kept_rank;
    if (r == kMaxRank) throw ctx.error("too many alternating reduced and kept axes", ErrorCode::NotImplemented);
    (m.reduced ? p.red_dims : p.kept_dims)[r] = m.dim;
    (m.reduced ? p.red_strides : p.kept_strides)[r] = m.stride;
    ++r;
  }
  return p;
}

namespace {
int64_t product(const Shape& s, int64_t from, int64_t to) {
  int64_t n = 1;
  for (int64_t d = from; d < to; ++d) n *= s[d];
  return n;
}
}  // namespace

AxisPlan plan_line(const Shape& s, int64_t axis) {
  const int64_t rank = static_cast<int64_t>(s.size());
  AxisPlan p;
  p.outer = product(s, 0, axis);
  p.len = rank == 0 ? 1 : s[axis];
  p.inner = product(s, axis + 1, rank);
  return p;
}

AxisPlan plan_softmax(const KernelContext& ctx) {
  const Shape& s = ctx.input(0).shape();
  const int64_t rank = static_cast<int64_t>(s.size());
  if (ctx.opset >= 13) return plan_line(s, normalize_axis(ctx.node, ctx.node.attr_int("axis", -1), rank));
  AxisPlan p;
  int64_t axis = normalize_axis(ctx.node, ctx.node.attr_int("axis", 1), rank);
  p.outer = product(s, 0, axis);
  p.len = product(s, axis, rank);
  return p;
}

AxisPlan plan_lp_normalization(const KernelContext& ctx, int64_t& p) {
  const Shape& s = ctx.input(0).shape();
  p = ctx.node.attr_int("p", 2);
  if (p != 1 && p != 2) throw ctx.error("p must be 1 or 2, got " + std::to_string(p));
  return plan_line(s, normalize_axis(ctx.node, ctx.node.attr_int("axis", -1), static_cast<int64_t>(s.size())));
}

AxisPlan plan_scan(const KernelContext& ctx, bool& exclusive, bool& reverse) {
  const Shape& s = ctx.input(0).shape();
  Tensor axis = ctx.host_input(1);
  if (axis.numel() != 1 || (axis.dtype() != DType::Int32 && axis.dtype() != DType::Int64))
    throw ctx.error("axis must be one int32 or int64 element, got " + std::string(dtype_name(axis.dtype())) + " " +
                    shape_string(axis.shape()));
  if (s.empty()) throw ctx.error("input must have rank >= 1");
  exclusive = ctx.node.attr_int("exclusive", 0) != 0;
  reverse = ctx.node.attr_int("reverse", 0) != 0;
  return plan_line(s, normalize_axis(ctx.node, axis.int_at(0), static_cast<int64_t>(s.size())));
}

AxisPlan plan_arg_reduce(const KernelContext& ctx, Shape& out_shape, bool& select_last) {
  const Shape& s = ctx.input(0).shape();
  const int64_t rank = static_cast<int64_t>(s.size());
  int64_t axis = normalize_axis(ctx.node, ctx.node.attr_int("axis", 0), rank);
  select_last = ctx.opset >= 12 && ctx.node.attr_int("select_last_index", 0) != 0;
  const bool keepdims = ctx.node.attr_int("keepdims", 1) != 0;
  AxisPlan p;
  if (rank == 0) return p;
  p = plan_line(s, axis);
  if (p.len == 0 && p.outer * p.inner != 0)
    throw ctx.error("cannot take " + ctx.node.op_type + " over an empty axis of shape " + shape_string(s));
  out_shape = s;
  if (keepdims) out_shape[axis] = 1;
  else out_shape.erase(out_shape.begin() + axis);
  return p;
}

namespace {
using arith::ReduceKind;
constexpr int v(ReduceKind k) { return static_cast<int>(k); }

const OpEntry kRows[] = {
    {"ReduceSum", 7, kNewestOpset, &cpu::reduce, LOCKSTEP_CUDA_KERNEL(reduce), v(ReduceKind::Sum)},
    {"ReduceMean", 7, kNewestOpset, &cpu::reduce, LOCKSTEP_CUDA_KERNEL(reduce), v(ReduceKind::Mean)},
    {"ReduceProd", 7, kNewestOpset, &cpu::reduce, LOCKSTEP_CUDA_KERNEL(reduce), v(ReduceKind::Prod)},
    {"ReduceMax", 7, kNewestOpset, &cpu::reduce, LOCKSTEP_CUDA_KERNEL(reduce), v(ReduceKind::Max)},
    {"ReduceMin", 7, kNewestOpset, &cpu::reduce, LOCKSTEP_CUDA_KERNEL(reduce), v(ReduceKind::Min)},
    {"ReduceL1", 7, kNewestOpset, &cpu::reduce, LOCKSTEP_CUDA_KERNEL(reduce), v(ReduceKind::L1)},
    {"ReduceL2", 7, kNewestOpset, &cpu::reduce, LOCKSTEP_CUDA_KERNEL(reduce), v(ReduceKind::L2)},
    {"ReduceSumSquare", 7, kNewestOpset, &cpu::reduce, LOCKSTEP_CUDA_KERNEL(reduce), v(ReduceKind::SumSquare)},
    {"ReduceLogSumExp", 7, kNewestOpset, &cpu::reduce, LOCKSTEP_CUDA_KERNEL(reduce), v(ReduceKind::LogSumExp)},
    {"ReduceLogSum", 7, kNewestOpset, &cpu::reduce, LOCKSTEP_CUDA_KERNEL(reduce), v(ReduceKind::LogSum)},
    {"ArgMax", 7, kNewestOpset, &cpu::arg_reduce, LOCKSTEP_CUDA_KERNEL(arg_reduce), int(ArgKind::ArgMax)},
    {"ArgMin", 7, kNewestOpset, &cpu::arg_reduce, LOCKSTEP_CUDA_KERNEL(arg_reduce), int(ArgKind::ArgMin)},
    {"Softmax", 7, kNewestOpset, &cpu::softmax, LOCKSTEP_CUDA_KERNEL(softmax), int(SoftmaxKind::Softmax)},
    {"LogSoftmax", 7, kNewestOpset, &cpu::softmax, LOCKSTEP_CUDA_KERNEL(softmax), int(SoftmaxKind::LogSoftmax)},
    {"Hardmax", 7, kNewestOpset, &cpu::lines, LOCKSTEP_CUDA_KERNEL(lines), int(LineKind::Hardmax)},
    {"LpNormalization", 7, kNewestOpset, &cpu::lines, LOCKSTEP_CUDA_KERNEL(lines), int(LineKind::LpNormalization)},
    {"CumSum", 11, kNewestOpset, &cpu::lines, LOCKSTEP_CUDA_KERNEL(lines), int(LineKind::CumSum)},
    {"CumProd", 26, kNewestOpset, &cpu::lines, LOCKSTEP_CUDA_KERNEL(lines), int(LineKind::CumProd)},
};

// The lockstep-domain op that the graph rewrites create (src/graph/fuse.cpp).
const OpEntry kFusedRows[] = {
    {"SoftmaxReplacingNaN", 1, kNewestOpset, &cpu::softmax, LOCKSTEP_CUDA_KERNEL(softmax),
     int(SoftmaxKind::SoftmaxReplacingNaN)},
};
}  // namespace

std::span<const OpEntry> reduce_ops() { return kRows; }
std::span<const OpEntry> fused_reduce_ops() { return kFusedRows; }

}  // namespace lockstep
