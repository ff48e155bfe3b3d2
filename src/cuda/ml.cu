// CUDA kernels of the ai.onnx.ml ops, mirroring src/cpu/ml.cpp: one thread per row (per element for Scaler,
// Binarizer, Imputer and ArrayFeatureExtractor), each calling the src/arith functions the CPU kernel calls, in its
// order. A node's model (trees, coefficients, support vectors, tables) is uploaded once and kept in its NodeState.
// String labels live on the host: the GPU picks each row's class and the host looks its string up. Contract:
// docs/arithmetic.md#ml.
#include <initializer_list>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "arith/elementwise.h"
#include "arith/reduce.h"
#include "cuda/common.cuh"
#include "ops/ml.h"

namespace lockstep::cuda {

namespace {

using arith::ScorePostTransform;

// ---------------------------------------------------------------------------------------------------------------
// Model upload and the node's state

/// Device copies of a model's tables; the pointers stay valid while the struct (its buffers) lives.
struct DeviceTables {
  std::vector<std::shared_ptr<Buffer>> buffers;

  /// The device copy of `v`, or null for an empty `v` (the kernels read null as "not given").
  template <class T>
  const T* copy(KernelContext& ctx, const std::vector<T>& v) {
    if (v.empty()) return nullptr;
    buffers.push_back(upload(ctx, v.data(), v.size() * sizeof(T)));
    return static_cast<const T*>(buffers.back()->data);
  }
};

/// What the node keeps from run to run: made by the first run, or afresh where there is no NodeState.
template <class T, class Make>
std::shared_ptr<const T> kept_for_node(KernelContext& ctx, Make make) {
  if (!ctx.state) return std::make_shared<const T>(make());
  return ctx.state->get_or_make<T>([](const T&) { return true; }, make);
}

/// The CPU's host model of the node (tree_ensemble_model, svm_model), made through a throwaway NodeState: the node's
/// own state holds one value, the device model, which keeps this host model inside it.
template <class Model>
std::shared_ptr<const Model> host_model(const KernelContext& ctx,
                                        std::shared_ptr<const Model> (*make)(KernelContext&)) {
  KernelContext alone = ctx;
  NodeState own;
  alone.state = &own;
  return make(alone);
}

// ---------------------------------------------------------------------------------------------------------------
// Shared by the kernels

void require_x_type(const KernelContext& ctx, std::initializer_list<DType> types) {
  const DType t = ctx.input(0).dtype();
  for (DType allowed : types)
    if (t == allowed) return;
  throw ctx.error(std::string("X of type ") + dtype_name(t) + " is not supported", ErrorCode::NotImplemented);
}

/// Calls launch(x) with X's data typed as float, double, int64 or int32.
template <class Launch>
void with_x_type(const Tensor& x, const Launch& launch) {
  switch (x.dtype()) {
    case DType::Float: return launch(x.data<float>());
    case DType::Double: return launch(x.data<double>());
    case DType::Int64: return launch(x.data<int64_t>());
    default: return launch(x.data<int32_t>());  // the callers admit these four types only
  }
}

/// Feature f of a row widened to double (exact for float32 and int32; int64 rounded once), as the CPU's RowFeatures.
template <class T>
struct FeaturesAsDouble {
  const T* row;
  __host__ __device__ double operator()(int64_t f) const { return static_cast<double>(row[f]); }
};

/// Feature f of a row rounded to float32 once from its own type, as the CPU's float_rows copy of X.
template <class T>
struct FeaturesAsFloat {
  const T* row;
  __host__ __device__ float operator()(int64_t f) const { return static_cast<float>(row[f]); }
};

__device__ int64_t thread_index() { return static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; }

/// Where a classifier kernel writes each row's label: table[class] (int64 labels, on the device), or the class
/// index itself where table is null. `out` null: the op has no labels (regressors).
struct LabelSink {
  int64_t* out = nullptr;
  const int64_t* table = nullptr;
  __device__ void put(int64_t row, int64_t index) const {
    if (out) out[row] = table ? table[index] : index;
  }
};

/// A classifier's output 0 (labels of shape [rows]). int64 labels are looked up on the device. String labels live on
/// the host: the kernel writes class indexes to device scratch and finish() looks the strings up after downloading
/// them.
class ClassLabels {
 public:
  /// `classes`: the class indexes the kernel may write; `int_table`: the device copy of int_labels, or null where
  /// the label is the class index itself.
  ClassLabels(KernelContext& ctx, int64_t rows, int64_t classes, const std::vector<int64_t>& int_labels,
              const std::vector<std::string>& string_labels, const int64_t* int_table)
      : rows_(rows), strings_(string_labels) {
    const bool strings = !string_labels.empty();
    const size_t given = strings ? string_labels.size() : int_labels.size();
    if ((strings || int_table) && static_cast<int64_t>(given) < classes)
      throw ctx.error("the classifier has " + std::to_string(given) + " class labels for " + std::to_string(classes) +
                          " classes", ErrorCode::InvalidGraph);
    if (!strings) {
      sink_ = {ctx.output(0, DType::Int64, {rows}).data<int64_t>(), int_table};
      return;
    }
    indexes_ = ctx.allocator->allocate(sizeof(int64_t) * static_cast<size_t>(rows > 0 ? rows : 1));
    sink_ = {static_cast<int64_t*>(indexes_->data), nullptr};
  }

