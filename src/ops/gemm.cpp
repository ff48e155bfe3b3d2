// The gemm family's definitions: Gemm (opsets 7..28; C optional from 11), MatMul (1..28) and Einsum (12..28).
#include "ops/gemm.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>
#include <string>

#include "ops/registry.h"

namespace lockstep {

namespace {

}  // namespace

GemmParams gemm_params(const KernelContext& ctx) {
  const Tensor& a = ctx.input(0);
  const Tensor& b = ctx.input(1);
  require_float(ctx, a, "input A");
  require_float(ctx, b, "input B");
  if (a.rank() != 2 || b.rank() != 2)
    throw ctx.error("A and B must be 2-D, got " + shape_string(a.shape()) + " and " + shape_string(b.shape()));
  if (ctx.node.has("broadcast") && ctx.opset >= 7)
    throw ctx.error("attribute 'broadcast' was removed in opset 7", ErrorCode::InvalidGraph);
  GemmParams p;
  bool ta = ctx.node.attr_int("transA", 0) != 0, tb = ctx.node.attr_int("transB", 0) != 0;
  p.alpha = ctx.node.attr_float("alpha", 1.0f);
  p.beta = ctx.node.attr_float("beta", 1.0f);
  p.M = ta ? a.dim(1) : a.dim(0);
  p.K = ta ? a.dim(0) : a.dim(1);
  int64_t kb = tb ? b.dim(1) : b.dim(0);
  p.N = tb ? b.dim(0) : b.dim(1);
  if (kb != p.K)
    throw ctx.error("inner dimensions differ: A' is " + std::to_string(p.M) + "x" + std::to_string(p.K) +
                    ", B' is " + std::to_string(kb) + "x" + std::to_string(p.N));
  p.a_rs = ta ? 1 : p.K;
  p.a_cs = ta ? p.M : 1;
  p.b_rs = tb ? 1 : p.N;
  p.b_cs = tb ? p.K : 1;
  p.out_shape = {p.M, p.N};
  p.has_c = ctx.has_input(2);
  if (p.has_c) {
    const Tensor& c = ctx.input(2);
    require_float(ctx, c, "input C");
    if (c.rank() > 2) throw ctx.error("C must have rank <= 2, got " + shape_string(c.shape()));
    Shape cs = c.shape();
    while (cs.size() < 2) cs.insert(cs.begin(), 1);
    if ((cs[0] != 1 && cs[0] != p.M) || (cs[1] != 1 && cs[1] != p.N))
      throw ctx.error("C of shape " + shape_string(c.shape()) + " cannot be broadcast to " +
                      shape_string(p.out_shape));
    p.c_rs = cs[0] == 1 ? 0 : cs[1];
    p.c_cs = cs[1] == 1 ? 0 : 1;
  }
  return p;
}

bool MatMulParams::b_shared() const {
  for (int64_t s : b_batch_strides)
    if (s != 0) return false;
  return true;
}

int64_t MatMulParams::batch_offset(int64_t b, const std::vector<int64_t>& strides) const {
  int64_t off = 0;
  for (size_t i = batch_dims.size(); i-- > 0;) {
    off += (b % batch_dims[i]) * strides[i];
    b /= batch_dims[i];
  }
  return off;
}

MatMulParams matmul_params(const KernelContext& ctx) {
  const Tensor& a = ctx.input(0);
  const Tensor& b = ctx.input(1);
  if (a.dtype() != b.dtype())
    throw ctx.error(std::string("A and B types differ: ") + dtype_name(a.dtype()) + " and " + dtype_name(b.dtype()),
                    ErrorCode::InvalidGraph);
  if (a.dtype() != DType::Float && a.dtype() != DType::Int32 && a.dtype() != DType::Int64)
    throw ctx.error(std::string("type ") + dtype_name(a.dtype()) + " is not supported", ErrorCode::NotImplemented);
  return matmul_shapes(ctx);
}

MatMulParams matmul_shapes(const KernelContext& ctx) {
  const Tensor& a = ctx.input(0);
  const Tensor& b = ctx.input(1);
  if (a.rank() < 1 || b.rank() < 1) throw ctx.error("MatMul inputs must have rank >= 1");
  // numpy rules: a 1-D A is a row vector (its M is dropped), a 1-D B a column vector (its N is dropped).
  Shape as = a.shape(), bs = b.shape();
  bool a_vec = as.size() == 1, b_vec = bs.size() == 1;
  if (a_vec) as.insert(as.begin(), 1);
  if (b_vec) bs.push_back(1);
  MatMulParams p;
  p.M = as[as.size() - 2];
  p.K = as.back();
  p.N = bs.back();
  if (bs[bs.size() - 2] != p.K)
    throw ctx.error("inner dimensions differ: " + shape_string(a.shape()) + " x " + shape_string(b.shape()));
  Shape ab(as.begin(), as.end() - 2), bb(bs.begin(), bs.end() - 2);
  p.batch_dims = broadcast_shapes(ctx.node, ab, bb);
  auto batch_strides = [&](const Shape& own) {
    Shape padded = own;
    while (padded.size() < p.batch_dims.size()) padded.insert(padded.begin(), 1);
    std::vector<int64_t> s(padded.size());
    int64_t step = 1;  // bytes of one matrix are accounted by the caller's matrix size
    for (size_t i = padded.size(); i-- > 0;) {
      s[i] = padded[i] == 1 ? 0 : step;
      step *= padded[i];
    }
    return s;
  };
  p.a_batch_strides = batch_strides(ab);
  p.b_batch_strides = batch_strides(bb);
  for (auto& s : p.a_batch_strides) s *= p.M * p.K;
  for (auto& s : p.b_batch_strides) s *= p.K * p.N;
  p.batch = shape_numel(p.batch_dims);
  p.out_shape = p.batch_dims;
  if (!a_vec) p.out_shape.push_back(p.M);
  if (!b_vec) p.out_shape.push_back(p.N);
  return p;
}

namespace {

// Einsum labels: letters keep their ASCII code; ellipsis dim j (of the widest ellipsis) is kEllipsisLabel + j.
constexpr int kEllipsisLabel = 256;

/// One operand (or intermediate) as a strided view: distinct labels in order of first appearance, with dims and
/// element strides (a repeated label is a diagonal: its strides add).
struct EinsumView {
  int src = 0;
  std::vector<int> labels;
  std::vector<int64_t> dims, strides;
  int64_t stride_of(int label) const {
    for (size_t i = 0; i < labels.size(); ++i)
      if (labels[i] == label) return strides[i];
    return 0;
  }
  bool has(int label) const { return std::find(labels.begin(), labels.end(), label) != labels.end(); }
};

std::string label_name(int l) {
  return l >= kEllipsisLabel ? "..." + std::to_string(l - kEllipsisLabel) : std::string(1, static_cast<char>(l));
}

/// The labels of one term for an operand of `rank` dims; ellipsis dims are right-aligned to `ellipsis_rank`.
std::vector<int> term_labels(const KernelContext& ctx, const std::string& term, int64_t rank, int64_t ellipsis_rank) {
  std::vector<int> labels;
  const size_t dots = term.find("...");
  int64_t letters = 0;
  for (char c : term)
    if (std::isalpha(static_cast<unsigned char>(c))) ++letters;
    else if (c != '.') throw ctx.error("equation term '" + term + "' has the character '" + std::string(1, c) + "'");
  if (dots == std::string::npos ? letters != rank : letters > rank)
    throw ctx.error("equation term '" + term + "' does not fit an operand of rank " + std::to_string(rank));
  const int64_t own = rank - letters;
  for (size_t i = 0; i < term.size(); ++i) {
    if (i == dots) {
      for (int64_t j = 0; j < own; ++j) labels.push_back(static_cast<int>(kEllipsisLabel + ellipsis_rank - own + j));
      i += 2;
    } else {
      labels.push_back(static_cast<unsigned char>(term[i]));
    }
  }
  return labels;
}

std::vector<std::string> split_terms(const std::string& s) {
  std::vector<std::string> terms(1);
  for (char c : s)
    if (c == ',') terms.emplace_back();
    else terms.back() += c;
  return terms;
}

struct EinsumPlanner {
  const KernelContext& ctx;
  std::map<int, int64_t> dims;
  EinsumPlan plan;

