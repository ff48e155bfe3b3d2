#include "lockstep/session.h"

#include <algorithm>
#include <filesystem>
#include <set>

#include "lockstep/device.h"

#include "graph/expand.h"
#include "graph/plan.h"
#include "onnx/model.h"
#include "ops/ml.h"
#include "ops/registry.h"
#include "runtime/executor.h"
#include "runtime/profiler.h"

namespace lockstep {

namespace {

constexpr int64_t kMinOpset = 7, kMaxOpset = kNewestOpset;

// SessionOptions' max_cached_*_bytes: -1 is the allocator's default bound.
CacheBound cache_bound(int64_t max_cached_bytes) {
  return max_cached_bytes < 0 ? CacheBound::twice_peak() : CacheBound::fixed(static_cast<size_t>(max_cached_bytes));
}

ValueInfo public_info(const onnx::ValueInfo& v) {
  ValueInfo out;
  out.name = v.name;
  out.dtype = v.dtype;
  out.map_key = v.map_key;
  out.sequence = v.sequence;
  out.optional = v.optional;
  out.has_shape = v.has_shape;
  for (const auto& d : v.dims) {
    out.dims.push_back(d.value ? *d.value : -1);
    out.dim_params.push_back(d.param);
  }
  return out;
}

// onnxruntime's spelling of a value's type: "tensor(float)", "seq(tensor(float))", "seq(map(int64,tensor(float)))".
std::string type_text(DType dtype, DType map_key, bool sequence) {
  std::string type = "tensor(" + std::string(dtype_name(dtype)) + ")";
  if (map_key != DType::Undefined) type = "map(" + std::string(dtype_name(map_key)) + "," + type + ")";
  return sequence ? "seq(" + type + ")" : type;
}

std::string type_text(const Tensor& t) { return type_text(t.dtype(), t.map_key(), t.is_sequence()); }

// A value's tensors: a sequence's items' and a map's keys and values, or the tensor itself.
std::vector<Tensor> tensors_of(const Tensor& t) {
  if (t.is_map()) return {t.map_keys(), t.map_values()};
  if (!t.is_sequence()) return {t};
  std::vector<Tensor> parts;
  for (const Tensor& item : t.items())
    for (Tensor& part : tensors_of(item)) parts.push_back(std::move(part));
  return parts;
}

// Values that hold maps (map inputs, ZipMap's sequences of maps) reach only DictVectorizer and the graph outputs, as
// onnxruntime's type check has it: any other kernel given a map would read its (absent) data.
void check_map_readers(const Plan& plan, std::set<std::string>& maps) {
  for (const PlannedNode& pn : plan.nodes) {
    const onnx::Node& node = *pn.node;
    const bool dict_vectorizer = node.op_type == "DictVectorizer" && node.domain == kMlDomain;
    for (const auto& input : node.inputs)
      if (maps.count(input) && !dict_vectorizer)
        throw node.error(ErrorCode::InvalidGraph, "input '" + input + "' holds maps, which " + node.op_type +
                                                      " does not take (only DictVectorizer reads a map)");
    if (node.op_type == "ZipMap" && node.domain == kMlDomain) maps.insert(node.outputs.begin(), node.outputs.end());
    for (const auto& sub : pn.subgraphs) check_map_readers(*sub, maps);
  }
}

std::set<std::string> declared_maps(const onnx::Graph& graph) {
  std::set<std::string> names;
  for (const auto& v : graph.inputs)
    if (v.map_key != DType::Undefined) names.insert(v.name);
  return names;
}

int64_t ml_opset_of(const onnx::Model& model) {
  for (const auto& o : model.opset_imports)
    if (o.domain == kMlDomain) return o.version;
  return 0;
}

bool has_default_domain_node(const onnx::Graph& g) {
  for (const auto& n : g.nodes) {
    if (n.domain.empty() || n.domain == "ai.onnx") return true;
    for (const auto& [name, a] : n.attributes) {
      if (a.g && has_default_domain_node(*a.g)) return true;
      for (const auto& sub : a.graphs)
        if (has_default_domain_node(*sub)) return true;
    }
  }
  return false;
}

void check_opsets(const onnx::Model& model) {
  const int64_t ml_opset = ml_opset_of(model);
  if (ml_opset != 0 && (ml_opset < 1 || ml_opset > kNewestMlOpset))
    throw Error(ErrorCode::NotImplemented, std::string(kMlDomain) + " opset " + std::to_string(ml_opset) +
                                               " is not supported (lockstep supports 1 to " +
                                               std::to_string(kNewestMlOpset) + ")");
  int64_t opset = model.default_opset();
  // A model of ai.onnx.ml ops alone (a converted scikit-learn pipeline may be one) needs no default-domain import.
  if (opset == 0 && ml_opset != 0 && !has_default_domain_node(model.graph)) return;
  if (opset == 0) throw Error(ErrorCode::InvalidGraph, "the model imports no opset of the default ONNX domain");
  if (opset < kMinOpset || opset > kMaxOpset)
    throw Error(ErrorCode::NotImplemented, "default-domain opset " + std::to_string(opset) +
                                               " is not supported (lockstep supports opsets 7 to " + std::to_string(kMaxOpset) + ")");
}

const int64_t* override_of(const std::map<std::string, int64_t>& overrides, const std::string& key) {
  auto it = key.empty() ? overrides.end() : overrides.find(key);
  return it == overrides.end() ? nullptr : &it->second;
}

// Fixes the graph inputs' symbolic dims named (by dim_param, else by denotation) in the options' overrides.
void apply_free_dimension_overrides(onnx::Graph& graph, const SessionOptions& options) {
  for (const auto* overrides : {&options.free_dimension_overrides_by_name, &options.free_dimension_overrides_by_denotation})
    for (const auto& [key, value] : *overrides)
      if (value < 0)
        throw Error(ErrorCode::InvalidArgument, "free dimension override '" + key + "' must be >= 0, got " +
                                                    std::to_string(value));
  for (auto& input : graph.inputs)
    for (auto& d : input.dims) {
      if (d.value) continue;
      const int64_t* value = override_of(options.free_dimension_overrides_by_name, d.param);
      if (!value) value = override_of(options.free_dimension_overrides_by_denotation, d.denotation);
      if (value) d.value = *value;
    }
}

// The values a model declares as strings: graph inputs and initializers of type string.
std::set<std::string> declared_strings(const onnx::Graph& graph) {
  std::set<std::string> names;
  for (const auto& v : graph.inputs)
    if (v.dtype == DType::String) names.insert(v.name);
  for (const auto& [name, t] : graph.initializers)
    if (t.dtype() == DType::String) names.insert(name);
  return names;
}

// SessionOptions::initializer_overrides: same name, element type and shape as the model's initializer.
void apply_initializer_overrides(onnx::Graph& graph, const SessionOptions& options) {
  for (const auto& [name, t] : options.initializer_overrides) {
    auto it = graph.initializers.find(name);
    if (it == graph.initializers.end())
      throw Error(ErrorCode::InvalidArgument, "add_initializer: the model has no initializer '" + name + "'");
    onnx::check_replacement("add_initializer", name, t, it->second.dtype(), it->second.shape());
    it->second = t;
  }
}

// Throws NotImplemented for the first node (subgraphs included) the provider has no kernel for, or that reads or
// makes a string tensor (strings live on the host). The first node that reads a string reads one the model
// declares or a string Constant makes: every other string is made by a node that reads one, which comes earlier.
void check_no_cpu_fallback(const Plan& plan, const Provider& provider, const std::set<std::string>& strings) {
  for (const PlannedNode& pn : plan.nodes) {
    const std::string refused = std::string(provider.name()) + " has no kernel for " + pn.node->op_type;
    if (pn.entry && !provider.kernel(*pn.entry))
      throw pn.node->error(ErrorCode::NotImplemented, refused + " and CPU fallback is disabled");
    if (makes_strings(*pn.node))
      throw pn.node->error(ErrorCode::NotImplemented, refused + " making a string tensor (strings live on the host) "
                                                          "and CPU fallback is disabled");
    for (const auto& input : pn.node->inputs)
      if (strings.count(input))
        throw pn.node->error(ErrorCode::NotImplemented, refused + " on string input '" + input + "' (strings live "
                                                            "on the host) and CPU fallback is disabled");
    for (const auto& sub : pn.subgraphs) check_no_cpu_fallback(*sub, provider, strings);
  }
}

onnx::ExternalSources external_sources(const SessionOptions& options) {
  return {&options.external_initializers, &options.external_files_in_memory};
}

std::string dims_text(const ValueInfo& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.dims.size(); ++i)
    s += (i ? "," : "") + (v.dims[i] >= 0 ? std::to_string(v.dims[i]) : v.dim_params[i].empty() ? "?" : v.dim_params[i]);
  return s + "]";
}

}  // namespace

