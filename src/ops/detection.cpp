// The detection family's definitions: NonMaxSuppression (10; 11 changed nothing lockstep sees) and RoiAlign (10;
// 16 added coordinate_transformation_mode, default half_pixel where 10 had output_half_pixel).
#include "ops/detection.h"

#include <algorithm>
#include <string>

#include "ops/registry.h"

namespace lockstep {

namespace {

// An optional one-element input, absent when left out or empty; throws naming the input on another dtype or size.
bool scalar_input(const KernelContext& ctx, int i, const char* name, DType dtype, Tensor* value) {
  if (!ctx.has_input(i) || ctx.input(i).numel() == 0) return false;
  *value = ctx.host_input(i);
  if (value->dtype() != dtype || value->numel() != 1)
    throw ctx.error(std::string("NonMaxSuppression input ") + name + " must be one " + dtype_name(dtype) +
                    " value, got " + dtype_name(value->dtype()) + " " + shape_string(value->shape()));
  return true;
}

void check_box_inputs(const KernelContext& ctx) {
  const Tensor& boxes = ctx.input(0);
  const Tensor& scores = ctx.input(1);
  require_float(ctx, boxes, "boxes");
  require_float(ctx, scores, "scores");
  if (boxes.rank() != 3 || boxes.shape()[2] != 4)
    throw ctx.error("NonMaxSuppression input boxes must be (batches, boxes, 4), got " + shape_string(boxes.shape()));
  if (scores.rank() != 3 || scores.shape()[0] != boxes.shape()[0] || scores.shape()[2] != boxes.shape()[1])
    throw ctx.error("NonMaxSuppression input scores must be (" + std::to_string(boxes.shape()[0]) + ", classes, " +
                    std::to_string(boxes.shape()[1]) + ") for boxes " + shape_string(boxes.shape()) + ", got " +
                    shape_string(scores.shape()));
}

}  // namespace

NmsPlan nms_plan(const KernelContext& ctx) {
  check_box_inputs(ctx);
  NmsPlan p;
  p.batches = ctx.input(0).shape()[0];
  p.boxes = ctx.input(0).shape()[1];
  p.classes = ctx.input(1).shape()[1];
  arith::NmsSettings& s = p.settings;
  int64_t center = ctx.node.attr_int("center_point_box", 0);
  if (center != 0 && center != 1)
    throw ctx.error("NonMaxSuppression center_point_box must be 0 or 1, got " + std::to_string(center));
  s.center_point_box = center == 1;
  Tensor t;
  if (scalar_input(ctx, 2, "max_output_boxes_per_class", DType::Int64, &t))
    s.max_per_class = std::max<int64_t>(t.data<int64_t>()[0], 0);
  if (scalar_input(ctx, 3, "iou_threshold", DType::Float, &t)) s.iou_threshold = t.data<float>()[0];
  if (!(s.iou_threshold >= 0.0f && s.iou_threshold <= 1.0f))
    throw ctx.error("NonMaxSuppression input iou_threshold must be in [0, 1], got " +
                    std::to_string(s.iou_threshold));
  s.has_score_threshold = scalar_input(ctx, 4, "score_threshold", DType::Float, &t);
  if (s.has_score_threshold) s.score_threshold = t.data<float>()[0];
  p.capacity = std::min(s.max_per_class, p.boxes);
  return p;
}

std::vector<int64_t> nms_rows(const NmsPlan& p, const NmsSelections& s) {
  std::vector<int64_t> rows;
  for (int64_t bc = 0; bc < static_cast<int64_t>(s.counts.size()); ++bc)
    for (int64_t j = 0; j < s.counts[bc]; ++j)
      rows.insert(rows.end(), {bc / p.classes, bc % p.classes, s.selected[bc * p.capacity + j]});
  return rows;
}

RoiAlignElement roi_align_plan(const KernelContext& ctx, Shape* out_shape) {
  const Tensor& x = ctx.input(0);
  const Tensor& rois = ctx.input(1);
  require_float(ctx, x, "X");
  require_float(ctx, rois, "rois");
  if (x.rank() != 4) throw ctx.error("X " + shape_string(x.shape()) + " must be (N, C, H, W)");
  if (rois.rank() != 2 || rois.dim(1) != 4) throw ctx.error("rois " + shape_string(rois.shape()) + " must be (R, 4)");
  Tensor batch = ctx.host_input(2);
  if (batch.dtype() != DType::Int64 || batch.rank() != 1 || batch.dim(0) != rois.dim(0))
    throw ctx.error("batch_indices must be int64 (" + std::to_string(rois.dim(0)) + "), got " +
                    dtype_name(batch.dtype()) + " " + shape_string(batch.shape()));
  for (int64_t r = 0; r < batch.numel(); ++r)
    if (batch.data<int64_t>()[r] < 0 || batch.data<int64_t>()[r] >= x.dim(0))
      throw ctx.error("batch_indices[" + std::to_string(r) + "] = " + std::to_string(batch.data<int64_t>()[r]) +
                      " is outside [0, " + std::to_string(x.dim(0)) + ")");
  const onnx::Node& n = ctx.node;
  const std::string coordinates = n.attr_string("coordinate_transformation_mode",
                                                ctx.opset < 16 ? "output_half_pixel" : "half_pixel");
  const std::string mode = n.attr_string("mode", "avg");
  if (coordinates != "half_pixel" && coordinates != "output_half_pixel")
    throw ctx.error("coordinate_transformation_mode '" + coordinates + "' must be half_pixel or output_half_pixel");
  if (mode != "avg" && mode != "max") throw ctx.error("mode '" + mode + "' must be avg or max");
  arith::RoiAlignGeometry g;
  g.x = x.data<float>();
  g.rois = rois.data<float>();
  g.batch = ctx.input(2).data<int64_t>();
  g.channels = x.dim(1);
  g.height = x.dim(2);
  g.width = x.dim(3);
  g.pooled_h = n.attr_int("output_height", 1);
  g.pooled_w = n.attr_int("output_width", 1);
  g.sampling_ratio = n.attr_int("sampling_ratio", 0);
  g.spatial_scale = n.attr_float("spatial_scale", 1.0f);
  g.half_pixel = coordinates == "half_pixel";
  g.max_mode = mode == "max";
  if (g.pooled_h < 1 || g.pooled_w < 1 || g.sampling_ratio < 0)
    throw ctx.error("output_height and output_width must be at least 1 and sampling_ratio at least 0");
  *out_shape = {rois.dim(0), g.channels, g.pooled_h, g.pooled_w};
  return {g};
}

namespace {
const OpEntry kRows[] = {
    {"NonMaxSuppression", 10, kNewestOpset, &cpu::non_max_suppression, LOCKSTEP_CUDA_KERNEL(non_max_suppression)},
    {"RoiAlign", 10, kNewestOpset, &cpu::roi_align, LOCKSTEP_CUDA_KERNEL(roi_align)},
};
}  // namespace

std::span<const OpEntry> detection_ops() { return kRows; }

}  // namespace lockstep