  const LabelSink& sink() const { return sink_; }

  /// After the kernel: the string labels (a no-op for int64 labels).
  void finish(KernelContext& ctx) {
    if (strings_.empty()) return;
    const Tensor indexes = ctx.to_host(Tensor::over(DType::Int64, {rows_}, indexes_));
    Tensor& y = ctx.host_string_output(0, {rows_});
    for (int64_t r = 0; r < rows_; ++r) {
      const int64_t k = indexes.data<int64_t>()[r];
      if (k < 0 || k >= static_cast<int64_t>(strings_.size()))
        throw ctx.error("class index " + std::to_string(k) + " has no label", ErrorCode::RuntimeError);
      y.data<std::string>()[r] = strings_[k];
    }
  }

 private:
  int64_t rows_;
  const std::vector<std::string>& strings_;
  std::shared_ptr<Buffer> indexes_;
  LabelSink sink_;
};

/// Device scratch of n elements of T (at least one, so that the pointer is valid), released when the kernels are
/// queued: the stream runs later users of the block after them.
template <class T>
struct Scratch {
  std::shared_ptr<Buffer> buffer;
  Scratch(KernelContext& ctx, int64_t n)
      : buffer(ctx.allocator->allocate(sizeof(T) * static_cast<size_t>(n > 0 ? n : 1))) {}
  T* data() const { return static_cast<T*>(buffer->data); }
};

// ---------------------------------------------------------------------------------------------------------------
// Tree ensembles

struct DeviceTrees {
  std::shared_ptr<const TreeEnsembleModel> host;
  DeviceTables tables;
  arith::TreeEnsembleView view{};  // device pointers; base_first is set per run
  const int64_t* int_labels = nullptr;
};

DeviceTrees upload_trees(KernelContext& ctx) {
  DeviceTrees d;
  d.host = host_model(ctx, &tree_ensemble_model);
  const TreeEnsembleModel& m = *d.host;
  DeviceTables& t = d.tables;
  d.view = {t.copy(ctx, m.nodes),   t.copy(ctx, m.roots),   static_cast<int64_t>(m.roots.size()),
            t.copy(ctx, m.leaves),  t.copy(ctx, m.entries), t.copy(ctx, m.members),
            t.copy(ctx, m.base_values), m.targets, m.aggregate, false};
  d.int_labels = t.copy(ctx, m.int_labels);
  return d;
}

// Contract: arith::tree_ensemble_row per row (trees in order, leaf entries in attribute order); float scores then
// take the first largest scored class as the label and arith::score_post_transform_f32, as cpu::tree_ensemble.
template <class Acc, class T>
__global__ void tree_ensemble_rows(arith::TreeEnsembleView view, const T* x, int64_t rows, int64_t features,
                                   ScorePostTransform post, bool* scored, Acc* y, LabelSink labels) {
  const int64_t row = thread_index();
  if (row >= rows) return;
  Acc* s = y + row * view.targets;
  bool* hit = scored + row * view.targets;
  arith::tree_ensemble_row<Acc>(view, FeaturesAsDouble<T>{x + row * features}, s, hit);
  if constexpr (std::is_same_v<Acc, float>) {
    labels.put(row, arith::first_largest_score(s, hit, view.targets));
    arith::score_post_transform_f32(post, s, view.targets);
  }
}

// Contract: arith::tree_ensemble_row per row without base values, then arith::binary_tree_classifier_f32, as the
// CPU's binary_tree_classifier.
template <class T>
__global__ void binary_tree_classifier_rows(arith::TreeEnsembleView view, arith::BinaryTreeClassifier c, const T* x,
                                            int64_t rows, int64_t features, float* y, LabelSink labels) {
  const int64_t row = thread_index();
  if (row >= rows) return;
  float s[2];
  bool hit[2];
  arith::tree_ensemble_row<float>(view, FeaturesAsDouble<T>{x + row * features}, s, hit);
  labels.put(row, arith::binary_tree_classifier_f32(c, s[0], hit[0], s[1], hit[1], y + 2 * row) ? 1 : 0);
}

Error probit_of_two_classes(const KernelContext& ctx) {
  return ctx.error("PROBIT of a two-class classifier is not supported (onnxruntime writes one of its two scores)",
                   ErrorCode::NotImplemented);
}

void binary_tree_classifier(KernelContext& ctx, const DeviceTrees& trees, const MlRows& r) {
  const TreeEnsembleModel& m = *trees.host;
  if (m.post == ScorePostTransform::Probit) throw probit_of_two_classes(ctx);
  arith::TreeEnsembleView view = trees.view;
  view.base_values = nullptr;  // the binary form adds them itself
  const arith::BinaryTreeClassifier c{trees.view.base_values, static_cast<int64_t>(m.base_values.size()), m.one_class,
                                      m.all_positive, m.post};
  float* y = ctx.output(1, DType::Float, {r.rows, 2}).data<float>();
  // Where the weights name both classes, onnxruntime's int64 label is 1 or 0 itself (string labels are the class's).
  ClassLabels labels(ctx, r.rows, 2, m.int_labels, m.string_labels, m.one_class ? trees.int_labels : nullptr);
  if (r.rows > 0) {
    with_x_type(ctx.input(0), [&](const auto* x) {
      binary_tree_classifier_rows<<<blocks_for(r.rows), kThreadsPerBlock, 0, stream_of(ctx)>>>(
          view, c, x, r.rows, r.features, y, labels.sink());
    });
    check_launch(ctx);
  }
  labels.finish(ctx);
}

template <class Acc>
void launch_tree_rows(KernelContext& ctx, const arith::TreeEnsembleView& view, const MlRows& r,
                      ScorePostTransform post, Acc* y, const LabelSink& labels) {
  if (r.rows == 0) return;
  Scratch<bool> scored(ctx, r.rows * view.targets);
  with_x_type(ctx.input(0), [&](const auto* x) {
    tree_ensemble_rows<Acc><<<blocks_for(r.rows), kThreadsPerBlock, 0, stream_of(ctx)>>>(
        view, x, r.rows, r.features, post, scored.data(), y, labels);
  });
  check_launch(ctx);
}

}  // namespace

// Contract: arith::tree_ensemble_row per row, then arith::score_post_transform_f32 (or the two-class form), one thread
// per row; docs/arithmetic.md#ml.
void tree_ensemble(KernelContext& ctx) {
  const auto trees = kept_for_node<DeviceTrees>(ctx, [&] { return upload_trees(ctx); });
  const TreeEnsembleModel& m = *trees->host;
  const bool v5 = ctx.node.op_type == "TreeEnsemble", classifier = ctx.node.op_type == "TreeEnsembleClassifier";
  if (v5) require_x_type(ctx, {DType::Float, DType::Double});
  else require_x_type(ctx, {DType::Float, DType::Double, DType::Int64, DType::Int32});
  const MlRows r = ml_rows(ctx, m.features_needed);
  arith::TreeEnsembleView view = trees->view;
  view.base_first = classifier;
  if (v5 && ctx.input(0).dtype() == DType::Double) {
    if (m.post != ScorePostTransform::None)
      throw ctx.error("post_transform on double scores is not supported", ErrorCode::NotImplemented);
    double* y = ctx.output(0, DType::Double, {r.rows, m.targets}).data<double>();
    return launch_tree_rows(ctx, view, r, m.post, y, LabelSink{});
  }
  if (classifier && m.targets < 2)
    throw ctx.error("a classifier of one class is not supported", ErrorCode::NotImplemented);
  if (classifier && m.targets == 2) return binary_tree_classifier(ctx, *trees, r);
  float* y = ctx.output(classifier ? 1 : 0, DType::Float, {r.rows, m.targets}).data<float>();
  if (!classifier) return launch_tree_rows(ctx, view, r, m.post, y, LabelSink{});
  ClassLabels labels(ctx, r.rows, m.targets, m.int_labels, m.string_labels, trees->int_labels);
  launch_tree_rows(ctx, view, r, m.post, y, labels.sink());
  labels.finish(ctx);
}

namespace {

// ---------------------------------------------------------------------------------------------------------------
// Linear models

struct DeviceLinear {
  LinearModel host;
  DeviceTables tables;
  const float* coefficients = nullptr;
  const float* intercepts = nullptr;  // null: every intercept is 0
  const int64_t* int_labels = nullptr;
};

DeviceLinear upload_linear(KernelContext& ctx) {
  DeviceLinear d;
  d.host = linear_model_of(ctx);
  d.coefficients = d.tables.copy(ctx, d.host.coefficients);
  d.intercepts = d.tables.copy(ctx, d.host.intercepts);
  d.int_labels = d.tables.copy(ctx, d.host.int_labels);
  return d;
}

struct LinearRows {
  const float* coefficients;
  const float* intercepts;
  int64_t rows, targets, features, columns;
  bool binary;
  ScorePostTransform post;
};

// Contract: each score is arith::dot_chunked_f32 over the features from the intercept; then the label (the first
// largest score, or the second class where the one score is > 0) and arith::score_post_transform_f32 or
// arith::one_score_as_two_f32, as cpu::linear_model.
__global__ void linear_rows(LinearRows a, const float* x, float* y, LabelSink labels) {
  const int64_t row = thread_index();
  if (row >= a.rows) return;
  const float* xr = x + row * a.features;
  float* s = y + row * a.columns + (a.binary ? 1 : 0);
  for (int64_t t = 0; t < a.targets; ++t)
    s[t] = arith::dot_chunked_f32(a.features, a.intercepts ? a.intercepts[t] : 0.0f, [&](int64_t f) { return xr[f]; },
                                  [&](int64_t f) { return a.coefficients[t * a.features + f]; });
  if (a.binary) {
    labels.put(row, s[0] > 0.0f ? 1 : 0);
    arith::one_score_as_two_f32(a.post, s[0], s - 1);
    return;
  }
  labels.put(row, arith::first_largest_score(s, nullptr, a.columns));
  arith::score_post_transform_f32(a.post, s, a.columns);
}

}  // namespace

// Contract: dot_chunked_f32 per score from the intercept, then the post_transform, one thread per row;
// docs/arithmetic.md#ml.
void linear_model(KernelContext& ctx) {
  const auto model = kept_for_node<DeviceLinear>(ctx, [&] { return upload_linear(ctx); });
  const LinearModel& m = model->host;
  require_x_type(ctx, {DType::Float});
  const MlRows r = ml_rows(ctx, m.features);
  if (r.features != m.features)
    throw ctx.error("X has " + std::to_string(r.features) + " features, the coefficients " +
                    std::to_string(m.features));
  const bool classifier = ctx.node.op_type == "LinearClassifier";
  const bool binary = classifier && m.targets == 1;
  const size_t labels_given = std::max(m.int_labels.size(), m.string_labels.size());
  if (binary && labels_given != 2)
    throw ctx.error("one score column needs two class labels, not " + std::to_string(labels_given),
                    ErrorCode::NotImplemented);
  if (binary && m.post == ScorePostTransform::Probit) throw probit_of_two_classes(ctx);
  const int64_t columns = binary ? 2 : m.targets;
  float* y = ctx.output(classifier ? 1 : 0, DType::Float, {r.rows, columns}).data<float>();
  const LinearRows a{model->coefficients, model->intercepts, r.rows, m.targets, m.features, columns, binary, m.post};
  std::unique_ptr<ClassLabels> labels;
  if (classifier)
    labels = std::make_unique<ClassLabels>(ctx, r.rows, columns, m.int_labels, m.string_labels, model->int_labels);
  if (r.rows > 0) {
    linear_rows<<<blocks_for(r.rows), kThreadsPerBlock, 0, stream_of(ctx)>>>(a, ctx.input(0).data<float>(), y,
                                                                             labels ? labels->sink() : LabelSink{});
    check_launch(ctx);
  }
  if (labels) labels->finish(ctx);
}

namespace {

// ---------------------------------------------------------------------------------------------------------------
// Scaler, Binarizer, Normalizer

struct DeviceScaler {
  std::vector<float> offset, scale;  // as given; their sizes are checked against X's width per run
  DeviceTables tables;
  const float* device_offset = nullptr;
  const float* device_scale = nullptr;
};

DeviceScaler upload_scaler(KernelContext& ctx) {
  DeviceScaler d;
  d.offset = ctx.node.attr_floats("offset");
  d.scale = ctx.node.attr_floats("scale");
  d.device_offset = d.tables.copy(ctx, d.offset);
  d.device_scale = d.tables.copy(ctx, d.scale);
  return d;
}

// Contract: (x - offset) * scale, offset and scale of one entry or one per column.
struct ScalerElement {
  const float* x;
  const float* offset;
  const float* scale;
  int64_t width;
  bool one_offset, one_scale;
  __device__ float operator()(int64_t i) const {
    const int64_t c = i % width;
    return (x[i] - offset[one_offset ? 0 : c]) * scale[one_scale ? 0 : c];
  }
};

// Contract: x > threshold ? 1 : 0, NaN stays NaN.
struct BinarizerElement {
  const float* x;
  float threshold;
  __device__ float operator()(int64_t i) const { return x[i] != x[i] ? x[i] : (x[i] > threshold ? 1.0f : 0.0f); }
};

enum class Norm : uint8_t { Max, L1, L2 };

// Contract: x / d per row, d the row's first largest value (a zero d copies the row), or the canonical sum of |x|
// (L1) or sqrt of the canonical sum of x*x (L2), at least 1e-30; one thread per row, as cpu::ml_elementwise.
__global__ void normalizer_rows(const float* x, int64_t rows, int64_t width, Norm norm, float* y) {
  const int64_t row = thread_index();
  if (row >= rows) return;
  const float* xr = x + row * width;
  float d = xr[0];
  if (norm == Norm::Max) {
    for (int64_t i = 1; i < width; ++i) d = xr[i] > d ? xr[i] : d;
  } else {
    d = norm == Norm::L1 ? arith::sum_canonical_f32(width, [&](int64_t i) { return arith::abs_f32(xr[i]); })
                         : arith::sqrt_f32(arith::sum_canonical_f32(width, [&](int64_t i) { return xr[i] * xr[i]; }));
    d = d > 1e-30f ? d : 1e-30f;
  }
  for (int64_t i = 0; i < width; ++i) y[row * width + i] = d == 0.0f ? xr[i] : xr[i] / d;
}

Norm norm_of(const KernelContext& ctx) {
  const std::string norm = ctx.node.attr_string("norm", "MAX");
  if (norm == "MAX") return Norm::Max;
  if (norm == "L1") return Norm::L1;
  if (norm == "L2") return Norm::L2;
  throw ctx.error("norm '" + norm + "' is not MAX, L1 or L2", ErrorCode::InvalidGraph);
}

}  // namespace

// Contract: Scaler and Binarizer one thread per element, Normalizer one per row, each element's operations as
// cpu::ml_elementwise; docs/arithmetic.md#ml.
void ml_elementwise(KernelContext& ctx) {
  const std::string& op = ctx.node.op_type;
  const Tensor& xt = ctx.input(0);
  if (xt.dtype() != DType::Float)
    throw ctx.error(std::string("X of type ") + dtype_name(xt.dtype()) + " is not supported",
                    ErrorCode::NotImplemented);
  const int64_t n = xt.numel(), width = xt.rank() == 0 ? 1 : xt.dim(-1);
  const float* x = xt.data<float>();
  if (op == "Binarizer")
    return fill_output_f32(ctx, xt.shape(), BinarizerElement{x, ctx.node.attr_float("threshold", 0.0f)});
  if (op == "Scaler") {
    const auto scaler = kept_for_node<DeviceScaler>(ctx, [&] { return upload_scaler(ctx); });
    for (const auto* v : {&scaler->offset, &scaler->scale})
      if (v->size() != 1 && static_cast<int64_t>(v->size()) != width)
        throw ctx.error("offset and scale must have 1 or " + std::to_string(width) + " entries",
                        ErrorCode::InvalidGraph);
    return fill_output_f32(ctx, xt.shape(), ScalerElement{x, scaler->device_offset, scaler->device_scale, width,
                                                          scaler->offset.size() == 1, scaler->scale.size() == 1});
  }
  const Norm norm = norm_of(ctx);
  float* y = ctx.output(0, DType::Float, xt.shape()).data<float>();
  const int64_t rows = width ? n / width : 0;
  if (rows == 0) return;
  normalizer_rows<<<blocks_for(rows), kThreadsPerBlock, 0, stream_of(ctx)>>>(x, rows, width, norm, y);
  check_launch(ctx);
}

namespace {

// ---------------------------------------------------------------------------------------------------------------
// ArrayFeatureExtractor, Imputer

// Contract: moves bytes: y[r, j] = x[r, indices[j]], one thread per output element.
__global__ void gather_last_axis(const uint8_t* x, const int64_t* indices, int64_t width, int64_t k, int64_t n,
                                 int64_t element, uint8_t* y) {
  const int64_t e = thread_index();
  if (e >= n) return;
  const uint8_t* from = x + ((e / k) * width + indices[e % k]) * element;
  for (int64_t b = 0; b < element; ++b) y[e * element + b] = from[b];
}

struct DeviceImputer {
  DeviceTables tables;
  const float* device_floats = nullptr;
  const int64_t* device_ints = nullptr;
};

DeviceImputer upload_imputer(KernelContext& ctx, const ImputerPlan& p) {
  DeviceImputer d;
  d.device_floats = d.tables.copy(ctx, p.float_values);
  d.device_ints = d.tables.copy(ctx, p.int_values);
  return d;
}

// Contract: moves values: y[i] = the imputed value of feature i % features where x[i], widened to Wide, is the
// replaced value (a NaN replaced value matches NaNs), else x[i]; one thread per element, as cpu::imputer.
template <class T, class Wide, class Value>
__global__ void impute(const T* x, const Value* values, bool one_value, int64_t features, Wide replaced, int64_t n,
                       T* y) {
  const int64_t i = thread_index();
  if (i >= n) return;
  const Wide v = static_cast<Wide>(x[i]);
  const bool hit = replaced != replaced ? v != v : v == replaced;
  y[i] = hit ? static_cast<T>(values[one_value ? 0 : i % features]) : x[i];
}

template <class T, class Wide, class Value>
void launch_impute(KernelContext& ctx, const Tensor& x, const Value* values, bool one_value, int64_t features,
                   Wide replaced, Tensor& y) {
  const int64_t n = x.numel();
  if (n == 0) return;
  impute<T, Wide, Value><<<blocks_for(n), kThreadsPerBlock, 0, stream_of(ctx)>>>(x.data<T>(), values, one_value,
                                                                                  features, replaced, n, y.data<T>());
  check_launch(ctx);
}

}  // namespace

// Contract: moves bytes: output [..., k] = X[..., indices[k]] (a 1-D X gives [1, K]); docs/arithmetic.md#ml.
void array_feature_extractor(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const FeatureSelection f = feature_selection(ctx);
  const std::vector<int64_t>& indices = f.indices;
  const int64_t width = f.width, k = static_cast<int64_t>(indices.size());
  const int64_t element = static_cast<int64_t>(dtype_size(x.dtype()));
  const int64_t rows = width ? x.numel() / width : 0, n = rows * k;
  Tensor& y = ctx.output(0, x.dtype(), f.shape);
  if (n == 0) return;
  const std::shared_ptr<Buffer> device_indices = upload(ctx, indices.data(), indices.size() * sizeof(int64_t));
  gather_last_axis<<<blocks_for(n), kThreadsPerBlock, 0, stream_of(ctx)>>>(
      static_cast<const uint8_t*>(x.raw()), static_cast<const int64_t*>(device_indices->data), width, k, n, element,
      static_cast<uint8_t*>(y.raw()));
  check_launch(ctx);
}

// Contract: moves values: the replaced value of X[i] becomes its feature's imputed value, one thread per element;
// docs/arithmetic.md#ml.
void imputer(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const DType t = x.dtype();
  const ImputerPlan p = imputer_plan(ctx);
  const auto values = kept_for_node<DeviceImputer>(ctx, [&] { return upload_imputer(ctx, p); });
  Tensor& y = ctx.output(0, t, x.shape());
  const float* floats = values->device_floats;
  const int64_t* ints = values->device_ints;
  switch (t) {
    case DType::Float: return launch_impute<float>(ctx, x, floats, p.one_value, p.features, p.replaced_float, y);
    case DType::Double: return launch_impute<double>(ctx, x, floats, p.one_value, p.features, p.replaced_float, y);
    case DType::Int64: return launch_impute<int64_t>(ctx, x, ints, p.one_value, p.features, p.replaced_int, y);
    default: return launch_impute<int32_t>(ctx, x, ints, p.one_value, p.features, p.replaced_int, y);
  }
}

namespace {

// ---------------------------------------------------------------------------------------------------------------
// Support vector machines

struct DeviceSvm {
  std::shared_ptr<const SvmModel> host;
  DeviceTables tables;
  const float *support_vectors = nullptr, *coefficients = nullptr, *rho = nullptr, *prob_a = nullptr,
              *prob_b = nullptr;
  const int64_t *first_vector = nullptr, *vector_count = nullptr, *int_labels = nullptr;
};

DeviceSvm upload_svm(KernelContext& ctx) {
  DeviceSvm d;
  d.host = host_model(ctx, &svm_model);
  const SvmModel& m = *d.host;
  DeviceTables& t = d.tables;
  d.support_vectors = t.copy(ctx, m.support_vectors);
  d.coefficients = t.copy(ctx, m.coefficients);
  d.rho = t.copy(ctx, m.rho);
  d.prob_a = t.copy(ctx, m.prob_a);
  d.prob_b = t.copy(ctx, m.prob_b);
  d.first_vector = t.copy(ctx, m.first_vector);
  d.vector_count = t.copy(ctx, m.vector_count);
  d.int_labels = t.copy(ctx, m.int_labels);
  return d;
}

/// One launch's view of an SVM: the model on the device, rows [first_row, end_row), and per-row scratch indexed by
/// row - first_row.
struct SvmRows {
  arith::SvmKernelParams kernel;
  const float *support_vectors, *coefficients, *rho, *prob_a, *prob_b;
  const int64_t *first_vector, *vector_count;
  int64_t vectors, features, classes, columns;
  ScorePostTransform post;
  bool one_class, all_positive;
  int64_t first_row, end_row;
  float *kernels, *pair_scores, *pairwise, *coupling;  // V, pairs, k*k and k*k + k per row
  int64_t* votes;                                       // k per row
};

SvmRows svm_rows_of(const DeviceSvm& d) {
  const SvmModel& m = *d.host;
  SvmRows a{};
  a.kernel = m.kernel;
  a.support_vectors = d.support_vectors;
  a.coefficients = d.coefficients;
  a.rho = d.rho;
  a.prob_a = d.prob_a;
  a.prob_b = d.prob_b;
  a.first_vector = d.first_vector;
  a.vector_count = d.vector_count;
  a.vectors = m.vectors;
  a.features = m.features;
  a.classes = m.classes;
  a.post = m.post;
  a.one_class = m.one_class;
  a.all_positive = m.all_positive;
  return a;
}

// Each support vector's kernel value for the row x, in order.
template <class X>
__device__ void svm_kernels(const SvmRows& a, const X& x, float* kernels) {
  for (int64_t v = 0; v < a.vectors; ++v)
    kernels[v] = arith::svm_kernel_f32(a.kernel, a.features, x, a.support_vectors + v * a.features);
}

// Linear mode: weight row t against x, from rho[0].
template <class X>
__device__ float svm_linear_score(const SvmRows& a, const X& x, int64_t t) {
  return arith::dot_chunked_f32(a.features, a.rho[0], x, [&](int64_t f) { return a.coefficients[t * a.features + f]; });
}

// The classifier's tables as the shared row functions read them.
__device__ arith::SvmClassifierView view_of(const SvmRows& a) {
  return {a.coefficients, a.rho, a.prob_a, a.prob_b, a.first_vector, a.vector_count, a.vectors, a.classes,
          a.all_positive};
}

// Contract: svm_kernel_f32 per support vector in order, then dot_chunked_f32 of the kernel values and coefficients
// from rho[0] (linear mode: of the features and coefficients), then one_class's sign, as cpu::svm_regressor.
__global__ void svm_regressor_rows(SvmRows a, const float* x, float* y) {
  const int64_t row = a.first_row + thread_index();
  if (row >= a.end_row) return;
  const FeaturesAsFloat<float> xr{x + row * a.features};
  float v;
  if (a.vectors == 0) {
    v = svm_linear_score(a, xr, 0);
  } else {
    float* kernels = a.kernels + (row - a.first_row) * a.vectors;
    svm_kernels(a, xr, kernels);
    v = arith::dot_chunked_f32(a.vectors, a.rho[0], [&](int64_t k) { return kernels[k]; },
                               [&](int64_t k) { return a.coefficients[k]; });
  }
  y[row] = a.one_class ? (v > 0.0f ? 1.0f : -1.0f) : v;
}

// Contract: linear mode dot_chunked_f32 per class from rho[0]; else svm_kernel_f32 per vector, svm_pair_decision per
// pair and the votes, then the two-class form, or platt_probability_f32 and pairwise_coupling_f32, then the
// post_transform, as cpu::svm_classifier.
template <class T>
__global__ void svm_classifier_rows(SvmRows a, const T* x, float* y, LabelSink labels) {
  const int64_t row = a.first_row + thread_index();
  if (row >= a.end_row) return;
  const int64_t slot = row - a.first_row, k = a.classes, pairs = k * (k - 1) / 2;
  const FeaturesAsFloat<T> xr{x + row * a.features};
  float* s = y + row * a.columns;
  const arith::SvmClassifierView view = view_of(a);
  if (a.vectors == 0) {
    for (int64_t t = 0; t < k; ++t) s[t] = svm_linear_score(a, xr, t);
    labels.put(row, arith::svm_linear_label(view, s));
    arith::svm_post_transform_f32(a.post, s, a.columns);
    return;
  }
  float* kernels = a.kernels + slot * a.vectors;
  float* pair_scores = a.pair_scores + slot * pairs;
  svm_kernels(a, xr, kernels);
  labels.put(row, arith::svm_one_vs_one(view, kernels, pair_scores, a.votes + slot * k));
  arith::svm_classifier_scores_f32(view, a.post, pair_scores, a.pairwise + slot * k * k,
                                   a.coupling + slot * (k * k + k), s, a.columns);
}

MlRows svm_x_rows(const KernelContext& ctx, const SvmModel& m) {
  const MlRows r = ml_rows(ctx, m.features);
  if (r.features != m.features)
    throw ctx.error("X has " + std::to_string(r.features) + " features, the model " + std::to_string(m.features));
  return r;
}

// Rows per launch, so that the per-row scratch of one launch stays within a bound however many rows X has.
int64_t rows_per_launch(int64_t rows, int64_t scratch_bytes_per_row) {
  constexpr int64_t kScratchBytes = int64_t{256} << 20;
  const int64_t fit = scratch_bytes_per_row > 0 ? kScratchBytes / scratch_bytes_per_row : rows;
  return std::max<int64_t>(1, std::min(rows, fit));
}

}  // namespace

// Contract: per row, svm_kernel_f32 per support vector, then dot_chunked_f32 from rho[0], one thread per row;
// docs/arithmetic.md#ml.
void svm_regressor(KernelContext& ctx) {
  const auto svm = kept_for_node<DeviceSvm>(ctx, [&] { return upload_svm(ctx); });
  const SvmModel& m = *svm->host;
  require_x_type(ctx, {DType::Float});
  const MlRows r = svm_x_rows(ctx, m);
  float* y = ctx.output(0, DType::Float, {r.rows, 1}).data<float>();
  if (r.rows == 0) return;
  const int64_t chunk = rows_per_launch(r.rows, m.vectors * int64_t{sizeof(float)});
  Scratch<float> kernels(ctx, chunk * m.vectors);
  SvmRows a = svm_rows_of(*svm);
  a.kernels = kernels.data();
  for (int64_t first = 0; first < r.rows; first += chunk) {
    a.first_row = first;
    a.end_row = std::min(r.rows, first + chunk);
    svm_regressor_rows<<<blocks_for(a.end_row - first), kThreadsPerBlock, 0, stream_of(ctx)>>>(
        a, ctx.input(0).data<float>(), y);
    check_launch(ctx);
  }
}

// Contract: linear mode, dot_chunked_f32 per class; else svm_kernel_f32, svm_pair_decision per pair, the votes, and
// platt_probability_f32 and pairwise_coupling_f32 where prob_a is given; then the post_transform; one thread per row;
// docs/arithmetic.md#ml.
void svm_classifier(KernelContext& ctx) {
  const auto svm = kept_for_node<DeviceSvm>(ctx, [&] { return upload_svm(ctx); });
  const SvmModel& m = *svm->host;
  require_x_type(ctx, {DType::Float, DType::Double, DType::Int64, DType::Int32});
  const MlRows r = svm_x_rows(ctx, m);
  const bool one_vs_one = m.vectors > 0, probabilities = !m.prob_a.empty();
  if (one_vs_one && !probabilities && m.classes == 2 && m.post == ScorePostTransform::Probit)
    throw probit_of_two_classes(ctx);
  const int64_t k = m.classes, pairs = k * (k - 1) / 2;
  SvmRows a = svm_rows_of(*svm);
  a.columns = !one_vs_one || probabilities ? k : (k == 2 ? 2 : pairs);
  float* y = ctx.output(1, DType::Float, {r.rows, a.columns}).data<float>();
  ClassLabels labels(ctx, r.rows, k, m.int_labels, m.string_labels, svm->int_labels);
  if (r.rows > 0) {
    // Per row: V kernel values, the pairs' scores, k*k pairwise probabilities, k*k + k coupling floats; k votes.
    const int64_t V = one_vs_one ? m.vectors : 0, P = one_vs_one ? pairs : 0;
    const int64_t KK = one_vs_one && probabilities ? k * k : 0, KC = one_vs_one && probabilities ? k * k + k : 0;
    const int64_t votes = one_vs_one ? k : 0;
    const int64_t chunk = rows_per_launch(r.rows, (V + P + KK + KC) * int64_t{sizeof(float)} +
                                                      votes * int64_t{sizeof(int64_t)});
    Scratch<float> kernels(ctx, chunk * V), pair_scores(ctx, chunk * P), pairwise(ctx, chunk * KK),
        coupling(ctx, chunk * KC);
    Scratch<int64_t> vote_counts(ctx, chunk * votes);
    a.kernels = kernels.data();
    a.pair_scores = pair_scores.data();
    a.pairwise = pairwise.data();
    a.coupling = coupling.data();
    a.votes = vote_counts.data();
    for (int64_t first = 0; first < r.rows; first += chunk) {
      a.first_row = first;
      a.end_row = std::min(r.rows, first + chunk);
      with_x_type(ctx.input(0), [&](const auto* x) {
        svm_classifier_rows<<<blocks_for(a.end_row - first), kThreadsPerBlock, 0, stream_of(ctx)>>>(a, x, y,
                                                                                                   labels.sink());
      });
      check_launch(ctx);
    }
  }
  labels.finish(ctx);
}

}  // namespace lockstep::cuda
