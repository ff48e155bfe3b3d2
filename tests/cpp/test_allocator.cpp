// Tests of the caching allocator (src/runtime/caching_allocator.h): reuse of freed blocks, of somewhat larger
// blocks, the bound on the kept bytes (least recently freed blocks go first; never below the last run's working
// set), device memory whose release waits (blocks beyond the bound go at run end), a request the device cannot
// meet (the kept blocks go, then it is tried again) and concurrent use.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "runtime/caching_allocator.h"

namespace lockstep {
namespace {

// Raw host memory that counts what it hands out and remembers the last block it was given back.
std::atomic<int> g_raw_allocations{0};
std::atomic<int> g_raw_live{0};
std::atomic<void*> g_last_released{nullptr};

void* counted_allocate(size_t bytes) {
  ++g_raw_allocations;
  ++g_raw_live;
  return std::aligned_alloc(64, bytes);
}

void counted_release(void* p) {
  --g_raw_live;
  g_last_released = p;
  std::free(p);
}

class AllocatorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    g_raw_allocations = 0;
    g_raw_live = 0;
    g_last_released = nullptr;
  }
  void TearDown() override { EXPECT_EQ(g_raw_live.load(), 0) << "blocks leaked"; }
  static RawMemory counted() { return {Device::CPU, 0, 64, counted_allocate, counted_release}; }
};

TEST_F(AllocatorTest, ReusesAFreedBlockOfTheSameRoundedSize) {
  CachingAllocator allocator(counted());
  void* first = allocator.allocate(1000)->data;
  auto again = allocator.allocate(1010);  // 1000 and 1010 both round up to 1024
  EXPECT_EQ(again->data, first);
  EXPECT_EQ(again->bytes, 1010u);
  EXPECT_EQ(g_raw_allocations.load(), 1);
  EXPECT_EQ(allocator.stats().in_use_bytes, 1024u);
}

TEST_F(AllocatorTest, ReusesTheSmallestFreedBlockWithinTwiceTheSize) {
  CachingAllocator allocator(counted());
  auto big = allocator.allocate(4096), mid = allocator.allocate(3072);
  void *big_data = big->data, *mid_data = mid->data;
  big.reset();
  mid.reset();
  auto a = allocator.allocate(2000);  // 2048: both fit, the smaller one is taken
  EXPECT_EQ(a->data, mid_data);
  auto b = allocator.allocate(2048);  // 4096 is exactly twice 2048
  EXPECT_EQ(b->data, big_data);
  EXPECT_EQ(g_raw_allocations.load(), 2);
  EXPECT_EQ(allocator.stats().in_use_bytes, 4096u + 3072u);  // block sizes, not request sizes
  b.reset();
  auto c = allocator.allocate(1000);  // 1024: 4096 is more than twice that, so a new block
  EXPECT_NE(c->data, big_data);
  EXPECT_EQ(g_raw_allocations.load(), 3);
  b = allocator.allocate(4000);  // given back as 4096 bytes, not 2048, the block still serves 4000
  EXPECT_EQ(b->data, big_data);
}

// One run whose blocks cannot share (each size more than twice the next): 2 x 4096 held, then 8 x 1024, then
// 32 x 256, each group freed before the next. The peak in use is 8192 bytes, the working set 24576 bytes.
void fragmenting_run(CachingAllocator& allocator) {
  for (auto [count, bytes] : {std::pair{2, 4096}, std::pair{8, 1024}, std::pair{32, 256}}) {
    std::vector<std::shared_ptr<Buffer>> held;
    for (int i = 0; i < count; ++i) held.push_back(allocator.allocate(bytes));
  }
  allocator.end_run();
}

TEST_F(AllocatorTest, KeepsTheLastRunsWorkingSetBeyondTwiceThePeak) {
  CachingAllocator allocator(counted());
  fragmenting_run(allocator);  // beyond twice the peak: the 4096-byte blocks, freed first, are released
  EXPECT_EQ(allocator.stats().peak_in_use_bytes, 8192u);
  EXPECT_EQ(allocator.stats().last_run_bytes, 24576u);
  EXPECT_EQ(g_raw_allocations.load(), 42);
  fragmenting_run(allocator);  // they are allocated again, and from now on kept
  const int after_second = g_raw_allocations.load();
  for (int run = 0; run < 3; ++run) fragmenting_run(allocator);
  EXPECT_EQ(g_raw_allocations.load(), after_second) << "a recurring run allocated new blocks";
  EXPECT_EQ(allocator.stats().cached_bytes, 24576u);
}

