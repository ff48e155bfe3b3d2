// CUDA kernels of the loss family, mirroring src/cpu/loss.cpp: the same per-element terms (nll_term_f32), then
// one warp for the canonical sums (lane j takes elements j mod 32, then the shfl_xor tree). Contract:
// docs/arithmetic.md#loss.
#include "arith/reduce_ops.h"
#include "cuda/common.cuh"
#include "ops/loss.h"

namespace lockstep::cuda {

namespace {

// Contract: one element's term per thread; `weights` null for reduction none.
__global__ void nll_terms(const float* x, const float* weight, const int64_t* target, int64_t classes,
                          int64_t inner, int64_t n, float* terms, float* weights) {
  const int64_t e = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (e >= n) return;
  float w;
  terms[e] = nll_term_f32(x, weight, classes, inner, e, target[e], w);
  if (weights) weights[e] = w;
}

// Contract: canonical sums of the terms and of the weights in one warp, then nll_finish_f32.
__global__ void nll_reduce(const float* terms, const float* weights, int64_t n, LossReduction r, float* y) {
  const int lane = threadIdx.x;
  float s = 0.0f, w = 0.0f;
  for (int64_t i = lane; i < n; i += 32) {
    s = s + terms[i];
    w = w + weights[i];
  }
  s = arith::warp_tree_f32(s, arith::AddF32{});
  w = arith::warp_tree_f32(w, arith::AddF32{});
  if (lane == 0) y[0] = nll_finish_f32(s, w, r);
}

struct CudaLoss {
  static void nll(KernelContext& ctx, const NllPlan& p, const float* x, const float* weight, float* y) {
    const int64_t n = static_cast<int64_t>(p.target.size());
    auto target = upload(ctx, p.target.data(), p.target.size() * sizeof(int64_t));
    const auto* t = static_cast<const int64_t*>(target->data);
    if (p.reduction == LossReduction::None) {
      if (n == 0) return;
      nll_terms<<<blocks_for(n), kThreadsPerBlock, 0, stream_of(ctx)>>>(x, weight, t, p.classes, p.inner, n, y,
                                                                         nullptr);
      return check_launch(ctx);
    }
    auto scratch = ctx.allocator->allocate(2 * sizeof(float) * static_cast<size_t>(n > 0 ? n : 1));
    float* terms = static_cast<float*>(scratch->data);
    if (n > 0)
      nll_terms<<<blocks_for(n), kThreadsPerBlock, 0, stream_of(ctx)>>>(x, weight, t, p.classes, p.inner, n, terms,
                                                                         terms + n);
    nll_reduce<<<1, 32, 0, stream_of(ctx)>>>(terms, terms + n, n, p.reduction, y);
    check_launch(ctx);
  }
  static void softmax_rows(KernelContext& ctx, const AxisPlan& p, bool log, const float* x, float* y) {
    cuda::softmax_rows(ctx, p, log, x, y);
  }
};

}  // namespace

// Contract: NegativeLogLikelihoodLoss, docs/arithmetic.md#loss.
void nll(KernelContext& ctx) { run_nll<CudaLoss>(ctx); }

// Contract: SoftmaxCrossEntropyLoss = NLL of LogSoftmax over C; docs/arithmetic.md#loss.
void softmax_cross_entropy(KernelContext& ctx) { run_softmax_cross_entropy<CudaLoss>(ctx); }

}  // namespace lockstep::cuda
