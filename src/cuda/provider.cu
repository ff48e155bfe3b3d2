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

class CudaProvider : public Provider {
 public:
  explicit CudaProvider(int device) : device_(device) {
    int count = 0;
    check_cuda(cudaGetDeviceCount(&count), "cudaGetDeviceCount");
    if (device < 0 || device >= count)
      throw Error(ErrorCode::InvalidArgument, "CUDA device_id " + std::to_string(device) + " does not exist (" +
                                                  std::to_string(count) + " devices)");
    check_cuda(cudaSetDevice(device), "cudaSetDevice");
    check_cuda(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
    // Blocks of 256 bytes or more, as cudaMalloc aligns them. Freed blocks go back on the provider's device.
    RawMemory memory{Device::CUDA, 256,
                     [](size_t bytes) -> void* {
                       void* p = nullptr;
                       return cudaMalloc(&p, bytes) == cudaSuccess ? p : nullptr;
                     },
                     [](void* p) { cudaFree(p); }};
    allocator_ = std::make_unique<CachingAllocator>(memory);
    disabled_ops_ = ops_from_environment("LOCKSTEP_CUDA_DISABLE_OPS");
  }
  ~CudaProvider() override {
    cudaStreamSynchronize(stream_);
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
    if (host.device() == Device::CUDA) return host;
    Tensor t = Tensor::over(host.dtype(), host.shape(), allocator_->allocate(host.bytes()));
    if (host.bytes())
      check_cuda(cudaMemcpyAsync(t.raw(), host.raw(), host.bytes(), cudaMemcpyHostToDevice, stream_), "upload");
    // The host buffer may be freed by the caller as soon as we return.
    check_cuda(cudaStreamSynchronize(stream_), "upload");
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

  void synchronize() override { check_cuda(cudaStreamSynchronize(stream_), "a kernel of this run"); }

 private:
  int device_;
  cudaStream_t stream_ = nullptr;
  std::set<std::string> disabled_ops_;  // ops forced onto the CPU fallback (tests of the fallback path)
  std::unique_ptr<Allocator> allocator_;
};

}  // namespace

std::unique_ptr<Provider> make_cuda_provider(int device_id) { return std::make_unique<CudaProvider>(device_id); }

bool cuda_available() {
  int count = 0;
  return cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
}

}  // namespace lockstep
