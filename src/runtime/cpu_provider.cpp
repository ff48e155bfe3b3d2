#include <cstdlib>

#include "runtime/caching_allocator.h"
#include "runtime/provider.h"

namespace lockstep {

namespace {

class CpuProvider : public Provider {
 public:
  CpuProvider() : allocator_(make_host_pool_allocator()) {}
  Device device() const override { return Device::CPU; }
  const char* name() const override { return "CPUExecutionProvider"; }
  Allocator& allocator() override { return *allocator_; }
  KernelFn kernel(const OpEntry& entry) const override { return entry.cpu; }
  Tensor upload(const Tensor& host) override { return host; }
  Tensor download(const Tensor& t) override { return t; }

 private:
  std::unique_ptr<Allocator> allocator_;
};

}  // namespace

std::unique_ptr<Allocator> make_host_pool_allocator() {
  // 64-byte blocks: aligned for AVX-512 loads.
  RawMemory host{Device::CPU, 64, [](size_t bytes) { return std::aligned_alloc(64, bytes); }, std::free};
  return std::make_unique<CachingAllocator>(host);
}
std::unique_ptr<Provider> make_cpu_provider() { return std::make_unique<CpuProvider>(); }

#if !LOCKSTEP_WITH_CUDA
std::unique_ptr<Provider> make_cuda_provider(int) {
  throw Error(ErrorCode::NotImplemented, "this lockstep build has no CUDA provider (built with LOCKSTEP_CUDA=OFF)");
}
bool cuda_available() { return false; }
#endif

}  // namespace lockstep
