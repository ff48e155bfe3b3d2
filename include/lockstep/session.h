// lockstep public API: loading a model and running it.
//
//   lockstep::SessionOptions options;
//   options.provider = lockstep::Device::CPU;
//   lockstep::Session session("model.onnx", options);
//   std::vector<lockstep::Tensor> outputs = session.run({{"input", input_tensor}});
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "lockstep/error.h"
#include "lockstep/tensor.h"

namespace lockstep {

/// How a session is built.
struct SessionOptions {
  Device provider = Device::CPU;  // where the graph runs; CUDA needs a GPU and a CUDA build
  int device_id = 0;              // CUDA device ordinal
  int intra_op_num_threads = 0;   // CPU threads; 0 = one per hardware thread. Never changes a bit.
  /// The pool's threads stop spinning when a run returns and sleep until the next run's first parallel op (onnxruntime's
  /// session.force_spinning_stop); off, they spin up to 1 ms first, which the next run then finds awake.
  bool force_spinning_stop = false;
  int graph_optimization_level = 99;  // 0 disables constant folding; any other value enables it
  int log_severity_level = 2;     // 0 verbose, 1 info, 2 warning, 3 error, 4 fatal
  /// Records one event per executed node (and the session's creation and each run) until end_profiling().
  /// Off, it costs one branch per node; on, CUDA nodes are synchronized so that each event times its own kernel.
  bool enable_profiling = false;
  /// end_profiling() writes `<prefix>_<YYYY-MM-DD_HH-MM-SS_mmm>.json` in the current directory, as onnxruntime does.
  std::string profile_file_prefix = "onnxruntime_profile_";
  /// Fixes symbolic dims of the graph inputs before the session is built, as onnxruntime's
  /// AddFreeDimensionOverrideByName / AddFreeDimensionOverride (by denotation) do: a dim whose dim_param (or
  /// denotation) is a key becomes that value, so inputs() reports it and feeds must match it. Values must be >= 0.
  std::map<std::string, int64_t> free_dimension_overrides_by_name;
  std::map<std::string, int64_t> free_dimension_overrides_by_denotation;
  /// With a CUDA provider: refuse (Error NotImplemented, naming the node) a model with a node that has no CUDA
  /// kernel, instead of running that node on the CPU (onnxruntime's session.disable_cpu_ep_fallback).
  bool disable_cpu_fallback = false;
  /// The most bytes one tensor a run computes may take (0: no cap). A node whose output would be larger fails
  /// before anything is allocated, with Error(RuntimeError) naming the node and the size; the session stays
  /// usable. Sizes that overflow 64 bits are refused whatever the cap.
  size_t max_tensor_bytes = 0;
  /// The most bytes of freed host memory the session keeps for its later tensors (-1: twice the most its host
  /// tensors have held at once, and never less than the blocks its last run used; 0: none). Beyond it the least
  /// recently freed blocks go back to the system.
  int64_t max_cached_host_bytes = -1;
  /// The same for the CUDA provider's device memory (-1: the same default, counted on the device). The blocks beyond
  /// it go back when a run ends, after the device has finished the kernels that may still read them. A request the
  /// device cannot meet releases every kept block and tries again before it fails.
  int64_t max_cached_device_bytes = -1;
  /// When set, session creation writes the graph it runs (after constant folding and fusion) to this path as an
  /// ONNX model. Fused nodes keep lockstep's own domain, which the file imports ("lockstep", version 1, with the
  /// metadata entry lockstep.fused_graph = "1"), so the file loads back in lockstep and gives the same bits; other
  /// runtimes load it only when it has no fused node (e.g. with graph_optimization_level 0).
  std::string optimized_model_filepath;
  /// With optimized_model_filepath: the file, in the optimized model's folder, that receives the graphs'
  /// initializers of at least optimized_model_external_initializers_min_size_in_bytes (string tensors excepted) as
  /// external data (onnxruntime's session.optimized_model_external_initializers_file_name); empty keeps all inline.
  std::string optimized_model_external_initializers_file_name;
  uint64_t optimized_model_external_initializers_min_size_in_bytes = 1024;
  /// Replaces model initializers by name before the session is built (onnxruntime's AddInitializer): each must name
  /// an initializer of the main graph and have its element type and shape (Error InvalidArgument otherwise). The
  /// tensors must be host tensors; the session reads their memory, so the caller keeps it alive and unchanged.
  std::map<std::string, Tensor> initializer_overrides;
  /// Values for the main graph's initializers whose data is in external files (onnxruntime's
  /// AddExternalInitializers), by name: the file is not read, so it need not exist. Each must name such an
  /// initializer and have its element type and shape (Error InvalidArgument otherwise); host tensors, shared as
  /// initializer_overrides are.
  std::map<std::string, Tensor> external_initializers;
  /// The contents of external data files by the location the model's tensors give (onnxruntime's
  /// AddExternalInitializersFromFilesInMemory): such tensors are copied from this memory, not read from disk, which
  /// also lets a model loaded from bytes have external data. The memory need only outlive session creation.
  std::map<std::string, std::string_view> external_files_in_memory;
};

/// Per-run settings, as onnxruntime's RunOptions. `terminate` may be set from another thread while a run that was
/// given these options is going: the run stops before its next node or its next Loop or Scan iteration (so it
/// stops a Loop without trip count or condition) and throws Error(Fail) ("Exiting due to terminate flag being set
/// to true."); the session stays usable.
struct RunOptions {
  std::atomic<bool> terminate{false};
};

/// The element type and dims of one node input or output in a profile event.
struct TypedShape {
  std::string dtype;  // dtype_name(): "float", "int64"...
  std::vector<int64_t> dims;
};

/// One event of a session's profile, as onnxruntime records them.
struct ProfileEvent {
  std::string category;        // "Node": one executed node; "Session": "session_initialization" or "model_run"
  std::string name;            // the node's name (op type and index when the model leaves it empty), or the phase
  std::string op_type;         // Node events only
  std::string provider;        // Node events: where the kernel ran ("CPUExecutionProvider" for a CUDA fallback)
  std::vector<TypedShape> inputs, outputs;  // Node events; absent optional inputs and outputs are left out
  int64_t start_ns = 0;        // since profiling started (when the session's creation began)
  int64_t duration_ns = 0;
};

/// A node of the main graph and the provider that runs it (onnxruntime's EP graph assignment info).
struct NodeAssignment {
  std::string name, op_type, domain;  // as in the graph lockstep runs (fused nodes have lockstep's domain)
  std::string provider;               // "CPUExecutionProvider" or "CUDAExecutionProvider"
};

/// One declared graph input or output. Dims are -1 where the model names a symbol (see dim_params) or leaves
/// the dim unknown.
struct ValueInfo {
  std::string name;
  DType dtype = DType::Undefined;  // for a sequence, its items' element type
  DType map_key = DType::Undefined;  // map(map_key, tensor(dtype)), fed and returned as a Tensor::map; with
                                    // `sequence`, seq(map(...)); Undefined: a tensor or seq(tensor)
  bool sequence = false;           // seq(tensor(dtype)): fed and returned as a Tensor::sequence
  bool optional = false;           // optional(...): may be fed, and may come back, as an undefined Tensor (no value)
  bool has_shape = false;
  std::vector<int64_t> dims;
  std::vector<std::string> dim_params;  // the symbol of each dim, "" for fixed or unknown dims
};

/// Model metadata, as onnxruntime's get_modelmeta() gives it.
struct ModelMetadata {
  std::string producer_name, graph_name, domain, description, graph_description;
  int64_t version = 0;
  std::map<std::string, std::string> custom_metadata_map;
  std::vector<std::pair<std::string, int64_t>> opset_imports;  // (domain, version)
};

class SessionImpl;

/// A loaded model, ready to run. run() may be called repeatedly; a failed run leaves the session usable.
class Session {
 public:
  /// Loads a model file. Throws Error (NoSuchFile, InvalidGraph, NotImplemented...) naming what is wrong.
  Session(const std::string& model_path, const SessionOptions& options = {});
  /// Loads a serialized model from memory. Its external data must come from options.external_initializers or
  /// options.external_files_in_memory: there is no folder to read files from.
  Session(const void* model_bytes, size_t size, const SessionOptions& options = {});
  ~Session();
  Session(Session&&) noexcept;
  Session& operator=(Session&&) noexcept;

