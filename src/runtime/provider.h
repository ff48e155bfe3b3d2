// An execution provider: a device, its allocator, its kernels and the copies to and from the host.
// A float64 reference provider (the roadmap's `lockstep compare`) fits the same interface.
#pragma once

#include <memory>
#include <string>

#include "ops/registry.h"
#include "runtime/caching_allocator.h"
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
  /// upload() without waiting for the copy: for host memory lockstep allocated (pageable), which the copy has
  /// staged when this returns.
  virtual Tensor upload_staged(const Tensor& host) { return upload(host); }
  /// Copies a tensor of this device to the host (shares it when the device is the host).
  virtual Tensor download(const Tensor& t) = 0;
  /// A deep copy of a tensor of this device, on this device; returns once the copy is complete.
  virtual Tensor copy(const Tensor& t) = 0;
  /// Orders this provider's later work after everything queued so far on the CUDA legacy default stream (where
  /// cudaMemcpy and torch's default stream write device feeds); nothing to do on the host.
  virtual void wait_for_default_stream() {}
  /// The stream kernels launch on (CUDA), or nullptr.
  virtual void* stream() { return nullptr; }
  /// Waits for all queued work; throws RuntimeError if the device reported a failure.
  virtual void synchronize() {}
};

/// The host provider; its allocator keeps freed blocks within `cache` (SessionOptions::max_cached_host_bytes).
std::unique_ptr<Provider> make_cpu_provider(CacheBound cache = CacheBound::twice_peak());
/// Throws Error(NotImplemented) when lockstep was built without CUDA, Error(RuntimeError) when no GPU is usable. Its
/// allocator keeps freed device blocks within `cache` (SessionOptions::max_cached_device_bytes).
std::unique_ptr<Provider> make_cuda_provider(int device_id, CacheBound cache = CacheBound::twice_peak());
/// True when the build has the CUDA provider and a GPU with a working driver is present.
bool cuda_available();

/// The CUDA primitives under lockstep/device.h (src/cuda/provider.cu; without CUDA they throw NotImplemented).
/// Memory of CUDA device `device_id` outside any session, freed with cudaFree when the last Tensor drops it.
std::shared_ptr<Buffer> cuda_buffer(size_t bytes, int device_id);
/// Copies `bytes` between any two places (host or CUDA memory, told apart by unified addressing); returns when done.
void copy_device_bytes(void* dst, const void* src, size_t bytes);
/// Where CUDA says `p` points: Device::CPU for host memory it does not manage, else CUDA and its ordinal.
void cuda_pointer_location(const void* p, Device& device, int& device_id);
void cuda_synchronize_device(int device_id);

/// A host allocator that keeps freed blocks, within `cache`, and hands them out again: the memory plan's buffer reuse.
std::unique_ptr<Allocator> make_host_pool_allocator(CacheBound cache);

}  // namespace lockstep
