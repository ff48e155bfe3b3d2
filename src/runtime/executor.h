// Runs a Plan on one provider: constants uploaded once, nodes in topological order, buffers released after
// their last reader, and CPU fallback for ops the provider has no kernel for.
#pragma once

#include <atomic>

#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "graph/plan.h"
#include "runtime/half_precision.h"
#include "runtime/log.h"
#include "runtime/profiler.h"
#include "runtime/provider.h"
#include "runtime/thread_pool.h"

namespace lockstep {

/// What one run may do: its tensor-size cap (SessionOptions::max_tensor_bytes, 0 = none) and the flag that stops it
/// (RunOptions::terminate; null = none).
struct RunControl {
  size_t max_tensor_bytes = 0;
  const std::atomic<bool>* terminate = nullptr;
};

/// What a run stopped by RunOptions::terminate throws (onnxruntime's words).
inline constexpr const char* kTerminated = "Exiting due to terminate flag being set to true.";
/// Throws Error(Fail, kTerminated) once the control's terminate flag is set.
void check_terminate(const RunControl& control);

/// A Constant whose value is a string tensor: a node that reads no string but makes one (and so runs on the host).
bool makes_strings(const onnx::Node& n);

/// A node of `op_type` with the attribute `axis` and `outputs` unnamed outputs, named as `node` so that its errors
/// name it: the Split and Concat that control flow and the sequence ops run for their data movement (run_helper).
onnx::Node helper_node(const onnx::Node& node, const char* op_type, int64_t axis, size_t outputs);

class Executor {
 public:
  /// `cpu` is the fallback provider (may be the same object as `provider`). Neither is owned.
  Executor(const Plan& plan, int64_t opset, Provider& provider, Provider& cpu, ThreadPool& pool, Logger& log);

  /// Runs the graph. `inputs` are on the provider's device, one per graph input (undefined Tensor = not fed:
  /// the initializer default is used). `outer` holds the enclosing graphs' values by name (subgraphs). A run
  /// checks `control.terminate` before each node and before each Loop or Scan iteration.
  /// Returns the graph outputs on the provider's device.
  std::vector<Tensor> run(const std::vector<Tensor>& inputs, const std::map<std::string, Tensor>& outer = {},
                          const RunControl& control = {});

  /// Whether `buffer` holds one of the graph's constants (subgraphs' too): a run hands out copies of those.
  bool holds_constant(const Buffer* buffer) const;

  /// Op types that ran on the CPU because the provider has no kernel for them.
  std::set<std::string> fallback_ops() const;

  /// The provider of each of the graph's nodes (Session::node_assignments).
  std::vector<NodeAssignment> assignments() const;

  /// Records a Node event per kernel run into `profiler` (not owned; nullptr stops recording), in subgraphs too
  /// (a Loop or Scan body's nodes once per iteration).
  /// Not to be called while a run is in progress.
  void set_profiler(Profiler* profiler);

 private:
  // env: the run's values on the provider's device, by value id; host: their host copies where a device session
  // has one (constants, host shape nodes' results), else empty; half_in_float: by value id, the half type of a
  // value left in float32 (keep_float_), else DType::Undefined.
  void run_node(const PlannedNode& pn, size_t index, std::vector<Tensor>& env, std::vector<Tensor>& host,
                std::vector<DType>& half_in_float, const std::map<std::string, Tensor>& outer,
                const RunControl& control);
  void run_kernel(const PlannedNode& pn, size_t index, std::vector<Tensor>& env, std::vector<Tensor>& host,
                  std::vector<DType>& half_in_float, const RunControl& control);
  void run_kernel_profiled(const PlannedNode& pn, size_t index, std::vector<Tensor>& env, std::vector<Tensor>& host,
                           std::vector<DType>& half_in_float, const RunControl& control);
  // Shape values on a device session: which nodes compute them on the host (see kHostShapeOps), whether this run's
  // inputs allow it, and the run itself (CPU kernel on the host copies; the results kept on the host and uploaded).
  void mark_host_shape_nodes();
  bool small_host_inputs(const PlannedNode& pn, const std::vector<Tensor>& host) const;
  void run_host_shape_node(const PlannedNode& pn, KernelContext& ctx, std::vector<Tensor>& env,
                           std::vector<Tensor>& host, HalfValuesInFloat* kept);
  void run_on_cpu_fallback(const PlannedNode& pn, KernelContext& ctx, std::vector<Tensor>& env,
                           HalfValuesInFloat* kept);
  // String tensors live on the host: a node that reads or makes one runs on the CPU whatever the provider.
  bool handles_strings(const PlannedNode& pn, size_t index, const std::vector<Tensor>& env) const;
  // Runs the node's CPU kernel on host copies of its inputs and puts its outputs on the provider's device.
  void run_on_host(const PlannedNode& pn, KernelContext& ctx, std::vector<Tensor>& env,
                   HalfValuesInFloat* kept = nullptr);
  // The same, leaving the outputs in ctx.outputs.
  void run_cpu_kernel(KernelContext& ctx, HalfValuesInFloat* kept = nullptr);
  // Runs fn under the half-precision rule (run_kernel_with_half_rule), with this device's Cast kernel.
  void call_kernel(KernelFn fn, KernelContext& ctx, HalfValuesInFloat* kept = nullptr);
  void on_provider(KernelContext& ctx);     // sets the context up for this provider's kernel

