#include <cstdlib>
#include <string>

#include "runtime/caching_allocator.h"
#include "runtime/provider.h"

namespace lockstep {

namespace {

class CpuProvider : public Provider {
 public:
  explicit CpuProvider(CacheBound cache) : allocator_(make_host_pool_allocator(cache)) {}
  Device device() const override { return Device::CPU; }
  const char* name() const override { return "CPUExecutionProvider"; }
  Allocator& allocator() override { return *allocator_; }
  KernelFn kernel(const OpEntry& entry) const override { return entry.cpu; }
  Tensor upload(const Tensor& host) override { return host; }
  Tensor download(const Tensor& t) override { return t; }
  Tensor copy(const Tensor& t) override { return t.clone(); }

 private:
  std::unique_ptr<Allocator> allocator_;
};

}  // namespace

std::unique_ptr<Allocator> make_host_pool_allocator(CacheBound cache) {
  // 64-byte blocks: aligned for AVX-512 loads.
  RawMemory host{Device::CPU, 0, 64, [](size_t bytes) { return std::aligned_alloc(64, bytes); }, std::free};
  return std::make_unique<CachingAllocator>(host, cache);
}
std::unique_ptr<Provider> make_cpu_provider(CacheBound cache) { return std::make_unique<CpuProvider>(cache); }

#if !LOCKSTEP_WITH_CUDA
std::unique_ptr<Provider> make_cuda_provider(int, CacheBound) {
  throw Error(ErrorCode::NotImplemented, "this lockstep build has no CUDA provider (built with LOCKSTEP_CUDA=OFF)");
}
bool cuda_available() { return false; }

namespace {
[[noreturn]] void no_cuda(const char* what) {
  throw Error(ErrorCode::NotImplemented,
              std::string(what) + " needs CUDA, and this lockstep build has none (built with LOCKSTEP_CUDA=OFF)");
}
}  // namespace

std::shared_ptr<Buffer> cuda_buffer(size_t, int) { no_cuda("allocating a CUDA tensor"); }
void copy_device_bytes(void*, const void*, size_t) { no_cuda("copying a CUDA tensor"); }
void cuda_pointer_location(const void*, Device&, int&) { no_cuda("checking a CUDA pointer"); }
void cuda_synchronize_device(int) { no_cuda("synchronizing a CUDA device"); }
#endif

}  // namespace lockstep
