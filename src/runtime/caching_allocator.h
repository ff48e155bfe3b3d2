// The allocator of both providers: freed blocks are kept and handed out again, which is the memory plan's buffer
// reuse (the executor's lifetimes make the same sizes recur every run) and avoids cudaMalloc/cudaFree, which
// synchronise the device. A request takes the smallest kept block that fits it within twice its size, so near
// sizes share blocks (of equal ones the last freed, still warm in the CPU's caches); the kept bytes are bounded
// (CacheBound), the least recently freed blocks going first, so that a session fed ever new shapes does not grow
// without end, while one whose shapes recur keeps every block its runs use. A request the device cannot meet first
// releases every kept block and tries again.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <iterator>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "runtime/kernel.h"

namespace lockstep {

/// A device's raw memory: allocate returns nullptr on failure; release frees a block it returned.
struct RawMemory {
  Device device = Device::CPU;
  int device_id = 0;        // the CUDA ordinal the blocks belong to
  size_t granularity = 64;  // sizes are rounded up to a multiple of this
  std::function<void*(size_t bytes)> allocate;
  std::function<void(void* block)> release;
  /// release waits until the device is idle (CUDA: queued kernels may still use a freed block), so the pool keeps
  /// blocks beyond its bound until the run ends (end_run()) instead of releasing them in the middle of a run.
  bool release_waits = false;
};

/// The most bytes of freed blocks a pool keeps for reuse.
struct CacheBound {
  /// Twice the most bytes the pool has had in use at once, and never less than the last run's working set (the
  /// bytes of the distinct blocks it used): a session whose shapes recur keeps every block its runs use, one whose
  /// shapes keep changing keeps at most about two working sets' worth. (The working set can pass twice the peak
  /// in use: blocks are shared only within a factor of two in size. EfficientNet-B0 on the CPU used 12.93 MB
  /// against a peak of 6.42 MB in use, and a bound of twice the peak alone released and re-faulted a 4.8 MB block
  /// every run: docs/performance.md, 2026-12-05.)
  static CacheBound twice_peak() { return {}; }
  static CacheBound fixed(size_t bytes) { return {true, bytes}; }
  static CacheBound unbounded() { return fixed(SIZE_MAX); }

  bool is_fixed = false;
  size_t bytes = 0;
  size_t limit(size_t peak_in_use, size_t last_run_bytes) const {
    return is_fixed ? bytes : std::max(2 * peak_in_use, last_run_bytes);
  }
};

/// A pool's figures, for tests and diagnostics.
struct CacheStats {
  size_t cached_bytes = 0;   // freed blocks kept for reuse
  size_t cached_blocks = 0;
  size_t in_use_bytes = 0;   // blocks handed out and not yet given back (block sizes, not request sizes)
  size_t peak_in_use_bytes = 0;
  size_t last_run_bytes = 0;  // the distinct blocks handed out between the last two end_run() calls
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
    if (!p) {  // the kept blocks may be what fills the device
      pool_->release_kept();
      p = pool_->allocate_new(rounded);
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

  void end_run() override { pool_->end_run(); }

  CacheStats stats() const { return pool_->stats(); }

 private:
  class Pool {
   public:
    // No destructor: the allocator's close() has released the kept blocks by the time the pool goes.
    Pool(RawMemory m, CacheBound b) : memory(m), bound_(b) {}

    /// The smallest kept block of rounded..2*rounded bytes and its size, or {nullptr, 0}. Of several blocks of that
    /// size, the one freed last: its lines are the likeliest to be in the CPU's caches still (a layer's output then
    /// goes where the layer before last wrote, not to a block untouched since early in the run).
    std::pair<void*, size_t> take(size_t rounded) {
      std::lock_guard<std::mutex> lock(mutex_);
      auto it = by_size_.lower_bound(rounded);
      if (it == by_size_.end() || it->first - rounded > rounded) return {nullptr, 0};
      it = std::prev(by_size_.upper_bound(it->first));  // equal sizes are kept in the order they were freed
      std::pair<void*, size_t> found{it->second.data, it->first};
      by_age_.erase(it->second.freed_at);
      by_size_.erase(it);
      stats_.cached_bytes -= found.second;
      --stats_.cached_blocks;
      add_in_use(found.first, found.second);
      return found;
    }

    void* allocate_new(size_t bytes) {
      void* p = memory.allocate(bytes);
      if (!p) return nullptr;
      std::lock_guard<std::mutex> lock(mutex_);
      add_in_use(p, bytes);
      return p;
    }

    /// Closes the current run's working set: it becomes the floor of the bound until the next end_run(). Where
    /// release waits for the device, the blocks beyond the bound go now.
    void end_run() {
      std::vector<void*> evicted;
      {
        std::lock_guard<std::mutex> lock(mutex_);
        stats_.last_run_bytes = run_bytes_;
        run_bytes_ = 0;
        ++run_;
        if (memory.release_waits) evict_beyond_bound(evicted, current_limit());
      }
      for (void* block : evicted) memory.release(block);
    }

    /// Releases every kept block (a request the device could not meet tries again after this).
    void release_kept() {
      std::vector<void*> evicted;
      {
        std::lock_guard<std::mutex> lock(mutex_);
        evict_beyond_bound(evicted, 0);
      }
      for (void* block : evicted) memory.release(block);
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
        if (closed_)
          evict_beyond_bound(evicted, 0);
        else if (!memory.release_waits)
          evict_beyond_bound(evicted, current_limit());
      }
      for (void* block : evicted) memory.release(block);
    }

    /// Releases the kept blocks; blocks given back later are released at once.
    void close() {
      {
        std::lock_guard<std::mutex> lock(mutex_);
        closed_ = true;
      }
      release_kept();
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

    void add_in_use(void* block, size_t bytes) {
      stats_.in_use_bytes += bytes;
      stats_.peak_in_use_bytes = std::max(stats_.peak_in_use_bytes, stats_.in_use_bytes);
      uint64_t& used_in = last_run_of_[block];
      if (used_in != run_) run_bytes_ += bytes;
      used_in = run_;
    }

    size_t current_limit() const { return bound_.limit(stats_.peak_in_use_bytes, stats_.last_run_bytes); }

    // Under the lock; the caller releases the evicted blocks after unlocking.
    void evict_beyond_bound(std::vector<void*>& evicted, size_t limit) {
      while (stats_.cached_bytes > limit) {
        auto oldest = by_age_.begin();
        BySize::iterator block = oldest->second;
        evicted.push_back(block->second.data);
        last_run_of_.erase(block->second.data);
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
    // The working set: every block the pool holds (in use or kept) -> the last run that took it (runs counted by
    // end_run() from 1), and the bytes of the distinct blocks the current run has taken so far.
    std::unordered_map<void*, uint64_t> last_run_of_;
    uint64_t run_ = 1;
    size_t run_bytes_ = 0;
    bool closed_ = false;  // the allocator is gone
    CacheStats stats_;
  };
  std::shared_ptr<Pool> pool_;
};

}  // namespace lockstep
