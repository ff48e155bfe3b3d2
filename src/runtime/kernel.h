// The interface between the executor and the kernels of every provider.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "lockstep/error.h"
#include "lockstep/tensor.h"
#include "onnx/model.h"

namespace lockstep {

class ThreadPool;
struct KernelContext;

using KernelFn = void (*)(KernelContext&);

/// The newest default-domain opset lockstep reads: that of the pinned onnx (1.23.1). Rows end here when the op has
/// not changed since their `since` in ways lockstep's types see (the opset 24-28 changes of the ops lockstep has add
/// float8e8m0 (which only Cast takes, with its round_mode), int2/uint2 and float6 types, which lockstep refuses,
/// and Mod's float fmod=0, refused at 28).
constexpr int kNewestOpset = 28;

/// One row of the op table. `variant` lets one kernel serve a family (e.g. every unary op) as a table lookup.
struct OpEntry {
  const char* op_type;
  int since;      // first default-domain opset this row handles
  int until;      // last opset this row handles
  KernelFn cpu;   // never null
  KernelFn cuda;  // null: the op falls back to the CPU kernel, with a logged warning
  int variant = 0;
};

/// Device memory for one provider. Buffers return to the allocator when their last Tensor drops them.
class Allocator {
 public:
  virtual ~Allocator() = default;
  virtual std::shared_ptr<Buffer> allocate(size_t bytes) = 0;
  /// A session run has ended (the session calls it): a caching allocator measures each run's working set.
  virtual void end_run() {}
};

/// What a kernel keeps for its node from one run to the next (Conv: its weights packed once). One value per node,
/// made by the first run that asks for it and replaced when it no longer fits; runs may be concurrent, so
/// get_or_make builds under a lock. A kernel may only keep what derives from constant inputs
/// (KernelContext::input_is_constant) and the kernel's own settings (checked by `fits`).
class NodeState {
 public:
  template <typename T, typename Fits, typename Make>
  std::shared_ptr<const T> get_or_make(Fits fits, Make make) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto value = std::static_pointer_cast<const T>(value_);
    if (!value || !fits(*value)) {
      value = std::make_shared<const T>(make());
      value_ = value;
    }
    return value;
  }

 private:
  std::mutex mutex_;
  std::shared_ptr<const void> value_;  // always a T of the node's one kernel
};

/// Everything a kernel sees while it runs one node. Kernels allocate outputs through output().
struct KernelContext {
  KernelContext(const onnx::Node& n, const OpEntry& e) : node(n), entry(e) {}

  const onnx::Node& node;
  const OpEntry& entry;
  int64_t opset = 0;                    // the model's default-domain opset
  size_t max_tensor_bytes = 0;          // output() refuses larger outputs (SessionOptions::max_tensor_bytes; 0: none)
  std::vector<const Tensor*> inputs;    // nullptr for an absent optional input
  std::vector<Tensor> outputs;          // one per node output, filled by the kernel
  Device device = Device::CPU;
  Allocator* allocator = nullptr;
  ThreadPool* pool = nullptr;           // CPU kernels split work over outputs with it
  void* stream = nullptr;               // CUDA kernels launch on this cudaStream_t
  // Copies a device tensor to the host (identity for host tensors); set by the provider.
  std::function<Tensor(const Tensor&)> to_host;
  NodeState* state = nullptr;                        // null where nothing is kept between runs (e.g. tests)
  const std::vector<bool>* constant_inputs = nullptr;  // per input: an initializer, the same tensor every run
  // Per input: a host copy of the input (a constant, or a shape value the executor computed on the host), or
  // nullptr. host_input() reads it instead of downloading the device copy, so a shape input (Unsqueeze's axes,
  // Reshape's shape) costs no device synchronisation.
  const std::vector<const Tensor*>* host_copies = nullptr;
  // Per input: no later node reads it and no other tensor shares its buffer, so an output may be written over it
  // (output_over_input). Set by the executor on the CPU provider; empty elsewhere (tests, devices): none may.
  std::vector<bool> donatable;

  int num_inputs() const { return static_cast<int>(inputs.size()); }
  bool has_input(int i) const { return i < num_inputs() && inputs[i] != nullptr; }
  /// Input i holds the same values in every run of this session (so a NodeState may keep what derives from it).
  bool input_is_constant(int i) const {
    return constant_inputs && i < static_cast<int>(constant_inputs->size()) && (*constant_inputs)[i];
  }
  /// Input i; throws InvalidGraph naming the node if it is absent.
  const Tensor& input(int i) const;
  /// Input i as a host tensor (shape-like inputs: Reshape's shape, Slice's starts...).
  Tensor host_input(int i) const;
  /// Allocates output i on this kernel's device. Throws Error(RuntimeError) naming the node, before allocating, for
  /// a size that overflows 64 bits or exceeds max_tensor_bytes, and when the device is out of memory.
  Tensor& output(int i, DType dtype, Shape shape);
  /// Output i as a string tensor on the host, whatever this kernel's device (a device kernel whose strings are
  /// looked up on the host: the ml classifiers' labels), with output()'s checks.
  Tensor& host_string_output(int i, Shape shape);
  /// output(), but over input `from`'s buffer when that input is donatable and has the output's element count and
  /// element size (so it is not broadcast), which saves the memory traffic of a fresh output. Only for kernels that
  /// read each element of that input before writing the output element at the same index, and no other element of
  /// it after (elementwise maps).
  Tensor& output_over_input(int i, int from, DType dtype, Shape shape);
  /// Whether output_over_input(i, from, dtype, shape) would take input `from`'s buffer.
  bool may_write_over(int from, DType dtype, const Shape& shape) const;
  /// output()'s checks alone, returning the size in bytes: for plans that compute with an output shape taken from
  /// a feed (strides, offsets) before allocating it, where a shape whose size overflows must stop first.
  uint64_t check_output(int i, DType dtype, const Shape& shape) const {
    return check_output_on(i, dtype, shape, device);
  }
  /// check_output for a tensor made on `where` (strings only on the host).
  uint64_t check_output_on(int i, DType dtype, const Shape& shape, Device where) const;
  /// Output i is `t` itself (no copy): Reshape, Identity, Squeeze share their input's buffer.
  void alias_output(int i, const Tensor& t) { outputs.at(i) = t; }
  std::string output_what(int i, DType dtype, const Shape& shape) const;
  Error error(const std::string& message, ErrorCode code = ErrorCode::InvalidArgument) const {
    return node.error(code, message);
  }
};

/// Throws NotImplemented, naming the node and `what`, unless `t` is float32: the kernels of the ops that compute take
/// float32, and float16 and bfloat16 inputs reach them widened (docs/arithmetic.md#half-precision).
void require_float(const KernelContext& ctx, const Tensor& t, const std::string& what);

}  // namespace lockstep
