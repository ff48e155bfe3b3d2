// The detection family (NonMaxSuppression 10-28): inputs and attributes validated into one plan; each device runs
// arith::nms_select per (batch, class), and the shared driver turns the selections into the output
// (docs/arithmetic.md#detection). RoiAlign (10, 16-28): one element function on both devices.
#pragma once

#include <cstdint>
#include <vector>

#include "arith/detection.h"
#include "ops/common.h"
#include "runtime/kernel.h"

namespace lockstep {

struct NmsPlan {
  arith::NmsSettings settings;
  int64_t batches = 0, classes = 0, boxes = 0;
  int64_t capacity = 0;  // most boxes one (batch, class) can keep: min(max_output_boxes_per_class, boxes)
};

/// Reads and validates boxes, scores, max_output_boxes_per_class, iou_threshold, score_threshold, center_point_box.
NmsPlan nms_plan(const KernelContext& ctx);

/// The per-(batch, class) selections of one run: selection bc (batch * classes + class) kept counts[bc] boxes,
/// selected[bc * capacity + j] for j < counts[bc], best first.
struct NmsSelections {
  std::vector<int64_t> counts, selected;
};

/// The (num_selected, 3) rows (batch, class, box), in (batch, class) order and best first within each.
std::vector<int64_t> nms_rows(const NmsPlan& p, const NmsSelections& s);

// The kernel's driver, shared by both devices. `Dev` holds the device's parts:
//   select(ctx, plan, boxes, scores) -> NmsSelections (host vectors)
//   store(ctx, rows, out)              copies the host rows into the int64 output
template <class Dev>
void run_nms(KernelContext& ctx) {
  NmsPlan p = nms_plan(ctx);
  NmsSelections s;
  if (p.capacity > 0 && p.batches * p.classes > 0) s = Dev::select(ctx, p, ctx.input(0).data<float>(), ctx.input(1).data<float>());
  std::vector<int64_t> rows = nms_rows(p, s);
  Tensor& out = ctx.output(0, DType::Int64, {static_cast<int64_t>(rows.size() / 3), 3});
  if (!rows.empty()) Dev::store(ctx, rows, out);
}

/// RoiAlign's output element e, for either device's fill (pointers are the device's).
struct RoiAlignElement {
  arith::RoiAlignGeometry g;
  LOCKSTEP_HD float operator()(int64_t e) const { return arith::roi_align_element_f32(g, e); }
};
/// Validates a RoiAlign node (X, rois, batch_indices; the batch indices read on the host) and returns its element
/// and output shape (num_rois, C, output_height, output_width).
RoiAlignElement roi_align_plan(const KernelContext& ctx, Shape* out_shape);

namespace cpu {
void non_max_suppression(KernelContext& ctx);
void roi_align(KernelContext& ctx);
}
namespace cuda {
void non_max_suppression(KernelContext& ctx);
void roi_align(KernelContext& ctx);
}

}  // namespace lockstep
