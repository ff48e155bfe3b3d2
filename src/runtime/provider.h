// An execution provider: a device, its allocator, its kernels and the copies to and from the host.
// A float64 reference provider (the roadmap's `lockstep compare`) fits the same interface.
#pragma once

#include <memory>
#include <string>

#include "ops/registry.h"
#include "runtime/kernel.h"

namespace lockstep {

class Provider {
 public:
  virtual ~Provider() = default;
  virtual Device device() const = 0;
  /// onnxruntime's spelling: "CPUExecutionProvider", "CUDAExecutionProvider".
  virtual const char* name() const = 0;
  virtual Allocator& allocator() = 0;
  /// This provider's kernel for a table row, or nullptr when it has none (the executor then falls back to the CPU).
  virtual KernelFn kernel(const OpEntry& entry) const = 0;
  /// Copies a host tensor onto this device (shares it when the device is the host).
  virtual Tensor upload(const Tensor& host) = 0;
  /// Copies a tensor of this device to the host (shares it when the device is the host).
  virtual Tensor download(const Tensor& t) = 0;
  /// The stream kernels launch on (CUDA), or nullptr.
  virtual void* stream() { return nullptr; }
  /// Waits for all queued work; throws RuntimeError if the device reported a failure.
  virtual void synchronize() {}
};

std::unique_ptr<Provider> make_cpu_provider();
/// Throws Error(NotImplemented) when lockstep was built without CUDA, Error(RuntimeError) when no GPU is usable.
std::unique_ptr<Provider> make_cuda_provider(int device_id);
/// True when the build has the CUDA provider and a GPU with a working driver is present.
bool cuda_available();

/// A host allocator that keeps freed blocks by size and hands them out again: the memory plan's buffer reuse.
std::unique_ptr<Allocator> make_host_pool_allocator();

}  // namespace lockstep