  // The view of the step just added: its labels contiguous in row-major order.
  EinsumView contiguous(const std::vector<int>& labels) {
    EinsumView v;
    v.src = -static_cast<int>(plan.steps.size());
    v.labels = labels;
    v.dims.resize(labels.size());
    v.strides.resize(labels.size());
    int64_t stride = 1;
    for (size_t i = labels.size(); i-- > 0;) {
      v.dims[i] = dims[labels[i]];
      v.strides[i] = stride;
      stride *= v.dims[i];
    }
    return v;
  }
  // Adds a step producing `out` labels from a (and b for Dot), summing or contracting over `k`.
  EinsumView add_step(EinsumStep::Kind kind, const EinsumView& a, const EinsumView* b, const std::vector<int>& out,
                      const std::vector<int>& k) {
    if (out.size() > static_cast<size_t>(kMaxRank) || k.size() > static_cast<size_t>(kMaxRank))
      throw ctx.error("Einsum steps over more than 8 labels are not supported", ErrorCode::NotImplemented);
    EinsumStep s;
    s.kind = kind;
    s.a_src = a.src;
    s.b_src = b ? b->src : 0;
    s.out_rank = static_cast<int>(out.size());
    s.k_rank = static_cast<int>(k.size());
    for (size_t d = 0; d < out.size(); ++d) {
      s.out_dims[d] = dims[out[d]];
      s.a_out[d] = a.stride_of(out[d]);
      s.b_out[d] = b ? b->stride_of(out[d]) : 0;
      s.n_out *= s.out_dims[d];
    }
    for (size_t d = 0; d < k.size(); ++d) {
      s.k_dims[d] = dims[k[d]];
      s.a_k[d] = a.stride_of(k[d]);
      s.b_k[d] = b ? b->stride_of(k[d]) : 0;
      s.K *= s.k_dims[d];
    }
    plan.steps.push_back(s);
    return contiguous(out);
  }
  // Sums v over its labels outside `keep` (ReduceSum's contract); v itself when there are none.
  EinsumView sum_out(const EinsumView& v, const std::set<int>& keep) {
    std::vector<int> kept, summed;
    for (int l : v.labels) (keep.count(l) ? kept : summed).push_back(l);
    return summed.empty() ? v : add_step(EinsumStep::Sum, v, nullptr, kept, summed);
  }
  // Contracts a and b over their shared labels outside `later`; keeps the labels in `later`.
  EinsumView contract(const EinsumView& a, const EinsumView& b, const std::set<int>& later) {
    std::vector<int> out, k;
    for (int l : a.labels) (later.count(l) ? out : k).push_back(l);
    for (int l : b.labels)
      if (!a.has(l)) out.push_back(l);
    return add_step(EinsumStep::Dot, a, &b, out, k);
  }
};

}  // namespace

EinsumPlan plan_einsum(const KernelContext& ctx) {
  std::string eq;
  for (char c : ctx.node.attr_string("equation", "")) if (c != ' ') eq += c;
  const size_t arrow = eq.find("->");
  std::vector<std::string> terms = split_terms(eq.substr(0, arrow));
  const int n = ctx.num_inputs();
  if (static_cast<int>(terms.size()) != n)
    throw ctx.error("equation '" + eq + "' has " + std::to_string(terms.size()) + " input terms for " +
                    std::to_string(n) + " inputs");
  const DType t = ctx.input(0).dtype();
  if (t != DType::Float && t != DType::Double)
    throw ctx.error(std::string("element type ") + dtype_name(t) + " is not supported", ErrorCode::NotImplemented);
  int64_t ellipsis_rank = 0;
  for (int i = 0; i < n; ++i) {
    if (ctx.input(i).dtype() != t) throw ctx.error("inputs must have one element type");
    int64_t letters = std::count_if(terms[i].begin(), terms[i].end(), [](char c) { return std::isalpha(c); });
    if (terms[i].find("...") != std::string::npos)
      ellipsis_rank = std::max(ellipsis_rank, ctx.input(i).rank() - letters);
  }
  EinsumPlanner planner{ctx, {}, {}};
  std::vector<std::vector<int>> labels(n);
  std::map<int, int> uses;
  for (int i = 0; i < n; ++i) {
    labels[i] = term_labels(ctx, terms[i], ctx.input(i).rank(), ellipsis_rank);
    for (size_t d = 0; d < labels[i].size(); ++d) {
      const int l = labels[i][d];
      const int64_t size = ctx.input(i).dim(static_cast<int>(d));
      auto [it, fresh] = planner.dims.emplace(l, size);
      if (!fresh && it->second != size) {
        if (l < kEllipsisLabel || (size != 1 && it->second != 1))
          throw ctx.error("label " + label_name(l) + " has sizes " + std::to_string(it->second) + " and " +
                          std::to_string(size));
        it->second = std::max(it->second, size);
      }
      ++uses[l];
    }
  }
  std::vector<EinsumView> views(n);
  for (int i = 0; i < n; ++i) {
    std::vector<int64_t> strides = strides_of(ctx.input(i).shape());
    EinsumView& v = views[i];
    v.src = i;
    for (size_t d = 0; d < labels[i].size(); ++d) {
      const int l = labels[i][d];
      const int64_t size = ctx.input(i).dim(static_cast<int>(d));
      const int64_t stride = size == 1 && planner.dims[l] != 1 ? 0 : strides[d];
      auto at = std::find(v.labels.begin(), v.labels.end(), l);
      if (at != v.labels.end()) {
        if (v.dims[at - v.labels.begin()] != size)
          throw ctx.error("repeated label " + label_name(l) + " differs in size");
        v.strides[at - v.labels.begin()] += stride;
        continue;
      }
      v.labels.push_back(l);
      v.dims.push_back(planner.dims[l]);
      v.strides.push_back(stride);
    }
  }
  std::vector<int> out;
  if (arrow == std::string::npos) {
    for (int64_t j = 0; j < ellipsis_rank; ++j) out.push_back(static_cast<int>(kEllipsisLabel + j));
    for (auto [l, count] : uses)
      if (l < kEllipsisLabel && count == 1) out.push_back(l);
  } else {
    const std::string term = eq.substr(arrow + 2);
    const bool dots = term.find("...") != std::string::npos;
    const int64_t letters = std::count_if(term.begin(), term.end(), [](char c) { return std::isalpha(c); });
    out = term_labels(ctx, term, letters + (dots ? ellipsis_rank : 0), ellipsis_rank);
    for (size_t i = 0; i < out.size(); ++i) {
      if (!uses.count(out[i])) throw ctx.error("output label " + label_name(out[i]) + " is in no input");
      if (std::count(out.begin(), out.end(), out[i]) > 1)
        throw ctx.error("output label " + label_name(out[i]) + " repeats");
    }
  }
  const std::set<int> out_set(out.begin(), out.end());
  EinsumView cur = views[0];
  for (int j = 1; j < n; ++j) {
    std::set<int> later = out_set;
    for (int i = j + 1; i < n; ++i) later.insert(views[i].labels.begin(), views[i].labels.end());
    std::set<int> keep_a = later, keep_b = later;
    keep_a.insert(views[j].labels.begin(), views[j].labels.end());
    cur = planner.sum_out(cur, keep_a);
    keep_b.insert(cur.labels.begin(), cur.labels.end());
    cur = planner.contract(cur, planner.sum_out(views[j], keep_b), later);
  }
  cur = planner.sum_out(cur, out_set);
  if (cur.labels != out || planner.plan.steps.empty()) cur = planner.add_step(EinsumStep::Copy, cur, nullptr, out, {});
  for (int l : out) planner.plan.out_shape.push_back(planner.dims[l]);
  return planner.plan;
}

int64_t det_plan(const KernelContext& ctx, Shape* out_shape) {
  const Tensor& x = ctx.input(0);
  require_float(ctx, x, "input");
  if (x.rank() < 2 || x.dim(-1) != x.dim(-2))
    throw ctx.error("input " + shape_string(x.shape()) + " must end in a square matrix (..., M, M)");
  *out_shape = Shape(x.shape().begin(), x.shape().end() - 2);
  return x.dim(-1);
}

namespace {
const OpEntry kRows[] = {
    {"Gemm", 7, kNewestOpset, &cpu::gemm, LOCKSTEP_CUDA_KERNEL(gemm)},
    {"MatMul", 1, kNewestOpset, &cpu::matmul, LOCKSTEP_CUDA_KERNEL(matmul)},
    {"Einsum", 12, kNewestOpset, &cpu::einsum, LOCKSTEP_CUDA_KERNEL(einsum)},
    {"Det", 11, kNewestOpset, &cpu::det, LOCKSTEP_CUDA_KERNEL(det)},
};
}  // namespace

std::span<const OpEntry> gemm_ops() { return kRows; }

}  // namespace lockstep
