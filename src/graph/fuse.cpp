// Graph rewrites that fuse nodes. Each fused op computes exactly the operations of the nodes it replaces, in the
// same order and with the same roundings, so a fused and an unfused graph return the same bits on every
// provider (docs/arithmetic.md#graph-rewrites). They run after constant folding, before planning.
#include <map>
#include <set>

#include "graph/plan.h"

namespace lockstep {

namespace {

bool is_op(const onnx::Node& n, const char* op_type) { return n.op_type == op_type && is_default_domain(n.domain); }

std::vector<const onnx::Graph*> subgraphs_of(const onnx::Node& n) {
  std::vector<const onnx::Graph*> subgraphs;
  for (const auto& [attr, a] : n.attributes) {
    if (a.g) subgraphs.push_back(a.g.get());
    for (const auto& sub : a.graphs) subgraphs.push_back(sub.get());
  }
  return subgraphs;
}

// Every name a subgraph (If branches, at any depth) reads: such a value must keep its producer.
void collect_subgraph_reads(const onnx::Graph& g, std::set<std::string>& names) {
  for (const auto& n : g.nodes)
    for (const onnx::Graph* sub : subgraphs_of(n)) {
      for (const auto& sn : sub->nodes) names.insert(sn.inputs.begin(), sn.inputs.end());
      collect_subgraph_reads(*sub, names);
    }
}

// How many times each value is read: by nodes, as a graph output, or from a subgraph.
std::map<std::string, int> reader_counts(const onnx::Graph& g) {
  std::map<std::string, int> readers;
  for (const auto& n : g.nodes)
    for (const auto& name : n.inputs)
      if (!name.empty()) ++readers[name];
  for (const auto& v : g.outputs) ++readers[v.name];
  std::set<std::string> subgraph_reads;
  collect_subgraph_reads(g, subgraph_reads);
  for (const auto& name : subgraph_reads) ++readers[name];
  return readers;
}

// Who makes each value and how many read it, to walk a pattern up from its last node.
class Producers {
 public:
  explicit Producers(onnx::Graph& graph) : graph_(graph), readers_(reader_counts(graph)) {
    for (size_t i = 0; i < graph.nodes.size(); ++i)
      for (const auto& name : graph.nodes[i].outputs) producer_[name] = i;
  }
  /// The node of type op that makes value, when exactly `reads` nodes (or graph outputs) read value; else null.
  onnx::Node* made_by(const std::string& value, const char* op, int reads = 1) {
    auto it = producer_.find(value);
    if (it == producer_.end() || readers_[value] != reads || !is_op(graph_.nodes[it->second], op)) return nullptr;
    return &graph_.nodes[it->second];
  }

