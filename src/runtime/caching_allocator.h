// The allocator of both providers: freed blocks are kept per rounded size and handed out again, which is the
// memory plan's buffer reuse (the executor's lifetimes make the same sizes recur every run) and avoids
// cudaMalloc/cudaFree, which synchronise the device.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "runtime/kernel.h"

namespace lockstep {

/// A device's raw memory: allocate returns nullptr on failure; release frees a block it returned.
struct RawMemory {
  Device device = Device::CPU;
  int device_id = 0;        // the CUDA ordinal the blocks belong to
  size_t granularity = 64;  // sizes are rounded up to a multiple of this
  void* (*allocate)(size_t bytes) = nullptr;
  void (*release)(void* block) = nullptr;
};

class CachingAllocator : public Allocator {
 public:
  explicit CachingAllocator(RawMemory memory) : pool_(std::make_shared<Pool>()) { pool_->memory = memory; }

  std::shared_ptr<Buffer> allocate(size_t bytes) override {
    size_t g = pool_->memory.granularity;
    size_t rounded = bytes == 0 ? g : (bytes + g - 1) / g * g;
    void* p = pool_->take(rounded);
    if (!p) p = pool_->memory.allocate(rounded);
    if (!p) throw Error(ErrorCode::RuntimeError, std::string("out of ") + (pool_->memory.device == Device::CUDA ? "GPU" : "host") +
                                                     " memory allocating " + std::to_string(bytes) + " bytes");
    auto buf = std::make_shared<Buffer>();
    buf->data = p;
    buf->bytes = bytes;
    buf->device = pool_->memory.device;
    buf->device_id = pool_->memory.device_id;
    // The deleter holds the pool, so tensors handed to the user may outlive the session.
    buf->owner = std::shared_ptr<void>(p, [pool = pool_, rounded](void* q) { pool->give_back(rounded, q); });
    return buf;
  }

 private:
  struct Pool {
    RawMemory memory;
    std::mutex mutex;
    std::multimap<size_t, void*> free_blocks;
    ~Pool() {
      for (auto& [bytes, block] : free_blocks) memory.release(block);
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
  std::shared_ptr<Pool> pool_;
};

}  // namespace lockstep
