// CPU kernel of the layout and index families: runs a host-planned source map (src/ops/layout.h), output
// elements split over the pool.
#include "ops/layout.h"
#include "ops/registry.h"
#include "runtime/thread_pool.h"

namespace lockstep::cpu {

namespace {

constexpr int64_t kMapGrain = 4096;

struct CpuMapped {
  // Contract: exact copy; see docs/arithmetic.md#source-maps.
  template <typename W>
  static void apply(KernelContext& ctx, const SourceMap& plan, const W* src, W* dst) {
    const W* extra = plan.extra.defined() ? plan.extra.data<W>() : nullptr;
    const int64_t* map = plan.map.data();
    ctx.pool->parallel_for(static_cast<int64_t>(plan.map.size()), [&](int64_t begin, int64_t end) {
      for (int64_t e = begin; e < end; ++e) dst[e] = map[e] >= 0 ? src[map[e]] : extra[-map[e] - 1];
    }, kMapGrain);
  }
};

}  // namespace

// Contract: exact copy; see docs/arithmetic.md#source-maps.
void mapped(KernelContext& ctx) { run_mapped<CpuMapped>(ctx); }

// Contract: output 0 is the input itself, the mask all ones; see docs/arithmetic.md#source-maps.
void dropout(KernelContext& ctx) { run_dropout<CpuMapped>(ctx); }

}  // namespace lockstep::cpu