TEST_F(AllocatorTest, ChangingShapesKeepAboutTwoWorkingSets) {
  CachingAllocator allocator(counted());
  for (int run = 0; run < 20; ++run) {
    // Each run a new size, three times the last (no block fits the next run), two blocks held at once.
    const size_t bytes = 64 * static_cast<size_t>(std::pow(3, run % 10));
    { auto a = allocator.allocate(bytes), b = allocator.allocate(bytes); }
    allocator.end_run();
    const CacheStats s = allocator.stats();
    EXPECT_LE(s.cached_bytes, std::max(2 * s.peak_in_use_bytes, s.last_run_bytes)) << "run " << run;
    EXPECT_EQ(s.last_run_bytes, 2 * bytes) << "run " << run;
  }
}

TEST_F(AllocatorTest, FixedBoundReleasesTheLeastRecentlyFreedBlocks) {
  CachingAllocator allocator(counted(), CacheBound::fixed(3 * 1024));
  std::vector<std::shared_ptr<Buffer>> held;
  for (int i = 0; i < 4; ++i) held.push_back(allocator.allocate(1024));
  std::vector<void*> data;
  for (auto& b : held) data.push_back(b->data);
  for (auto& b : held) b.reset();  // freed in order 0, 1, 2, 3: the fourth pushes the first out
  EXPECT_EQ(g_last_released.load(), data[0]);
  EXPECT_EQ(g_raw_live.load(), 3);
  CacheStats s = allocator.stats();
  EXPECT_EQ(s.cached_bytes, 3u * 1024);
  EXPECT_EQ(s.cached_blocks, 3u);
  EXPECT_EQ(s.in_use_bytes, 0u);
  auto again = allocator.allocate(1024);
  EXPECT_EQ(again->data, data[3]);  // of equal sizes, the block freed last (the likeliest to be in cache)
  EXPECT_EQ(g_raw_allocations.load(), 4);
}

TEST_F(AllocatorTest, ZeroBoundKeepsNothing) {
  CachingAllocator allocator(counted(), CacheBound::fixed(0));
  void* data = allocator.allocate(64)->data;
  EXPECT_EQ(g_last_released.load(), data);
  EXPECT_EQ(g_raw_live.load(), 0);
  EXPECT_EQ(allocator.stats().cached_bytes, 0u);
}

TEST_F(AllocatorTest, DefaultBoundIsTwiceThePeakInUse) {
  CachingAllocator allocator(counted());
  {
    std::vector<std::shared_ptr<Buffer>> working_set;
    for (int i = 0; i < 10; ++i) working_set.push_back(allocator.allocate(1024));
  }
  EXPECT_EQ(allocator.stats().cached_bytes, 10u * 1024);  // the whole working set is kept
  EXPECT_EQ(g_raw_live.load(), 10);
  // Ever larger sizes, one at a time: none fits a kept block, so each is new and the cache would grow for ever.
  for (size_t bytes = 2048; bytes <= 8192; bytes += 64) {
    allocator.allocate(bytes);
    CacheStats s = allocator.stats();
    ASSERT_EQ(s.peak_in_use_bytes, 10u * 1024);
    ASSERT_LE(s.cached_bytes, 2 * s.peak_in_use_bytes) << bytes;
  }
  EXPECT_LT(g_raw_live.load(), g_raw_allocations.load() / 2);  // most blocks went back to the system
}

