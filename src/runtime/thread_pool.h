// The intra-op thread pool. Work is split over output elements only: each output is computed by exactly one
// thread, in the same order whatever the thread count, so the thread count cannot change a bit.
#pragma once

#include <array>
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

  /// Sends the spinning workers to sleep until the next parallel_for, instead of leaving them the cores for up to
  /// another millisecond (SessionOptions::force_spinning_stop: after each run).
  void rest() { resting_.store(true, std::memory_order_release); }

 private:
  using Fn = std::function<void(int64_t, int64_t)>;
  void worker_loop(int self);
  /// Claims and runs chunks of the task of `generation` until none is left or a later task replaced it.
  void run_chunks(uint32_t generation, int self);
  /// Claims a chunk of a shared task (of `chunks` <= kMaxSharedChunks) for thread `self`: the first unclaimed one of
  /// its own share, else the last unclaimed one; negative when none is left or a later task replaced it.
  int64_t claim_shared(uint32_t generation, int64_t chunks, int self);

  static constexpr int kShareWords = 8;  // 32 chunks a word
  static constexpr int64_t kMaxSharedChunks = 32 * kShareWords;

  std::vector<std::thread> workers_;
  // The task: written by parallel_for before it publishes the task in claim_, read by a worker only once it has
  // claimed one of the task's chunks (the task cannot end, and the next one cannot be written, before that chunk
  // is done).
  const Fn* task_ = nullptr;
  int64_t task_n_ = 0;
  // The generation (bits 63-32), the task's chunk count (31-16) and the next unclaimed chunk (15-0): a chunk is
  // claimed by a compare-exchange of all three, which fails once the generation has moved on, so that a late worker
  // never claims a chunk of a later task, or one past an earlier task's end. Claims take no lock: with 16 threads,
  // a mutex taken per chunk cost more than small ops.
  std::atomic<uint64_t> claim_{0};
  // A task of at most kMaxSharedChunks chunks is claimed by share instead: thread t (the caller is 0, worker i is i)
  // claims the chunks of the t-th of size() contiguous shares first, in order, then the last unclaimed ones of the
  // others. Consecutive ops split alike then leave each thread the data that it wrote, in its own core's caches,
  // where chunks claimed in turn went to whichever thread came first. Shares of up to 16 chunks: EfficientNet-B0 at
  // 2 threads 1.23 -> 1.17 of onnxruntime's time (nineteenth session); of up to 256 (the GEMM's tasks of one B panel
  // each at 16 threads), at 16 threads on an H100 host, 3 rounds: ResNet-50 1.38 -> 1.26, BERT-base 0.97 -> 0.89,
  // the other four models level or better (docs/performance.md, 2026-12-07, twentieth session). Word w holds one bit
  // per claimed chunk of chunks 32w .. 32w + 31 (bits 31-0) under the task's generation (63-32), so that a claim
  // fails, as in claim_, once the generation has moved on. Which thread runs a chunk never changes a bit.
  std::array<std::atomic<uint64_t>, kShareWords> shares_{};
  std::atomic<int64_t> chunks_done_{0};
  std::atomic<bool> stop_{false};
  std::atomic<bool> resting_{false};  // set by rest(), cleared by the next parallel_for
  std::mutex sleep_mutex_;  // only for sleeping: workers past their spin wait on wake_, parallel_for on done_
  std::condition_variable wake_, done_;
  std::mutex run_mutex_;  // one parallel_for at a time per pool
};

/// pool->parallel_for(n, fn, grain, chunks_per_thread), or fn(0, n) on the calling thread when pool is null (a
/// kernel that already runs inside a pool task, e.g. one image of a batch). Nothing for n <= 0.
inline void run_range(ThreadPool* pool, int64_t n, const std::function<void(int64_t, int64_t)>& fn,
                      int64_t grain = 1, int64_t chunks_per_thread = 4) {
  if (n <= 0) return;
  if (pool) pool->parallel_for(n, fn, grain, chunks_per_thread);
  else fn(0, n);
}

}  // namespace lockstep
