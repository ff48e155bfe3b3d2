#include <cstdlib>
#include <map>
#include <mutex>

#include "runtime/provider.h"

namespace lockstep {

namespace {

// Freed blocks are kept per exact size; the executor's lifetimes make the same sizes recur every run.
// The free lists live in shared state that every buffer's deleter holds, so tensors handed to the user may
// outlive the session.
struct HostPool {
  std::mutex mutex;
  std::multimap<size_t, void*> free_blocks;
  ~HostPool() {
    for (auto& [bytes, block] : free_blocks) std::free(block);
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

class HostPoolAllocator : public Allocator {
 public:
  std::shared_ptr<Buffer> allocate(size_t bytes) override {
    size_t rounded = bytes == 0 ? 64 : (bytes + 63) / 64 * 64;
    void* p = pool_->take(rounded);
    if (!p) p = std::aligned_alloc(64, rounded);
    if (!p) throw Error(ErrorCode::RuntimeError, "out of host memory allocating " + std::to_string(bytes) + " bytes");
    auto buf = std::make_shared<Buffer>();
    buf->data = p;
    buf->bytes = bytes;
    buf->device = Device::CPU;
    buf->owner = std::shared_ptr<void>(p, [pool = pool_, rounded](void* q) { pool->give_back(rounded, q); });
    return buf;
  }

 private:
  std::shared_ptr<HostPool> pool_ = std::make_shared<HostPool>();
};

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

std::unique_ptr<Allocator> make_host_pool_allocator() { return std::make_unique<HostPoolAllocator>(); }
std::unique_ptr<Provider> make_cpu_provider() { return std::make_unique<CpuProvider>(); }

#if !LOCKSTEP_WITH_CUDA
std::unique_ptr<Provider> make_cuda_provider(int) {
  throw Error(ErrorCode::NotImplemented, "this lockstep build has no CUDA provider (built with LOCKSTEP_CUDA=OFF)");
}
bool cuda_available() { return false; }
#endif

}  // namespace lockstep
