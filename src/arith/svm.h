// The support vector machines of the ai.onnx.ml domain (SVMRegressor, SVMClassifier): kernel values, the one-vs-one
// decision values and votes, and Platt probabilities coupled pairwise, each as onnxruntime 1.30 computes it, in a
// fixed order (docs/arithmetic.md#ml).
//
// Everything is float32 except the one-vs-one decision values, which onnxruntime sums in double: the products
// coefficient * kernel are rounded to float32 and then added in double, so lockstep does the same.
#pragma once

#include <cstdint>

#include "arith/hd.h"
#include "arith/math.h"
#include "arith/math_binary64.h"
#include "arith/reduce.h"
#include "arith/tree_ensemble.h"

namespace lockstep::arith {

enum class SvmKernel : uint8_t { Linear = 0, Poly = 1, Rbf = 2, Sigmoid = 3 };

struct SvmKernelParams {
  SvmKernel kind = SvmKernel::Linear;
  float gamma = 0, coef0 = 0, degree = 0;
};

/// The kernel value of features x against support vector v (F each), in float32, as onnxruntime's GEMM (MLAS, one
/// fma chain per output) and its RBF loop compute it. LINEAR: t = dot_chunked_f32(F, +0, x, v). POLY:
/// u = fma(gamma, t, coef0), then u*u (degree 2), (u*u)*u (3), else pow_f32(u, degree). SIGMOID: tanh_f32(u).
/// RBF: exp_f32(-gamma * S), S the sum of (x_f - v_f)^2 added in ascending f from 0.
template <class X>
LOCKSTEP_HD float svm_kernel_f32(const SvmKernelParams& k, int64_t F, const X& x, const float* v) {
  if (k.kind == SvmKernel::Rbf) {
    float s = 0.0f;
    for (int64_t f = 0; f < F; ++f) {
      const float d = x(f) - v[f];
      s = s + d * d;
    }
    return exp_f32(-k.gamma * s);
  }
  const float t = dot_chunked_f32(F, 0.0f, x, [&](int64_t f) { return v[f]; });
  if (k.kind == SvmKernel::Linear) return t;
  const float u = fma_of(k.gamma, t, k.coef0);
  if (k.kind == SvmKernel::Sigmoid) return tanh_f32(u);
  if (k.degree == 2.0f) return u * u;
  if (k.degree == 3.0f) return u * u * u;
  return pow_f32(u, k.degree);
}

/// The decision value of the one-vs-one classifier of classes i < j, in double as onnxruntime sums it: the float32
/// products coef_for_i[m] * kernel[m] over class i's support vectors, then coef_for_j[m] * kernel[m] over class j's,
/// each added in ascending m from 0, then rho. In libsvm's layout coef_for_i is coefficient row j - 1, coef_for_j
/// row i.
LOCKSTEP_HD double svm_pair_decision(const float* kernel, const float* coef_for_i, const float* coef_for_j,
                                     int64_t first_i, int64_t count_i, int64_t first_j, int64_t count_j, float rho) {
  double sum = 0;
  for (int64_t m = first_i; m < first_i + count_i; ++m) sum += static_cast<double>(coef_for_i[m] * kernel[m]);
  for (int64_t m = first_j; m < first_j + count_j; ++m) sum += static_cast<double>(coef_for_j[m] * kernel[m]);
  return sum + static_cast<double>(rho);
}

/// Platt's probability that the pair's first class wins: 1 - logistic(s * a + b) in float32, with onnxruntime's
/// logistic 1 / (1 + exp_f32(-|v|)) (taken from 1 for v < 0), clamped to [1e-7, 1 - 1e-7].
LOCKSTEP_HD float platt_probability_f32(float s, float a, float b) {
  const float v = s * a + b;
  const float q = 1.0f / (1.0f + exp_f32(v < 0.0f ? v : -v));
  const float p = 1.0f - (v < 0.0f ? 1.0f - q : q);
  const float low = 1.0e-7f, high = 1.0f - 1.0e-7f;
  return p < low ? low : (p > high ? high : p);
}

/// Class probabilities p (k) from the pairwise ones r (k x k, r[i][j]: i beats j), by the iteration of Wu, Lin and
/// Weng (libsvm's multiclass_probability) as onnxruntime writes it, all in float32 in this order: Q[i][i] = sum over
/// j != i ascending of r[j][i]^2, Q[i][j] = -r[j][i] r[i][j]; p = 1/k; then up to 100 rounds of: Qp[i] = sum over j
/// ascending of Q[i][j] p[j], pQp = sum over i of p[i] Qp[i]; stop when every |Qp[i] - pQp| < 0.005 / k; else for
/// each i: d = (pQp - Qp[i]) / Q[i][i] (as -Qp[i] + pQp), p[i] += d, pQp and Qp updated and p renormalized by
/// (1 + d). scratch: k*k + k floats.
LOCKSTEP_HD void pairwise_coupling_f32(int64_t k, const float* r, float* p, float* scratch) {
  float* Q = scratch;
  float* Qp = scratch + k * k;
  for (int64_t i = 0; i < k * k; ++i) Q[i] = 0.0f;
  for (int64_t i = 0; i < k; ++i) {
    p[i] = 1.0f / static_cast<float>(k);
    for (int64_t j = 0; j < k; ++j) {
      if (j == i) continue;
      Q[i * k + i] = Q[i * k + i] + r[j * k + i] * r[j * k + i];
      Q[i * k + j] = j < i ? Q[j * k + i] : -r[j * k + i] * r[i * k + j];
    }
  }
  const float eps = 0.005f / static_cast<float>(k);
  for (int round = 0; round < 100; ++round) {
    float pQp = 0.0f;
    for (int64_t i = 0; i < k; ++i) {
      Qp[i] = 0.0f;
      for (int64_t j = 0; j < k; ++j) Qp[i] = Qp[i] + Q[i * k + j] * p[j];
      pQp = pQp + p[i] * Qp[i];
    }
    float max_error = 0.0f;
    for (int64_t i = 0; i < k; ++i) {
      const float e = Qp[i] - pQp;
      const float error = e < 0.0f ? -e : e;
      max_error = error > max_error ? error : max_error;
    }
    if (max_error < eps) return;
    for (int64_t i = 0; i < k; ++i) {
      const float d = (-Qp[i] + pQp) / Q[i * k + i];
      p[i] = p[i] + d;
      pQp = (pQp + d * (d * Q[i * k + i] + 2.0f * Qp[i])) / (1.0f + d) / (1.0f + d);
      for (int64_t j = 0; j < k; ++j) {
        Qp[j] = (Qp[j] + d * Q[i * k + j]) / (1.0f + d);
        p[j] = p[j] / (1.0f + d);
      }
    }
  }
}

/// The tables a classifier row reads, as pointers: the model's host vectors on the CPU, their device copies on the
/// GPU. prob_a null: no Platt probabilities.
struct SvmClassifierView {
  const float *coefficients, *rho, *prob_a, *prob_b;
  const int64_t *first_vector, *vector_count;
  int64_t vectors, classes;
  bool all_positive;  // no coefficient is negative (the two-class linear label rule)
};

/// One row with support vectors: the pairs' decision values (i < j ascending, each rounded to float32 from
/// svm_pair_decision's double) and the label by their votes: a pair votes for i where its double value is > 0, else
/// for j; the first class with the most votes wins. In libsvm's layout the pair's coefficients are rows j - 1 and i.
LOCKSTEP_HD int64_t svm_one_vs_one(const SvmClassifierView& m, const float* kernels, float* pair_scores,
                                   int64_t* votes) {
  for (int64_t c = 0; c < m.classes; ++c) votes[c] = 0;
  int64_t pair = 0;
  for (int64_t i = 0; i < m.classes; ++i)
    for (int64_t j = i + 1; j < m.classes; ++j, ++pair) {
      const double d = svm_pair_decision(kernels, m.coefficients + (j - 1) * m.vectors, m.coefficients + i * m.vectors,
                                         m.first_vector[i], m.vector_count[i], m.first_vector[j], m.vector_count[j],
                                         m.rho[pair]);
      pair_scores[pair] = static_cast<float>(d);
      ++votes[d > 0 ? i : j];
    }
  int64_t best = 0;
  for (int64_t c = 1; c < m.classes; ++c)
    if (votes[best] < votes[c]) best = c;
  return best;
}

/// Platt probabilities of each pair (platt_probability_f32; the pair's reverse is 1 - p), coupled into the k class
/// probabilities `out` by pairwise_coupling_f32. pairwise: k*k floats, scratch: k*k + k.
LOCKSTEP_HD void svm_class_probabilities_f32(const SvmClassifierView& m, const float* pair_scores, float* pairwise,
                                             float* scratch, float* out) {
  const int64_t k = m.classes;
  int64_t pair = 0;
  for (int64_t i = 0; i < k; ++i)
    for (int64_t j = i + 1; j < k; ++j, ++pair) {
      const float p = platt_probability_f32(pair_scores[pair], m.prob_a[pair], m.prob_b[pair]);
      pairwise[i * k + j] = p;
      pairwise[j * k + i] = 1.0f - p;
    }
  pairwise_coupling_f32(k, pairwise, out, scratch);
}

/// Linear mode's label: the first largest score; with two classes and no prob_a, onnxruntime takes the second class
/// where the largest score is >= 0.5 (all coefficients >= 0) or > 0 (some negative).
LOCKSTEP_HD int64_t svm_linear_label(const SvmClassifierView& m, const float* s) {
  const int64_t best = first_largest_score(s, nullptr, m.classes);
  if (m.classes != 2 || m.prob_a) return best;
  const bool second = m.all_positive ? s[best] >= 0.5f : s[best] > 0.0f;
  return second ? 1 : best;
}

/// The post_transform of a row of n scores; one column takes PROBIT only, as onnxruntime transforms one score.
LOCKSTEP_HD void svm_post_transform_f32(ScorePostTransform post, float* s, int64_t n) {
  if (n > 1 || post == ScorePostTransform::Probit) score_post_transform_f32(post, s, n);
}

/// A row's scores (`columns` of them) from its pairs' decision values (svm_one_vs_one). Two classes without
/// probabilities take onnxruntime's two-class form: [-d, d] without a transform, else [1 - q, q] (q = sigmoid(d)
/// under LOGISTIC, d itself under SOFTMAX and SOFTMAX_ZERO), though d > 0 votes for the first class. Otherwise the
/// Platt probabilities (svm_class_probabilities_f32), or the pairs' values, then svm_post_transform_f32.
LOCKSTEP_HD void svm_classifier_scores_f32(const SvmClassifierView& m, ScorePostTransform post,
                                           const float* pair_scores, float* pairwise, float* scratch, float* s,
                                           int64_t columns) {
  if (!m.prob_a && m.classes == 2) {
    if (post == ScorePostTransform::None) {
      s[0] = -pair_scores[0];
      s[1] = pair_scores[0];
    } else {
      one_score_as_two_f32(post, pair_scores[0], s);
    }
    return;
  }
  if (m.prob_a) {
    svm_class_probabilities_f32(m, pair_scores, pairwise, scratch, s);
  } else {
    for (int64_t p = 0; p < m.classes * (m.classes - 1) / 2; ++p) s[p] = pair_scores[p];
  }
  svm_post_transform_f32(post, s, columns);
}

}  // namespace lockstep::arith