class SessionImpl {
 public:
  SessionImpl(onnx::Model model, const SessionOptions& options)
      : profiler_(options.enable_profiling ? std::make_unique<Profiler>() : nullptr), model_(std::move(model)),
        options_(options), log_(options.log_severity_level), pool_(options.intra_op_num_threads) {
    check_opsets(model_);
    apply_free_dimension_overrides(model_.graph, options);
    apply_initializer_overrides(model_.graph, options);
    options_.external_files_in_memory.clear();  // read by now; the caller's memory need not outlive creation
    refuse_fused_domain(model_);
    opset_ = model_.default_opset();
    expand_function_ops(model_.graph, opset_);
    if (options.graph_optimization_level > 0) {
      fold_constants(model_.graph, opset_);
      fuse_nodes(model_.graph);
      mark_fused_domain(model_);
    }
    if (!options.optimized_model_filepath.empty()) {
      refuse_mixed_opsets(model_.graph, opset_);
      onnx::save_model_file(model_, options.optimized_model_filepath,
                            {options.optimized_model_external_initializers_file_name,
                             options.optimized_model_external_initializers_min_size_in_bytes});
    }
    plan_ = build_plan(model_.graph, opset_, {}, ml_opset_of(model_));
    cpu_ = make_cpu_provider(cache_bound(options.max_cached_host_bytes));
    if (options.provider == Device::CUDA)
      provider_ = make_cuda_provider(options.device_id, cache_bound(options.max_cached_device_bytes));
    if (provider_ && options.disable_cpu_fallback) check_no_cpu_fallback(*plan_, *provider_, declared_strings(model_.graph));
    std::set<std::string> maps = declared_maps(model_.graph);
    check_map_readers(*plan_, maps);
    Provider& active = provider_ ? *provider_ : *cpu_;
    executor_ = std::make_unique<Executor>(*plan_, opset_, active, *cpu_, pool_, log_);
    describe();
    log_.info(std::string("session created on ") + active.name() + ": " + std::to_string(plan_->nodes.size()) +
              " nodes, " + std::to_string(plan_->constants.size()) + " constants, opset " + std::to_string(opset_));
    if (profiler_) {
      executor_->set_profiler(profiler_.get());
      profiler_->record(session_event("session_initialization", 0));
    }
  }