  // Control flow (If here; Loop and Scan in control_flow.cpp; the sequence ops, which also have no kernel, below). The logic runs on the host: it reads the condition
  // and trip count there and runs the subgraphs on this executor's provider, so their bits are the provider's.
  void run_control_flow(const PlannedNode& pn, size_t index, std::vector<Tensor>& env,
                        const std::map<std::string, Tensor>& outer, const RunControl& control);
  void run_if(const PlannedNode& pn, size_t index, std::vector<Tensor>& env, const std::map<std::string, Tensor>& outer,
              const RunControl& control);
  void run_loop(const PlannedNode& pn, size_t index, std::vector<Tensor>& env, const std::map<std::string, Tensor>& outer,
                const RunControl& control);
  void run_scan(const PlannedNode& pn, size_t index, std::vector<Tensor>& env, const std::map<std::string, Tensor>& outer,
                const RunControl& control);
  struct ScanLayout;
  struct Iterations;
  Iterations scan_iterations(const PlannedNode& pn, size_t index, std::vector<Tensor> states,
                             const std::vector<Tensor>& inputs, const ScanLayout& layout, int64_t length,
                             const std::map<std::string, Tensor>& scope, const RunControl& control);
  std::vector<Tensor> scan_unbatched(const PlannedNode& pn, size_t index, const std::vector<Tensor>& args,
                                     const std::map<std::string, Tensor>& scope, const RunControl& control);
  std::vector<Tensor> scan_batched(const PlannedNode& pn, size_t index, const std::vector<Tensor>& args,
                                   const std::map<std::string, Tensor>& scope, const RunControl& control);
  // The values subgraph `sub` of a node reads from enclosing graphs: this graph's, else those `outer` holds.
  std::map<std::string, Tensor> scope_of(const Plan& sub, const std::vector<Tensor>& env,
                                         const std::map<std::string, Tensor>& outer) const;
  // Data movement for Loop and Scan through the provider's Split and Concat kernels, so that it is the same on
  // every provider: `x` cut along `axis` into its elements (axis removed), and elements stacked along a new `axis`.
  std::vector<Tensor> unstack(const onnx::Node& node, const Tensor& x, int64_t axis, const RunControl& control);
  Tensor stack(const onnx::Node& node, const std::vector<Tensor>& items, int64_t axis, const RunControl& control);
  // A scan output from its elements (in iteration order); `element` is what the body declares for them.
  Tensor stack_scan_output(const onnx::Node& node, const onnx::ValueInfo& element, std::vector<Tensor> items,
                           int64_t axis, bool reverse, const RunControl& control);
  // Sequences (sequence.cpp): the sequence ops, and a node with a kernel that is given a sequence or an empty
  // optional (Identity and the Optional ops pass it on; a sequence given to another op is an error naming the input).
  bool reads_whole_values(const PlannedNode& pn, const std::vector<Tensor>& env) const;
  void run_on_whole_values(const PlannedNode& pn, std::vector<Tensor>& env);
  void run_sequence_op(const PlannedNode& pn, size_t index, std::vector<Tensor>& env,
                       const std::map<std::string, Tensor>& outer, const RunControl& control);
  Tensor split_to_sequence(const PlannedNode& pn, const std::vector<Tensor>& env, const RunControl& control);
  Tensor concat_from_sequence(const PlannedNode& pn, const std::vector<Tensor>& env, const RunControl& control);
  void run_sequence_map(const PlannedNode& pn, size_t index, std::vector<Tensor>& env,
                        const std::map<std::string, Tensor>& outer, const RunControl& control);
  std::vector<Tensor> run_helper(const onnx::Node& helper, const std::vector<const Tensor*>& inputs,
                                 const RunControl& control);

  const Plan& plan_;
  int64_t opset_;
  Provider& provider_;
  Provider& cpu_;
  ThreadPool& pool_;
  Logger& log_;
  Profiler* profiler_ = nullptr;  // null unless profiling: the only cost of profiling when it is off is testing this
  std::vector<Tensor> constants_;  // by value id, on the provider's device
  std::vector<Tensor> host_constants_;  // by value id: the constants on the host, half ones widened as constants_
  // By value id: the half type of a constant held widened to float32 (half_constants_in_float), else Undefined.
  std::vector<DType> constant_half_;
  std::set<const Buffer*> constant_buffers_;  // the buffers of constants_
  // By node index: the executors of a control-flow node's subgraphs (PlannedNode::subgraphs, in that order).
  std::map<size_t, std::vector<std::unique_ptr<Executor>>> subgraphs_;
  // By node index: what its kernel keeps between runs, and which of its inputs are constants.
  std::vector<std::unique_ptr<NodeState>> node_states_;
  std::vector<std::vector<bool>> constant_inputs_;
  std::vector<bool> host_shape_node_;  // by node index: computed on the host on a device provider
  std::vector<std::vector<bool>> keep_float_;  // by node index, per output: half_values_in_float
  bool keeps_half_values_ = false;             // some value is kept (keep_float_) or some constant widened
  std::vector<bool> makes_strings_;  // by node index: a Constant with a string value
  std::unique_ptr<std::atomic<bool>[]> read_strings_;  // by node index: a run found it reads or makes strings
  mutable std::mutex fallback_mutex_;
  std::set<std::string> fallback_ops_;
};

}  // namespace lockstep
