// CUDA kernel of the layout and index families: the host-planned source map (src/ops/layout.h) and its extra
// elements are uploaded, then one thread per output element copies its source, as the CPU kernel does.
#include "cuda/common.cuh"
#include "ops/layout.h"
#include "ops/registry.h"

namespace lockstep::cuda {

namespace {

// Contract: exact copy; see docs/arithmetic.md#source-maps.
template <typename W>
__global__ void source_map_kernel(const int64_t* __restrict__ map, const W* __restrict__ src,
                                  const W* __restrict__ extra, W* __restrict__ dst, int64_t n) {
  int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (e >= n) return;
  int64_t m = map[e];
  dst[e] = m >= 0 ? src[m] : extra[-m - 1];
}

struct CudaMapped {
  template <typename W>
  static void apply(KernelContext& ctx, const SourceMap& plan, const W* src, W* dst) {
    int64_t n = static_cast<int64_t>(plan.map.size());
    auto map = upload(ctx, plan.map.data(), plan.map.size() * sizeof(int64_t));
    auto extra = upload(ctx, plan.extra.defined() ? plan.extra.raw() : nullptr,
                        plan.extra.defined() ? plan.extra.bytes() : 0);
    source_map_kernel<W><<<blocks_for(n), kThreadsPerBlock, 0, stream_of(ctx)>>>(
        static_cast<const int64_t*>(map->data), src, static_cast<const W*>(extra->data), dst, n);
    check_launch(ctx);
  }
};

}  // namespace

// Contract: exact copy; see docs/arithmetic.md#source-maps.
void mapped(KernelContext& ctx) { run_mapped<CudaMapped>(ctx); }

// Contract: output 0 is the input itself, the mask all ones; see docs/arithmetic.md#source-maps.
void dropout(KernelContext& ctx) { run_dropout<CudaMapped>(ctx); }

}  // namespace lockstep::cuda
