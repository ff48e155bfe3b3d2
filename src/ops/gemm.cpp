// The gemm family's definitions: Gemm (opsets 7..28; C optional from 11) and MatMul (1..28).
#include "ops/gemm.h"

#include "ops/registry.h"

namespace lockstep {

namespace {

void require_float(const KernelContext& ctx, const Tensor& t, const char* what) {
  if (t.dtype() != DType::Float)
    throw ctx.error(std::string(what) + " has type " + dtype_name(t.dtype()) + ", which is not supported",
                    ErrorCode::NotImplemented);
}

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
const OpEntry kRows[] = {
    {"Gemm", 7, kNewestOpset, &cpu::gemm, LOCKSTEP_CUDA_KERNEL(gemm)},
    {"MatMul", 1, kNewestOpset, &cpu::matmul, LOCKSTEP_CUDA_KERNEL(matmul)},
};
}  // namespace

std::span<const OpEntry> gemm_ops() { return kRows; }

}  // namespace lockstep
