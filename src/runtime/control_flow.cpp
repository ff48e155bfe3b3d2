// Loop and Scan. The executor runs them itself, like If: the iteration logic runs on the host (it reads the trip
// count and the conditions there) and each iteration runs the body on this executor's provider, so a CUDA session
// computes every body node with its CUDA kernel and gets the CPU's bits. Scan inputs are cut into their elements
// and scan outputs stacked with the provider's Split and Concat kernels, which move bytes and compute nothing.
#include <algorithm>
#include <cstring>

#include "ops/common.h"
#include "runtime/executor.h"

namespace lockstep {

// Where a Scan finds its elements and puts its outputs: per scan input its axis (normalized) and whether it is read
// last element first; per scan output its axis (as given: it is normalized against the element's rank once that is
// known) and whether it is written last element first.
struct Executor::ScanLayout {
  std::vector<int64_t> in_axes, out_axes;
  std::vector<bool> in_reverse, out_reverse;
};

// What the iterations of a Loop or Scan have produced so far.
struct Executor::Iterations {
  std::vector<Tensor> carried;               // the loop-carried values (Scan's states) the last iteration gave
  std::vector<std::vector<Tensor>> scanned;  // per scan output, the element each iteration gave
};

namespace {

std::string value_text(const Tensor& t) {
  if (!t.defined()) return "an empty optional";
  return t.is_sequence() ? "seq(" + std::string(dtype_name(t.dtype())) + ")"
                         : std::string(dtype_name(t.dtype())) + shape_string(t.shape());
}

// A single int64 or bool read on the host: Loop's trip count and conditions.
int64_t host_scalar(const onnx::Node& node, const Tensor& host, DType dtype, const std::string& what) {
  if (host.dtype() != dtype || host.numel() != 1)
    throw node.error(ErrorCode::InvalidArgument,
                     what + " must be a single " + dtype_name(dtype) + ", got " + value_text(host));
  return dtype == DType::Bool ? host.data<uint8_t>()[0] != 0 : host.data<int64_t>()[0];
}

// A value fed to the body must have the element type the body declares for that input (where it declares one):
// the body's kernels were written for it.
void check_body_inputs(const onnx::Node& node, const onnx::Graph& body, const std::vector<Tensor>& args) {
  for (size_t i = 0; i < args.size(); ++i) {
    const onnx::ValueInfo& input = body.inputs[i];
    if (!args[i].defined() && input.optional) continue;
    if ((input.dtype != DType::Undefined && args[i].dtype() != input.dtype) ||
        (args[i].defined() && input.dtype != DType::Undefined && args[i].is_sequence() != input.sequence))
      throw node.error(ErrorCode::InvalidArgument, "body input '" + input.name + "' is declared " +
                                                       (input.sequence ? "seq(" : "") + dtype_name(input.dtype) +
                                                       (input.sequence ? ")" : "") + " but is given " + value_text(args[i]));
  }
}

// Takes one iteration's body outputs from `first` on: the loop-carried values, then one element per scan output.
// A carried value keeps its type (and, in a Scan, its shape: `fixed_shapes`); every element of a scan output has
// the type and shape of the first, so that they stack.
void take_iteration(const onnx::Node& node, const onnx::Graph& body, std::vector<Tensor>& results, size_t first,
                    bool fixed_shapes, int64_t iteration, std::vector<Tensor>& carried,
                    std::vector<std::vector<Tensor>>& scanned) {
  const std::string at = " at iteration " + std::to_string(iteration);
  for (size_t j = 0; j < carried.size(); ++j) {
    Tensor& now = results[first + j];
    // An empty optional (no value) may become any value, and a value may become empty, where the body says optional.
    const bool empty = !now.defined() || !carried[j].defined();
    if (!empty && (now.dtype() != carried[j].dtype() || now.is_sequence() != carried[j].is_sequence() ||
                   (fixed_shapes && now.shape() != carried[j].shape())))
      throw node.error(ErrorCode::InvalidArgument,
                       std::string(fixed_shapes ? "state '" : "loop-carried value '") + body.outputs[first + j].name +
                           "' changed from " + value_text(carried[j]) + " to " + value_text(now) + at +
                           (fixed_shapes ? " (a Scan state keeps its type and shape)" : " (a loop-carried value keeps its type)"));
    carried[j] = std::move(now);
  }
  for (size_t k = 0; k < scanned.size(); ++k) {
    Tensor& element = results[first + carried.size() + k];
    if (!scanned[k].empty() && (element.dtype() != scanned[k][0].dtype() || element.shape() != scanned[k][0].shape()))
      throw node.error(ErrorCode::InvalidArgument, "scan output '" + body.outputs[first + carried.size() + k].name +
                                                       "' is " + value_text(element) + at + " but was " +
                                                       value_text(scanned[k][0]) + " at iteration 0");
    scanned[k].push_back(std::move(element));
  }
}

Tensor host_zeros(DType dtype, const Shape& shape) {
  if (dtype == DType::String) return Tensor::strings(shape);  // empty strings
  Tensor t = Tensor::empty(dtype, shape);
  if (t.bytes() > 0) std::memset(t.raw(), 0, t.bytes());
  return t;
}

// The scan output of no iteration: empty along the stacking axis, otherwise the shape the body declares for the
// element, unknown dims as 0; rank 1 ([0]) where the body declares no shape (as onnxruntime does).
Tensor empty_scan_output(const onnx::Node& node, const onnx::ValueInfo& element, int64_t axis) {
  if (element.dtype == DType::Undefined)
    throw node.error(ErrorCode::InvalidGraph, "no iteration ran and the body declares no element type for scan output '" +
                                                  element.name + "'");
  if (!element.has_shape) return host_zeros(element.dtype, {0});
  Shape shape;
  for (const onnx::Dim& d : element.dims) shape.push_back(d.value.value_or(0));
  shape.insert(shape.begin() + normalize_axis(node, axis, static_cast<int64_t>(shape.size()) + 1), 0);
  return host_zeros(element.dtype, shape);
}

}  // namespace

onnx::Node helper_node(const onnx::Node& node, const char* op_type, int64_t axis, size_t outputs) {
  onnx::Node helper;
  helper.name = node.name;  // a helper's errors name the node it works for
  helper.op_type = op_type;
  helper.outputs.assign(outputs, "");
  onnx::Attribute a;
  a.name = "axis";
  a.type = onnx::Attribute::Int;
  a.i = axis;
  helper.attributes["axis"] = a;
  return helper;
}

std::vector<Tensor> Executor::run_helper(const onnx::Node& helper, const std::vector<const Tensor*>& inputs,
                                         const RunControl& control) {
  const OpEntry* entry = find_op(helper.op_type, opset_);  // Split and Concat have rows for every opset
  KernelContext ctx(helper, *entry);
  ctx.opset = opset_;
  ctx.max_tensor_bytes = control.max_tensor_bytes;
  ctx.inputs = inputs;
  ctx.outputs.resize(helper.outputs.size());
  KernelFn fn = inputs[0]->dtype() == DType::String ? nullptr : provider_.kernel(*entry);  // strings: on the host
  if (!fn) {
    run_cpu_kernel(ctx);
  } else {
    on_provider(ctx);
    fn(ctx);
  }
  return std::move(ctx.outputs);
}

std::vector<Tensor> Executor::unstack(const onnx::Node& node, const Tensor& x, int64_t axis,
                                      const RunControl& control) {
  const int64_t n = x.shape()[axis];
  Shape element = x.shape();
  element.erase(element.begin() + axis);
  if (n <= 1) return n == 0 ? std::vector<Tensor>{} : std::vector<Tensor>{x.reshaped(element)};
  std::vector<Tensor> pieces = run_helper(helper_node(node, "Split", axis, static_cast<size_t>(n)), {&x}, control);
  for (Tensor& p : pieces) p = p.reshaped(element);
  return pieces;
}

Tensor Executor::stack(const onnx::Node& node, const std::vector<Tensor>& items, int64_t axis,
                       const RunControl& control) {
  Shape lifted = items[0].shape();
  lifted.insert(lifted.begin() + axis, 1);
  std::vector<Tensor> parts;
  std::vector<const Tensor*> inputs;
  parts.reserve(items.size());
  for (const Tensor& t : items) inputs.push_back(&parts.emplace_back(t.reshaped(lifted)));
  return run_helper(helper_node(node, "Concat", axis, 1), inputs, control)[0];
}

Tensor Executor::stack_scan_output(const onnx::Node& node, const onnx::ValueInfo& element, std::vector<Tensor> items,
                                   int64_t axis, bool reverse, const RunControl& control) {
  if (items.empty()) return provider_.upload(empty_scan_output(node, element, axis));
  if (reverse) std::reverse(items.begin(), items.end());
  return stack(node, items, normalize_axis(node, axis, items[0].rank() + 1), control);
}

// Loop (opsets 1-27): inputs M, cond, v_initial...; body (iteration, cond, v...) -> (cond, v..., scan elements...).
// Without M and cond it runs until RunOptions::terminate stops it (checked before each iteration and each node).
void Executor::run_loop(const PlannedNode& pn, size_t index, std::vector<Tensor>& env,
                        const std::map<std::string, Tensor>& outer, const RunControl& control) {
  const onnx::Node& node = *pn.node;
  const onnx::Graph& body = *node.attr_graph("body");
  const bool bounded = pn.inputs[0] >= 0, conditional = pn.inputs[1] >= 0;
  const int64_t trips = bounded ? host_scalar(node, provider_.download(env[pn.inputs[0]]), DType::Int64, "the trip count M") : 0;
  bool cond = !conditional || host_scalar(node, provider_.download(env[pn.inputs[1]]), DType::Bool, "the condition");
  Iterations it;
  for (size_t j = 2; j < pn.inputs.size(); ++j) it.carried.push_back(env[pn.inputs[j]]);
  it.scanned.resize(body.outputs.size() - 1 - it.carried.size());
  Executor& exec = *subgraphs_.at(index)[0];
  const std::map<std::string, Tensor> scope = scope_of(*pn.subgraphs[0], env, outer);
  for (int64_t i = 0; (!bounded || i < trips) && cond; ++i) {
    check_terminate(control);
    const uint8_t cond_in = 1;
    std::vector<Tensor> args = {provider_.upload_staged(Tensor::from_bytes(DType::Int64, {}, &i)),
                                provider_.upload_staged(Tensor::from_bytes(DType::Bool, {}, &cond_in))};
    args.insert(args.end(), it.carried.begin(), it.carried.end());
    check_body_inputs(node, body, args);
    std::vector<Tensor> results = exec.run(args, scope, control);
    // Without a cond input the body's cond output is ignored (ONNX: "for (int i=0; i < M; ++i)").
    if (conditional)
      cond = host_scalar(node, provider_.download(results[0]), DType::Bool,
                         "the body's condition output '" + body.outputs[0].name + "'");
    take_iteration(node, body, results, 1, false, i, it.carried, it.scanned);
  }
  for (size_t j = 0; j < it.carried.size(); ++j)
    if (pn.outputs[j] >= 0) env[pn.outputs[j]] = it.carried[j];
  for (size_t k = 0; k < it.scanned.size(); ++k) {
    const size_t o = it.carried.size() + k;
    if (pn.outputs[o] >= 0)
      env[pn.outputs[o]] = stack_scan_output(node, body.outputs[1 + o], std::move(it.scanned[k]), 0, false, control);
  }
}

Executor::Iterations Executor::scan_iterations(const PlannedNode& pn, size_t index, std::vector<Tensor> states,
                                               const std::vector<Tensor>& inputs, const ScanLayout& layout,
                                               int64_t length, const std::map<std::string, Tensor>& scope,
                                               const RunControl& control) {
  const onnx::Node& node = *pn.node;
  const onnx::Graph& body = *node.attr_graph("body");
  std::vector<std::vector<Tensor>> elements;
  for (size_t j = 0; j < inputs.size(); ++j) elements.push_back(unstack(node, inputs[j], layout.in_axes[j], control));
  Iterations it;
  it.scanned.resize(body.outputs.size() - states.size());
  it.carried = std::move(states);
  Executor& exec = *subgraphs_.at(index)[0];
  for (int64_t t = 0; t < length; ++t) {
    check_terminate(control);
    std::vector<Tensor> args = it.carried;
    for (size_t j = 0; j < inputs.size(); ++j) args.push_back(elements[j][layout.in_reverse[j] ? length - 1 - t : t]);
    check_body_inputs(node, body, args);
    std::vector<Tensor> results = exec.run(args, scope, control);
    take_iteration(node, body, results, 0, true, t, it.carried, it.scanned);
  }
  return it;
}

namespace {

std::vector<int64_t> ints_or(const onnx::Node& node, const char* attr, size_t count) {
  return node.has(attr) ? node.attr_ints(attr) : std::vector<int64_t>(count, 0);
}

// The number of iterations: every scan input's length along its scan axis, which must agree.
int64_t scan_length(const onnx::Node& node, const std::vector<Tensor>& inputs, const std::vector<int64_t>& axes) {
  const int64_t length = inputs[0].shape()[axes[0]];
  for (size_t j = 1; j < inputs.size(); ++j)
    if (inputs[j].shape()[axes[j]] != length)
      throw node.error(ErrorCode::InvalidArgument, "scan input " + std::to_string(j) + " (" + value_text(inputs[j]) +
                                                       ") has " + std::to_string(inputs[j].shape()[axes[j]]) +
                                                       " elements along its scan axis but scan input 0 (" +
                                                       value_text(inputs[0]) + ") has " + std::to_string(length));
  return length;
}

// Scan-8's batch: every input after sequence_lens has the same batch size (axis 0), the scan inputs (from 1 + n on)
// the same sequence length (axis 1). Returns each batch entry's length: sequence_lens (`lens`, on the host, if
// given: int64[batch], entries in [1, sequence length] as onnxruntime requires), else the sequence length.
std::vector<int64_t> sequence_lens(const onnx::Node& node, const std::vector<Tensor>& args, size_t n, const Tensor& lens) {
  for (size_t i = 1; i < args.size(); ++i)
    if (args[i].rank() < (i > n ? 2 : 1))
      throw node.error(ErrorCode::InvalidArgument, "input " + std::to_string(i) + " (" + value_text(args[i]) +
                                                       ") lacks the batch axis" + (i > n ? " and the sequence axis" : ""));
  const int64_t batch = args[1].shape()[0], seq = args[1 + n].shape()[1];
  for (size_t i = 1; i < args.size(); ++i)
    if (args[i].shape()[0] != batch || (i > n && args[i].shape()[1] != seq))
      throw node.error(ErrorCode::InvalidArgument, "input " + std::to_string(i) + " is " + value_text(args[i]) +
                                                       ", input 1 " + value_text(args[1]) + " and input " +
                                                       std::to_string(1 + n) + " " + value_text(args[1 + n]) +
                                                       ": the batch and sequence sizes differ");
  if (batch == 0) throw node.error(ErrorCode::NotImplemented, "a batch of size 0");
  if (!lens.defined()) return std::vector<int64_t>(static_cast<size_t>(batch), seq);
  if (lens.dtype() != DType::Int64 || lens.numel() != batch)
    throw node.error(ErrorCode::InvalidArgument,
                     "sequence_lens must be int64[" + std::to_string(batch) + "], got " + value_text(lens));
  for (int64_t l : lens.to_ints())
    if (l < 1 || l > seq)
      throw node.error(ErrorCode::InvalidArgument,
                       "sequence_lens entry " + std::to_string(l) + " is outside [1, " + std::to_string(seq) + "]");
  return lens.to_ints();
}

}  // namespace

// Scan-9 and later: inputs (N states, M scan inputs) with scan_input_axes/directions, scan outputs stacked along
// scan_output_axes in scan_output_directions.
std::vector<Tensor> Executor::scan_unbatched(const PlannedNode& pn, size_t index, const std::vector<Tensor>& args,
                                             const std::map<std::string, Tensor>& scope, const RunControl& control) {
  const onnx::Node& node = *pn.node;
  const onnx::Graph& body = *node.attr_graph("body");
  const size_t m = static_cast<size_t>(node.attr_int("num_scan_inputs", 0)), n = args.size() - m;
  const size_t k = body.outputs.size() - n;
  std::vector<Tensor> states(args.begin(), args.begin() + n), inputs(args.begin() + n, args.end());
  ScanLayout layout;
  const std::vector<int64_t> in_axes = ints_or(node, "scan_input_axes", m), in_dirs = ints_or(node, "scan_input_directions", m);
  const std::vector<int64_t> out_dirs = ints_or(node, "scan_output_directions", k);
  layout.out_axes = ints_or(node, "scan_output_axes", k);
  for (size_t j = 0; j < m; ++j) {
    if (inputs[j].rank() == 0) throw node.error(ErrorCode::InvalidArgument, "scan input " + std::to_string(j) + " is a scalar");
    layout.in_axes.push_back(normalize_axis(node, in_axes[j], inputs[j].rank()));
    layout.in_reverse.push_back(in_dirs[j] != 0);
  }
  for (int64_t d : out_dirs) layout.out_reverse.push_back(d != 0);
  Iterations it = scan_iterations(pn, index, states, inputs, layout, scan_length(node, inputs, layout.in_axes), scope, control);
  std::vector<Tensor> results = it.carried;
  for (size_t o = 0; o < k; ++o)
    results.push_back(stack_scan_output(node, body.outputs[n + o], std::move(it.scanned[o]), layout.out_axes[o],
                                        layout.out_reverse[o], control));
  return results;
}

// Scan-8: inputs (sequence_lens, N states, M scan inputs), every one with a batch axis 0 and the scan inputs'
// sequence axis 1. Each batch entry is scanned alone over its first sequence_lens[b] elements (in `directions`);
// its scan outputs are padded with zeros to the longest sequence, as in onnxruntime.
std::vector<Tensor> Executor::scan_batched(const PlannedNode& pn, size_t index, const std::vector<Tensor>& args,
                                           const std::map<std::string, Tensor>& scope, const RunControl& control) {
  const onnx::Node& node = *pn.node;
  const onnx::Graph& body = *node.attr_graph("body");
  const size_t m = static_cast<size_t>(node.attr_int("num_scan_inputs", 0)), n = args.size() - 1 - m;
  const size_t k = body.outputs.size() - n;
  const std::vector<int64_t> lens =
      sequence_lens(node, args, n, args[0].defined() ? provider_.download(args[0]) : Tensor());
  const int64_t batch = static_cast<int64_t>(lens.size()), seq = args[1 + n].shape()[1];
  ScanLayout layout;
  layout.in_axes.assign(m, 0);  // once the batch axis is cut off
  for (int64_t d : ints_or(node, "directions", m)) layout.in_reverse.push_back(d != 0);
  std::vector<std::vector<Tensor>> per_batch;  // per input after sequence_lens, its batch entries
  for (size_t i = 1; i < args.size(); ++i) per_batch.push_back(unstack(node, args[i], 0, control));
  std::vector<std::vector<Tensor>> outputs(body.outputs.size());  // per output, its batch entries
  for (int64_t b = 0; b < batch; ++b) {
    std::vector<Tensor> states, inputs;
    for (size_t i = 0; i < n + m; ++i) (i < n ? states : inputs).push_back(per_batch[i][b]);
    Iterations it = scan_iterations(pn, index, states, inputs, layout, lens[b], scope, control);
    for (size_t j = 0; j < n; ++j) outputs[j].push_back(it.carried[j]);
    for (size_t o = 0; o < k; ++o) {
      std::vector<Tensor>& elements = it.scanned[o];  // lens[b] >= 1 of them
      if (lens[b] < seq)
        elements.resize(static_cast<size_t>(seq), provider_.upload(host_zeros(elements[0].dtype(), elements[0].shape())));
      outputs[n + o].push_back(stack(node, elements, 0, control));
    }
  }
  std::vector<Tensor> results;
  for (const auto& entries : outputs) results.push_back(stack(node, entries, 0, control));
  return results;
}

void Executor::run_scan(const PlannedNode& pn, size_t index, std::vector<Tensor>& env,
                        const std::map<std::string, Tensor>& outer, const RunControl& control) {
  std::vector<Tensor> args;
  for (int id : pn.inputs) args.push_back(id >= 0 ? env[id] : Tensor());
  const bool batched = opset_ <= kLastBatchedScan;  // inputs that feed the body are given (build_plan checks)
  const std::map<std::string, Tensor> scope = scope_of(*pn.subgraphs[0], env, outer);
  std::vector<Tensor> results = batched ? scan_batched(pn, index, args, scope, control)
                                        : scan_unbatched(pn, index, args, scope, control);
  for (size_t i = 0; i < pn.outputs.size(); ++i)
    if (pn.outputs[i] >= 0) env[pn.outputs[i]] = std::move(results[i]);
}

}  // namespace lockstep
