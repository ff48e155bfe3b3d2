// CPU kernels of the ai.onnx.ml ops, row by row (rows in parallel; each row's sequence is fixed by the model).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <type_traits>

#include "arith/dot.h"
#include "ops/ml.h"
#include "runtime/thread_pool.h"

namespace lockstep::cpu {

namespace {

// Feature f of row r of X widened to double (exact for float32, int32, and int64 up to 2^53).
struct RowFeatures {
  const Tensor& x;
  int64_t row, features;
  double operator()(int64_t f) const {
    const int64_t i = row * features + f;
    switch (x.dtype()) {
      case DType::Float: return x.data<float>()[i];
      case DType::Double: return x.data<double>()[i];
      case DType::Int64: return static_cast<double>(x.data<int64_t>()[i]);
      default: return x.data<int32_t>()[i];
    }
  }
};

void require_ml_input(const KernelContext& ctx, std::initializer_list<DType> types) {
  const DType t = ctx.input(0).dtype();
  if (std::find(types.begin(), types.end(), t) == types.end())
    throw ctx.error(std::string("X of type ") + dtype_name(t) + " is not supported", ErrorCode::NotImplemented);
}

arith::TreeEnsembleView view_of(const TreeEnsembleModel& m, bool base_first) {
  return {m.nodes.data(), m.roots.data(), static_cast<int64_t>(m.roots.size()), m.leaves.data(), m.entries.data(),
          m.members.data(), m.base_values.empty() ? nullptr : m.base_values.data(), m.targets, m.aggregate,
          base_first};
}

// Writes the label of column `k` of each row (int64 or string labels).
void store_labels(KernelContext& ctx, const std::vector<int64_t>& int_labels, const std::vector<std::string>& string_labels,
                  const std::vector<int64_t>& chosen) {
  const int64_t n = static_cast<int64_t>(chosen.size());
  if (!string_labels.empty()) {
    Tensor& y = ctx.output(0, DType::String, {n});
    for (int64_t r = 0; r < n; ++r) y.data<std::string>()[r] = string_labels[chosen[r]];
    return;
  }
  Tensor& y = ctx.output(0, DType::Int64, {n});
  for (int64_t r = 0; r < n; ++r) y.data<int64_t>()[r] = int_labels[chosen[r]];
}

// onnxruntime's two-class form under PROBIT writes one of the two scores and leaves the other as it was.
Error probit_of_two_classes(const KernelContext& ctx) {
  return ctx.error("PROBIT of a two-class classifier is not supported (onnxruntime writes one of its two scores)",
                   ErrorCode::NotImplemented);
}

// Contract: arith::tree_ensemble_row per row without base values, then arith::binary_tree_classifier_f32;
// docs/arithmetic.md#ml.
void binary_tree_classifier(KernelContext& ctx, const TreeEnsembleModel& m, const MlRows& r) {
  if (m.post == arith::ScorePostTransform::Probit) throw probit_of_two_classes(ctx);
  arith::TreeEnsembleView view = view_of(m, false);
  view.base_values = nullptr;  // the binary form adds them itself
  const arith::BinaryTreeClassifier c{m.base_values.empty() ? nullptr : m.base_values.data(),
                                      static_cast<int64_t>(m.base_values.size()), m.one_class, m.all_positive, m.post};
  const Tensor& x = ctx.input(0);
  float* y = ctx.output(1, DType::Float, {r.rows, 2}).data<float>();
  std::vector<int64_t> chosen(static_cast<size_t>(r.rows));
  ctx.pool->parallel_for(r.rows, [&](int64_t begin, int64_t end) {
    for (int64_t row = begin; row < end; ++row) {
      float s[2];
      bool hit[2];
      arith::tree_ensemble_row<float>(view, RowFeatures{x, row, r.features}, s, hit);
      chosen[row] = arith::binary_tree_classifier_f32(c, s[0], hit[0], s[1], hit[1], y + 2 * row) ? 1 : 0;
    }
  }, 1);
  // Where the weights name both classes, onnxruntime's int64 label is 1 or 0 itself, not the class label (its
  // string labels are the class's).
  const std::vector<int64_t> literal{0, 1};
  store_labels(ctx, m.one_class ? m.int_labels : literal, m.string_labels, chosen);
}

}  // namespace

// Contract: arith::tree_ensemble_row per row (trees in order, leaf entries in attribute order), then
// arith::score_post_transform_f32; docs/arithmetic.md#ml.
void tree_ensemble(KernelContext& ctx) {
  const std::shared_ptr<const TreeEnsembleModel> model = tree_ensemble_model(ctx);
  const TreeEnsembleModel& m = *model;
  const bool v5 = ctx.node.op_type == "TreeEnsemble", classifier = ctx.node.op_type == "TreeEnsembleClassifier";
  if (v5) require_ml_input(ctx, {DType::Float, DType::Double});
  else require_ml_input(ctx, {DType::Float, DType::Double, DType::Int64, DType::Int32});
  const MlRows r = ml_rows(ctx, m.features_needed);
  const Tensor& x = ctx.input(0);
  const arith::TreeEnsembleView view = view_of(m, classifier);
  if (v5 && x.dtype() == DType::Double) {
    if (m.post != arith::ScorePostTransform::None)
      throw ctx.error("post_transform on double scores is not supported", ErrorCode::NotImplemented);
    double* y = ctx.output(0, DType::Double, {r.rows, m.targets}).data<double>();
    ctx.pool->parallel_for(r.rows, [&](int64_t begin, int64_t end) {
      std::vector<char> scored(static_cast<size_t>(m.targets));
      for (int64_t row = begin; row < end; ++row)
        arith::tree_ensemble_row<double>(view, RowFeatures{x, row, r.features}, y + row * m.targets,
                                         reinterpret_cast<bool*>(scored.data()));
    }, 1);
    return;
  }
  if (classifier && m.targets < 2)
    throw ctx.error("a classifier of one class is not supported", ErrorCode::NotImplemented);
  if (classifier && m.targets == 2) return binary_tree_classifier(ctx, m, r);
  Tensor& scores = ctx.output(classifier ? 1 : 0, DType::Float, {r.rows, m.targets});
  float* y = scores.data<float>();
  std::vector<int64_t> chosen(static_cast<size_t>(r.rows));
  ctx.pool->parallel_for(r.rows, [&](int64_t begin, int64_t end) {
    std::vector<char> scored(static_cast<size_t>(m.targets));
    bool* hit = reinterpret_cast<bool*>(scored.data());
    for (int64_t row = begin; row < end; ++row) {
      float* s = y + row * m.targets;
      arith::tree_ensemble_row<float>(view, RowFeatures{x, row, r.features}, s, hit);
      chosen[row] = arith::first_largest_score(s, hit, m.targets);
      arith::score_post_transform_f32(m.post, s, m.targets);
    }
  }, 1);
  if (classifier) store_labels(ctx, m.int_labels, m.string_labels, chosen);
}

// Contract: each score is arith::dot_chunked_f32 over the features from the intercept (the GEMM contract), then
// arith::score_post_transform_f32; docs/arithmetic.md#ml.
void linear_model(KernelContext& ctx) {
  const LinearModel m = linear_model_of(ctx);
  require_ml_input(ctx, {DType::Float});
  const MlRows r = ml_rows(ctx, m.features);
  if (r.features != m.features)
    throw ctx.error("X has " + std::to_string(r.features) + " features, the coefficients " + std::to_string(m.features));
  const bool classifier = ctx.node.op_type == "LinearClassifier";
  // One score and two labels: onnxruntime's binary form, arith::one_score_as_two_f32 and the second label where the
  // score is > 0.
  const bool binary = classifier && m.targets == 1;
  const size_t labels = std::max(m.int_labels.size(), m.string_labels.size());
  if (binary && labels != 2)
    throw ctx.error("one score column needs two class labels, not " + std::to_string(labels), ErrorCode::NotImplemented);
  if (binary && m.post == arith::ScorePostTransform::Probit) throw probit_of_two_classes(ctx);
  const int64_t columns = binary ? 2 : m.targets;
  const float* x = ctx.input(0).data<float>();
  float* y = ctx.output(classifier ? 1 : 0, DType::Float, {r.rows, columns}).data<float>();
  std::vector<int64_t> chosen(static_cast<size_t>(r.rows));
  ctx.pool->parallel_for(r.rows, [&](int64_t begin, int64_t end) {
    for (int64_t row = begin; row < end; ++row) {
      float* s = y + row * columns + (binary ? 1 : 0);
      for (int64_t t = 0; t < m.targets; ++t)
        s[t] = arith::dot_chunked_f32(m.features, m.intercepts.empty() ? 0.0f : m.intercepts[t],
                                      [&](int64_t f) { return x[row * m.features + f]; },
                                      [&](int64_t f) { return m.coefficients[t * m.features + f]; });
      if (binary) {
        chosen[row] = s[0] > 0.0f ? 1 : 0;
        arith::one_score_as_two_f32(m.post, s[0], s - 1);
        continue;
      }
      chosen[row] = arith::first_largest_score(s, nullptr, columns);
      arith::score_post_transform_f32(m.post, s, columns);
    }
  }, 1);
  if (classifier) store_labels(ctx, m.int_labels, m.string_labels, chosen);
}

// Contract: Scaler (x - offset) * scale; Binarizer x > threshold ? 1 : 0 (NaN stays NaN); Normalizer x / d with d
// the row's max (MAX, as the ONNX text and onnxruntime have it; a row whose max is 0 is copied), or S(|x|) (L1) or sqrt(S(x*x)) (L2) at least 1e-30,
// S the canonical sum; docs/arithmetic.md#ml.
void ml_elementwise(KernelContext& ctx) {
  const std::string& op = ctx.node.op_type;
  const Tensor& xt = ctx.input(0);
  if (xt.dtype() != DType::Float)
    throw ctx.error(std::string("X of type ") + dtype_name(xt.dtype()) + " is not supported", ErrorCode::NotImplemented);
  const int64_t n = xt.numel(), width = xt.rank() == 0 ? 1 : xt.dim(-1);
  const float* x = xt.data<float>();
  float* y = ctx.output(0, DType::Float, xt.shape()).data<float>();
  if (op == "Binarizer") {
    const float threshold = ctx.node.attr_float("threshold", 0.0f);
    for (int64_t i = 0; i < n; ++i) y[i] = x[i] != x[i] ? x[i] : (x[i] > threshold ? 1.0f : 0.0f);
    return;
  }
  if (op == "Scaler") {
    const std::vector<float> offset = ctx.node.attr_floats("offset"), scale = ctx.node.attr_floats("scale");
    for (const auto* v : {&offset, &scale})
      if (v->size() != 1 && static_cast<int64_t>(v->size()) != width)
        throw ctx.error("offset and scale must have 1 or " + std::to_string(width) + " entries", ErrorCode::InvalidGraph);
    for (int64_t i = 0; i < n; ++i) {
      const int64_t c = i % width;
      y[i] = (x[i] - offset[offset.size() == 1 ? 0 : c]) * scale[scale.size() == 1 ? 0 : c];
    }
    return;
  }
  const std::string norm = ctx.node.attr_string("norm", "MAX");
  if (norm != "MAX" && norm != "L1" && norm != "L2")
    throw ctx.error("norm '" + norm + "' is not MAX, L1 or L2", ErrorCode::InvalidGraph);
  for (int64_t row = 0; row < (width ? n / width : 0); ++row) {
    const float* xr = x + row * width;
    float d = xr[0];
    if (norm == "MAX") {
      for (int64_t i = 1; i < width; ++i) d = xr[i] > d ? xr[i] : d;
    } else {
      d = norm == "L1" ? arith::sum_canonical_f32(width, [&](int64_t i) { return std::fabs(xr[i]); })
                       : std::sqrt(arith::sum_canonical_f32(width, [&](int64_t i) { return xr[i] * xr[i]; }));
      d = d > 1e-30f ? d : 1e-30f;
    }
    for (int64_t i = 0; i < width; ++i) y[row * width + i] = d == 0.0f ? xr[i] : xr[i] / d;  // a zero max: as it is
  }
}

// Contract: moves bytes: output [..., k] = X[..., indices[k]] (a 1-D X gives [1, K]).
void array_feature_extractor(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const FeatureSelection f = feature_selection(ctx);
  const std::vector<int64_t>& indices = f.indices;
  const int64_t width = f.width, k = static_cast<int64_t>(indices.size());
  const size_t element = dtype_size(x.dtype());
  const int64_t rows = width ? x.numel() / width : 0;
  Tensor& y = ctx.output(0, x.dtype(), f.shape);
  const auto* src = static_cast<const uint8_t*>(x.raw());
  auto* dst = static_cast<uint8_t*>(y.raw());
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t j = 0; j < k; ++j)
      std::memcpy(dst + (r * k + j) * element, src + (r * width + indices[j]) * element, element);
}

}  // namespace lockstep::cpu

