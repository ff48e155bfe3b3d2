#include "runtime/thread_pool.h"

#include <algorithm>
#include <chrono>
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace lockstep {

namespace {
thread_local bool inside_pool_task = false;

/// Waits up to about 1 ms for done() before the caller blocks on a condition variable: waking a sleeping thread
/// costs tens of microseconds (more in a VM), which a run of many small ops would pay per op, and at 16 threads the
/// gaps between one op's end and the next op's start often passed 100 us (ResNet-50 on a 16-core VM: 500 to 1,000
/// sleeps a run with 100 us, 10 to 175 with 1 ms; docs/performance.md).
template <class Done>
bool spin_until(Done done) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::microseconds(1000);
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

constexpr int64_t kMaxChunks = 0xffff;  // a claim's chunk count and next chunk take 16 bits each
uint32_t generation_of(uint64_t claim) { return static_cast<uint32_t>(claim >> 32); }
int64_t chunk_count_of(uint64_t claim) { return static_cast<int64_t>((claim >> 16) & 0xffff); }
int64_t next_chunk_of(uint64_t claim) { return static_cast<int64_t>(claim & 0xffff); }

// claim_in_shares' results other than a chunk.
constexpr int64_t kNoChunk = -1, kMoved = -2, kRaced = -3;

/// Claims the lowest (down: the highest) unclaimed chunk in [lo, hi) of a shared task of `generation`
/// (ThreadPool::shares_). kNoChunk: every chunk there is claimed; kMoved: a later task replaced this one; kRaced:
/// another thread claimed a chunk of the word this claim read, which is then read again.
template <size_t kWords>
int64_t claim_in_shares(std::array<std::atomic<uint64_t>, kWords>& shares, uint32_t generation, int64_t lo,
                        int64_t hi, bool down) {
  if (lo >= hi) return kNoChunk;
  const int64_t first = lo / 32, last = (hi - 1) / 32;
  for (int64_t i = 0; i <= last - first; ++i) {
    const int64_t w = down ? last - i : first + i;
    uint64_t word = shares[w].load(std::memory_order_acquire);
    if (generation_of(word) != generation) return kMoved;
    const int64_t b0 = std::max<int64_t>(lo - 32 * w, 0), b1 = std::min<int64_t>(hi - 32 * w, 32);
    const uint64_t free = ~word & ((uint64_t(1) << b1) - 1) & ~((uint64_t(1) << b0) - 1);
    if (free == 0) continue;
    const int bit = down ? 63 - __builtin_clzll(free) : __builtin_ctzll(free);
    if (!shares[w].compare_exchange_strong(word, word | (uint64_t(1) << bit), std::memory_order_acq_rel,
                                           std::memory_order_acquire))
      return kRaced;
    return 32 * w + bit;
  }
  return kNoChunk;
}

}  // namespace

ThreadPool::ThreadPool(int threads) {
  if (threads <= 0) threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  for (int i = 1; i < threads; ++i) workers_.emplace_back([this, i] { worker_loop(i); });
}

ThreadPool::~ThreadPool() {
  stop_ = true;
  { std::lock_guard<std::mutex> lock(sleep_mutex_); }  // a worker between its check and its wait gets the notify
  wake_.notify_all();
  for (auto& w : workers_) w.join();
}

void ThreadPool::worker_loop(int self) {
  uint32_t seen = 0;
  for (;;) {
    auto moved = [&] { return stop_.load() || generation_of(claim_.load(std::memory_order_acquire)) != seen; };
    auto moved_or_resting = [&] { return moved() || resting_.load(std::memory_order_acquire); };
    if (!spin_until(moved_or_resting) || !moved()) {
      std::unique_lock<std::mutex> lock(sleep_mutex_);
      wake_.wait(lock, moved);
    }
    if (stop_) return;
    seen = generation_of(claim_.load(std::memory_order_acquire));
    inside_pool_task = true;
    run_chunks(seen, self);
    inside_pool_task = false;
  }
}

int64_t ThreadPool::claim_shared(uint32_t generation, int64_t chunks, int self) {
  const int64_t threads = size(), own0 = chunks * self / threads, own1 = chunks * (self + 1) / threads;
  for (;;) {
    int64_t chunk = claim_in_shares(shares_, generation, own0, own1, false);
    if (chunk == kNoChunk) chunk = claim_in_shares(shares_, generation, 0, chunks, true);
    if (chunk != kRaced) return chunk;  // a chunk, or kNoChunk or kMoved (negative)
  }
}

void ThreadPool::run_chunks(uint32_t generation, int self) {
  uint64_t claim = claim_.load(std::memory_order_acquire);
  for (;;) {
    const int64_t chunks = chunk_count_of(claim);
    if (generation_of(claim) != generation) return;
    int64_t chunk = next_chunk_of(claim);
    if (chunks <= kMaxSharedChunks) {
      chunk = claim_shared(generation, chunks, self);
      if (chunk < 0) return;
    } else {
      if (chunk >= chunks) return;
      if (!claim_.compare_exchange_weak(claim, claim + 1, std::memory_order_acq_rel, std::memory_order_acquire))
        continue;
    }
    (*task_)(task_n_ * chunk / chunks, task_n_ * (chunk + 1) / chunks);
    if (chunks_done_.fetch_add(1, std::memory_order_acq_rel) + 1 == chunks) {
      { std::lock_guard<std::mutex> lock(sleep_mutex_); }
      done_.notify_all();
    }
    claim = claim_.load(std::memory_order_acquire);
  }
}

void ThreadPool::parallel_for(int64_t n, const std::function<void(int64_t, int64_t)>& fn, int64_t grain,
                              int64_t chunks_per_thread) {
  if (n <= 0) return;
  grain = std::max<int64_t>(grain, 1);
  int64_t chunks = std::min<int64_t>(static_cast<int64_t>(size()) * std::max<int64_t>(chunks_per_thread, 1),
                                     (n + grain - 1) / grain);
  chunks = std::min(chunks, kMaxChunks);
  if (chunks <= 1 || workers_.empty() || inside_pool_task) {
    fn(0, n);
    return;
  }
  std::lock_guard<std::mutex> run_lock(run_mutex_);
  resting_.store(false, std::memory_order_relaxed);  // published with the task below
  task_ = &fn;
  task_n_ = n;
  chunks_done_.store(0, std::memory_order_relaxed);
  const uint32_t generation = generation_of(claim_.load(std::memory_order_relaxed)) + 1;
  if (chunks <= kMaxSharedChunks)  // no chunk claimed yet; published with the task below
    for (int64_t w = 0; w * 32 < chunks; ++w) shares_[w].store(uint64_t{generation} << 32, std::memory_order_relaxed);
  claim_.store(uint64_t{generation} << 32 | uint64_t(chunks) << 16, std::memory_order_release);  // publishes it
  { std::lock_guard<std::mutex> lock(sleep_mutex_); }  // a worker between its check and its wait gets the notify
  wake_.notify_all();
  inside_pool_task = true;
  run_chunks(generation, 0);
  inside_pool_task = false;
  auto finished = [&] { return chunks_done_.load(std::memory_order_acquire) == chunks; };
  if (!spin_until(finished)) {
    std::unique_lock<std::mutex> lock(sleep_mutex_);
    done_.wait(lock, finished);
  }
}

}  // namespace lockstep
