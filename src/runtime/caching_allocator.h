// The allocator of both providers: freed blocks are kept and handed out again, which is the memory plan's buffer
// reuse (the executor's lifetimes make the same sizes recur every run) and avoids cudaMalloc/cudaFree, which
// synchronise the device. A request takes the smallest kept block that fits it within twice its size, so near
// sizes share blocks; the kept bytes are bounded (CacheBound), the least recently freed blocks going first, so
// that a session fed ever new shapes does not grow without end.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

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

/// The most bytes of freed blocks a pool keeps for reuse.
struct CacheBound {
  /// Twice the most bytes the pool has had in use at once: a session whose shapes recur keeps its whole working
  /// set, one whose shapes keep changing keeps at most two working sets' worth.
  static CacheBound twice_peak() { return {}; }
  static CacheBound fixed(size_t bytes) { return {true, bytes}; }
  static CacheBound unbounded() { return fixed(SIZE_MAX); }

  bool is_fixed = false;
  size_t bytes = 0;
  size_t limit(size_t peak_in_use) const { return is_fixed ? bytes : 2 * peak_in_use; }
};

/// A pool's figures, for tests and diagnostics.
struct CacheStats {
  size_t cached_bytes = 0;   // freed blocks kept for reuse
  size_t cached_blocks = 0;
  size_t in_use_bytes = 0;   // blocks handed out and not yet given back (block sizes, not request sizes)
  size_t peak_in_use_bytes = 0;
};

class CachingAllocator : public Allocator {
 public:
  explicit CachingAllocator(RawMemory memory, CacheBound bound = CacheBound::twice_peak())
      : pool_(std::make_shared<Pool>(memory, bound)) {}
  // Tensors still held keep the pool alive; the blocks nobody holds go back to the system now.
  ~CachingAllocator() override { pool_->close(); }
  CachingAllocator(const CachingAllocator&) = delete;
  CachingAllocator& operator=(const CachingAllocator&) = delete;

  std::shared_ptr<Buffer> allocate(size_t bytes) override {
    const RawMemory& memory = pool_->memory;
    size_t g = memory.granularity;
    size_t rounded = bytes == 0 ? g : (bytes + g - 1) / g * g;
    auto [p, block_bytes] = pool_->take(rounded);
    if (!p) {
      p = pool_->allocate_new(rounded);
      block_bytes = rounded;
    }
    if (!p)
      throw Error(ErrorCode::RuntimeError, std::string("out of ") + (memory.device == Device::CUDA ? "GPU" : "host") +
                                               " memory allocating " + std::to_string(bytes) + " bytes");
    auto buf = std::make_shared<Buffer>();
    buf->data = p;
    buf->bytes = bytes;
    buf->device = memory.device;
    buf->device_id = memory.device_id;
    // The deleter holds the pool, so tensors handed to the user may outlive the session.
    buf->owner = std::shared_ptr<void>(p, [pool = pool_, size = block_bytes](void* q) { pool->give_back(size, q); });
    return buf;
  }

  CacheStats stats() const { return pool_->stats(); }

 private:
  class Pool {
   public:
    // No destructor: the allocator's close() has released the kept blocks by the time the pool goes.
    Pool(RawMemory m, CacheBound b) : memory(m), bound_(b) {}

    /// The smallest kept block of rounded..2*rounded bytes and its size, or {nullptr, 0}.
    std::pair<void*, size_t> take(size_t rounded) {
      std::lock_guard<std::mutex> lock(mutex_);
      auto it = by_size_.lower_bound(rounded);
      if (it == by_size_.end() || it->first - rounded > rounded) return {nullptr, 0};
      std::pair<void*, size_t> found{it->second.data, it->first};
      by_age_.erase(it->second.freed_at);
      by_size_.erase(it);
      stats_.cached_bytes -= found.second;
      --stats_.cached_blocks;
      add_in_use(found.second);
      return found;
    }

    void* allocate_new(size_t bytes) {
      void* p = memory.allocate(bytes);
      if (!p) return nullptr;
      std::lock_guard<std::mutex> lock(mutex_);
      add_in_use(bytes);
      return p;
    }

    void give_back(size_t bytes, void* p) {
      std::vector<void*> evicted;
      {
        std::lock_guard<std::mutex> lock(mutex_);
        stats_.in_use_bytes -= bytes;
        by_age_.emplace(next_age_, by_size_.emplace(bytes, FreeBlock{p, next_age_}));
        ++next_age_;
        stats_.cached_bytes += bytes;
        ++stats_.cached_blocks;
        evict_beyond_bound(evicted, closed_ ? 0 : bound_.limit(stats_.peak_in_use_bytes));
      }
      for (void* block : evicted) memory.release(block);
    }

    /// Releases the kept blocks; blocks given back later are released at once.
    void close() {
      std::vector<void*> evicted;
      {
        std::lock_guard<std::mutex> lock(mutex_);
        closed_ = true;
        evict_beyond_bound(evicted, 0);
      }
      for (void* block : evicted) memory.release(block);
    }

    CacheStats stats() const {
      std::lock_guard<std::mutex> lock(mutex_);
      return stats_;
    }

    const RawMemory memory;

   private:
    struct FreeBlock {
      void* data;
      uint64_t freed_at;  // the key of by_age_
    };
    using BySize = std::multimap<size_t, FreeBlock>;

    void add_in_use(size_t bytes) {
      stats_.in_use_bytes += bytes;
      stats_.peak_in_use_bytes = std::max(stats_.peak_in_use_bytes, stats_.in_use_bytes);
    }

    // Under the lock; the caller releases the evicted blocks after unlocking.
    void evict_beyond_bound(std::vector<void*>& evicted, size_t limit) {
      while (stats_.cached_bytes > limit) {
        auto oldest = by_age_.begin();
        BySize::iterator block = oldest->second;
        evicted.push_back(block->second.data);
        stats_.cached_bytes -= block->first;
        --stats_.cached_blocks;
        by_size_.erase(block);
        by_age_.erase(oldest);
      }
    }

    const CacheBound bound_;
    mutable std::mutex mutex_;
    BySize by_size_;
    std::map<uint64_t, BySize::iterator> by_age_;  // the same blocks, least recently freed first
    uint64_t next_age_ = 0;
    bool closed_ = false;  // the allocator is gone
    CacheStats stats_;
  };
  std::shared_ptr<Pool> pool_;
};

}  // namespace lockstep
