// Sequences of tensors (ONNX seq(tensor(T))). The executor runs the sequence ops itself, like control flow: a
// sequence is a Tensor that holds its items (Tensor::sequence), so most sequence ops only rearrange tensors, on the
// host, without touching their data. SplitToSequence and ConcatFromSequence move data with the provider's Split and
// Concat kernels, and SequenceMap runs its body on the provider, so a CUDA session gets the CPU's bits.
#include "graph/plan.h"
#include "ops/common.h"
#include "runtime/executor.h"

namespace lockstep {

namespace {

const Tensor& sequence_input(const PlannedNode& pn, const std::vector<Tensor>& env, size_t i) {
  const Tensor& s = env[pn.inputs.at(i)];
  if (!s.is_sequence())
    throw pn.node->error(ErrorCode::InvalidArgument, "input '" + pn.node->inputs[i] + "' must be a sequence, got a " +
                                                         dtype_name(s.dtype()) + " tensor");
  return s;
}

const Tensor& tensor_input(const PlannedNode& pn, const std::vector<Tensor>& env, size_t i) {
  const Tensor& t = env[pn.inputs.at(i)];
  if (t.is_sequence())
    throw pn.node->error(ErrorCode::InvalidArgument, "input '" + pn.node->inputs[i] + "' must be a tensor, got a sequence");
  return t;
}

bool given(const PlannedNode& pn, size_t i) { return i < pn.inputs.size() && pn.inputs[i] >= 0; }

// A position input (a single int32 or int64) checked against [-count, last] and made non-negative.
int64_t position(const PlannedNode& pn, const Tensor& host, int64_t count, int64_t last) {
  if (host.numel() != 1 || (host.dtype() != DType::Int32 && host.dtype() != DType::Int64))
    throw pn.node->error(ErrorCode::InvalidArgument, "the position must be a single int32 or int64, got " +
                                                         std::string(dtype_name(host.dtype())) + shape_string(host.shape()));
  const int64_t p = host.int_at(0);
  if (p < -count || p > last)
    throw pn.node->error(ErrorCode::InvalidArgument, "position " + std::to_string(p) + " is out of range [" +
                                                         std::to_string(-count) + ", " + std::to_string(last) +
                                                         "] for a sequence of " + std::to_string(count) + " tensors");
  return p < 0 ? p + count : p;
}

DType attr_dtype(const onnx::Node& node, const char* name, DType fallback) {
  return node.has(name) ? static_cast<DType>(node.attr_int(name, 0)) : fallback;
}

}  // namespace

bool Executor::reads_whole_values(const PlannedNode& pn, const std::vector<Tensor>& env) const {
  for (int id : pn.inputs)
    if (id >= 0 && (env[id].is_sequence() || !env[id].defined())) return true;
  return false;
}

// A node with a kernel given a sequence or an empty optional (only the ops of reads_empty_optionals get one): Identity
// and the Optional ops pass the value on as it is; no kernel reads a sequence.
void Executor::run_on_whole_values(const PlannedNode& pn, std::vector<Tensor>& env) {
  const std::string& op = pn.node->op_type;
  for (size_t i = 0; i < pn.inputs.size(); ++i)
    if (pn.inputs[i] >= 0 && env[pn.inputs[i]].is_sequence() && (i > 0 || (op != "OptionalHasElement" && op != "Identity" &&
                                                                           op != "Optional" && op != "OptionalGetElement")))
      throw pn.node->error(ErrorCode::InvalidArgument, "input '" + pn.node->inputs[i] + "' is a sequence; " + op +
                                                           " reads tensors there");
  const Tensor& value = env[pn.inputs[0]];
  if (op == "OptionalHasElement") {
    const uint8_t has = value.defined() ? 1 : 0;
    env[pn.outputs[0]] = provider_.upload_staged(Tensor::from_bytes(DType::Bool, {}, &has));
    return;
  }
  if (!value.defined() && op == "OptionalGetElement")
    throw pn.node->error(ErrorCode::InvalidArgument, "the optional input '" + pn.node->inputs[0] + "' is empty");
  if (pn.outputs[0] >= 0) env[pn.outputs[0]] = value;
}

void Executor::run_sequence_op(const PlannedNode& pn, size_t index, std::vector<Tensor>& env,
                               const std::map<std::string, Tensor>& outer, const RunControl& control) {
  const onnx::Node& node = *pn.node;
  const std::string& op = node.op_type;
  auto read_position = [&](size_t i, int64_t count, int64_t last) {
    return position(pn, provider_.download(tensor_input(pn, env, i)), count, last);
  };
  Tensor result;
  if (op == "SequenceEmpty") {
    result = Tensor::sequence(attr_dtype(node, "dtype", DType::Float), {});
  } else if (op == "SequenceConstruct") {
    if (pn.inputs.empty()) throw node.error(ErrorCode::InvalidGraph, "SequenceConstruct needs at least one input");
    std::vector<Tensor> items;
    for (size_t i = 0; i < pn.inputs.size(); ++i) items.push_back(tensor_input(pn, env, i));
    const DType element = items[0].dtype();  // before items is moved into the call
    result = Tensor::sequence(element, std::move(items));
  } else if (op == "SequenceInsert" || op == "SequenceErase") {
    const Tensor& s = sequence_input(pn, env, 0);
    std::vector<Tensor> items = s.items();
    const int64_t n = static_cast<int64_t>(items.size());
    if (op == "SequenceInsert") {
      const int64_t at = given(pn, 2) ? read_position(2, n, n) : n;
      items.insert(items.begin() + at, tensor_input(pn, env, 1));
    } else {
      if (n == 0) throw node.error(ErrorCode::InvalidArgument, "the sequence is empty: there is nothing to erase");
      items.erase(items.begin() + (given(pn, 1) ? read_position(1, n, n - 1) : n - 1));
    }
    result = Tensor::sequence(s.dtype(), std::move(items));
  } else if (op == "SequenceAt") {
    const Tensor& s = sequence_input(pn, env, 0);
    const int64_t n = static_cast<int64_t>(s.items().size());
    if (n == 0) throw node.error(ErrorCode::InvalidArgument, "the sequence is empty: there is no tensor to take");
    result = s.items()[read_position(1, n, n - 1)];
  } else if (op == "SequenceLength") {
    const int64_t n = static_cast<int64_t>(sequence_input(pn, env, 0).items().size());
    result = provider_.upload_staged(Tensor::from_bytes(DType::Int64, {}, &n));
  } else if (op == "SplitToSequence") {
    result = split_to_sequence(pn, env, control);
  } else if (op == "ConcatFromSequence") {
    result = concat_from_sequence(pn, env, control);
  } else {
    return run_sequence_map(pn, index, env, outer, control);
  }
  if (pn.outputs[0] >= 0) env[pn.outputs[0]] = std::move(result);
}

// SplitToSequence (11): without `split`, pieces of 1 along axis (squeezed unless keepdims); with a scalar, pieces
// of that length, the last one shorter where the length does not divide; with a list, pieces of those lengths.
Tensor Executor::split_to_sequence(const PlannedNode& pn, const std::vector<Tensor>& env, const RunControl& control) {
  const onnx::Node& node = *pn.node;
  const Tensor& x = tensor_input(pn, env, 0);
  const int64_t axis = normalize_axis(node, node.attr_int("axis", 0), x.rank());
  const int64_t length = x.shape()[axis];
  std::vector<int64_t> lengths;
  bool squeeze = false;
  if (!given(pn, 1)) {
    lengths.assign(length, 1);
    squeeze = node.attr_int("keepdims", 1) == 0;
  } else {
    const Tensor split = provider_.download(tensor_input(pn, env, 1));
    if (split.rank() > 1 || (split.dtype() != DType::Int32 && split.dtype() != DType::Int64))
      throw node.error(ErrorCode::InvalidArgument, "split must be an int32 or int64 scalar or 1-D tensor");
    if (split.rank() == 0) {
      const int64_t piece = split.int_at(0);
      if (piece <= 0) throw node.error(ErrorCode::InvalidArgument, "a scalar split must be positive, got " + std::to_string(piece));
      for (int64_t start = 0; start < length; start += piece) lengths.push_back(std::min(piece, length - start));
    } else {
      lengths = split.to_ints();
      int64_t total = 0;
      for (int64_t l : lengths) {
        if (l < 0) throw node.error(ErrorCode::InvalidArgument, "split lengths must not be negative");
        total += l;
      }
      if (total != length)
        throw node.error(ErrorCode::InvalidArgument, "split lengths add up to " + std::to_string(total) + ", but axis " +
                                                         std::to_string(axis) + " has " + std::to_string(length));
    }
  }
  std::vector<Tensor> pieces;
  if (lengths.size() == 1) {
    pieces.push_back(x);
  } else if (!lengths.empty()) {
    onnx::Node helper = helper_node(node, "Split", axis, lengths.size());
    std::vector<const Tensor*> inputs = {&x};
    Tensor split_input;
    if (opset_ < 13) {  // Split takes its lengths as an attribute before opset 13, as an input from 13 on
      onnx::Attribute a;
      a.name = "split";
      a.type = onnx::Attribute::Ints;
      a.ints = lengths;
      helper.attributes["split"] = a;
    } else {
      split_input = provider_.upload_staged(
          Tensor::from_bytes(DType::Int64, {static_cast<int64_t>(lengths.size())}, lengths.data()));
      inputs.push_back(&split_input);
    }
    pieces = run_helper(helper, inputs, control);
  }
  if (squeeze) {
    Shape element = x.shape();
    element.erase(element.begin() + axis);
    for (Tensor& p : pieces) p = p.reshaped(element);
  }
  return Tensor::sequence(x.dtype(), std::move(pieces));
}

// ConcatFromSequence (11): the items joined along axis, or stacked along a new axis (new_axis = 1).
Tensor Executor::concat_from_sequence(const PlannedNode& pn, const std::vector<Tensor>& env, const RunControl& control) {
  const onnx::Node& node = *pn.node;
  const Tensor& s = sequence_input(pn, env, 0);
  if (!node.has("axis")) throw node.error(ErrorCode::InvalidGraph, "ConcatFromSequence needs the attribute 'axis'");
  if (s.items().empty())
    throw node.error(ErrorCode::InvalidArgument, "the sequence is empty: there is nothing to concatenate");
  const bool new_axis = node.attr_int("new_axis", 0) != 0;
  const int64_t rank = s.items()[0].rank();
  const int64_t axis = normalize_axis(node, node.attr_int("axis", 0), new_axis ? rank + 1 : rank);
  if (new_axis) return stack(node, s.items(), axis, control);
  std::vector<const Tensor*> inputs;
  for (const Tensor& t : s.items()) inputs.push_back(&t);
  return run_helper(helper_node(node, "Concat", axis, 1), inputs, control)[0];
}

// SequenceMap (17): the body runs once per item of input 0; an additional input that is a sequence gives the body
// its item of the same index (it must be as long), a tensor is given whole every time. Output k is the sequence of
// the body's output k.
void Executor::run_sequence_map(const PlannedNode& pn, size_t index, std::vector<Tensor>& env,
                                const std::map<std::string, Tensor>& outer, const RunControl& control) {
  const onnx::Node& node = *pn.node;
  const onnx::Graph& body = *node.attr_graph("body");
  const size_t count = sequence_input(pn, env, 0).items().size();
  for (size_t i = 1; i < pn.inputs.size(); ++i) {
    const Tensor& extra = env[pn.inputs[i]];
    if (extra.is_sequence() && extra.items().size() != count)
      throw node.error(ErrorCode::InvalidArgument, "input '" + node.inputs[i] + "' has " +
                                                       std::to_string(extra.items().size()) + " tensors, input_sequence " +
                                                       std::to_string(count));
  }
  std::vector<std::vector<Tensor>> results(pn.outputs.size());
  Executor& exec = *subgraphs_.at(index)[0];
  const std::map<std::string, Tensor> scope = scope_of(*pn.subgraphs[0], env, outer);
  for (size_t t = 0; t < count; ++t) {
    check_terminate(control);
    std::vector<Tensor> args;
    for (int id : pn.inputs) args.push_back(env[id].is_sequence() ? env[id].items()[t] : env[id]);
    std::vector<Tensor> out = exec.run(args, scope, control);
    for (size_t k = 0; k < out.size() && k < results.size(); ++k) {
      if (out[k].is_sequence())
        throw node.error(ErrorCode::NotImplemented, "body output '" + body.outputs[k].name +
                                                        "' is a sequence: sequences of sequences are not supported");
      results[k].push_back(std::move(out[k]));
    }
  }
  for (size_t k = 0; k < pn.outputs.size(); ++k) {
    if (pn.outputs[k] < 0) continue;
    DType element = results[k].empty() ? body.outputs[k].dtype : results[k][0].dtype();
    if (element == DType::Undefined)
      throw node.error(ErrorCode::InvalidGraph, "the sequence is empty and the body declares no element type for '" +
                                                    body.outputs[k].name + "'");
    env[pn.outputs[k]] = Tensor::sequence(element, std::move(results[k]));
  }
}

}  // namespace lockstep
