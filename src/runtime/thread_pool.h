// The intra-op thread pool. Work is split over output elements only: each output is computed by exactly one
// thread, in the same order whatever the thread count, so the thread count cannot change a bit.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace lockstep {

class ThreadPool {
 public:
  /// threads <= 0 means one per hardware thread.
  explicit ThreadPool(int threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int size() const { return static_cast<int>(workers_.size()) + 1; }

  /// Calls fn(begin, end) on disjoint ranges covering [0, n). Ranges hold at least `grain` indices, in at most
  /// chunks_per_thread ranges per thread, which the threads claim one at a time as they finish the last.
  /// Runs inline when n is small, when the pool has one thread, or when called from inside a pool task.
  void parallel_for(int64_t n, const std::function<void(int64_t, int64_t)>& fn, int64_t grain = 1,
                    int64_t chunks_per_thread = 4);

 private:
  void worker_loop(int index);

  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable wake_, done_;
  const std::function<void(int64_t, int64_t)>* task_ = nullptr;
  int64_t task_n_ = 0, task_chunks_ = 0;
  int64_t next_chunk_ = 0;
  // Read without the mutex while spinning; written under it.
  std::atomic<int64_t> chunks_done_{0};
  std::atomic<uint64_t> generation_{0};
  std::atomic<bool> stop_{false};
  std::mutex run_mutex_;  // one parallel_for at a time per pool
};

}  // namespace lockstep