  std::vector<Tensor> run(const std::map<std::string, Tensor>& feeds, const std::vector<std::string>& names,
                          const std::vector<Device>& places, const RunOptions* run_options) {
    struct PoolRests {  // also when the run throws
      ThreadPool* pool;
      ~PoolRests() {
        if (pool) pool->rest();
      }
    } pool_rests{options_.force_spinning_stop ? &pool_ : nullptr};
    RunControl control{options_.max_tensor_bytes, run_options ? &run_options->terminate : nullptr};
    if (control.terminate && control.terminate->load())  // also for a graph without nodes
      throw Error(ErrorCode::Fail, kTerminated);
    if (!profiler_) return run_unprofiled(feeds, names, places, control);
    int64_t start = profiler_->now_ns();
    std::vector<Tensor> result = run_unprofiled(feeds, names, places, control);
    profiler_->record(session_event("model_run", start));
    return result;
  }

  std::vector<Tensor> run_unprofiled(const std::map<std::string, Tensor>& feeds, const std::vector<std::string>& names,
                                     const std::vector<Device>& places, const RunControl& control) {
    std::vector<size_t> wanted = select_outputs(names);
    check_places(wanted, places);
    Provider& active = provider_ ? *provider_ : *cpu_;
    std::vector<Tensor> inputs(plan_->graph_inputs.size());
    bool read_in_place = false;
    for (const auto& [name, tensor] : feeds) {
      size_t index = check_feed(name, tensor);
      inputs[index] = place_feed(name, tensor, active);
      for (const Tensor& part : tensors_of(tensor))
        read_in_place |= part.device() != Device::CPU && active.device() != Device::CPU;
    }
    check_all_fed(feeds);
    if (read_in_place) active.wait_for_default_stream();
    std::vector<Tensor> outputs = executor_->run(inputs, {}, control);
    active.synchronize();
    std::set<const Buffer*> taken;  // memory the caller already holds: the feeds and the outputs delivered so far
    for (const auto& [name, tensor] : feeds)
      for (const Tensor& part : tensors_of(tensor)) taken.insert(part.buffer().get());
    std::vector<Tensor> result;
    for (size_t k = 0; k < wanted.size(); ++k) result.push_back(deliver(outputs[wanted[k]], places[k], taken, active));
    cpu_->allocator().end_run();
    if (provider_) provider_->allocator().end_run();
    return result;
  }

