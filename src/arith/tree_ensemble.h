// The tree ensembles of the ai.onnx.ml domain (TreeEnsembleRegressor, TreeEnsembleClassifier, TreeEnsemble) and the
// score transforms of the ml ops: one row of scores from one row of features (docs/arithmetic.md#ml).
//
// A feature is widened to double (exact for float32, float16, int32) and compared with the node's threshold in
// double (thresholds given as float are exact in double too, so float models compare as float32 would). Scores
// accumulate in the output's type, trees in evaluation order and each leaf's (target, weight) entries in attribute
// order, so the order of additions is fixed by the model alone.
#pragma once

#include <cstdint>


#include "arith/hd.h"
#include "arith/math.h"
#include "arith/reduce.h"

namespace lockstep::arith {

enum class TreeMode : uint8_t { Leq = 0, Lt = 1, Gte = 2, Gt = 3, Eq = 4, Neq = 5, Member = 6 };
enum class TreeAggregate : uint8_t { Average = 0, Sum = 1, Min = 2, Max = 3 };
enum class ScorePostTransform : uint8_t { None = 0, Softmax = 1, Logistic = 2, SoftmaxZero = 3, Probit = 4 };

struct TreeNode {
  int64_t feature = 0;
  double threshold = 0;
  int32_t next_true = 0, next_false = 0;  // a node index, or ~leaf (negative) for a leaf
  uint32_t member_first = 0, member_count = 0;
  TreeMode mode = TreeMode::Leq;
  bool missing_true = false;  // a NaN feature takes the true branch (else the comparison decides: false)
};
struct LeafRange {
  int32_t first = 0, count = 0;
};
struct LeafEntry {
  int64_t target = 0;
  double weight = 0;
};

/// The model as a kernel reads it (pointers into its arrays, on the kernel's device).
struct TreeEnsembleView {
  const TreeNode* nodes;
  const int32_t* roots;
  int64_t trees;
  const LeafRange* leaves;
  const LeafEntry* entries;
  const double* members;
  const double* base_values;  // null or one per target
  int64_t targets;
  TreeAggregate aggregate;
  bool base_first;  // TreeEnsembleClassifier starts each score from its base value; the others add it last
};

// ONNX's test of a node: x <op> threshold, or x in the node's set; a NaN x takes the true branch when missing_true.
LOCKSTEP_HD bool tree_test(const TreeNode& n, double x, const double* members) {
  if (x != x && n.missing_true) return true;
  switch (n.mode) {
    case TreeMode::Leq: return x <= n.threshold;
    case TreeMode::Lt: return x < n.threshold;
    case TreeMode::Gte: return x >= n.threshold;
    case TreeMode::Gt: return x > n.threshold;
    case TreeMode::Eq: return x == n.threshold;
    case TreeMode::Neq: return x != n.threshold;
    case TreeMode::Member:
      for (uint32_t k = 0; k < n.member_count; ++k)
        if (members[n.member_first + k] == x) return true;
      return false;
  }
  return false;
}

/// The leaf a tree reaches for the features `x(f)` (doubles). Well-formedness (no cycles, indices in range) is the
/// definition's to check.
template <class Features>
LOCKSTEP_HD int32_t tree_leaf(const TreeEnsembleView& m, int32_t root, const Features& x) {
  int32_t at = root;
  while (at >= 0) {
    const TreeNode& n = m.nodes[at];
    at = tree_test(n, x(n.feature), m.members) ? n.next_true : n.next_false;
  }
  return ~at;
}

/// One row: out[t] for every target, in Acc (float or double), and scored[t]: whether a reached leaf named target t
/// (or, base_first, a base value is given).
/// SUM and AVERAGE: 0 (or the base value, base_first), plus each reached leaf's weights in tree order, AVERAGE then
/// divided by the tree count; MIN and MAX: the smallest or largest weight reached. Then the base value is added
/// (unless base_first), except that MIN and MAX leave a target no reached leaf names at 0 (as onnxruntime does; the
/// ONNX reference gives the type's extreme plus the base value).
template <class Acc, class Features>
LOCKSTEP_HD void tree_ensemble_row(const TreeEnsembleView& m, const Features& x, Acc* out, bool* scored) {
  const bool with_base = m.base_first && m.base_values;
  for (int64_t t = 0; t < m.targets; ++t) {
    out[t] = with_base ? static_cast<Acc>(m.base_values[t]) : Acc(0);
    scored[t] = with_base;
  }
  for (int64_t tree = 0; tree < m.trees; ++tree) {
    const LeafRange leaf = m.leaves[tree_leaf(m, m.roots[tree], x)];
    for (int32_t k = 0; k < leaf.count; ++k) {
      const LeafEntry& e = m.entries[leaf.first + k];
      const Acc w = static_cast<Acc>(e.weight);
      Acc& o = out[e.target];
      if (m.aggregate == TreeAggregate::Min) o = !scored[e.target] || w < o ? w : o;
      else if (m.aggregate == TreeAggregate::Max) o = !scored[e.target] || w > o ? w : o;
      else o = o + w;
      scored[e.target] = true;
    }
  }
  const bool extreme = m.aggregate == TreeAggregate::Min || m.aggregate == TreeAggregate::Max;
  for (int64_t t = 0; t < m.targets; ++t) {
    if (m.aggregate == TreeAggregate::Average) out[t] = out[t] / static_cast<Acc>(m.trees);
    if (extreme && !scored[t]) continue;  // stays 0, without a base value (as onnxruntime)
    if (m.base_values && !m.base_first) out[t] = out[t] + static_cast<Acc>(m.base_values[t]);
  }
}

/// PROBIT as onnxruntime computes it: sqrt(2) * erfinv(2p - 1), erfinv by Winitzki's approximation (a = 0.147; about
/// 2e-3 relative error against the true inverse), in float32 in this order, with log_f32 and IEEE square roots.
LOCKSTEP_HD float probit_f32(float p) {
  float x = p * 2.0f - 1.0f;
  const float sign = x < 0.0f ? -1.0f : 1.0f;
  x = (1.0f - x) * (1.0f + x);
  const float l = log_f32(x);
  const float v = 2.0f / (3.14159265358979323846f * 0.147f) + 0.5f * l;
  const float v2 = 1.0f / 0.147f * l;
  const float v3 = -v + sqrt_lanes(v * v - v2);
  return 1.41421356f * (sign * sqrt_lanes(v3));
}

/// Index of the first largest score among the scored ones (all when `scored` is null), before any post_transform, as
/// onnxruntime chooses a classifier's label; 0 when none is scored.
LOCKSTEP_HD int64_t first_largest_score(const float* s, const bool* scored, int64_t n) {
  int64_t best = -1;
  for (int64_t i = 0; i < n; ++i)
    if ((!scored || scored[i]) && (best < 0 || s[i] > s[best])) best = i;
  return best < 0 ? 0 : best;
}

/// The ml ops' post_transform on one row of float32 scores, in place. LOGISTIC: sigmoid_f32 per score; PROBIT:
/// probit_f32 per score. SOFTMAX: e_i = exp_f32(s_i - m) with m the first largest score, then e_i / S(e), S the
/// canonical sum. SOFTMAX_ZERO, as onnxruntime computes it: m the largest score (zeros included); a score with
/// |s| > 1e-7 becomes exp_f32(s - m), any other s * exp_f32(-m); then each is divided by the canonical sum of the
/// former alone (so a row with no score beyond 1e-7 becomes NaN, as in onnxruntime).
LOCKSTEP_HD void score_post_transform_f32(ScorePostTransform post, float* s, int64_t n) {
  if (post == ScorePostTransform::None) return;
  if (post == ScorePostTransform::Logistic || post == ScorePostTransform::Probit) {
    for (int64_t i = 0; i < n; ++i) s[i] = post == ScorePostTransform::Logistic ? sigmoid_f32(s[i]) : probit_f32(s[i]);
    return;
  }
  const bool zero_form = post == ScorePostTransform::SoftmaxZero;
  float m = -detail::kInf;
  for (int64_t i = 0; i < n; ++i) m = s[i] > m ? s[i] : m;
  const auto counted = [&](float v) { return !zero_form || v > 1e-7f || v < -1e-7f; };
  const float sum = sum_canonical_f32(n, [&](int64_t i) { return counted(s[i]) ? exp_f32(s[i] - m) : 0.0f; });
  const float small_scale = zero_form ? exp_f32(-m) : 0.0f;
  for (int64_t i = 0; i < n; ++i) s[i] = (counted(s[i]) ? exp_f32(s[i] - m) : s[i] * small_scale) / sum;
}

/// onnxruntime's two scores of a binary classifier from its one score s: [1 - q, q], q = sigmoid(s) under LOGISTIC,
/// else s (no other post_transform applies).
LOCKSTEP_HD void one_score_as_two_f32(ScorePostTransform post, float s, float* out) {
  const float q = post == ScorePostTransform::Logistic ? sigmoid_f32(s) : s;
  out[0] = 1.0f - q;
  out[1] = q;
}

/// A TreeEnsembleClassifier of two classes, as onnxruntime evaluates it (it departs from the ONNX reference here, and
/// converters' binary models rely on it). one_class: every leaf weight names the same class; all_positive: no leaf
/// weight is negative; base: the node's 0, 1 or 2 base values (more are ignored).
struct BinaryTreeClassifier {
  const double* base = nullptr;
  int64_t base_count = 0;
  bool one_class = false, all_positive = false;
  ScorePostTransform post = ScorePostTransform::None;
};

/// One row from the two classes' raw sums s0, s1 (h0, h1: whether a reached leaf named the class): writes the two
/// scores to out and returns whether the label is the positive class (the second). Steps, as onnxruntime 1.30 gives
/// them (found by running it on every combination below; tests/test_ml_ops.py):
/// - two base values: with h1, s1 = base1 + s0 (the first class's sum) and, with h0, s0 = -s1; without h1, s0 + base0
///   where h0. One base value: s0 + base0 where h0, and without h1 only s0 is kept. None: likewise, no base;
/// - the positive weight p is s1 where kept and h1, else s0 where h0, else 0. One class: the label is positive when
///   p > 0.5 (all weights positive) or p > 0 (mixed); two classes: when p > 0;
/// - both sums kept: the post_transform of the pair. Only s0 kept: one_score_as_two_f32 where the weights are all
///   positive; [sigmoid(-s0), sigmoid(s0)] (LOGISTIC) or [-s0, s0] where mixed, or where
///   there are no base values; with two classes and one base value onnxruntime writes nothing, lockstep [s0, 0].
LOCKSTEP_HD bool binary_tree_classifier_f32(const BinaryTreeClassifier& c, float s0, bool h0, float s1, bool h1,
                                           float* out) {
  bool both = true;
  if (c.base_count >= 2) {
    if (h1) {
      s1 = static_cast<float>(c.base[1]) + s0;
      if (h0) s0 = -s1;
    } else if (h0) {
      s0 = s0 + static_cast<float>(c.base[0]);
    }
  } else {
    if (c.base_count == 1 && h0) s0 = s0 + static_cast<float>(c.base[0]);
    both = h1;
  }
  const float p = both && h1 ? s1 : (h0 ? s0 : 0.0f);
  const bool positive = c.one_class && c.all_positive ? p > 0.5f : p > 0.0f;
  if (both) {
    out[0] = s0;
    out[1] = s1;
    score_post_transform_f32(c.post, out, 2);
  } else if (c.one_class && c.all_positive) {
    one_score_as_two_f32(c.post, s0, out);
  } else if (c.one_class || c.base_count == 0) {
    out[0] = c.post == ScorePostTransform::Logistic ? sigmoid_f32(-s0) : -s0;
    out[1] = c.post == ScorePostTransform::Logistic ? sigmoid_f32(s0) : s0;
  } else {
    out[0] = s0;
    out[1] = 0.0f;
  }
  return positive;
}

}  // namespace lockstep::arith
