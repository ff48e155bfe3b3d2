#include "runtime/thread_pool.h"

#include <algorithm>
#include <chrono>
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace lockstep {

namespace {
thread_local bool inside_pool_task = false;

/// Waits up to about 100 us for done() before the caller blocks on a condition variable: waking a sleeping
/// thread costs tens of microseconds (more in a VM), which a run of many small ops would pay per op.
template <class Done>
bool spin_until(Done done) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::microseconds(100);
  for (int i = 0;; ++i) {
    if (done()) return true;
#if defined(__x86_64__) || defined(__i386__)
    _mm_pause();
#else
    std::this_thread::yield();
#endif
    if ((i & 63) == 63 && std::chrono::steady_clock::now() > deadline) return done();
  }
}
}  // namespace

ThreadPool::ThreadPool(int threads) {
  if (threads <= 0) threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  for (int i = 1; i < threads; ++i) workers_.emplace_back([this, i] { worker_loop(i); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  for (auto& w : workers_) w.join();
}

void ThreadPool::worker_loop(int) {
  uint64_t seen = 0;
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    auto woken = [&] { return stop_.load() || generation_.load() != seen; };
    lock.unlock();
    spin_until(woken);
    lock.lock();
    wake_.wait(lock, woken);
    if (stop_) return;
    seen = generation_;
    while (next_chunk_ < task_chunks_) {
      int64_t chunk = next_chunk_++;
      int64_t begin = task_n_ * chunk / task_chunks_, end = task_n_ * (chunk + 1) / task_chunks_;
      const auto* fn = task_;
      lock.unlock();
      inside_pool_task = true;
      (*fn)(begin, end);
      inside_pool_task = false;
      lock.lock();
      if (++chunks_done_ == task_chunks_) done_.notify_all();
    }
  }
}

void ThreadPool::parallel_for(int64_t n, const std::function<void(int64_t, int64_t)>& fn, int64_t grain,
                              int64_t chunks_per_thread) {
  if (n <= 0) return;
  grain = std::max<int64_t>(grain, 1);
  int64_t chunks = std::min<int64_t>(static_cast<int64_t>(size()) * std::max<int64_t>(chunks_per_thread, 1),
                                     (n + grain - 1) / grain);
  if (chunks <= 1 || workers_.empty() || inside_pool_task) {
    fn(0, n);
    return;
  }
  std::lock_guard<std::mutex> run_lock(run_mutex_);
  std::unique_lock<std::mutex> lock(mutex_);
  task_ = &fn;
  task_n_ = n;
  task_chunks_ = chunks;
  next_chunk_ = 0;
  chunks_done_ = 0;
  ++generation_;
  wake_.notify_all();
  while (next_chunk_ < task_chunks_) {
    int64_t chunk = next_chunk_++;
    int64_t begin = n * chunk / chunks, end = n * (chunk + 1) / chunks;
    lock.unlock();
    inside_pool_task = true;
    fn(begin, end);
    inside_pool_task = false;
    lock.lock();
    ++chunks_done_;
  }
  auto finished = [&] { return chunks_done_.load() == task_chunks_; };
  lock.unlock();
  spin_until(finished);
  lock.lock();
  done_.wait(lock, finished);
  task_ = nullptr;
}

}  // namespace lockstep