  const std::vector<ValueInfo>& inputs() const { return inputs_; }
  const std::vector<ValueInfo>& outputs() const { return outputs_; }
  const ModelMetadata& metadata() const { return metadata_; }
  const SessionOptions& options() const { return options_; }
  std::vector<std::string> fallback_ops() const {
    auto s = executor_->fallback_ops();
    return {s.begin(), s.end()};
  }
  std::vector<NodeAssignment> node_assignments() const { return executor_->assignments(); }

  std::vector<ProfileEvent> profile_events() const { return profiler_ ? profiler_->events() : std::vector<ProfileEvent>{}; }
  int64_t profiling_start_time_ns() const { return profiler_ ? profiler_->start_time_ns() : 0; }
  std::string end_profiling() {
    if (!profiler_) return "";
    std::string path = profiler_->write_trace(options_.profile_file_prefix);
    executor_->set_profiler(nullptr);
    profiler_.reset();
    return path;
  }

 private:
  // A Session event from `start_ns` to now.
  ProfileEvent session_event(const std::string& name, int64_t start_ns) const {
    ProfileEvent e;
    e.category = "Session";
    e.name = name;
    e.start_ns = start_ns;
    e.duration_ns = profiler_->now_ns() - start_ns;
    return e;
  }

  void describe() {
    for (const auto& v : model_.graph.inputs)
      if (!model_.graph.initializers.count(v.name)) inputs_.push_back(public_info(v));
    for (const auto& v : model_.graph.outputs) outputs_.push_back(public_info(v));
    metadata_.producer_name = model_.producer_name;
    metadata_.graph_name = model_.graph.name;
    metadata_.domain = model_.domain;
    metadata_.description = model_.doc_string;
    metadata_.graph_description = model_.graph.doc_string;
    metadata_.version = model_.model_version;
    metadata_.custom_metadata_map = model_.metadata;
    for (const auto& o : model_.opset_imports) metadata_.opset_imports.emplace_back(o.domain, o.version);
  }

  std::vector<size_t> select_outputs(const std::vector<std::string>& names) const {
    std::vector<size_t> wanted;
    if (names.empty()) {
      for (size_t i = 0; i < outputs_.size(); ++i) wanted.push_back(i);
      return wanted;
    }
    for (const auto& n : names) {
      auto it = std::find_if(outputs_.begin(), outputs_.end(), [&](const ValueInfo& v) { return v.name == n; });
      if (it == outputs_.end()) throw Error(ErrorCode::InvalidArgument, "Invalid output name: " + n);
      wanted.push_back(static_cast<size_t>(it - outputs_.begin()));
    }
    return wanted;
  }

