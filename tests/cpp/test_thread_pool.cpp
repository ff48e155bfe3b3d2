// The intra-op thread pool: parallel_for's ranges are disjoint, cover [0, n) and number at most
// chunks_per_thread per thread, whatever the range count asked for.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "runtime/thread_pool.h"

using namespace lockstep;

TEST(ThreadPool, RangesCoverOnceWithinTheChunkBound) {
  ThreadPool pool(3);
  for (int64_t n : {1, 2, 13, 100, 300}) {  // 300 chunks: claimed in order, past the shares' 256
    for (int64_t chunks_per_thread : {1, 4, 1000}) {
      std::mutex m;
      std::vector<std::pair<int64_t, int64_t>> ranges;
      pool.parallel_for(n, [&](int64_t b, int64_t e) {
        std::lock_guard<std::mutex> lock(m);
        ranges.emplace_back(b, e);
      }, 1, chunks_per_thread);
      std::sort(ranges.begin(), ranges.end());
      int64_t next = 0;
      for (const auto& [b, e] : ranges) {
        EXPECT_EQ(b, next) << "n " << n << ", " << chunks_per_thread << " a thread";
        EXPECT_LT(b, e);
        next = e;
      }
      EXPECT_EQ(next, n);
      EXPECT_LE(static_cast<int64_t>(ranges.size()), std::min<int64_t>(n, pool.size() * chunks_per_thread));
    }
  }
}

// Back-to-back tasks of different functions, each too short for a sleeping worker to wake in time: every index of
// every task is written once, by that task's function, while that task runs (a late worker must not run a chunk
// after its task returned, a later task's chunk with an earlier task's function, or a chunk twice). Every third
// task has a chunk per index: up to 256 chunks claimed by share over several words, more in order.
TEST(ThreadPool, BackToBackTasksRunEachIndexOnceWithTheirOwnFunction) {
  for (int threads : {2, 4, 8}) {
    ThreadPool pool(threads);
    std::vector<int> written(300);
    std::atomic<int> running{0}, misplaced{0};
    for (int task = 1; task <= 5000; ++task) {
      const int64_t n = 1 + task % 300;
      std::fill(written.begin(), written.end(), 0);
      running = task;
      pool.parallel_for(n, [&, task](int64_t b, int64_t e) {
        if (running.load() != task) ++misplaced;
        for (int64_t i = b; i < e; ++i) written[i] += task;
      }, 1, task % 3 == 0 ? 1000 : 4);
      running = 0;
      for (int64_t i = 0; i < 300; ++i)
        ASSERT_EQ(written[i], i < n ? task : 0) << threads << " threads, task " << task << ", index " << i;
    }
    EXPECT_EQ(misplaced.load(), 0) << threads << " threads";
  }
}

// rest() between tasks (a session's run ending) sends the spinning workers to sleep: the next task wakes them and
// still runs every index once, on more than one thread when its chunks are long enough to share.
TEST(ThreadPool, TasksAfterRestRunEveryIndexOnceAndWakeTheWorkers) {
  ThreadPool pool(4);
  std::vector<int> written(256);
  for (int task = 1; task <= 300; ++task) {
    if (task % 2 == 0) pool.rest();
    std::fill(written.begin(), written.end(), 0);
    pool.parallel_for(256, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) ++written[i];
    });
    for (int64_t i = 0; i < 256; ++i) ASSERT_EQ(written[i], 1) << "task " << task << ", index " << i;
  }
  // The workers sleep after a rest; a task whose chunks wait for them runs on several threads.
  pool.rest();
  std::mutex m;
  std::vector<std::thread::id> seen;
  pool.parallel_for(pool.size(), [&](int64_t, int64_t) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    std::lock_guard<std::mutex> lock(m);
    if (std::find(seen.begin(), seen.end(), std::this_thread::get_id()) == seen.end())
      seen.push_back(std::this_thread::get_id());
  }, 1, 1);
  EXPECT_GT(seen.size(), 1u);
}
