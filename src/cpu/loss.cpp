// CPU kernels of the loss family. Contract: docs/arithmetic.md#loss.
#include <vector>

#include "ops/loss.h"
#include "runtime/thread_pool.h"

namespace lockstep::cpu {

namespace {

struct CpuLoss {
  // Contract: per-element terms (nll_term_f32); sum / mean as canonical sums of the terms and weights, ascending e.
  static void nll(KernelContext& ctx, const NllPlan& p, const float* x, const float* weight, float* y) {
    const int64_t n = static_cast<int64_t>(p.target.size());
    auto term = [&](int64_t e, float& w) { return nll_term_f32(x, weight, p.classes, p.inner, e, p.target[e], w); };
    if (p.reduction == LossReduction::None) {
      ctx.pool->parallel_for(n, [&](int64_t begin, int64_t end) {
        float w;
        for (int64_t e = begin; e < end; ++e) y[e] = term(e, w);
      }, 4096);
      return;
    }
    std::vector<float> terms(n), weights(n);
    for (int64_t e = 0; e < n; ++e) terms[e] = term(e, weights[e]);
    y[0] = nll_finish_f32(sum_contiguous_f32(terms.data(), n), sum_contiguous_f32(weights.data(), n), p.reduction);
  }
  static void softmax_rows(KernelContext& ctx, const AxisPlan& p, bool log, const float* x, float* y) {
    cpu::softmax_rows(ctx, p, log, x, y);
  }
};

}  // namespace

// Contract: NegativeLogLikelihoodLoss, docs/arithmetic.md#loss.
void nll(KernelContext& ctx) { run_nll<CpuLoss>(ctx); }

// Contract: SoftmaxCrossEntropyLoss = NLL of LogSoftmax over C; docs/arithmetic.md#loss.
void softmax_cross_entropy(KernelContext& ctx) { run_softmax_cross_entropy<CpuLoss>(ctx); }

}  // namespace lockstep::cpu