namespace lockstep::cpu {

namespace {

// LabelEncoder's keys or values as a tensor: `<what>_tensor`, else the list attribute of the given kind.
Tensor label_table(const KernelContext& ctx, const std::string& what) {
  const auto& n = ctx.node;
  if (const onnx::Attribute* t = n.find(what + "_tensor")) return t->t;
  if (n.has(what + "_strings")) {
    const std::vector<std::string> s = n.attr_strings(what + "_strings");
    Tensor t = Tensor::strings({static_cast<int64_t>(s.size())});
    std::copy(s.begin(), s.end(), t.data<std::string>());
    return t;
  }
  if (n.has(what + "_int64s")) {
    const std::vector<int64_t> v = n.attr_ints(what + "_int64s");
    return Tensor::from_bytes(DType::Int64, {static_cast<int64_t>(v.size())}, v.data());
  }
  const std::vector<float> v = n.attr_floats(what + "_floats");
  return Tensor::from_bytes(DType::Float, {static_cast<int64_t>(v.size())}, v.data());
}

// LabelEncoder's default: default_tensor, else default_<kind> of the values' kind (onnx's defaults: "_Unused", -1,
// -0.0).
Tensor label_default(const KernelContext& ctx, DType type) {
  const auto& n = ctx.node;
  if (const onnx::Attribute* t = n.find("default_tensor")) {
    if (t->t.numel() != 1 || t->t.dtype() != type)
      throw ctx.error("default_tensor must be one element of the values' type", ErrorCode::InvalidGraph);
    return t->t;
  }
  if (type == DType::String) {
    Tensor t = Tensor::strings({1});
    t.data<std::string>()[0] = n.attr_string("default_string", "_Unused");
    return t;
  }
  if (type == DType::Int64) {
    const int64_t v = n.attr_int("default_int64", -1);
    return Tensor::from_bytes(DType::Int64, {1}, &v);
  }
  if (type == DType::Float) {
    const float v = n.attr_float("default_float", -0.0f);
    return Tensor::from_bytes(DType::Float, {1}, &v);
  }
  Tensor t = Tensor::empty(type, {1});  // other types need default_tensor; without one the default is 0
  std::memset(t.raw(), 0, t.bytes());
  return t;
}

// A key or input element as a comparable text: strings as they are, numbers by their value (every NaN alike).
std::string key_text(const Tensor& t, int64_t i) {
  switch (t.dtype()) {
    case DType::String: return "s" + t.data<std::string>()[i];
    case DType::Float: case DType::Double: {
      const double v = t.dtype() == DType::Float ? t.data<float>()[i] : t.data<double>()[i];
      char text[40];
      std::snprintf(text, sizeof text, "n%a", v == 0 ? 0.0 : v);  // exact; -0 equals +0
      return v != v ? "" : text;  // "": no key matches a NaN (onnxruntime's behaviour)
    }
    default: return "i" + std::to_string(t.int_at(i));
  }
}

}  // namespace

// Contract: moves values: Y[i] = values[k] for the first key k equal to X[i] (-0 equals +0; a NaN matches no key,
// as in onnxruntime), else the default.
void label_encoder(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const Tensor keys = label_table(ctx, "keys"), values = label_table(ctx, "values");
  if (keys.numel() != values.numel())
    throw ctx.error("keys and values have " + std::to_string(keys.numel()) + " and " + std::to_string(values.numel()) +
                        " entries", ErrorCode::InvalidGraph);
  if ((keys.dtype() == DType::String) != (x.dtype() == DType::String))
    throw ctx.error(std::string("X of type ") + dtype_name(x.dtype()) + " does not match keys of type " +
                    dtype_name(keys.dtype()));
  std::map<std::string, int64_t> index;
  for (int64_t k = keys.numel() - 1; k >= 0; --k) {
    const std::string key = key_text(keys, k);
    if (!key.empty()) index[key] = k;  // the first of equal keys
  }
  const Tensor fallback = label_default(ctx, values.dtype());
  Tensor& y = ctx.output(0, values.dtype(), x.shape());
  const size_t size = dtype_size(values.dtype());
  for (int64_t i = 0; i < x.numel(); ++i) {
    auto it = index.find(key_text(x, i));
    const Tensor& from = it == index.end() ? fallback : values;
    const int64_t at = it == index.end() ? 0 : it->second;
    if (values.dtype() == DType::String) y.data<std::string>()[i] = from.data<std::string>()[at];
    else std::memcpy(static_cast<uint8_t*>(y.raw()) + i * size, static_cast<const uint8_t*>(from.raw()) + at * size, size);
  }
}

// Contract: moves values: Y[i] = the imputed value of X[i]'s feature where X[i] is the replaced value (a NaN replaced
// value replaces NaNs; -0 equals +0), else X[i]. The feature is i % dims[1] (dims[0] for a 1-D X), as in onnxruntime.
void imputer(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const DType t = x.dtype();
  const ImputerPlan p = imputer_plan(ctx);
  Tensor& y = ctx.output(0, t, x.shape());
  // Values and the replaced one compared in the element's own type widened (double for floats, int64 for integers).
  auto impute = [&](auto* out, const auto* in, const auto& values, auto replaced) {
    using T = std::remove_cv_t<std::remove_pointer_t<decltype(in)>>;
    for (int64_t i = 0; i < x.numel(); ++i) {
      const auto v = static_cast<decltype(replaced)>(in[i]);
      const bool hit = replaced != replaced ? v != v : v == replaced;
      out[i] = hit ? static_cast<T>(values[p.one_value ? 0 : i % p.features]) : in[i];
    }
  };
  switch (t) {
    case DType::Float: return impute(y.data<float>(), x.data<float>(), p.float_values, p.replaced_float);
    case DType::Double: return impute(y.data<double>(), x.data<double>(), p.float_values, p.replaced_float);
    case DType::Int64: return impute(y.data<int64_t>(), x.data<int64_t>(), p.int_values, p.replaced_int);
    default: return impute(y.data<int32_t>(), x.data<int32_t>(), p.int_values, p.replaced_int);
  }
}

// Contract: moves values: Y[..., c] = 1 where X[...] is category c, else 0 (float). Numbers are truncated to int64
// and looked up in cats_int64s, strings in cats_strings, as onnxruntime does; an unknown value gives a row of zeros,
// or an error when zeros = 0.
void one_hot_encoder(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const std::shared_ptr<const OneHotCategories> categories = one_hot_categories(ctx);
  const int64_t cats = categories->count;
  const bool zeros = ctx.node.attr_int("zeros", 1) != 0;
  Shape shape = x.shape();
  shape.push_back(cats);
  float* y = ctx.output(0, DType::Float, shape).data<float>();
  std::fill_n(y, x.numel() * cats, 0.0f);
  auto mark = [&](int64_t i, int64_t found, auto describe) {
    if (found >= 0) y[i * cats + found] = 1.0f;
    else if (!zeros) throw ctx.error("X[" + std::to_string(i) + "] = " + describe() + " is no category, and zeros = 0");
  };
  if (x.dtype() == DType::String) {
    const std::map<std::string, int64_t>& index = categories->strings;
    for (int64_t i = 0; i < x.numel(); ++i) {
      const std::string& v = x.data<std::string>()[i];
      const auto it = index.find(v);
      mark(i, it == index.end() ? -1 : it->second, [&] { return "'" + v + "'"; });
    }
    return;
  }
  const std::map<int64_t, int64_t>& index = categories->ints;
  auto lookup = [&](const auto* in) {
    for (int64_t i = 0; i < x.numel(); ++i) {
      const double d = static_cast<double>(in[i]);
      // Truncated as onnxruntime's cast does; NaN and values outside int64 name no category.
      const bool representable = d == d && d >= -9.2233720368547758e18 && d < 9.2233720368547758e18;
      const auto it = representable ? index.find(static_cast<int64_t>(in[i])) : index.end();
      mark(i, it == index.end() ? -1 : it->second, [&] { return std::to_string(in[i]); });
    }
  };
  switch (x.dtype()) {
    case DType::Int64: return lookup(x.data<int64_t>());
    case DType::Int32: return lookup(x.data<int32_t>());
    case DType::Float: return lookup(x.data<float>());
    case DType::Double: return lookup(x.data<double>());
    default:
      throw ctx.error(std::string("X of type ") + dtype_name(x.dtype()) + " is not supported", ErrorCode::NotImplemented);
  }
}

// Contract: moves values: a string X[i] becomes the int64 paired with it in (cats_strings, cats_int64s), an int64
// the string; a value given twice takes its last pair, as in onnxruntime; an unpaired value the default.
void category_mapper(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const std::shared_ptr<const CategoryMaps> maps = category_maps(ctx);
  if (x.dtype() == DType::String) {
    const int64_t fallback = ctx.node.attr_int("default_int64", -1);
    int64_t* y = ctx.output(0, DType::Int64, x.shape()).data<int64_t>();
    for (int64_t i = 0; i < x.numel(); ++i) {
      const auto it = maps->to_int.find(x.data<std::string>()[i]);
      y[i] = it == maps->to_int.end() ? fallback : it->second;
    }
    return;
  }
  if (x.dtype() != DType::Int64)
    throw ctx.error(std::string("X of type ") + dtype_name(x.dtype()) + " is not supported (int64 or string)",
                    ErrorCode::NotImplemented);
  const std::string fallback = ctx.node.attr_string("default_string", "_Unused");
  std::string* y = ctx.output(0, DType::String, x.shape()).data<std::string>();
  for (int64_t i = 0; i < x.numel(); ++i) {
    const auto it = maps->to_string.find(x.data<int64_t>()[i]);
    y[i] = it == maps->to_string.end() ? fallback : it->second;
  }
}

}  // namespace lockstep::cpu

