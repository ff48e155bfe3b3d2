// The classical ML ops of the ai.onnx.ml domain, what the scikit-learn, LightGBM and XGBoost converters write:
// TreeEnsembleRegressor, TreeEnsembleClassifier, TreeEnsemble, LinearRegressor, LinearClassifier, Scaler, Normalizer,
// Binarizer, ArrayFeatureExtractor, LabelEncoder, Imputer, OneHotEncoder, CategoryMapper, SVMRegressor,
// SVMClassifier, ZipMap and DictVectorizer (the two that make and read maps: Tensor::map). Definitions (attributes,
// validation, shapes) here; kernels in src/cpu/ml.cpp.
// The numeric ops also have CUDA kernels (src/cuda/ml.cu, same bits); the string and map ones have CPU kernels only
// (the README says so).
#pragma once

#include <map>
#include <span>
#include <string>
#include <vector>

#include "arith/svm.h"
#include "arith/tree_ensemble.h"
#include "runtime/kernel.h"

namespace lockstep {

/// The ai.onnx.ml domain and the newest opset of it that the pinned onnx defines.
constexpr const char* kMlDomain = "ai.onnx.ml";
constexpr int64_t kNewestMlOpset = 5;

/// The registry rows of the ml ops; `since` and `until` are ai.onnx.ml opsets.
std::span<const OpEntry> ml_ops();
/// The row for an ai.onnx.ml op_type at that domain's opset, or nullptr.
const OpEntry* find_ml_op(const std::string& op_type, int64_t ml_opset);

/// A tree ensemble as TreeEnsembleRegressor, TreeEnsembleClassifier (ai.onnx.ml 1-4) and TreeEnsemble (5) describe
/// it, in the one form arith::tree_ensemble_row walks. Built once per node from its attributes (they are constant).
struct TreeEnsembleModel {
  std::vector<arith::TreeNode> nodes;
  std::vector<int32_t> roots;               // per tree, in evaluation order: a node index, or ~leaf
  std::vector<arith::LeafRange> leaves;     // per leaf: its entries
  std::vector<arith::LeafEntry> entries;    // (target, weight) pairs, leaves' in attribute order
  std::vector<double> members;              // MEMBER nodes' sets, each node's run [first, first + count)
  std::vector<double> base_values;          // empty or one per target
  int64_t targets = 0;
  arith::TreeAggregate aggregate = arith::TreeAggregate::Sum;
  arith::ScorePostTransform post = arith::ScorePostTransform::None;
  int64_t features_needed = 0;              // 1 + the largest feature index a node reads
  // TreeEnsembleClassifier: class labels (int64 or strings), one per score column.
  std::vector<int64_t> int_labels;
  std::vector<std::string> string_labels;
  // Two classes (arith::binary_tree_classifier_f32): every leaf weight names one class; no weight is negative.
  bool one_class = false, all_positive = false;
};

/// The model of a tree-ensemble node, made on its first run and kept (NodeState).
std::shared_ptr<const TreeEnsembleModel> tree_ensemble_model(KernelContext& ctx);

/// Rows and features of X ([N, F] or [F] as one row), checked against what the model reads.
struct MlRows {
  int64_t rows = 0, features = 0;
};
MlRows ml_rows(const KernelContext& ctx, int64_t features_needed);

/// The post_transform attribute of the ml 1-4 ops ("NONE", "LOGISTIC", "SOFTMAX", "SOFTMAX_ZERO", "PROBIT").
arith::ScorePostTransform post_transform_of(const KernelContext& ctx);

/// LinearRegressor and LinearClassifier: scores[n, t] = intercepts[t] + sum_f x[n, f] * coefficients[t * F + f].
struct LinearModel {
  std::vector<float> coefficients, intercepts;
  int64_t targets = 0, features = 0;
  arith::ScorePostTransform post = arith::ScorePostTransform::None;
  std::vector<int64_t> int_labels;
  std::vector<std::string> string_labels;
};
LinearModel linear_model_of(const KernelContext& ctx);

/// SVMRegressor and SVMClassifier. With support vectors (n_supports > 0, or vectors_per_class) each row's kernel values
/// against them are combined: the regressor's by coefficients, the classifier's one-vs-one (libsvm's layout: for
/// classes i < j, rho[pair], coefficients row j - 1 over class i's vectors and row i over class j's). Without them it
/// is linear: coefficients are one weight row per target (one for the regressor, one per class), all offset by rho[0].
struct SvmModel {
  arith::SvmKernelParams kernel;
  std::vector<float> support_vectors;   // vectors x features, row-major
  std::vector<float> coefficients, rho, prob_a, prob_b;
  std::vector<int64_t> first_vector, vector_count;  // per class: its support vectors [first, first + count)
  int64_t vectors = 0, features = 0, classes = 0;
  arith::ScorePostTransform post = arith::ScorePostTransform::None;
  bool one_class = false;                // SVMRegressor: the output is 1 where the value is > 0, else -1
  bool all_positive = false;             // no coefficient is negative (the two-class linear label rule)
  std::vector<int64_t> int_labels;
  std::vector<std::string> string_labels;
};

/// The model of an SVM node, made on its first run and kept (NodeState).
std::shared_ptr<const SvmModel> svm_model(KernelContext& ctx);

/// ArrayFeatureExtractor's columns: the indices (each checked against X's last axis), that axis's width and the
/// output shape (X's with the last axis K long; a 1-D X gives [1, K]).
struct FeatureSelection {
  std::vector<int64_t> indices;
  int64_t width = 0;
  Shape shape;
};
FeatureSelection feature_selection(KernelContext& ctx);

/// Imputer's attributes against X, checked: the imputed values (floats for a float or double X, int64 for an integer
/// X; one for all features, or one per feature), the replaced value, and X's features (dims[1]; dims[0] when 1-D).
struct ImputerPlan {
  std::vector<float> float_values;
  std::vector<int64_t> int_values;
  double replaced_float = 0;
  int64_t replaced_int = 0;
  int64_t features = 0;
  bool one_value = false;
};
ImputerPlan imputer_plan(const KernelContext& ctx);

/// ZipMap's class labels as its maps hold them: ascending, each once, with the score column each takes (for a label
/// given twice, the later column, as onnxruntime keeps it). `classes` is the number of labels given, the columns X
/// must have.
struct ZipMapLabels {
  std::vector<int64_t> int_labels;         // classlabels_int64s sorted, or empty
  std::vector<std::string> string_labels;  // classlabels_strings sorted, or empty
  std::vector<int64_t> columns;            // per sorted label
  int64_t classes = 0;
};

/// The labels of a ZipMap node, made on its first run and kept (NodeState).
std::shared_ptr<const ZipMapLabels> zip_map_labels(KernelContext& ctx);

/// OneHotEncoder's categories: each to its column (the first column of a category given twice), by string
/// (cats_strings) and by int64 (cats_int64s); `count` columns.
struct OneHotCategories {
  std::map<std::string, int64_t> strings;
  std::map<int64_t, int64_t> ints;
  int64_t count = 0;
};
/// Made on the node's first run and kept (NodeState); InvalidGraph, naming the node, without categories.
std::shared_ptr<const OneHotCategories> one_hot_categories(KernelContext& ctx);

/// CategoryMapper's two maps, pair k of cats_strings and cats_int64s each way (a key given twice: its last pair).
struct CategoryMaps {
  std::map<std::string, int64_t> to_int;
  std::map<int64_t, std::string> to_string;
};
/// Made on the node's first run and kept (NodeState); InvalidGraph, naming the node, for lists of unequal length.
std::shared_ptr<const CategoryMaps> category_maps(KernelContext& ctx);

namespace cpu {
void tree_ensemble(KernelContext& ctx);    // TreeEnsembleRegressor, TreeEnsembleClassifier, TreeEnsemble
void linear_model(KernelContext& ctx);     // LinearRegressor, LinearClassifier
void ml_elementwise(KernelContext& ctx);   // Scaler, Binarizer, Normalizer
void array_feature_extractor(KernelContext& ctx);
void label_encoder(KernelContext& ctx);
void imputer(KernelContext& ctx);
void one_hot_encoder(KernelContext& ctx);
void category_mapper(KernelContext& ctx);
void svm_regressor(KernelContext& ctx);
void svm_classifier(KernelContext& ctx);
void zip_map(KernelContext& ctx);
void dict_vectorizer(KernelContext& ctx);
}

// The numeric ops' CUDA kernels (src/cuda/ml.cu). LabelEncoder, OneHotEncoder, CategoryMapper, ZipMap and
// DictVectorizer have none: strings and maps live on the host.
namespace cuda {
void tree_ensemble(KernelContext& ctx);
void linear_model(KernelContext& ctx);
void ml_elementwise(KernelContext& ctx);
void array_feature_extractor(KernelContext& ctx);
void imputer(KernelContext& ctx);
void svm_regressor(KernelContext& ctx);
void svm_classifier(KernelContext& ctx);
}

}  // namespace lockstep