  void check_places(const std::vector<size_t>& wanted, const std::vector<Device>& places) const {
    if (places.size() != wanted.size())
      throw Error(ErrorCode::InvalidArgument, "run() was given " + std::to_string(places.size()) +
                                                  " output devices for " + std::to_string(wanted.size()) + " outputs");
    Device here = provider_ ? Device::CUDA : Device::CPU;
    for (size_t k = 0; k < wanted.size(); ++k)
      if (places[k] != Device::CPU && places[k] != here)
        throw Error(ErrorCode::InvalidArgument, "output '" + outputs_[wanted[k]].name +
                                                    "' cannot be left on CUDA: this session runs on the CPU");
  }

  // A feed as the executor reads it: on the session's device, in place where it already is there.
  Tensor place_feed(const std::string& name, const Tensor& t, Provider& active) const {
    if (t.is_sequence()) {
      std::vector<Tensor> items;
      for (const Tensor& item : t.items()) items.push_back(place_feed(name, item, active));
      return Tensor::sequence(t.dtype(), std::move(items), t.map_key());
    }
    if (!t.defined() || t.is_map()) return t;  // an empty optional; a map, which lives on the host
    if (t.device() == Device::CPU) return active.upload(t);
    if (active.device() == Device::CPU) return copy_to_host(t);
    if (t.device_id() != options_.device_id)
      throw Error(ErrorCode::InvalidArgument, "input '" + name + "' is on " + device_string(t.device(), t.device_id()) +
                                                  " but the session runs on " +
                                                  device_string(Device::CUDA, options_.device_id));
    return t;
  }

  // An output as the caller receives it: on `place`, in memory nobody else holds. Outputs that are a feed, a
  // constant or an earlier output (Identity, Reshape and graph outputs listed twice share buffers) are copied, so
  // that writing to one can neither change another nor the session's next runs.
  Tensor deliver(Tensor t, Device place, std::set<const Buffer*>& taken, Provider& active) const {
    if (t.is_sequence()) {
      std::vector<Tensor> items;
      for (const Tensor& item : t.items()) items.push_back(deliver(item, place, taken, active));
      return Tensor::sequence(t.dtype(), std::move(items), t.map_key());
    }
    if (t.is_map())  // on the host wherever asked for: maps live there
      return Tensor::map(deliver(t.map_keys(), Device::CPU, taken, active),
                         deliver(t.map_values(), Device::CPU, taken, active));
    if (!t.defined()) return t;  // an empty optional
    if (place == Device::CPU && t.device() != Device::CPU)
      t = active.download(t);
    else if (taken.count(t.buffer().get()) || executor_->holds_constant(t.buffer().get()))
      t = t.device() == Device::CPU ? t.clone() : active.copy(t);
    taken.insert(t.buffer().get());
    return t;
  }

  // Returns the graph-input index of a feed after checking its name, type, rank and fixed dims.
  size_t check_feed(const std::string& name, const Tensor& t) const {
    const auto& declared = model_.graph.inputs;
    auto it = std::find_if(declared.begin(), declared.end(), [&](const onnx::ValueInfo& v) { return v.name == name; });
    if (it == declared.end()) {
      std::string expected;
      for (const auto& v : inputs_) expected += (expected.empty() ? "" : ", ") + v.name;
      throw Error(ErrorCode::InvalidArgument, "Invalid input name: " + name + ". Expected one of: " + expected);
    }
    ValueInfo v = public_info(*it);
    const size_t index = static_cast<size_t>(it - declared.begin());
    if (!t.defined() && v.optional) return index;  // the empty optional
    if (v.dtype != DType::Undefined &&
        (t.dtype() != v.dtype || t.is_sequence() != v.sequence || t.map_key() != v.map_key))
      throw Error(ErrorCode::InvalidArgument, "Unexpected input data type for input '" + name + "'. Actual: (" +
                                                  type_text(t) + ") , expected: (" +
                                                  type_text(v.dtype, v.map_key, v.sequence) + ")");
    if (t.map_key() != DType::Undefined) return index;  // a map's declared shape is its values', which have no rank
    if (t.is_sequence()) {
      for (const Tensor& item : t.items()) check_shape(name, item, v);
      return index;
    }
    check_shape(name, t, v);
    return index;
  }

