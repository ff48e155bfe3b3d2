// Definitions of the ai.onnx.ml ops: attributes, validation, the tree-ensemble, linear and SVM models, shapes.
#include "ops/ml.h"

#include <algorithm>
#include <map>

#include "ops/registry.h"


namespace lockstep {

namespace {

std::vector<double> doubles_of(const KernelContext& ctx, const std::string& name) {
  const onnx::Attribute* tensor = ctx.node.find(name + "_as_tensor");
  if (tensor) {
    const Tensor& t = tensor->t;
    std::vector<double> out(static_cast<size_t>(t.numel()));
    for (int64_t i = 0; i < t.numel(); ++i)
      out[i] = t.dtype() == DType::Double ? t.data<double>()[i]
               : t.dtype() == DType::Float ? t.data<float>()[i]
               : throw ctx.error("attribute '" + name + "_as_tensor' must be float or double", ErrorCode::InvalidGraph);
    return out;
  }
  std::vector<float> f = ctx.node.attr_floats(name);
  return {f.begin(), f.end()};
}

// ml 5 keeps some lists as tensors (nodes_splits, leaf_weights, membership_values, nodes_modes).
std::vector<double> tensor_doubles(const KernelContext& ctx, const std::string& name) {
  const onnx::Attribute* a = ctx.node.find(name);
  if (!a) return {};
  const Tensor& t = a->t;
  std::vector<double> out(static_cast<size_t>(t.numel()));
  for (int64_t i = 0; i < t.numel(); ++i) {
    switch (t.dtype()) {
      case DType::Double: out[i] = t.data<double>()[i]; break;
      case DType::Float: out[i] = t.data<float>()[i]; break;
      case DType::UInt8: out[i] = t.data<uint8_t>()[i]; break;
      default: throw ctx.error("attribute '" + name + "' of type " + dtype_name(t.dtype()) + " is not supported",
                               ErrorCode::NotImplemented);
    }
  }
  return out;
}

arith::TreeMode mode_named(const KernelContext& ctx, const std::string& mode) {
  static const std::map<std::string, arith::TreeMode> modes = {
      {"BRANCH_LEQ", arith::TreeMode::Leq}, {"BRANCH_LT", arith::TreeMode::Lt}, {"BRANCH_GTE", arith::TreeMode::Gte},
      {"BRANCH_GT", arith::TreeMode::Gt}, {"BRANCH_EQ", arith::TreeMode::Eq}, {"BRANCH_NEQ", arith::TreeMode::Neq}};
  auto it = modes.find(mode);
  if (it == modes.end()) throw ctx.error("nodes_modes entry '" + mode + "' is not a branch mode", ErrorCode::InvalidGraph);
  return it->second;
}

arith::TreeAggregate aggregate_named(const KernelContext& ctx, const std::string& name) {
  static const std::map<std::string, arith::TreeAggregate> names = {
      {"AVERAGE", arith::TreeAggregate::Average}, {"SUM", arith::TreeAggregate::Sum},
      {"MIN", arith::TreeAggregate::Min}, {"MAX", arith::TreeAggregate::Max}};
  auto it = names.find(name);
  if (it == names.end()) throw ctx.error("aggregate_function '" + name + "' is not known", ErrorCode::InvalidGraph);
  return it->second;
}

void check_same_length(const KernelContext& ctx, const std::vector<std::pair<std::string, size_t>>& lists) {
  for (const auto& [name, size] : lists)
    if (size != lists[0].second)
      throw ctx.error("attribute '" + name + "' has " + std::to_string(size) + " entries, '" + lists[0].first +
                          "' has " + std::to_string(lists[0].second),
                      ErrorCode::InvalidGraph);
}

// Leaves' (target, weight) entries grouped per leaf, in attribute order, for leaves named by key.
template <class Key>
void group_entries(TreeEnsembleModel& m, const std::vector<Key>& leaf_keys, const std::vector<Key>& entry_keys,
                   const std::vector<int64_t>& targets, const std::vector<double>& weights) {
  std::map<Key, std::vector<size_t>> of_leaf;
  for (size_t i = 0; i < entry_keys.size(); ++i) of_leaf[entry_keys[i]].push_back(i);
  for (const Key& key : leaf_keys) {
    arith::LeafRange r{static_cast<int32_t>(m.entries.size()), 0};
    for (size_t i : of_leaf[key]) {
      m.entries.push_back({targets[i], weights[i]});
      ++r.count;
    }
    m.leaves.push_back(r);
  }
}

// TreeEnsembleRegressor and TreeEnsembleClassifier (ml 1-4): nodes named (tree id, node id), LEAF nodes are the
// leaves; trees in ascending tree id, each rooted at its first listed node.
void read_legacy_trees(const KernelContext& ctx, TreeEnsembleModel& m, const char* prefix) {
  const auto& n = ctx.node;
  const std::vector<int64_t> tree_ids = n.attr_ints("nodes_treeids"), node_ids = n.attr_ints("nodes_nodeids");
  const std::vector<int64_t> features = n.attr_ints("nodes_featureids"), trues = n.attr_ints("nodes_truenodeids");
  const std::vector<int64_t> falses = n.attr_ints("nodes_falsenodeids");
  const std::vector<std::string> modes = n.attr_strings("nodes_modes");
  const std::vector<double> values = doubles_of(ctx, "nodes_values");
  std::vector<int64_t> missing = n.attr_ints("nodes_missing_value_tracks_true");
  if (missing.empty()) missing.assign(tree_ids.size(), 0);
  check_same_length(ctx, {{"nodes_treeids", tree_ids.size()}, {"nodes_nodeids", node_ids.size()},
                          {"nodes_featureids", features.size()}, {"nodes_modes", modes.size()},
                          {"nodes_values", values.size()}, {"nodes_truenodeids", trues.size()},
                          {"nodes_falsenodeids", falses.size()}, {"nodes_missing_value_tracks_true", missing.size()}});
  if (tree_ids.empty()) throw ctx.error("the ensemble has no nodes", ErrorCode::InvalidGraph);
  using Key = std::pair<int64_t, int64_t>;
  std::map<Key, int32_t> ref;  // node or ~leaf, by (tree, node id)
  std::vector<Key> leaf_keys;
  int32_t interior = 0;
  for (size_t i = 0; i < tree_ids.size(); ++i) {
    const Key key{tree_ids[i], node_ids[i]};
    const bool leaf = modes[i] == "LEAF";
    if (!ref.emplace(key, leaf ? ~static_cast<int32_t>(leaf_keys.size()) : interior).second)
      throw ctx.error("node (" + std::to_string(key.first) + ", " + std::to_string(key.second) + ") is listed twice",
                      ErrorCode::InvalidGraph);
    if (leaf) leaf_keys.push_back(key);
    else ++interior;
  }
  auto reference = [&](int64_t tree, int64_t node) {
    auto it = ref.find({tree, node});
    if (it == ref.end())
      throw ctx.error("tree " + std::to_string(tree) + " has no node " + std::to_string(node), ErrorCode::InvalidGraph);
    return it->second;
  };
  std::map<int64_t, int32_t> root_of;
  for (size_t i = 0; i < tree_ids.size(); ++i) {
    root_of.emplace(tree_ids[i], reference(tree_ids[i], node_ids[i]));  // the first listed node of the tree
    if (modes[i] == "LEAF") continue;
    if (features[i] < 0) throw ctx.error("nodes_featureids has a negative entry", ErrorCode::InvalidGraph);
    arith::TreeNode node;
    node.feature = features[i];
    node.threshold = values[i];
    node.mode = mode_named(ctx, modes[i]);
    node.missing_true = missing[i] != 0;
    node.next_true = reference(tree_ids[i], trues[i]);
    node.next_false = reference(tree_ids[i], falses[i]);
    m.nodes.push_back(node);
    m.features_needed = std::max(m.features_needed, features[i] + 1);
  }
  for (const auto& [tree, root] : root_of) m.roots.push_back(root);
  const std::string p = prefix;
  const std::vector<int64_t> entry_trees = n.attr_ints(p + "_treeids"), entry_nodes = n.attr_ints(p + "_nodeids");
  const std::vector<int64_t> targets = n.attr_ints(p + "_ids");
  const std::vector<double> weights = doubles_of(ctx, p + "_weights");
  check_same_length(ctx, {{p + "_treeids", entry_trees.size()}, {p + "_nodeids", entry_nodes.size()},
                          {p + "_ids", targets.size()}, {p + "_weights", weights.size()}});
  std::vector<Key> entry_keys;
  for (size_t i = 0; i < entry_trees.size(); ++i) {
    if (reference(entry_trees[i], entry_nodes[i]) >= 0)
      throw ctx.error(p + " entry " + std::to_string(i) + " names an interior node", ErrorCode::InvalidGraph);
    entry_keys.push_back({entry_trees[i], entry_nodes[i]});
  }
  group_entries(m, leaf_keys, entry_keys, targets, weights);
  m.base_values = doubles_of(ctx, "base_values");
}

// TreeEnsemble (ml 5): interior nodes by index, each branch a node or a leaf index (nodes_trueleafs/falseleafs),
// trees rooted at tree_roots; MEMBER nodes take their sets from membership_values, runs separated by NaN.
void read_trees_v5(const KernelContext& ctx, TreeEnsembleModel& m) {
  const auto& n = ctx.node;
  const std::vector<int64_t> features = n.attr_ints("nodes_featureids"), trues = n.attr_ints("nodes_truenodeids");
  const std::vector<int64_t> falses = n.attr_ints("nodes_falsenodeids"), true_leafs = n.attr_ints("nodes_trueleafs");
  const std::vector<int64_t> false_leafs = n.attr_ints("nodes_falseleafs"), roots = n.attr_ints("tree_roots");
  const std::vector<double> splits = tensor_doubles(ctx, "nodes_splits"), modes = tensor_doubles(ctx, "nodes_modes");
  const std::vector<double> members = tensor_doubles(ctx, "membership_values");
  std::vector<int64_t> missing = n.attr_ints("nodes_missing_value_tracks_true");
  if (missing.empty()) missing.assign(features.size(), 0);
  check_same_length(ctx, {{"nodes_featureids", features.size()}, {"nodes_splits", splits.size()},
                          {"nodes_modes", modes.size()}, {"nodes_truenodeids", trues.size()},
                          {"nodes_falsenodeids", falses.size()}, {"nodes_trueleafs", true_leafs.size()},
                          {"nodes_falseleafs", false_leafs.size()}, {"nodes_missing_value_tracks_true", missing.size()}});
  const std::vector<int64_t> leaf_targets = n.attr_ints("leaf_targetids");
  const std::vector<double> leaf_weights = tensor_doubles(ctx, "leaf_weights");
  check_same_length(ctx, {{"leaf_targetids", leaf_targets.size()}, {"leaf_weights", leaf_weights.size()}});
  const int64_t node_count = static_cast<int64_t>(features.size()), leaf_count = static_cast<int64_t>(leaf_targets.size());
  auto branch = [&](int64_t id, bool leaf) {
    if (id < 0 || id >= (leaf ? leaf_count : node_count))
      throw ctx.error(std::string(leaf ? "leaf " : "node ") + std::to_string(id) + " is out of range", ErrorCode::InvalidGraph);
    return leaf ? ~static_cast<int32_t>(id) : static_cast<int32_t>(id);
  };
  size_t member_at = 0;
  for (int64_t i = 0; i < node_count; ++i) {
    arith::TreeNode node;
    node.feature = features[i];
    node.threshold = splits[i];
    if (modes[i] < 0 || modes[i] > 6) throw ctx.error("nodes_modes has an unknown mode", ErrorCode::InvalidGraph);
    node.mode = static_cast<arith::TreeMode>(static_cast<int>(modes[i]));
    node.missing_true = missing[i] != 0;
    node.next_true = branch(trues[i], true_leafs[i] != 0);
    node.next_false = branch(falses[i], false_leafs[i] != 0);
    if (node.mode == arith::TreeMode::Member) {  // its set: the next run of membership_values up to a NaN
      node.member_first = static_cast<uint32_t>(m.members.size());
      for (; member_at < members.size() && members[member_at] == members[member_at]; ++member_at)
        m.members.push_back(members[member_at]);
      ++member_at;  // the NaN that ends the run
      node.member_count = static_cast<uint32_t>(m.members.size()) - node.member_first;
      if (node.member_count == 0)
        throw ctx.error("a set membership node has no members in membership_values", ErrorCode::InvalidGraph);
    }
    if (features[i] < 0) throw ctx.error("nodes_featureids has a negative entry", ErrorCode::InvalidGraph);
    m.features_needed = std::max(m.features_needed, features[i] + 1);
    m.nodes.push_back(node);
  }
  for (int64_t r : roots) m.roots.push_back(branch(r, false));
  std::vector<int64_t> leaf_ids(static_cast<size_t>(leaf_count));
  for (int64_t i = 0; i < leaf_count; ++i) leaf_ids[i] = i;
  group_entries(m, leaf_ids, leaf_ids, leaf_targets, leaf_weights);
}

// Every branch chain must end in a leaf: a walk from each root may visit each node once.
void check_acyclic(const KernelContext& ctx, const TreeEnsembleModel& m) {
  std::vector<int> state(m.nodes.size(), 0);  // 0 unseen, 1 on the current path, 2 done
  std::vector<std::pair<int32_t, int>> stack;
  for (int32_t root : m.roots) {
    if (root < 0) continue;
    stack.push_back({root, 0});
    while (!stack.empty()) {
      auto& [at, step] = stack.back();
      if (step == 0) {
        if (state[at] == 1) throw ctx.error("a tree has a cycle", ErrorCode::InvalidGraph);
        if (state[at] == 2) { stack.pop_back(); continue; }
        state[at] = 1;
      }
      if (step < 2) {
        const int32_t next = step == 0 ? m.nodes[at].next_true : m.nodes[at].next_false;
        ++step;
        if (next >= 0) stack.push_back({next, 0});
        continue;
      }
      state[at] = 2;
      stack.pop_back();
    }
  }
}

TreeEnsembleModel make_tree_ensemble(const KernelContext& ctx) {
  TreeEnsembleModel m;
  const std::string& op = ctx.node.op_type;
  if (op == "TreeEnsemble") {
    read_trees_v5(ctx, m);
    m.targets = ctx.node.attr_int("n_targets", 0);
    const int64_t aggregate = ctx.node.attr_int("aggregate_function", 1), post = ctx.node.attr_int("post_transform", 0);
    if (aggregate < 0 || aggregate > 3) throw ctx.error("aggregate_function must be 0 to 3", ErrorCode::InvalidGraph);
    if (post < 0 || post > 4) throw ctx.error("post_transform must be 0 to 4", ErrorCode::InvalidGraph);
    m.aggregate = static_cast<arith::TreeAggregate>(aggregate);
    m.post = static_cast<arith::ScorePostTransform>(post);
  } else if (op == "TreeEnsembleRegressor") {
    read_legacy_trees(ctx, m, "target");
    m.targets = ctx.node.attr_int("n_targets", 1);
    m.aggregate = aggregate_named(ctx, ctx.node.attr_string("aggregate_function", "SUM"));
    m.post = post_transform_of(ctx);
  } else {
    read_legacy_trees(ctx, m, "class");
    m.int_labels = ctx.node.attr_ints("classlabels_int64s");
    m.string_labels = ctx.node.attr_strings("classlabels_strings");
    m.targets = static_cast<int64_t>(std::max(m.int_labels.size(), m.string_labels.size()));
    if (m.targets == 0) throw ctx.error("the classifier has no class labels", ErrorCode::InvalidGraph);
    m.post = post_transform_of(ctx);
  }
  if (m.targets <= 0) throw ctx.error("n_targets must be positive", ErrorCode::InvalidGraph);
  for (const arith::LeafEntry& e : m.entries)
    if (e.target < 0 || e.target >= m.targets)
      throw ctx.error("a leaf names target " + std::to_string(e.target) + " of " + std::to_string(m.targets),
                      ErrorCode::InvalidGraph);
  // onnxruntime's two-class classifier takes one base value too (arith::binary_tree_classifier_f32).
  const bool binary_classifier = op == "TreeEnsembleClassifier" && m.targets == 2;
  if (binary_classifier) {
    const auto same_class = [&](const arith::LeafEntry& e) { return e.target == m.entries.front().target; };
    m.one_class = !m.entries.empty() && std::all_of(m.entries.begin(), m.entries.end(), same_class);
    m.all_positive = std::none_of(m.entries.begin(), m.entries.end(),
                                  [](const arith::LeafEntry& e) { return e.weight < 0; });
  }
  const size_t bases = m.base_values.size();
  if (bases != 0 && static_cast<int64_t>(bases) != m.targets && !(binary_classifier && bases == 1))
    throw ctx.error("base_values has " + std::to_string(m.base_values.size()) + " entries for " +
                        std::to_string(m.targets) + " targets", ErrorCode::InvalidGraph);
  check_acyclic(ctx, m);
  return m;
}

// kernel_type and kernel_params (gamma, coef0, degree; empty means zeros). onnxruntime refuses a node without
// kernel_params, or with another count of them.
arith::SvmKernelParams svm_kernel_of(const KernelContext& ctx) {
  static const std::map<std::string, arith::SvmKernel> kinds = {
      {"LINEAR", arith::SvmKernel::Linear}, {"POLY", arith::SvmKernel::Poly}, {"RBF", arith::SvmKernel::Rbf},
      {"SIGMOID", arith::SvmKernel::Sigmoid}};
  const std::string name = ctx.node.attr_string("kernel_type", "LINEAR");
  const auto it = kinds.find(name);
  if (it == kinds.end())
    throw ctx.error("kernel_type '" + name + "' is not LINEAR, POLY, RBF or SIGMOID", ErrorCode::InvalidGraph);
  if (!ctx.node.has("kernel_params"))
    throw ctx.error("kernel_params (gamma, coef0, degree) is required, as onnxruntime requires it", ErrorCode::InvalidGraph);
  const std::vector<float> params = ctx.node.attr_floats("kernel_params");
  if (!params.empty() && params.size() != 3)
    throw ctx.error("kernel_params has " + std::to_string(params.size()) + " entries, not 3 (gamma, coef0, degree)",
                    ErrorCode::InvalidGraph);
  arith::SvmKernelParams k;
  k.kind = it->second;
  if (!params.empty()) k = {it->second, params[0], params[1], params[2]};
  return k;
}

void require_at_least(const KernelContext& ctx, const std::string& name, size_t size, size_t needed,
                      const std::string& what) {
  if (size < needed)
    throw ctx.error("attribute '" + name + "' has " + std::to_string(size) + " entries, " + what + " needs " +
                        std::to_string(needed), ErrorCode::InvalidGraph);
}

// Support vectors, vectors x features; the features are what the vectors' count divides.
void read_support_vectors(const KernelContext& ctx, SvmModel& m) {
  m.support_vectors = ctx.node.attr_floats("support_vectors");
  const size_t size = m.support_vectors.size();
  if (size == 0 || size % static_cast<size_t>(m.vectors) != 0)
    throw ctx.error("support_vectors has " + std::to_string(size) + " entries, not a positive multiple of " +
                        std::to_string(m.vectors) + " vectors", ErrorCode::InvalidGraph);
  m.features = static_cast<int64_t>(size) / m.vectors;
}

void read_svm_common(const KernelContext& ctx, SvmModel& m) {
  m.kernel = svm_kernel_of(ctx);
  m.coefficients = ctx.node.attr_floats("coefficients");
  m.rho = ctx.node.attr_floats("rho");
  if (m.coefficients.empty()) throw ctx.error("coefficients is empty", ErrorCode::InvalidGraph);
  require_at_least(ctx, "rho", m.rho.size(), 1, "the model");
}

SvmModel make_svm_regressor(const KernelContext& ctx) {
  SvmModel m;
  read_svm_common(ctx, m);
  post_transform_of(ctx);  // checked only: onnxruntime's SVMRegressor applies no post_transform
  m.one_class = ctx.node.attr_int("one_class", 0) != 0;
  m.vectors = ctx.node.attr_int("n_supports", 0);
  m.classes = 1;
  if (m.vectors < 0) throw ctx.error("n_supports is negative", ErrorCode::InvalidGraph);
  if (m.vectors == 0) {  // linear: one weight per feature (onnxruntime then ignores kernel_type)
    m.kernel.kind = arith::SvmKernel::Linear;
    m.features = static_cast<int64_t>(m.coefficients.size());
    return m;
  }
  read_support_vectors(ctx, m);
  require_at_least(ctx, "coefficients", m.coefficients.size(), static_cast<size_t>(m.vectors), "n_supports");
  return m;
}

SvmModel make_svm_classifier(const KernelContext& ctx) {
  SvmModel m;
  read_svm_common(ctx, m);
  m.post = post_transform_of(ctx);
  m.int_labels = ctx.node.attr_ints("classlabels_ints");
  m.string_labels = ctx.node.attr_strings("classlabels_strings");
  m.classes = static_cast<int64_t>(std::max(m.int_labels.size(), m.string_labels.size()));
  if (m.classes == 0) throw ctx.error("the classifier has no class labels", ErrorCode::InvalidGraph);
  m.prob_a = ctx.node.attr_floats("prob_a");
  m.prob_b = ctx.node.attr_floats("prob_b");
  if (m.prob_a.size() != m.prob_b.size())
    throw ctx.error("prob_a has " + std::to_string(m.prob_a.size()) + " entries, prob_b " +
                        std::to_string(m.prob_b.size()), ErrorCode::InvalidGraph);
  m.all_positive = std::none_of(m.coefficients.begin(), m.coefficients.end(), [](float c) { return c < 0; });
  m.vector_count = ctx.node.attr_ints("vectors_per_class");
  for (int64_t count : m.vector_count) {
    if (count < 0) throw ctx.error("vectors_per_class has a negative entry", ErrorCode::InvalidGraph);
    m.first_vector.push_back(m.vectors);
    m.vectors += count;
  }
  if (m.vectors == 0) {  // linear: one weight row per class (onnxruntime then ignores kernel_type)
    m.kernel.kind = arith::SvmKernel::Linear;
    if (m.coefficients.size() % static_cast<size_t>(m.classes) != 0)
      throw ctx.error("coefficients has " + std::to_string(m.coefficients.size()) + " entries, not a multiple of " +
                          std::to_string(m.classes) + " classes", ErrorCode::InvalidGraph);
    m.features = static_cast<int64_t>(m.coefficients.size()) / m.classes;
    return m;
  }
  if (static_cast<int64_t>(m.vector_count.size()) != m.classes)
    throw ctx.error("vectors_per_class has " + std::to_string(m.vector_count.size()) + " entries for " +
                        std::to_string(m.classes) + " class labels", ErrorCode::InvalidGraph);
  // One class has no pair to decide: onnxruntime leaves its scores unwritten.
  if (m.classes < 2)
    throw ctx.error("an SVMClassifier of one class with support vectors is not supported", ErrorCode::NotImplemented);
  read_support_vectors(ctx, m);
  const size_t pairs = static_cast<size_t>(m.classes * (m.classes - 1) / 2);
  require_at_least(ctx, "coefficients", m.coefficients.size(), static_cast<size_t>((m.classes - 1) * m.vectors),
                   "(classes - 1) x vectors");
  require_at_least(ctx, "rho", m.rho.size(), pairs, "one per pair of classes");
  if (!m.prob_a.empty()) require_at_least(ctx, "prob_a", m.prob_a.size(), pairs, "one per pair of classes");
  return m;
}

const OpEntry kRows[] = {
    {"TreeEnsembleRegressor", 1, kNewestMlOpset, &cpu::tree_ensemble, LOCKSTEP_CUDA_KERNEL(tree_ensemble)},
    {"TreeEnsembleClassifier", 1, kNewestMlOpset, &cpu::tree_ensemble, LOCKSTEP_CUDA_KERNEL(tree_ensemble)},
    {"TreeEnsemble", 5, kNewestMlOpset, &cpu::tree_ensemble, LOCKSTEP_CUDA_KERNEL(tree_ensemble)},
    {"LinearRegressor", 1, kNewestMlOpset, &cpu::linear_model, LOCKSTEP_CUDA_KERNEL(linear_model)},
    {"LinearClassifier", 1, kNewestMlOpset, &cpu::linear_model, LOCKSTEP_CUDA_KERNEL(linear_model)},
    {"Scaler", 1, kNewestMlOpset, &cpu::ml_elementwise, LOCKSTEP_CUDA_KERNEL(ml_elementwise)},
    {"Binarizer", 1, kNewestMlOpset, &cpu::ml_elementwise, LOCKSTEP_CUDA_KERNEL(ml_elementwise)},
    {"Normalizer", 1, kNewestMlOpset, &cpu::ml_elementwise, LOCKSTEP_CUDA_KERNEL(ml_elementwise)},
    {"ArrayFeatureExtractor", 1, kNewestMlOpset, &cpu::array_feature_extractor,
     LOCKSTEP_CUDA_KERNEL(array_feature_extractor)},
    {"LabelEncoder", 1, kNewestMlOpset, &cpu::label_encoder, nullptr},
    {"Imputer", 1, kNewestMlOpset, &cpu::imputer, LOCKSTEP_CUDA_KERNEL(imputer)},
    {"OneHotEncoder", 1, kNewestMlOpset, &cpu::one_hot_encoder, nullptr},
    {"CategoryMapper", 1, kNewestMlOpset, &cpu::category_mapper, nullptr},
    {"SVMRegressor", 1, kNewestMlOpset, &cpu::svm_regressor, LOCKSTEP_CUDA_KERNEL(svm_regressor)},
    {"SVMClassifier", 1, kNewestMlOpset, &cpu::svm_classifier, LOCKSTEP_CUDA_KERNEL(svm_classifier)},
    {"ZipMap", 1, kNewestMlOpset, &cpu::zip_map, nullptr},
    {"DictVectorizer", 1, kNewestMlOpset, &cpu::dict_vectorizer, nullptr},
};

// Labels in ascending order with the column each takes; a repeated label keeps its last column.
template <class Label>
void sort_labels(const std::vector<Label>& labels, std::vector<Label>& sorted, std::vector<int64_t>& columns) {
  std::map<Label, int64_t> column_of;
  for (size_t c = 0; c < labels.size(); ++c) column_of[labels[c]] = static_cast<int64_t>(c);
  for (const auto& [label, column] : column_of) {
    sorted.push_back(label);
    columns.push_back(column);
  }
}

ZipMapLabels make_zip_map_labels(const KernelContext& ctx) {
  const std::vector<int64_t> ints = ctx.node.attr_ints("classlabels_int64s");
  const std::vector<std::string> strings = ctx.node.attr_strings("classlabels_strings");
  if (ints.empty() == strings.empty())
    throw ctx.error("ZipMap needs classlabels_int64s or classlabels_strings, not both or neither",
                    ErrorCode::InvalidGraph);
  ZipMapLabels labels;
  labels.classes = static_cast<int64_t>(ints.size() + strings.size());
  if (!ints.empty()) sort_labels(ints, labels.int_labels, labels.columns);
  else sort_labels(strings, labels.string_labels, labels.columns);
  return labels;
}

}  // namespace

std::span<const OpEntry> ml_ops() { return kRows; }

const OpEntry* find_ml_op(const std::string& op_type, int64_t ml_opset) {
  for (const OpEntry& e : kRows)
    if (op_type == e.op_type && ml_opset >= e.since && ml_opset <= e.until) return &e;
  return nullptr;
}

arith::ScorePostTransform post_transform_of(const KernelContext& ctx) {
  const std::string name = ctx.node.attr_string("post_transform", "NONE");
  if (name == "NONE") return arith::ScorePostTransform::None;
  if (name == "LOGISTIC") return arith::ScorePostTransform::Logistic;
  if (name == "SOFTMAX") return arith::ScorePostTransform::Softmax;
  if (name == "SOFTMAX_ZERO") return arith::ScorePostTransform::SoftmaxZero;
  if (name == "PROBIT") return arith::ScorePostTransform::Probit;
  throw ctx.error("post_transform '" + name + "' is not NONE, LOGISTIC, SOFTMAX, SOFTMAX_ZERO or PROBIT",
                  ErrorCode::InvalidGraph);
}

std::shared_ptr<const TreeEnsembleModel> tree_ensemble_model(KernelContext& ctx) {
  return ctx.state->get_or_make<TreeEnsembleModel>([](const TreeEnsembleModel&) { return true; },
                                                   [&] { return make_tree_ensemble(ctx); });
}

std::shared_ptr<const ZipMapLabels> zip_map_labels(KernelContext& ctx) {
  return ctx.state->get_or_make<ZipMapLabels>([](const ZipMapLabels&) { return true; },
                                              [&] { return make_zip_map_labels(ctx); });
}

std::shared_ptr<const OneHotCategories> one_hot_categories(KernelContext& ctx) {
  return ctx.state->get_or_make<OneHotCategories>([](const OneHotCategories&) { return true; }, [&] {
    const std::vector<int64_t> ints = ctx.node.attr_ints("cats_int64s");
    const std::vector<std::string> strings = ctx.node.attr_strings("cats_strings");
    OneHotCategories c;
    c.count = static_cast<int64_t>(std::max(ints.size(), strings.size()));
    if (c.count == 0)
      throw ctx.error("the encoder has no categories (cats_int64s or cats_strings)", ErrorCode::InvalidGraph);
    for (int64_t k = static_cast<int64_t>(strings.size()) - 1; k >= 0; --k) c.strings[strings[k]] = k;
    for (int64_t k = static_cast<int64_t>(ints.size()) - 1; k >= 0; --k) c.ints[ints[k]] = k;
    return c;
  });
}

std::shared_ptr<const CategoryMaps> category_maps(KernelContext& ctx) {
  return ctx.state->get_or_make<CategoryMaps>([](const CategoryMaps&) { return true; }, [&] {
    const std::vector<int64_t> ints = ctx.node.attr_ints("cats_int64s");
    const std::vector<std::string> strings = ctx.node.attr_strings("cats_strings");
    if (ints.size() != strings.size())
      throw ctx.error("cats_int64s has " + std::to_string(ints.size()) + " entries, cats_strings " +
                          std::to_string(strings.size()),
                      ErrorCode::InvalidGraph);
    CategoryMaps m;
    for (size_t k = 0; k < ints.size(); ++k) {
      m.to_int[strings[k]] = ints[k];
      m.to_string[ints[k]] = strings[k];
    }
    return m;
  });
}

std::shared_ptr<const SvmModel> svm_model(KernelContext& ctx) {
  return ctx.state->get_or_make<SvmModel>([](const SvmModel&) { return true; }, [&] {
    return ctx.node.op_type == "SVMRegressor" ? make_svm_regressor(ctx) : make_svm_classifier(ctx);
  });
}

MlRows ml_rows(const KernelContext& ctx, int64_t features_needed) {
  const Tensor& x = ctx.input(0);
  if (x.rank() != 1 && x.rank() != 2)
    throw ctx.error("X " + shape_string(x.shape()) + " must be [N, F] or [F]");
  MlRows r{x.rank() == 2 ? x.dim(0) : 1, x.dim(-1)};
  if (r.features < features_needed)
    throw ctx.error("X has " + std::to_string(r.features) + " features, the model reads feature " +
                    std::to_string(features_needed - 1));
  return r;
}

ImputerPlan imputer_plan(const KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  const DType t = x.dtype();
  const bool floats = t == DType::Float || t == DType::Double;
  if (!floats && t != DType::Int64 && t != DType::Int32)
    throw ctx.error(std::string("X of type ") + dtype_name(t) + " is not supported", ErrorCode::NotImplemented);
  if (x.rank() == 0) throw ctx.error("X must have at least one dimension");
  ImputerPlan p;
  p.features = x.rank() == 1 ? x.dim(0) : x.dim(1);
  p.float_values = ctx.node.attr_floats("imputed_value_floats");
  p.int_values = ctx.node.attr_ints("imputed_value_int64s");
  const int64_t given = static_cast<int64_t>(floats ? p.float_values.size() : p.int_values.size());
  if (given != 1 && given != p.features)
    throw ctx.error(std::string(floats ? "imputed_value_floats" : "imputed_value_int64s") + " has " +
                        std::to_string(given) + " entries for " + std::to_string(p.features) + " features",
                    ErrorCode::InvalidGraph);
  p.one_value = given == 1;
  p.replaced_float = ctx.node.attr_float("replaced_value_float", 0.0f);
  p.replaced_int = ctx.node.attr_int("replaced_value_int64", 0);
  return p;
}

FeatureSelection feature_selection(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  FeatureSelection f{ctx.host_input(1).to_ints(), x.rank() == 0 ? 1 : x.dim(-1), {}};
  if (x.dtype() == DType::String || dtype_size(x.dtype()) == 0)
    throw ctx.error(std::string("X of type ") + dtype_name(x.dtype()) + " is not supported", ErrorCode::NotImplemented);
  for (int64_t i : f.indices)
    if (i < 0 || i >= f.width)
      throw ctx.error("index " + std::to_string(i) + " is out of range for the last axis of " + shape_string(x.shape()));
  f.shape = x.rank() <= 1 ? Shape{1, 0} : x.shape();
  f.shape.back() = static_cast<int64_t>(f.indices.size());
  return f;
}

LinearModel linear_model_of(const KernelContext& ctx) {
  LinearModel m;
  m.coefficients = ctx.node.attr_floats("coefficients");
  m.intercepts = ctx.node.attr_floats("intercepts");
  m.post = post_transform_of(ctx);
  if (ctx.node.op_type == "LinearRegressor") {
    m.targets = ctx.node.attr_int("targets", 1);
  } else {
    m.int_labels = ctx.node.attr_ints("classlabels_ints");
    m.string_labels = ctx.node.attr_strings("classlabels_strings");
    const size_t labels = std::max(m.int_labels.size(), m.string_labels.size());
    if (labels == 0) throw ctx.error("the classifier has no class labels", ErrorCode::InvalidGraph);
    m.targets = m.intercepts.empty() ? static_cast<int64_t>(labels) : static_cast<int64_t>(m.intercepts.size());
  }
  if (m.targets <= 0 || m.coefficients.size() % static_cast<size_t>(m.targets) != 0)
    throw ctx.error("coefficients has " + std::to_string(m.coefficients.size()) + " entries, not a multiple of " +
                        std::to_string(m.targets) + " targets", ErrorCode::InvalidGraph);
  m.features = static_cast<int64_t>(m.coefficients.size()) / m.targets;
  if (!m.intercepts.empty() && static_cast<int64_t>(m.intercepts.size()) != m.targets)
    throw ctx.error("intercepts has " + std::to_string(m.intercepts.size()) + " entries for " +
                        std::to_string(m.targets) + " targets", ErrorCode::InvalidGraph);
  return m;
}

}  // namespace lockstep