TEST_F(AllocatorTest, BuffersMayOutliveTheAllocator) {
  std::shared_ptr<Buffer> kept;
  {
    CachingAllocator allocator(counted());
    kept = allocator.allocate(100);
    allocator.allocate(200);
  }
  EXPECT_EQ(g_raw_live.load(), 1);  // the kept block only: the freed one went back with the allocator
  std::memset(kept->data, 1, kept->bytes);
  void* data = kept->data;
  kept.reset();  // released at once: nothing is cached for an allocator that is gone
  EXPECT_EQ(g_last_released.load(), data);
  EXPECT_EQ(g_raw_live.load(), 0);
}

TEST_F(AllocatorTest, ThreadsAllocatingAndFreeingShareBlocksSafely) {
  // A small bound, so that eviction runs concurrently with reuse and fresh allocation.
  CachingAllocator allocator(counted(), CacheBound::fixed(64 * 1024));
  constexpr int kThreads = 4, kRounds = 3000;
  std::atomic<int> corrupted{0};
  auto work = [&](int id) {
    std::mt19937 rng(id);
    std::vector<std::shared_ptr<Buffer>> held;
    for (int round = 0; round < kRounds; ++round) {
      size_t bytes = 64 * (1 + rng() % 64);
      auto b = allocator.allocate(bytes);
      std::memset(b->data, id, bytes);
      held.push_back(std::move(b));
      if (held.size() > 8 || rng() % 3 == 0) {
        // A block handed to two owners at once would show another thread's bytes.
        auto victim = held.begin() + static_cast<long>(rng() % held.size());
        const auto* p = static_cast<const unsigned char*>((*victim)->data);
        for (size_t i = 0; i < (*victim)->bytes; ++i)
          if (p[i] != id) {
            ++corrupted;
            break;
          }
        held.erase(victim);
      }
    }
  };
  std::vector<std::thread> threads;
  for (int id = 1; id <= kThreads; ++id) threads.emplace_back(work, id);
  for (auto& t : threads) t.join();
  EXPECT_EQ(corrupted.load(), 0);
  CacheStats s = allocator.stats();
  EXPECT_EQ(s.in_use_bytes, 0u);
  EXPECT_LE(s.cached_bytes, 64u * 1024);
  EXPECT_EQ(static_cast<size_t>(g_raw_live.load()), s.cached_blocks);
}


TEST_F(AllocatorTest, WhereReleaseWaitsBlocksBeyondTheBoundGoWhenTheRunEnds) {
  RawMemory device_like = counted();
  device_like.release_waits = true;
  CachingAllocator allocator(device_like, CacheBound::fixed(1024));
  {
    auto a = allocator.allocate(1024), b = allocator.allocate(1024), c = allocator.allocate(1024);
  }
  EXPECT_EQ(g_raw_live.load(), 3) << "released in the middle of a run";
  EXPECT_EQ(allocator.stats().cached_bytes, 3u * 1024);
  allocator.end_run();
  EXPECT_EQ(g_raw_live.load(), 1);
  EXPECT_EQ(allocator.stats().cached_bytes, 1024u);
}

TEST_F(AllocatorTest, ARequestTheDeviceCannotMeetReleasesTheKeptBlocksAndTriesAgain) {
  // A device of 8 KiB: the kept blocks (6 KiB, none of which fits the request) leave too little for 4 KiB.
  RawMemory small = counted();
  small.allocate = [](size_t bytes) -> void* {
    return static_cast<size_t>(g_raw_live.load()) * 1024 + bytes > 8192 ? nullptr : counted_allocate(bytes);
  };
  CachingAllocator allocator(small, CacheBound::unbounded());
  {
    std::vector<std::shared_ptr<Buffer>> held;
    for (int i = 0; i < 6; ++i) held.push_back(allocator.allocate(1024));
  }
  EXPECT_EQ(allocator.stats().cached_blocks, 6u);
  auto big = allocator.allocate(4096);
  EXPECT_EQ(allocator.stats().cached_blocks, 0u);
  EXPECT_EQ(g_raw_live.load(), 1);
  try {
    allocator.allocate(8192);  // with the 4 KiB block held, this can never fit
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("out of host memory allocating 8192 bytes"), std::string::npos) << e.what();
  }
  EXPECT_EQ(allocator.stats().in_use_bytes, 4096u);
}

}  // namespace
}  // namespace lockstep
