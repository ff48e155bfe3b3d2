// The CUDA execution provider: a caching device allocator, one stream, and host/device copies at the graph's
// edges. Kernels come from the op table (OpEntry::cuda).
#include <cuda_runtime.h>

#include <map>
#include <mutex>

#include "runtime/provider.h"

namespace lockstep {

namespace {

void check_cuda(cudaError_t status, const char* what) {
  if (status != cudaSuccess)
    throw Error(ErrorCode::RuntimeError, std::string("CUDA error in ") + what + ": " + cudaGetErrorString(status));
}

// Freed device blocks are kept per rounded size and reused; cudaMalloc/cudaFree synchronise the device and
// would dominate small graphs otherwise.
struct DevicePool {
  int device = 0;
  std::mutex mutex;
  std::multimap<size_t, void*> free_blocks;
  ~DevicePool() {
    cudaSetDevice(device);
    for (auto& [bytes, p] : free_blocks) cudaFree(p);
  }
  void* take(size_t rounded) {
    std::lock_guard<std::mutex> lock(mutex);
    auto it = free_blocks.find(rounded);
    if (it == free_blocks.end()) return nullptr;
    void* p = it->second;
    free_blocks.erase(it);
    return p;
  }
  void give_back(size_t rounded, void* p) {
    std::lock_guard<std::mutex> lock(mutex);
    free_blocks.emplace(rounded, p);
  }
};

class DeviceAllocator : public Allocator {
 public:
  explicit DeviceAllocator(int device) { pool_->device = device; }
  std::shared_ptr<Buffer> allocate(size_t bytes) override {
    size_t rounded = bytes <= 256 ? 256 : (bytes + 4095) / 4096 * 4096;
    void* p = pool_->take(rounded);
    if (!p) check_cuda(cudaMalloc(&p, rounded), "cudaMalloc");
    auto buf = std::make_shared<Buffer>();
    buf->data = p;
    buf->bytes = bytes;
    buf->device = Device::CUDA;
    buf->owner = std::shared_ptr<void>(p, [pool = pool_, rounded](void* q) { pool->give_back(rounded, q); });
    return buf;
  }

 private:
  std::shared_ptr<DevicePool> pool_ = std::make_shared<DevicePool>();
};

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
    allocator_ = std::make_unique<DeviceAllocator>(device);
  }
  ~CudaProvider() override {
    cudaStreamSynchronize(stream_);
    cudaStreamDestroy(stream_);
  }

  Device device() const override { return Device::CUDA; }
  const char* name() const override { return "CUDAExecutionProvider"; }
  Allocator& allocator() override { return *allocator_; }
  KernelFn kernel(const OpEntry& entry) const override { return entry.cuda; }
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
  std::unique_ptr<Allocator> allocator_;
};

}  // namespace

std::unique_ptr<Provider> make_cuda_provider(int device_id) { return std::make_unique<CudaProvider>(device_id); }

bool cuda_available() {
  int count = 0;
  return cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
}

}  // namespace lockstep