namespace lockstep::cpu {

namespace {

// X as float32 (onnxruntime's SVMs cast it so, each element rounded once from its own type); float X is not copied.
struct FloatRows {
  std::vector<float> copy;
  const float* data = nullptr;
};
FloatRows float_rows(const Tensor& x) {
  FloatRows r;
  if (x.dtype() == DType::Float) {
    r.data = x.data<float>();
    return r;
  }
  r.copy.resize(static_cast<size_t>(x.numel()));
  for (int64_t i = 0; i < x.numel(); ++i)
    r.copy[i] = x.dtype() == DType::Double  ? static_cast<float>(x.data<double>()[i])
                : x.dtype() == DType::Int64 ? static_cast<float>(x.data<int64_t>()[i])
                                            : static_cast<float>(x.data<int32_t>()[i]);
  r.data = r.copy.data();
  return r;
}

MlRows svm_rows(const KernelContext& ctx, const SvmModel& m) {
  const MlRows r = ml_rows(ctx, m.features);
  if (r.features != m.features)
    throw ctx.error("X has " + std::to_string(r.features) + " features, the model " + std::to_string(m.features));
  return r;
}

// Each support vector's kernel value for the row x.
void svm_kernels(const SvmModel& m, const float* x, float* kernels) {
  for (int64_t v = 0; v < m.vectors; ++v)
    kernels[v] = arith::svm_kernel_f32(m.kernel, m.features, [&](int64_t f) { return x[f]; },
                                       m.support_vectors.data() + v * m.features);
}

// Linear mode: weight row t against x, from rho[0] (onnxruntime offsets every row by rho[0] alone).
float svm_linear_score(const SvmModel& m, const float* x, int64_t t) {
  return arith::dot_chunked_f32(m.features, m.rho[0], [&](int64_t f) { return x[f]; },
                                [&](int64_t f) { return m.coefficients[t * m.features + f]; });
}

// The classifier's tables as the shared row functions read them.
arith::SvmClassifierView view_of(const SvmModel& m) {
  return {m.coefficients.data(), m.rho.data(), m.prob_a.empty() ? nullptr : m.prob_a.data(), m.prob_b.data(),
          m.first_vector.data(), m.vector_count.data(), m.vectors, m.classes, m.all_positive};
}

// Score columns: one per class, but one per pair without probabilities (two for two classes).
int64_t svm_score_columns(const SvmModel& m) {
  if (m.vectors == 0 || !m.prob_a.empty()) return m.classes;
  return m.classes == 2 ? 2 : m.classes * (m.classes - 1) / 2;
}

}  // namespace

// Contract: per row, arith::svm_kernel_f32 against each support vector in order, then dot_chunked_f32 of the kernel
// values and the coefficients from rho[0]; without support vectors dot_chunked_f32 of the features and the
// coefficients from rho[0]; one_class then gives 1 or -1; docs/arithmetic.md#ml.
void svm_regressor(KernelContext& ctx) {
  const std::shared_ptr<const SvmModel> model = svm_model(ctx);
  const SvmModel& m = *model;
  require_ml_input(ctx, {DType::Float});
  const MlRows r = svm_rows(ctx, m);
  const float* x = ctx.input(0).data<float>();
  float* y = ctx.output(0, DType::Float, {r.rows, 1}).data<float>();
  ctx.pool->parallel_for(r.rows, [&](int64_t begin, int64_t end) {
    std::vector<float> kernels(static_cast<size_t>(m.vectors));
    for (int64_t row = begin; row < end; ++row) {
      const float* xr = x + row * m.features;
      if (m.vectors > 0) svm_kernels(m, xr, kernels.data());
      const float v = m.vectors == 0 ? svm_linear_score(m, xr, 0)
                                     : arith::dot_chunked_f32(m.vectors, m.rho[0], [&](int64_t k) { return kernels[k]; },
                                                              [&](int64_t k) { return m.coefficients[k]; });
      y[row] = m.one_class ? (v > 0.0f ? 1.0f : -1.0f) : v;
    }
  }, 1);
}

// Contract: linear mode, dot_chunked_f32 per class from rho[0]; with support vectors arith::svm_kernel_f32 per
// vector, arith::svm_pair_decision per pair (i < j ascending), then arith::platt_probability_f32 and
// arith::pairwise_coupling_f32 where prob_a is given; then arith::score_post_transform_f32; docs/arithmetic.md#ml.
void svm_classifier(KernelContext& ctx) {
  const std::shared_ptr<const SvmModel> model = svm_model(ctx);
  const SvmModel& m = *model;
  require_ml_input(ctx, {DType::Float, DType::Double, DType::Int64, DType::Int32});
  const MlRows r = svm_rows(ctx, m);
  const bool one_vs_one = m.vectors > 0, probabilities = !m.prob_a.empty();
  const bool one_pair_score = one_vs_one && !probabilities && m.classes == 2;
  if (one_pair_score && m.post == arith::ScorePostTransform::Probit) throw probit_of_two_classes(ctx);
  const FloatRows x = float_rows(ctx.input(0));
  const arith::SvmClassifierView view = view_of(m);
  const int64_t columns = svm_score_columns(m), k = m.classes, pairs = k * (k - 1) / 2;
  float* y = ctx.output(1, DType::Float, {r.rows, columns}).data<float>();
  std::vector<int64_t> chosen(static_cast<size_t>(r.rows));
  ctx.pool->parallel_for(r.rows, [&](int64_t begin, int64_t end) {
    std::vector<float> kernels(static_cast<size_t>(m.vectors)), pair_scores(static_cast<size_t>(pairs));
    std::vector<float> pairwise(static_cast<size_t>(k * k)), scratch(static_cast<size_t>(k * k + k));
    std::vector<int64_t> votes(static_cast<size_t>(k));
    for (int64_t row = begin; row < end; ++row) {
      const float* xr = x.data + row * m.features;
      float* s = y + row * columns;
      if (!one_vs_one) {
        for (int64_t t = 0; t < k; ++t) s[t] = svm_linear_score(m, xr, t);
        chosen[row] = arith::svm_linear_label(view, s);
        arith::svm_post_transform_f32(m.post, s, columns);
        continue;
      }
      svm_kernels(m, xr, kernels.data());
      // The label is the vote's even where probabilities are given (onnxruntime does not take their largest).
      chosen[row] = arith::svm_one_vs_one(view, kernels.data(), pair_scores.data(), votes.data());
      arith::svm_classifier_scores_f32(view, m.post, pair_scores.data(), pairwise.data(), scratch.data(), s, columns);
    }
  }, 1);
  store_labels(ctx, m.int_labels, m.string_labels, chosen);
}

}  // namespace lockstep::cpu

