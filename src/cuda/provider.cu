// The CUDA execution provider: a caching device allocator, one stream, and host/device copies at the graph's
// edges. Kernels come from the op table (OpEntry::cuda).
#include <cuda_runtime.h>

#include <cstdlib>
#include <set>
#include <string>

#include "runtime/caching_allocator.h"
#include "runtime/provider.h"

namespace lockstep {

namespace {

void check_cuda(cudaError_t status, const char* what) {
  if (status != cudaSuccess)
    throw Error(ErrorCode::RuntimeError, std::string("CUDA error in ") + what + ": " + cudaGetErrorString(status));
}

// LOCKSTEP_CUDA_DISABLE_OPS=Conv,Relu makes the provider claim no kernel for those ops, so that the CPU
// fallback can be tested on a GPU machine, where every op has a CUDA kernel.
std::set<std::string> ops_from_environment(const char* variable) {
  std::set<std::string> ops;
  const char* value = std::getenv(variable);
  std::string list = value ? value : "";
  for (size_t start = 0; start < list.size();) {
    size_t end = list.find(',', start);
    if (end == std::string::npos) end = list.size();
    if (end > start) ops.insert(list.substr(start, end - start));
    start = end + 1;
  }
  return ops;
}

// Makes `device` current for a scope and restores the caller's device after it.
class DeviceGuard {
 public:
  explicit DeviceGuard(int device) {
    check_cuda(cudaGetDevice(&previous_), "cudaGetDevice");
    if (previous_ != device) check_cuda(cudaSetDevice(device), "cudaSetDevice");
    changed_ = previous_ != device;
  }
  ~DeviceGuard() {
    if (changed_) cudaSetDevice(previous_);
  }
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int previous_ = 0;
  bool changed_ = false;
};

int device_count() {
  int count = 0;
  check_cuda(cudaGetDeviceCount(&count), "cudaGetDeviceCount");
  return count;
}

void check_device_id(int device) {
  int count = device_count();
  if (device < 0 || device >= count)
    throw Error(ErrorCode::InvalidArgument, "CUDA device_id " + std::to_string(device) + " does not exist (" +
                                                std::to_string(count) + " devices)");
}

class CudaProvider : public Provider {
 public:
  CudaProvider(int device, CacheBound cache) : device_(device) {
    check_device_id(device);
    check_cuda(cudaSetDevice(device), "cudaSetDevice");
    check_cuda(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
    check_cuda(cudaEventCreateWithFlags(&default_stream_mark_, cudaEventDisableTiming), "cudaEventCreate");
    // Blocks of 256 bytes or more, as cudaMalloc aligns them. Freed blocks go back on the provider's device.
    RawMemory memory{Device::CUDA, device, 256,
                     [](size_t bytes) -> void* {
                       void* p = nullptr;
                       if (cudaMalloc(&p, bytes) == cudaSuccess) return p;
                       cudaGetLastError();  // clears the error, so that the next kernel's check does not report it
                       return nullptr;
                     },
                     // Kernels queued by any run may still read a block the pool lets go: wait for them first.
                     [device](void* p) {
                       DeviceGuard on(device);
                       cudaDeviceSynchronize();
                       cudaFree(p);
                     },
                     /*release_waits=*/true};
    allocator_ = std::make_unique<CachingAllocator>(memory, cache);
    disabled_ops_ = ops_from_environment("LOCKSTEP_CUDA_DISABLE_OPS");
  }
  ~CudaProvider() override {
    cudaStreamSynchronize(stream_);
    cudaEventDestroy(default_stream_mark_);
    cudaStreamDestroy(stream_);
  }

  Device device() const override { return Device::CUDA; }
  const char* name() const override { return "CUDAExecutionProvider"; }
  Allocator& allocator() override { return *allocator_; }
  KernelFn kernel(const OpEntry& entry) const override {
    return disabled_ops_.count(entry.op_type) ? nullptr : entry.cuda;
  }
  void* stream() override { return stream_; }

  Tensor upload(const Tensor& host) override {
    // String tensors stay on the host: the executor runs every node that reads them on the CPU.
    if (host.device() == Device::CUDA || host.dtype() == DType::String) return host;
    Tensor t = Tensor::over(host.dtype(), host.shape(), allocator_->allocate(host.bytes()));
    if (host.bytes())
      check_cuda(cudaMemcpyAsync(t.raw(), host.raw(), host.bytes(), cudaMemcpyHostToDevice, stream_), "upload");
    // The host buffer may be freed by the caller as soon as we return.
    check_cuda(cudaStreamSynchronize(stream_), "upload");
    return t;
  }

  Tensor upload_staged(const Tensor& host) override {
    if (host.device() == Device::CUDA || host.dtype() == DType::String) return host;
    Tensor t = Tensor::over(host.dtype(), host.shape(), allocator_->allocate(host.bytes()));
    // Pageable source: cudaMemcpyAsync returns once it is staged, so no wait is needed before it is freed.
    if (host.bytes())
      check_cuda(cudaMemcpyAsync(t.raw(), host.raw(), host.bytes(), cudaMemcpyHostToDevice, stream_), "upload");
    return t;
  }

  Tensor download(const Tensor& t) override {
    if (t.device() == Device::CPU) return t;
    Tensor host = Tensor::empty(t.dtype(), t.shape());
    if (t.bytes())
      check_cuda(cudaMemcpyAsync(host.raw(), t.raw(), t.bytes(), cudaMemcpyDeviceToHost, stream_), "download");
    check_cuda(cudaStreamSynchronize(stream_), "download");
    return host;
  }

  Tensor copy(const Tensor& t) override {
    Tensor out = Tensor::over(t.dtype(), t.shape(), allocator_->allocate(t.bytes()));
    if (t.bytes())
      check_cuda(cudaMemcpyAsync(out.raw(), t.raw(), t.bytes(), cudaMemcpyDeviceToDevice, stream_), "copy");
    check_cuda(cudaStreamSynchronize(stream_), "copy");
    return out;
  }

  // The session's stream does not synchronize with the legacy stream (cudaStreamNonBlocking), so without this
  // event a kernel could read a device feed before the cudaMemcpy or torch kernel writing it has finished.
  void wait_for_default_stream() override {
    DeviceGuard on(device_);
    check_cuda(cudaEventRecord(default_stream_mark_, cudaStreamLegacy), "cudaEventRecord");
    check_cuda(cudaStreamWaitEvent(stream_, default_stream_mark_, 0), "cudaStreamWaitEvent");
  }

  void synchronize() override { check_cuda(cudaStreamSynchronize(stream_), "a kernel of this run"); }

 private:
  int device_;
  cudaStream_t stream_ = nullptr;
  cudaEvent_t default_stream_mark_ = nullptr;  // recorded on the legacy stream before a run reads device feeds
  std::set<std::string> disabled_ops_;  // ops forced onto the CPU fallback (tests of the fallback path)
  std::unique_ptr<Allocator> allocator_;
};

}  // namespace

std::unique_ptr<Provider> make_cuda_provider(int device_id, CacheBound cache) {
  return std::make_unique<CudaProvider>(device_id, cache);
}

bool cuda_available() {
  int count = 0;
  return cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
}

std::shared_ptr<Buffer> cuda_buffer(size_t bytes, int device_id) {
  check_device_id(device_id);
  DeviceGuard on(device_id);
  void* p = nullptr;
  if (cudaMalloc(&p, bytes ? bytes : 1) != cudaSuccess) {
    cudaGetLastError();  // clears the error, so that the next CUDA call does not report it again
    throw Error(ErrorCode::RuntimeError, "out of GPU memory allocating " + std::to_string(bytes) + " bytes on cuda:" +
                                             std::to_string(device_id));
  }
  auto buf = std::make_shared<Buffer>();
  buf->data = p;
  buf->bytes = bytes;
  buf->device = Device::CUDA;
  buf->device_id = device_id;
  buf->owner = std::shared_ptr<void>(p, [](void* q) { cudaFree(q); });
  return buf;
}

void cuda_pointer_location(const void* p, Device& device, int& device_id) {
  cudaPointerAttributes a{};
  if (cudaPointerGetAttributes(&a, p) != cudaSuccess) {
    cudaGetLastError();
    a.type = cudaMemoryTypeUnregistered;
  }
  bool on_device = a.type == cudaMemoryTypeDevice || a.type == cudaMemoryTypeManaged;
  device = on_device ? Device::CUDA : Device::CPU;
  device_id = on_device ? a.device : 0;
}

// On the legacy stream of the device holding the memory, then waited for: cudaMemcpy alone would return before a
// device-to-device copy is done.
void copy_device_bytes(void* dst, const void* src, size_t bytes) {
  Device d = Device::CPU, s = Device::CPU;
  int dst_id = 0, src_id = 0;
  cuda_pointer_location(dst, d, dst_id);
  cuda_pointer_location(src, s, src_id);
  DeviceGuard on(d == Device::CUDA ? dst_id : src_id);
  check_cuda(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, cudaStreamLegacy), "a copy between devices");
  check_cuda(cudaStreamSynchronize(cudaStreamLegacy), "a copy between devices");
}

void cuda_synchronize_device(int device_id) {
  check_device_id(device_id);
  DeviceGuard on(device_id);
  check_cuda(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
}

}  // namespace lockstep