  // A feed's (or a fed sequence item's) rank and fixed dims against the declared shape.
  static void check_shape(const std::string& name, const Tensor& t, const ValueInfo& v) {
    if (v.has_shape && static_cast<size_t>(t.rank()) != v.dims.size())
      throw Error(ErrorCode::InvalidArgument, "Invalid rank for input: " + name + " Got: " + std::to_string(t.rank()) +
                                                  " Expected: " + std::to_string(v.dims.size()) + " (declared shape " +
                                                  dims_text(v) + ")");
    if (v.has_shape)
      for (size_t d = 0; d < v.dims.size(); ++d)
        if (v.dims[d] >= 0 && v.dims[d] != t.shape()[d])
          throw Error(ErrorCode::InvalidArgument, "Got invalid dimensions for input: " + name + " for the following indices index: " +
                                                      std::to_string(d) + " Got: " + std::to_string(t.shape()[d]) +
                                                      " Expected: " + std::to_string(v.dims[d]) + " (declared shape " +
                                                      dims_text(v) + ")");
  }

  void check_all_fed(const std::map<std::string, Tensor>& feeds) const {
    std::string missing;
    for (const auto& v : inputs_)
      if (!feeds.count(v.name) && !v.optional)  // an optional input left out is the empty optional
        missing += (missing.empty() ? "" : ", ") + v.name;
    if (!missing.empty()) throw Error(ErrorCode::InvalidArgument, "Required inputs are missing from the feed: " + missing);
  }

  std::unique_ptr<Profiler> profiler_;  // first, so that session_initialization times everything below
  onnx::Model model_;
  SessionOptions options_;
  Logger log_;
  ThreadPool pool_;
  int64_t opset_ = 0;
  std::unique_ptr<Plan> plan_;
  std::unique_ptr<Provider> cpu_, provider_;
  std::unique_ptr<Executor> executor_;
  std::vector<ValueInfo> inputs_, outputs_;
  ModelMetadata metadata_;
};

Session::Session(const std::string& model_path, const SessionOptions& options)
    : impl_(std::make_unique<SessionImpl>(onnx::load_model_file(model_path, external_sources(options)), options)) {}
Session::Session(const void* bytes, size_t size, const SessionOptions& options)
    : impl_(std::make_unique<SessionImpl>(onnx::parse_model(bytes, size, "", external_sources(options)), options)) {}
Session::~Session() = default;
Session::Session(Session&&) noexcept = default;
Session& Session::operator=(Session&&) noexcept = default;

const std::vector<ValueInfo>& Session::inputs() const { return impl_->inputs(); }
const std::vector<ValueInfo>& Session::outputs() const { return impl_->outputs(); }
const ModelMetadata& Session::metadata() const { return impl_->metadata(); }
const SessionOptions& Session::options() const { return impl_->options(); }
std::vector<std::string> Session::fallback_ops() const { return impl_->fallback_ops(); }
std::vector<NodeAssignment> Session::node_assignments() const { return impl_->node_assignments(); }
std::vector<ProfileEvent> Session::profile_events() const { return impl_->profile_events(); }
std::string Session::end_profiling() { return impl_->end_profiling(); }
int64_t Session::profiling_start_time_ns() const { return impl_->profiling_start_time_ns(); }

std::vector<Tensor> Session::run(const std::map<std::string, Tensor>& feeds, const std::vector<std::string>& output_names) {
  size_t count = output_names.empty() ? impl_->outputs().size() : output_names.size();
  return impl_->run(feeds, output_names, std::vector<Device>(count, Device::CPU), nullptr);
}
std::vector<Tensor> Session::run(const std::map<std::string, Tensor>& feeds, const std::vector<std::string>& output_names,
                                 const std::vector<Device>& output_devices, const RunOptions* run_options) {
  return impl_->run(feeds, output_names, output_devices, run_options);
}