 private:
  onnx::Graph& graph_;
  std::map<std::string, int> readers_;
  std::map<std::string, size_t> producer_;
};

// Drops the nodes a rewrite absorbed, keeping the others' order.
void erase_nodes(onnx::Graph& graph, const std::set<const onnx::Node*>& removed) {
  std::vector<onnx::Node> kept;
  for (onnx::Node& n : graph.nodes)
    if (!removed.count(&n)) kept.push_back(std::move(n));
  graph.nodes = std::move(kept);
}

// Sigmoid(x) -> s, Mul(x, s) or Mul(s, x) -> y, s read by nothing else: lockstep.Silu(x) -> y, computing
// x * sigmoid(x) per element, the two roundings of the unfused pair.
void fuse_silu(onnx::Graph& graph) {
  std::map<std::string, int> readers = reader_counts(graph);
  std::map<std::string, size_t> sigmoid_of;  // output name -> index of the Sigmoid node
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    const onnx::Node& n = graph.nodes[i];
    if (is_op(n, "Sigmoid") && n.inputs.size() == 1 && n.outputs.size() == 1 && readers[n.outputs[0]] == 1)
      sigmoid_of[n.outputs[0]] = i;
  }
  std::set<size_t> removed;
  for (onnx::Node& mul : graph.nodes) {
    if (!is_op(mul, "Mul") || mul.inputs.size() != 2 || mul.outputs.size() != 1) continue;
    for (int s = 0; s < 2; ++s) {
      auto it = sigmoid_of.find(mul.inputs[s]);
      if (it == sigmoid_of.end() || graph.nodes[it->second].inputs[0] != mul.inputs[1 - s]) continue;
      removed.insert(it->second);
      mul.domain = kFusedDomain;
      mul.op_type = "Silu";
      mul.inputs = {mul.inputs[1 - s]};
      break;
    }
  }
  std::vector<onnx::Node> kept;
  for (size_t i = 0; i < graph.nodes.size(); ++i)
    if (!removed.count(i)) kept.push_back(std::move(graph.nodes[i]));
  graph.nodes = std::move(kept);
}

// The tensor of a constant (an initializer no feed can override), or null.
const Tensor* constant(const onnx::Graph& g, const std::string& name) {
  for (const auto& v : g.inputs)
    if (v.name == name) return nullptr;
  auto it = g.initializers.find(name);
  return it == g.initializers.end() ? nullptr : &it->second;
}

// A float scalar constant of rank 0 (so that broadcasting it keeps the other operand's shape), into *value.
bool scalar_constant(const onnx::Graph& g, const std::string& name, float* value) {
  const Tensor* t = constant(g, name);
  if (!t || t->dtype() != DType::Float || t->rank() != 0) return false;
  *value = t->data<float>()[0];
  return true;
}

// d = Div(x, c1), e = Erf(d), s = Add(e, c2), m = Mul(x, s), y = Mul(m, c3), with c1..c3 float scalar constants and
// d, e, s, m read by nothing else (torch's export of GELU): lockstep.GeluErfChain(x) -> y with attributes divisor,
// addend, factor, computing the five operations in that order per element.
void fuse_gelu_erf_chain(onnx::Graph& graph) {
  Producers producers(graph);
  std::set<const onnx::Node*> removed;
  for (onnx::Node& outer : graph.nodes) {
    float c1, c2, c3;
    if (!is_op(outer, "Mul") || outer.inputs.size() != 2 || !scalar_constant(graph, outer.inputs[1], &c3)) continue;
    onnx::Node* inner = producers.made_by(outer.inputs[0], "Mul");
    if (!inner || inner->inputs.size() != 2) continue;
    onnx::Node* add = producers.made_by(inner->inputs[1], "Add");
    if (!add || add->inputs.size() != 2 || !scalar_constant(graph, add->inputs[1], &c2)) continue;
    onnx::Node* erf = producers.made_by(add->inputs[0], "Erf");
    onnx::Node* div = erf ? producers.made_by(erf->inputs[0], "Div") : nullptr;
    if (!div || div->inputs.size() != 2 || div->inputs[0] != inner->inputs[0] ||
        !scalar_constant(graph, div->inputs[1], &c1))
      continue;
    for (const onnx::Node* n : {inner, add, erf, div}) removed.insert(n);
    onnx::Node fused;
    fused.name = outer.name;
    fused.domain = kFusedDomain;
    fused.op_type = "GeluErfChain";
    fused.inputs = {div->inputs[0]};
    fused.outputs = outer.outputs;
    for (auto [name, value] : {std::pair{"divisor", c1}, {"addend", c2}, {"factor", c3}})
      (fused.attributes[name] = attribute(name, onnx::Attribute::Float)).f = value;
    outer = std::move(fused);
  }
  erase_nodes(graph, removed);
}

// n a two-input node one of whose inputs is a float scalar constant: that constant into *c, the other input into
// *other (Add and Mul commute exactly, so either operand order computes the same value).
bool split_scalar_operand(const onnx::Graph& g, const onnx::Node& n, float* c, std::string* other) {
  if (n.inputs.size() != 2) return false;
  for (int i = 0; i < 2; ++i)
    if (scalar_constant(g, n.inputs[i], c)) {
      *other = n.inputs[1 - i];
      return true;
    }
  return false;
}

// GELU's tanh form as torch exports it (GPT-2's gelu_new): h = Mul(x, c_half), p = Pow(x, 3), q = Mul(p, c_cube),
// s = Add(x, q), u = Mul(s, c_scale), t = Tanh(u), v = Add(t, c_one), y = Mul(h, v), with the c's float scalar
// constants (either operand order for each Add and Mul), the exponent the float scalar 3 and h, p, q, s, u, t, v read
// by nothing else: lockstep.GeluTanhChain(x) -> y with attributes half, cube_factor, scale, one.
void fuse_gelu_tanh_chain(onnx::Graph& graph) {
  Producers producers(graph);
  // The chain from v = Add(Tanh(...), c_one) down to x, given x from h = Mul(x, c_half); the nodes into *chain.
  auto tanh_side = [&](const std::string& v_name, const std::string& x, float* c_one, float* c_scale,
                       float* c_cube, std::vector<const onnx::Node*>* chain) {
    std::string t_name, s_name, q_name, p_name;
    float exponent;
    onnx::Node* v = producers.made_by(v_name, "Add");
    if (!v || !split_scalar_operand(graph, *v, c_one, &t_name)) return false;
    onnx::Node* t = producers.made_by(t_name, "Tanh");
    onnx::Node* u = t && t->inputs.size() == 1 ? producers.made_by(t->inputs[0], "Mul") : nullptr;
    if (!u || !split_scalar_operand(graph, *u, c_scale, &s_name)) return false;
    onnx::Node* s = producers.made_by(s_name, "Add");
    if (!s || s->inputs.size() != 2 || (s->inputs[0] != x && s->inputs[1] != x)) return false;
    q_name = s->inputs[0] == x ? s->inputs[1] : s->inputs[0];
    onnx::Node* q = producers.made_by(q_name, "Mul");
    if (!q || !split_scalar_operand(graph, *q, c_cube, &p_name)) return false;
    onnx::Node* pw = producers.made_by(p_name, "Pow");
    if (!pw || pw->inputs.size() != 2 || pw->inputs[0] != x || !scalar_constant(graph, pw->inputs[1], &exponent) ||
        exponent != 3.0f)
      return false;
    *chain = {v, t, u, s, q, pw};
    return true;
  };
  std::set<const onnx::Node*> removed;
  for (onnx::Node& outer : graph.nodes) {
    if (!is_op(outer, "Mul") || outer.inputs.size() != 2 || outer.outputs.size() != 1) continue;
    for (int side = 0; side < 2; ++side) {
      float c_half, c_one, c_scale, c_cube;
      std::string x;
      std::vector<const onnx::Node*> chain;
      onnx::Node* h = producers.made_by(outer.inputs[side], "Mul");
      if (!h || !split_scalar_operand(graph, *h, &c_half, &x) || removed.count(h) ||
          !tanh_side(outer.inputs[1 - side], x, &c_one, &c_scale, &c_cube, &chain))
        continue;
      removed.insert(h);
      removed.insert(chain.begin(), chain.end());
      onnx::Node fused;
      fused.name = outer.name;
      fused.domain = kFusedDomain;
      fused.op_type = "GeluTanhChain";
      fused.inputs = {x};
      fused.outputs = outer.outputs;
      for (auto [name, value] :
           {std::pair{"half", c_half}, {"cube_factor", c_cube}, {"scale", c_scale}, {"one", c_one}})
        (fused.attributes[name] = attribute(name, onnx::Attribute::Float)).f = value;
      outer = std::move(fused);
      break;
    }
  }
  erase_nodes(graph, removed);
}

// s = Softmax(x), b = IsNaN(s), y = Where(b, c, s), with c a float constant of one element (rank 0 or [1]: Softmax's
// output has rank >= 1, so c keeps its shape), s read by nothing else and b by nothing else (torch's export of
// scaled_dot_product_attention with a mask): lockstep.SoftmaxReplacingNaN(x) -> y with Softmax's attributes and
// value = c, which selects c wherever Softmax returned NaN, the Where's result.
void fuse_softmax_nan_replacement(onnx::Graph& graph) {
  Producers producers(graph);
  std::set<const onnx::Node*> removed;
  for (onnx::Node& where : graph.nodes) {
    if (!is_op(where, "Where") || where.inputs.size() != 3) continue;
    const Tensor* c = constant(graph, where.inputs[1]);
    if (!c || c->dtype() != DType::Float || c->numel() != 1 || c->rank() > 1) continue;
    onnx::Node* isnan = producers.made_by(where.inputs[0], "IsNaN", 1);
    onnx::Node* softmax = producers.made_by(where.inputs[2], "Softmax", 2);
    if (!isnan || !softmax || isnan->inputs.size() != 1 || isnan->inputs[0] != where.inputs[2] ||
        softmax->outputs.size() != 1)
      continue;
    removed.insert(isnan);
    removed.insert(softmax);
    onnx::Node fused = *softmax;
    fused.name = where.name;
    fused.domain = kFusedDomain;
    fused.op_type = "SoftmaxReplacingNaN";
    fused.outputs = where.outputs;
    (fused.attributes["value"] = attribute("value", onnx::Attribute::Float)).f = c->data<float>()[0];
    where = std::move(fused);
  }
  erase_nodes(graph, removed);
}

// The Add operand a FusedMatMul takes: a float [N] constant, with B a constant [K, N], so that the Add keeps the
// product's shape whatever A is.
bool is_row_bias(const onnx::Graph& g, const onnx::Node& matmul, const std::string& addend) {
  const Tensor* b = constant(g, matmul.inputs[1]);
  const Tensor* c = constant(g, addend);
  return b && c && b->dtype() == DType::Float && c->dtype() == DType::Float && b->rank() == 2 && c->rank() == 1 &&
         c->dim(0) == b->dim(1);
}

// Conv or MatMul -> p, then Add(p, r) or Add(r, p) -> s and/or Relu -> y, or Conv -> p, HardSwish -> y, or MatMul ->
// p, Add -> s, lockstep.GeluErfChain or GeluTanhChain (the rewrites above) -> y, each intermediate read by nothing
// else: one lockstep.FusedConv (inputs X, W, B, r) or FusedMatMul (A, B, r) -> y, with attributes activation =
// "Relu", "HardSwish" or the chain's op type (its attributes, in order, as activation_constants) and addend_first = 1
// for Add(r, p). It takes the place of its last absorbed node, where r exists already.
void fuse_product_epilogues(onnx::Graph& graph) {
  std::map<std::string, int> readers = reader_counts(graph);
  std::map<std::string, size_t> reader_of;  // value name -> the index of the node reading it (sole readers only)
  for (size_t i = 0; i < graph.nodes.size(); ++i)
    for (const auto& name : graph.nodes[i].inputs)
      if (!name.empty() && readers[name] == 1) reader_of[name] = i;
  std::set<const onnx::Node*> removed;
  auto sole_reader = [&](const onnx::Node& n, const char* op, const char* domain = "") -> onnx::Node* {
    if (n.outputs.size() != 1) return nullptr;
    auto it = reader_of.find(n.outputs[0]);
    onnx::Node* reader = it == reader_of.end() ? nullptr : &graph.nodes[it->second];
    const bool is = reader && (*domain ? reader->op_type == op && reader->domain == domain : is_op(*reader, op));
    return is && !removed.count(reader) ? reader : nullptr;
  };
  // The constants of each GELU chain, in the order of ActivationConstants (src/ops/epilogue.h).
  const std::pair<const char*, std::vector<const char*>> gelu_chains[] = {
      {"GeluErfChain", {"divisor", "addend", "factor"}}, {"GeluTanhChain", {"half", "cube_factor", "scale", "one"}}};
  for (onnx::Node& product : graph.nodes) {
    const bool conv = is_op(product, "Conv"), matmul = is_op(product, "MatMul");
    if ((!conv && !matmul) || removed.count(&product) || product.inputs.size() < 2) continue;
    onnx::Node* add = sole_reader(product, "Add");
    std::string addend;
    bool addend_first = false;
    if (add && add->inputs.size() == 2 && add->inputs[0] != add->inputs[1]) {
      addend_first = add->inputs[1] == product.outputs[0];
      addend = add->inputs[addend_first ? 0 : 1];
      if (matmul && !is_row_bias(graph, product, addend)) add = nullptr;
    } else {
      add = nullptr;
    }
    if (matmul && !add) continue;  // a MatMul alone gains nothing
    onnx::Node* relu = sole_reader(add ? *add : product, "Relu");
    // A HardSwish only straight after a Conv: MobileNetV3's pattern, the one this rule was made for (the kernels would
    // apply one after an Add as well, in absorbed_ops_f32's order).
    onnx::Node* hard_swish = conv && !add && !relu ? sole_reader(product, "HardSwish") : nullptr;
    // A GELU chain after a MatMul's bias Add (BERT's and ViT's first MLP layer; GPT-2's runs a Gemm, not fused).
    const std::vector<const char*>* gelu_constants = nullptr;
    onnx::Node* gelu = nullptr;
    for (const auto& [op, names] : gelu_chains)
      if (onnx::Node* chain = matmul && !relu && !gelu ? sole_reader(*add, op, kFusedDomain) : nullptr)
        gelu = chain, gelu_constants = &names;
    onnx::Node* activation = relu ? relu : hard_swish ? hard_swish : gelu;
    if (!add && !activation) continue;
    onnx::Node& last = activation ? *activation : *add;
    onnx::Node fused = product;
    fused.domain = kFusedDomain;
    fused.op_type = conv ? "FusedConv" : "FusedMatMul";
    if (conv) fused.inputs.resize(3);  // an absent B stays ""
    fused.inputs.push_back(addend);
    fused.outputs = last.outputs;
    if (activation) {
      onnx::Attribute& name = fused.attributes["activation"] = attribute("activation", onnx::Attribute::String);
      name.s = activation->op_type;
    }
    if (gelu) {
      onnx::Attribute& constants = fused.attributes["activation_constants"] =
          attribute("activation_constants", onnx::Attribute::Floats);
      for (const char* name : *gelu_constants) constants.floats.push_back(gelu->attr_float(name, 0.0f));
    }
    if (addend_first) (fused.attributes["addend_first"] = attribute("addend_first", onnx::Attribute::Int)).i = 1;
    removed.insert(&product);
    if (add && activation) removed.insert(add);
    last = std::move(fused);
  }
  erase_nodes(graph, removed);
}

void refuse_fused_nodes(const onnx::Graph& graph) {
  for (const auto& n : graph.nodes) {
    if (n.domain == kFusedDomain)
      throw n.error(ErrorCode::NotImplemented, "ops of domain '" + n.domain + "' are not supported (only the "
                                               "optimized models lockstep writes may use them)");
    for (const onnx::Graph* sub : subgraphs_of(n)) refuse_fused_nodes(*sub);
  }
}

bool imports_fused_domain(const onnx::Model& model) {
  for (const auto& o : model.opset_imports)
    if (o.domain == kFusedDomain && o.version == kFusedDomainVersion) return true;
  return false;
}
}  // namespace

// A model's own use of the domain is refused even where it imports it: only a model lockstep wrote (marked in its
// metadata) holds lockstep's fused nodes, and they are the nodes fuse_nodes made.
void refuse_fused_domain(const onnx::Model& model) {
  auto mark = model.metadata.find(kWrittenByLockstep);
  if (!imports_fused_domain(model) || mark == model.metadata.end() || mark->second != "1")
    refuse_fused_nodes(model.graph);
}

void mark_fused_domain(onnx::Model& model) {
  bool fused = false;
  for (const auto& n : model.graph.nodes) fused |= n.domain == kFusedDomain;
  if (!fused) return;
  if (!imports_fused_domain(model)) model.opset_imports.push_back({kFusedDomain, kFusedDomainVersion});
  model.metadata[kWrittenByLockstep] = "1";
}

void fuse_nodes(onnx::Graph& graph) {
  fuse_softmax_nan_replacement(graph);
  fuse_silu(graph);
  fuse_gelu_erf_chain(graph);
  fuse_gelu_tanh_chain(graph);
  fuse_product_epilogues(graph);
}

}  // namespace lockstep