  const std::vector<ValueInfo>& inputs() const;
  const std::vector<ValueInfo>& outputs() const;
  const ModelMetadata& metadata() const;
  const SessionOptions& options() const;

  /// Runs the graph. `feeds` are tensors keyed by input name (host tensors here; see the overload below); every input without an initializer
  /// must be fed. `output_names` empty means all outputs, in graph order. Returns host tensors.
  /// Throws Error(InvalidArgument) naming the input for a wrong name, dtype, rank or dims.
  std::vector<Tensor> run(const std::map<std::string, Tensor>& feeds,
                          const std::vector<std::string>& output_names = {});

  /// run() with device-resident values. Feeds may be host tensors or tensors on the session's device, which are
  /// read in place (no copy; a CUDA feed to a CPU session is copied to the host, one on another CUDA device is an
  /// error). Work queued on the CUDA legacy default stream (cudaMemcpy, torch's default stream) is complete before
  /// the run reads a device feed; work on other streams must be synchronized by the caller first.
  /// `output_devices` has one entry per output asked for (per graph output when `output_names` is empty):
  /// Device::CPU returns that output on the host, the session's provider device leaves it there (no copy).
  /// Outputs never share memory with a feed, a constant of the model or another output, and are complete when
  /// run() returns. Throws Error(InvalidArgument) naming the output for a device the session cannot place it on.
  /// `run_options` (not owned; may be null) lets another thread stop the run.
  std::vector<Tensor> run(const std::map<std::string, Tensor>& feeds, const std::vector<std::string>& output_names,
                          const std::vector<Device>& output_devices, const RunOptions* run_options = nullptr);