namespace {
void count_ops(const onnx::Graph& g, int64_t opset, std::map<std::pair<std::string, std::string>, OpUsage>& ops) {
  for (const auto& n : g.nodes) {
    OpUsage& u = ops[{n.domain, n.op_type}];
    u.op_type = n.op_type;
    u.domain = n.domain;
    ++u.count;
    bool default_domain = n.domain.empty() || n.domain == "ai.onnx";
    const OpEntry* e = default_domain                ? find_op(n.op_type, opset)
                       : n.domain == kMlDomain        ? find_ml_op(n.op_type, kNewestMlOpset)
                       : n.domain == kMicrosoftDomain ? find_microsoft_op(n.op_type)
                                                      : nullptr;
    // An expanded op runs wherever its nodes run; the expansions use ops both providers have.
    const bool executor_runs = is_control_flow(n) || is_sequence_op(n) || find_expanded_op(n, opset);
    u.cpu = (e != nullptr) || executor_runs;
    u.cuda = (e && e->cuda) || executor_runs;
    for (const auto& [name, a] : n.attributes) {
      if (a.g) count_ops(*a.g, opset, ops);
      for (const auto& sub : a.graphs) count_ops(*sub, opset, ops);
    }
  }
}
}  // namespace

ModelSummary summarize_model(const std::string& model_path) {
  onnx::Model model = onnx::load_model_file(model_path);
  ModelSummary s;
  for (const auto& v : model.graph.inputs)
    if (!model.graph.initializers.count(v.name)) s.inputs.push_back(public_info(v));
  for (const auto& v : model.graph.outputs) s.outputs.push_back(public_info(v));
  s.metadata.producer_name = model.producer_name;
  s.metadata.graph_name = model.graph.name;
  s.metadata.version = model.model_version;
  for (const auto& o : model.opset_imports) s.metadata.opset_imports.emplace_back(o.domain, o.version);
  std::map<std::pair<std::string, std::string>, OpUsage> ops;
  count_ops(model.graph, model.default_opset(), ops);
  for (auto& [key, u] : ops) s.ops.push_back(u);
  return s;
}

std::vector<SupportedOp> supported_ops() {
  std::vector<SupportedOp> out;
  for (const RegisteredOp& r : all_ops())
    out.push_back({r.family, r.entry->op_type, r.entry->since, r.entry->until, r.entry->cuda != nullptr});
  // Control flow and the sequence ops have no row in the op table: the executor runs them, on whichever provider
  // the session has.
  for (const char* op : {"If", "Loop", "Scan"})
    out.push_back({"control flow", op, op == std::string("Scan") ? 8 : 1, kNewestOpset, LOCKSTEP_WITH_CUDA != 0});
  for (const OpEntry& e : microsoft_ops())
    out.push_back({"com.microsoft", e.op_type, e.since, e.until, e.cuda != nullptr});
  // Run as the ops they expand to (graph/expand.h), which every provider has.
  for (const ExpandedOp& e : expanded_ops())
    out.push_back({e.domain[0] ? e.domain : e.family, e.op_type, e.since, e.domain[0] ? 1 : kNewestOpset,
                   LOCKSTEP_WITH_CUDA != 0});
  for (const OpEntry& e : ml_ops()) out.push_back({"ml (ai.onnx.ml)", e.op_type, e.since, e.until, e.cuda != nullptr});
  for (const char* op : {"SequenceEmpty", "SequenceConstruct", "SequenceInsert", "SequenceAt", "SequenceErase",
                         "SequenceLength", "SplitToSequence", "ConcatFromSequence", "SequenceMap"})
    out.push_back({"sequence", op, static_cast<int>(sequence_op_since(op)), kNewestOpset, LOCKSTEP_WITH_CUDA != 0});
  return out;
}

std::vector<std::string> available_providers() {
  std::vector<std::string> p;
  if (cuda_available()) p.push_back("CUDAExecutionProvider");
  p.push_back("CPUExecutionProvider");
  return p;
}

}  // namespace lockstep