namespace lockstep::cpu {

namespace {

// A fresh 1-D keys tensor of ZipMap's sorted labels (each map holds its own, so no output shares memory).
Tensor label_keys(const ZipMapLabels& labels) {
  const int64_t n = static_cast<int64_t>(labels.columns.size());
  if (labels.string_labels.empty()) return Tensor::from_bytes(DType::Int64, {n}, labels.int_labels.data());
  Tensor keys = Tensor::strings({n});
  std::copy(labels.string_labels.begin(), labels.string_labels.end(), keys.data<std::string>());
  return keys;
}

// A map's value for each vocabulary entry: the value of that key, or the value type's zero ("" for strings).
template <class Key, class Value>
void vectorize(const Tensor& map, const std::vector<Key>& vocabulary, Value* y) {
  const Key* keys = map.map_keys().data<Key>();
  const Value* values = map.map_values().data<Value>();
  const int64_t n = map.map_keys().numel();
  for (size_t j = 0; j < vocabulary.size(); ++j) {
    const Key* it = std::lower_bound(keys, keys + n, vocabulary[j]);
    y[j] = it != keys + n && *it == vocabulary[j] ? values[it - keys] : Value{};
  }
}

template <class Key>
void vectorize_values(KernelContext& ctx, const Tensor& map, const std::vector<Key>& vocabulary) {
  Tensor& y = ctx.output(0, map.dtype(), {1, static_cast<int64_t>(vocabulary.size())});
  switch (map.dtype()) {
    case DType::Float: return vectorize(map, vocabulary, y.data<float>());
    case DType::Double: return vectorize(map, vocabulary, y.data<double>());
    case DType::Int64: return vectorize(map, vocabulary, y.data<int64_t>());
    default: return vectorize(map, vocabulary, y.data<std::string>());
  }
}

// The spec's map types: string keys to int64, float or double; int64 keys to string, float or double.
void check_dict_vectorizer_types(const KernelContext& ctx, const Tensor& map) {
  const DType v = map.dtype();
  const bool numeric = v == DType::Float || v == DType::Double;
  const bool supported = map.map_key() == DType::String ? numeric || v == DType::Int64 : numeric || v == DType::String;
  if (!supported)
    throw ctx.error(std::string("input map(") + dtype_name(map.map_key()) + "," + dtype_name(v) + ") is not one "
                        "DictVectorizer takes: map(string, int64|float|double) or map(int64, string|float|double)",
                    ErrorCode::InvalidGraph);
}

}  // namespace

void zip_map(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  if (x.dtype() != DType::Float)
    throw ctx.error(std::string("X of type ") + dtype_name(x.dtype()) + " is not supported (ZipMap reads float)");
  if (x.rank() != 1 && x.rank() != 2) throw ctx.error("X " + shape_string(x.shape()) + " must be [N, C] or [C]");
  const auto labels = zip_map_labels(ctx);
  const int64_t rows = x.rank() == 2 ? x.dim(0) : 1, columns = x.dim(-1);
  if (columns != labels->classes)
    throw ctx.error("X has " + std::to_string(columns) + " columns, but there are " +
                    std::to_string(labels->classes) + " class labels");
  const int64_t n = static_cast<int64_t>(labels->columns.size());
  std::vector<Tensor> maps;
  maps.reserve(static_cast<size_t>(rows));
  for (int64_t r = 0; r < rows; ++r) {
    Tensor values = Tensor::empty(DType::Float, {n});
    for (int64_t i = 0; i < n; ++i) values.data<float>()[i] = x.data<float>()[r * columns + labels->columns[i]];
    maps.push_back(Tensor::map(label_keys(*labels), std::move(values)));
  }
  const DType key = labels->string_labels.empty() ? DType::Int64 : DType::String;
  ctx.outputs.at(0) = Tensor::sequence(DType::Float, std::move(maps), key);
}

void dict_vectorizer(KernelContext& ctx) {
  const Tensor& map = ctx.input(0);
  if (!map.is_map())
    throw ctx.error("input '" + ctx.node.inputs[0] + "' must be a map, got " +
                    (map.is_sequence() ? std::string("a sequence") : std::string("a ") + dtype_name(map.dtype()) +
                                                                         " tensor"));
  check_dict_vectorizer_types(ctx, map);
  const bool string_keys = map.map_key() == DType::String;
  const char* attribute = string_keys ? "string_vocabulary" : "int64_vocabulary";
  const std::vector<std::string> strings = ctx.node.attr_strings("string_vocabulary");
  const std::vector<int64_t> ints = ctx.node.attr_ints("int64_vocabulary");
  if (string_keys ? strings.empty() : ints.empty())
    throw ctx.error(std::string("a map of ") + dtype_name(map.map_key()) + " keys needs the attribute " + attribute,
                    ErrorCode::InvalidGraph);
  if (string_keys) vectorize_values(ctx, map, strings);
  else vectorize_values(ctx, map, ints);
}

}  // namespace lockstep::cpu