  /// Ops that ran on the CPU although the session's provider is CUDA (no CUDA kernel), by op type.
  std::vector<std::string> fallback_ops() const;

  /// Each node of the main graph, in execution order, with the provider that runs it: the session's provider where
  /// it has the node's kernel, else the CPU. A node of a CUDA session that makes a string tensor runs on the CPU; one
  /// that reads a string tensor shows the CPU once a run has given it one (types are only known when it runs).
  std::vector<NodeAssignment> node_assignments() const;

  /// The events recorded so far (empty when profiling is off or has ended).
  std::vector<ProfileEvent> profile_events() const;
  /// Writes the recorded events as a Chrome trace (onnxruntime's JSON list of "ph":"X" events, microseconds),
  /// stops profiling and returns the file's path; returns "" when profiling is off, as onnxruntime does.
  /// Throws Error(Fail) naming the path when the file cannot be written. Not to be called during a run.
  std::string end_profiling();
  /// When profiling started, in nanoseconds since the Unix epoch (onnxruntime's get_profiling_start_time_ns).
  int64_t profiling_start_time_ns() const;

 private:
  std::unique_ptr<SessionImpl> impl_;
};

/// How often an op occurs in a model (subgraphs included) and which providers have a kernel for it.
struct OpUsage {
  std::string op_type;
  std::string domain;
  int count = 0;
  bool cpu = false;   // the CPU provider supports it at the model's opset
  bool cuda = false;  // the CUDA provider has its own kernel (otherwise it falls back to the CPU kernel)
};

/// What `lockstep info` prints: the declared inputs/outputs, opsets and an op histogram, without building a session.
struct ModelSummary {
  std::vector<ValueInfo> inputs, outputs;
  ModelMetadata metadata;
  std::vector<OpUsage> ops;  // sorted by op type
};
ModelSummary summarize_model(const std::string& model_path);

/// One row of lockstep's op table: a default-domain op over an opset range, and whether CUDA has its own kernel.
struct SupportedOp {
  std::string family;  // the op family: its files are src/ops/<family>.*, src/cpu/<family>.*, src/cuda/<family>.*
  std::string op_type;
  int since = 0, until = 0;
  bool cuda = false;
};
/// Every op lockstep implements (what `lockstep ops` prints), in family order.
std::vector<SupportedOp> supported_ops();

/// Providers usable on this machine, in onnxruntime's spelling ("CUDAExecutionProvider" only with a GPU).
std::vector<std::string> available_providers();

}  // namespace lockstep
