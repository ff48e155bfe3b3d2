#include "runtime/executor.h"

#include "runtime/half_precision.h"

namespace lockstep {

namespace {
// Ops whose results a device session computes on the host when every input it reads is a small host value (a
// constant, or another such result): shapes, axes and indices, which Reshape, Unsqueeze, Slice, Range and the
// like then read on the host without waiting for the device. Shape and Size read only their input's shape.
const std::set<std::string> kHostShapeOps = {
    "Shape", "Size", "Constant", "Gather", "Unsqueeze", "Squeeze", "Concat", "Cast", "Slice", "Identity",
    "Reshape", "Flatten", "Add", "Sub", "Mul", "Div", "Neg", "Min", "Max", "Equal", "Less", "Greater", "Not",
    "And", "Or", "Where", "Range", "ReduceProd"};
constexpr int64_t kMaxHostShapeElements = 4096;  // larger inputs run on the device, whatever they derive from

bool reads_only_shapes(const onnx::Node& n) { return n.op_type == "Shape" || n.op_type == "Size"; }

// Ops whose inputs may be empty optionals: the Optional ops, Identity (opset 16 on), and control flow, whose
// subgraphs see the empty optional as it is (a Loop may carry one).
bool reads_empty_optionals(const onnx::Node& n) {
  static const std::set<std::string> ops = {"OptionalHasElement", "OptionalGetElement", "Identity", "If", "Loop"};
  return ops.count(n.op_type) > 0;
}
}  // namespace

bool makes_strings(const onnx::Node& n) {
  if (n.op_type != "Constant") return false;
  const onnx::Attribute* value = n.find("value");
  return n.has("value_string") || n.has("value_strings") || (value && value->t.dtype() == DType::String);
}

Executor::Executor(const Plan& plan, int64_t opset, Provider& provider, Provider& cpu, ThreadPool& pool, Logger& log)
    : plan_(plan), opset_(opset), provider_(provider), cpu_(cpu), pool_(pool), log_(log) {
  constants_.resize(plan.value_names.size());
  host_constants_.resize(plan.value_names.size());
  constant_half_.assign(plan.value_names.size(), DType::Undefined);
  const std::vector<bool> widen = half_constants_in_float(plan);
  for (const auto& [id, t] : plan.constants) {
    host_constants_[id] = widen[id] ? widen_on_host(t, pool, cpu.allocator()) : t;
    if (widen[id]) constant_half_[id] = t.dtype();
    constants_[id] = provider.upload(host_constants_[id]);
    constant_buffers_.insert(constants_[id].buffer().get());
  }
  for (const PlannedNode& pn : plan.nodes) {
    node_states_.push_back(std::make_unique<NodeState>());
    std::vector<bool> constant;
    for (int id : pn.inputs) constant.push_back(id >= 0 && plan.constants.count(id) > 0);
    constant_inputs_.push_back(std::move(constant));
    makes_strings_.push_back(makes_strings(*pn.node));
  }
  mark_host_shape_nodes();
  keep_float_ = half_values_in_float(plan_);
  for (const auto& per_node : keep_float_)
    for (bool keep : per_node) keeps_half_values_ = keeps_half_values_ || keep;
  for (DType t : constant_half_) keeps_half_values_ = keeps_half_values_ || t != DType::Undefined;
  read_strings_ = std::make_unique<std::atomic<bool>[]>(plan.nodes.size());
  for (size_t i = 0; i < plan.nodes.size(); ++i)
    for (const auto& sub : plan.nodes[i].subgraphs)
      subgraphs_[i].push_back(std::make_unique<Executor>(*sub, opset, provider, cpu, pool, log));
}

void check_terminate(const RunControl& control) {
  if (control.terminate && control.terminate->load(std::memory_order_relaxed))
    throw Error(ErrorCode::Fail, kTerminated);
}

void Executor::mark_host_shape_nodes() {
  host_shape_node_.assign(plan_.nodes.size(), false);
  if (provider_.device() == Device::CPU) return;
  std::vector<bool> on_host(plan_.value_names.size(), false);  // a constant, or a host shape node's result
  for (const auto& [id, t] : plan_.constants) on_host[id] = true;
  for (size_t i = 0; i < plan_.nodes.size(); ++i) {
    const PlannedNode& pn = plan_.nodes[i];
    if (!pn.entry || !pn.node->domain.empty() || !kHostShapeOps.count(pn.node->op_type)) continue;
    bool inputs_on_host = true;
    for (int id : pn.inputs) inputs_on_host = inputs_on_host && (id < 0 || on_host[id]);
    if (!inputs_on_host && !reads_only_shapes(*pn.node)) continue;
    host_shape_node_[i] = true;
    for (int id : pn.outputs)
      if (id >= 0) on_host[id] = true;
  }
}

bool Executor::holds_constant(const Buffer* buffer) const {
  if (constant_buffers_.count(buffer)) return true;
  for (const auto& [i, subs] : subgraphs_)
    for (const auto& e : subs)
      if (e->holds_constant(buffer)) return true;
  return false;
}

std::set<std::string> Executor::fallback_ops() const {
  std::lock_guard<std::mutex> lock(fallback_mutex_);
  std::set<std::string> all = fallback_ops_;
  for (const auto& [i, subs] : subgraphs_)
    for (const auto& e : subs) {
      auto sub = e->fallback_ops();
      all.insert(sub.begin(), sub.end());
    }
  return all;
}

std::vector<NodeAssignment> Executor::assignments() const {
  std::vector<NodeAssignment> out;
  for (size_t i = 0; i < plan_.nodes.size(); ++i) {
    const PlannedNode& pn = plan_.nodes[i];
    // Control flow has no kernel: the executor runs it, on the provider; its subgraphs' nodes are not listed.
    bool on_provider = !pn.entry || (provider_.kernel(*pn.entry) && !makes_strings_[i] && !read_strings_[i].load() &&
                                     !host_shape_node_[i]);
    out.push_back({pn.node->name, pn.node->op_type, pn.node->domain, on_provider ? provider_.name() : cpu_.name()});
  }
  return out;
}

void Executor::set_profiler(Profiler* profiler) {
  profiler_ = profiler;
  for (auto& [i, subs] : subgraphs_)
    for (auto& e : subs) e->set_profiler(profiler);
}

std::vector<Tensor> Executor::run(const std::vector<Tensor>& inputs, const std::map<std::string, Tensor>& outer,
                                  const RunControl& control) {
  std::vector<Tensor> env = constants_;
  for (size_t i = 0; i < plan_.graph_inputs.size() && i < inputs.size(); ++i)
    if (inputs[i].defined()) env[plan_.graph_inputs[i]] = inputs[i];
  for (const auto& name : plan_.outer_refs) {
    auto it = outer.find(name);
    if (it == outer.end()) throw Error(ErrorCode::Fail, "outer-scope value '" + name + "' is not available");
    env[plan_.id_of(name)] = it->second;
  }
  std::vector<Tensor> host;  // host copies, on a device provider: the constants, then the host shape nodes' results
  if (provider_.device() != Device::CPU) {
    host.resize(env.size());
    for (const auto& [id, t] : plan_.constants) host[id] = host_constants_[id];
  }
  std::vector<DType> half_in_float = constant_half_;  // by value id: see half_values_in_float
  for (size_t i = 0; i < plan_.nodes.size(); ++i)
    run_node(plan_.nodes[i], i, env, host, half_in_float, outer, control);
  std::vector<Tensor> out;
  for (size_t k = 0; k < plan_.graph_outputs.size(); ++k) {
    const int id = plan_.graph_outputs[k];
    if (!env[id].defined() && !plan_.optional_outputs[k])  // an optional output without a value is the empty optional
      throw Error(ErrorCode::Fail, "graph output '" + plan_.value_names[id] + "' has no value");
    out.push_back(env[id]);
  }
  return out;
}

void Executor::run_node(const PlannedNode& pn, size_t index, std::vector<Tensor>& env, std::vector<Tensor>& host,
                        std::vector<DType>& half_in_float, const std::map<std::string, Tensor>& outer,
                        const RunControl& control) {
  check_terminate(control);
  // An empty optional is a value that is not there: only the ops that take optionals read one (as an absent input).
  for (size_t i = 0; i < pn.inputs.size(); ++i)
    if (pn.inputs[i] >= 0 && !env[pn.inputs[i]].defined() && !reads_empty_optionals(*pn.node))
      throw pn.node->error(ErrorCode::InvalidArgument, "input '" + pn.node->inputs[i] + "' has no value");
  if (!pn.entry)
    run_control_flow(pn, index, env, outer, control);  // no event of its own: its subgraphs' nodes record theirs
  else if (reads_whole_values(pn, env))
    run_on_whole_values(pn, env);
  else if (profiler_)
    run_kernel_profiled(pn, index, env, host, half_in_float, control);
  else
    run_kernel(pn, index, env, host, half_in_float, control);
  for (int id : pn.release_after) {
    env[id] = Tensor();
    if (!host.empty()) host[id] = Tensor();
  }
}

void Executor::run_kernel(const PlannedNode& pn, size_t index, std::vector<Tensor>& env, std::vector<Tensor>& host,
                          std::vector<DType>& half_in_float, const RunControl& control) {
  KernelContext ctx(*pn.node, *pn.entry);
  ctx.opset = pn.node->opset ? pn.node->opset : opset_;  // a node an expansion made may follow a newer opset
  ctx.max_tensor_bytes = control.max_tensor_bytes;
  ctx.state = node_states_[index].get();
  ctx.constant_inputs = &constant_inputs_[index];
  std::vector<const Tensor*> host_copies;
  for (int id : pn.inputs) {
    ctx.inputs.push_back(id >= 0 ? &env[id] : nullptr);
    host_copies.push_back(id >= 0 && !host.empty() && host[id].defined() ? &host[id] : nullptr);
  }
  ctx.host_copies = &host_copies;
  ctx.outputs.resize(pn.outputs.size());
  if (provider_.device() == Device::CPU) {
    // A buffer another tensor shares (an alias from Reshape, a value an enclosing graph or the caller still holds)
    // is never handed over, whatever the plan says.
    ctx.donatable = pn.may_donate;
    for (size_t i = 0; i < pn.inputs.size(); ++i)
      if (ctx.donatable[i]) ctx.donatable[i] = env[pn.inputs[i]].buffer().use_count() == 1;
  }
  // A graph that leaves no half value in float32 runs every node without the bookkeeping: the rule then only needs
  // each input's own type.
  HalfValuesInFloat kept_values;
  HalfValuesInFloat* kept = keeps_half_values_ ? &kept_values : nullptr;
  if (kept) {
    kept->keep_output = keep_float_[index];
    for (int id : pn.inputs) kept->input_half.push_back(id >= 0 ? half_in_float[id] : DType::Undefined);
  }
  KernelFn fn = provider_.kernel(*pn.entry);
  if (!fn) {
    run_on_cpu_fallback(pn, ctx, env, kept);
  } else if (provider_.device() != Device::CPU && handles_strings(pn, index, env)) {
    read_strings_[index].store(true);
    run_on_host(pn, ctx, env);
  } else if (host_shape_node_[index] && small_host_inputs(pn, host)) {
    run_host_shape_node(pn, ctx, env, host, kept);
  } else {
    on_provider(ctx);
    call_kernel(fn, ctx, kept);
    for (size_t i = 0; i < pn.outputs.size(); ++i)
      if (pn.outputs[i] >= 0) env[pn.outputs[i]] = std::move(ctx.outputs[i]);
  }
  for (size_t i = 0; kept && i < pn.outputs.size() && i < kept->output_half.size(); ++i)
    if (pn.outputs[i] >= 0) half_in_float[pn.outputs[i]] = kept->output_half[i];
}

void Executor::on_provider(KernelContext& ctx) {
  ctx.device = provider_.device();
  ctx.allocator = &provider_.allocator();
  ctx.pool = &pool_;
  ctx.stream = provider_.stream();
  ctx.to_host = [this](const Tensor& t) { return provider_.download(t); };
}

void Executor::call_kernel(KernelFn fn, KernelContext& ctx, HalfValuesInFloat* kept) {
  run_kernel_with_half_rule(fn, ctx.device == Device::CPU ? cast_row().cpu : provider_.kernel(cast_row()), ctx, kept);
}

namespace {
std::vector<TypedShape> typed_shapes(const std::vector<int>& ids, const std::vector<Tensor>& env) {
  std::vector<TypedShape> shapes;
  for (int id : ids)
    if (id >= 0 && env[id].defined()) shapes.push_back({dtype_name(env[id].dtype()), env[id].shape()});
  return shapes;
}
}  // namespace

void Executor::run_kernel_profiled(const PlannedNode& pn, size_t index, std::vector<Tensor>& env,
                                   std::vector<Tensor>& host, std::vector<DType>& half_in_float,
                                   const RunControl& control) {
  ProfileEvent event;
  event.category = "Node";
  event.name = pn.node->name.empty() ? pn.node->op_type + "_" + std::to_string(index) : pn.node->name;
  event.op_type = pn.node->op_type;
  const bool on_host = !provider_.kernel(*pn.entry) || handles_strings(pn, index, env) ||
                       (host_shape_node_[index] && small_host_inputs(pn, host));
  event.provider = on_host ? cpu_.name() : provider_.name();
  event.inputs = typed_shapes(pn.inputs, env);
  // Waiting for the device before and after makes the event time this node's kernel alone, not queued work.
  provider_.synchronize();
  event.start_ns = profiler_->now_ns();
  run_kernel(pn, index, env, host, half_in_float, control);
  provider_.synchronize();
  event.duration_ns = profiler_->now_ns() - event.start_ns;
  event.outputs = typed_shapes(pn.outputs, env);
  profiler_->record(std::move(event));
}

// The CPU kernel implements the same contract, so the bits are those the provider's kernel would give.
void Executor::run_on_cpu_fallback(const PlannedNode& pn, KernelContext& ctx, std::vector<Tensor>& env,
                                   HalfValuesInFloat* kept) {
  {
    std::lock_guard<std::mutex> lock(fallback_mutex_);
    if (fallback_ops_.insert(pn.node->op_type).second)
      log_.warn(std::string(provider_.name()) + " has no kernel for " + pn.node->op_type + "; " + pn.node->label() +
                " and every later " + pn.node->op_type + " run on the CPU");
  }
  run_on_host(pn, ctx, env, kept);
}

bool Executor::handles_strings(const PlannedNode& pn, size_t index, const std::vector<Tensor>& env) const {
  if (makes_strings_[index]) return true;
  for (int id : pn.inputs)
    if (id >= 0 && env[id].dtype() == DType::String) return true;
  return false;
}

bool Executor::small_host_inputs(const PlannedNode& pn, const std::vector<Tensor>& host) const {
  if (reads_only_shapes(*pn.node)) return true;
  for (int id : pn.inputs)
    if (id >= 0 && (!host[id].defined() || host[id].numel() > kMaxHostShapeElements)) return false;
  return true;
}

void Executor::run_host_shape_node(const PlannedNode& pn, KernelContext& ctx, std::vector<Tensor>& env,
                                   std::vector<Tensor>& host, HalfValuesInFloat* kept) {
  std::vector<Tensor> host_inputs(ctx.inputs.size());
  for (size_t i = 0; i < ctx.inputs.size(); ++i) {
    const int id = pn.inputs[i];
    if (id < 0) continue;
    host_inputs[i] = host[id].defined() ? host[id] : env[id];  // Shape and Size read only the shape
    ctx.inputs[i] = &host_inputs[i];
  }
  ctx.device = Device::CPU;
  ctx.allocator = &cpu_.allocator();
  ctx.pool = &pool_;
  ctx.to_host = [](const Tensor& t) { return t; };
  call_kernel(pn.entry->cpu, ctx, kept);
  for (size_t i = 0; i < pn.outputs.size(); ++i) {
    const int id = pn.outputs[i];
    if (id < 0 || !ctx.outputs[i].defined()) continue;
    host[id] = ctx.outputs[i];
    env[id] = provider_.upload_staged(ctx.outputs[i]);  // for the device kernels that read it
  }
}

void Executor::run_on_host(const PlannedNode& pn, KernelContext& ctx, std::vector<Tensor>& env,
                           HalfValuesInFloat* kept) {
  run_cpu_kernel(ctx, kept);
  for (size_t i = 0; i < pn.outputs.size(); ++i)
    if (pn.outputs[i] >= 0 && ctx.outputs[i].defined()) env[pn.outputs[i]] = std::move(ctx.outputs[i]);
}

void Executor::run_cpu_kernel(KernelContext& ctx, HalfValuesInFloat* kept) {
  std::vector<Tensor> host_inputs(ctx.inputs.size());
  for (size_t i = 0; i < ctx.inputs.size(); ++i)
    if (ctx.inputs[i]) {
      const Tensor* host_copy = ctx.host_copies ? (*ctx.host_copies)[i] : nullptr;
      host_inputs[i] = host_copy ? *host_copy : provider_.download(*ctx.inputs[i]);
      ctx.inputs[i] = &host_inputs[i];
    }
  ctx.device = Device::CPU;
  ctx.allocator = &cpu_.allocator();
  ctx.pool = &pool_;
  ctx.to_host = [](const Tensor& t) { return t; };
  call_kernel(ctx.entry.cpu, ctx, kept);
  // Maps (and ZipMap's sequences of them) live on the host whatever the provider: only DictVectorizer, a CPU
  // kernel, and the graph outputs read them.
  for (Tensor& t : ctx.outputs)
    if (t.defined() && t.map_key() == DType::Undefined) t = provider_.upload(t);
}

std::map<std::string, Tensor> Executor::scope_of(const Plan& sub, const std::vector<Tensor>& env,
                                                const std::map<std::string, Tensor>& outer) const {
  std::map<std::string, Tensor> scope;
  for (const auto& name : sub.outer_refs) {
    int id = plan_.id_of(name);
    if (id >= 0 && env[id].defined())
      scope[name] = env[id];
    else if (auto it = outer.find(name); it != outer.end())
      scope[name] = it->second;
  }
  return scope;
}

void Executor::run_control_flow(const PlannedNode& pn, size_t index, std::vector<Tensor>& env,
                                const std::map<std::string, Tensor>& outer, const RunControl& control) {
  const std::string& op = pn.node->op_type;
  if (op == "If") return run_if(pn, index, env, outer, control);
  if (op == "Loop") return run_loop(pn, index, env, outer, control);
  if (is_sequence_op(*pn.node)) return run_sequence_op(pn, index, env, outer, control);
  run_scan(pn, index, env, outer, control);
}

void Executor::run_if(const PlannedNode& pn, size_t index, std::vector<Tensor>& env,
                      const std::map<std::string, Tensor>& outer, const RunControl& control) {
  if (pn.inputs.empty() || pn.inputs[0] < 0) throw pn.node->error(ErrorCode::InvalidGraph, "If needs a condition input");
  Tensor cond = provider_.download(env[pn.inputs[0]]);
  if (cond.numel() != 1 || cond.dtype() != DType::Bool)
    throw pn.node->error(ErrorCode::InvalidArgument, "the condition must be a single bool, got " +
                                                         std::string(dtype_name(cond.dtype())) + shape_string(cond.shape()));
  const size_t branch = cond.data<uint8_t>()[0] != 0 ? 0 : 1;  // then_branch, else_branch
  std::vector<Tensor> results =
      subgraphs_.at(index)[branch]->run({}, scope_of(*pn.subgraphs[branch], env, outer), control);
  for (size_t i = 0; i < pn.outputs.size() && i < results.size(); ++i)
    if (pn.outputs[i] >= 0) env[pn.outputs[i]] = results[i];
}

}  // namespace lockstep
