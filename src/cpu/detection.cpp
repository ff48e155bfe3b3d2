// CPU kernels of the detection family: arith::nms_select per (batch, class), the selections split over the pool;
// RoiAlign one output element at a time through arith::roi_align_element_f32.
#include <cstring>

#include "cpu/fill.h"
#include "ops/detection.h"
#include "runtime/thread_pool.h"

namespace lockstep::cpu {

namespace {

struct CpuNms {
  static NmsSelections select(KernelContext& ctx, const NmsPlan& p, const float* boxes, const float* scores) {
    const int64_t selections = p.batches * p.classes;
    NmsSelections s{std::vector<int64_t>(selections), std::vector<int64_t>(selections * p.capacity)};
    ctx.pool->parallel_for(selections, [&](int64_t begin, int64_t end) {
      std::vector<int64_t> order(p.boxes), scratch(p.boxes);
      for (int64_t bc = begin; bc < end; ++bc)
        s.counts[bc] = arith::nms_select(boxes + bc / p.classes * p.boxes * 4, scores + bc * p.boxes, p.boxes,
                                         p.settings, order.data(), scratch.data(), &s.selected[bc * p.capacity]);
    }, 1);
    return s;
  }
  static void store(KernelContext&, const std::vector<int64_t>& rows, Tensor& out) {
    std::memcpy(out.data<int64_t>(), rows.data(), rows.size() * sizeof(int64_t));
  }
};

}  // namespace

// Contract: arith::nms_select per (batch, class); see docs/arithmetic.md#detection.
void non_max_suppression(KernelContext& ctx) { run_nms<CpuNms>(ctx); }

// Contract: arith::roi_align_element_f32 (the reference's sampling grid, running sum or max); see
// docs/arithmetic.md#roialign.
void roi_align(KernelContext& ctx) {
  Shape out_shape;
  RoiAlignElement element = roi_align_plan(ctx, &out_shape);
  fill_output_f32(ctx, out_shape, 64, element);
}

}  // namespace lockstep::cpu
