// The NonMaxSuppression contract in code (docs/arithmetic.md#detection): the IoU of two boxes, the order of the
// candidates by score, and the greedy selection of one (batch, class). Then RoiAlign's sampling of one output
// element (docs/arithmetic.md#roialign). Plain C++ on the host, __host__ __device__ under nvcc, so both devices
// compare the same float32 IoUs, keep the same boxes and sample the same points.
#pragma once

#include <cstdint>

#include "arith/elementwise.h"  // ceil_f32
#include "arith/hd.h"

namespace lockstep::arith {

struct NmsSettings {
  int64_t max_per_class = 0;
  float iou_threshold = 0.0f;
  float score_threshold = 0.0f;
  bool has_score_threshold = false;
  bool center_point_box = false;  // boxes are (x_center, y_center, width, height), else two corners (y1, x1, y2, x2)
};

/// The box's extent [lo, hi] on axis 0 (y) or 1 (x): the corners' min and max, or center -+ size / 2.
LOCKSTEP_HD void box_extent(const float* box, int axis, bool center, float* lo, float* hi) {
  if (center) {
    float c = box[1 - axis], half = box[3 - axis] / 2.0f;
    *lo = c - half;
    *hi = c + half;
    return;
  }
  float a = box[axis], b = box[axis + 2];
  *lo = a < b ? a : b;
  *hi = a < b ? b : a;
}

/// Intersection over union, or 0 where the boxes do not overlap or an area is not positive:
/// inter = (ihi_y - ilo_y) * (ihi_x - ilo_x) with ilo = max of the los, ihi = min of the his,
/// union = (area_a + area_b) - inter, area = (hi_y - lo_y) * (hi_x - lo_x), iou = inter / union.
LOCKSTEP_HD float box_iou_f32(const float* a, const float* b, bool center) {
  float lo_a[2], hi_a[2], lo_b[2], hi_b[2], side[2];
  for (int axis = 0; axis < 2; ++axis) {
    box_extent(a, axis, center, &lo_a[axis], &hi_a[axis]);
    box_extent(b, axis, center, &lo_b[axis], &hi_b[axis]);
    float lo = lo_a[axis] > lo_b[axis] ? lo_a[axis] : lo_b[axis];
    float hi = hi_a[axis] < hi_b[axis] ? hi_a[axis] : hi_b[axis];
    if (!(hi > lo)) return 0.0f;
    side[axis] = hi - lo;
  }
  float inter = side[0] * side[1];
  float area_a = (hi_a[0] - lo_a[0]) * (hi_a[1] - lo_a[1]);
  float area_b = (hi_b[0] - lo_b[0]) * (hi_b[1] - lo_b[1]);
  float uni = (area_a + area_b) - inter;
  if (!(inter > 0.0f) || !(area_a > 0.0f) || !(area_b > 0.0f) || !(uni > 0.0f)) return 0.0f;
  return inter / uni;
}

/// Candidate a goes before b: higher score first, equal scores (+0 and -0 too) by lower box index.
LOCKSTEP_HD bool nms_before(const float* scores, int64_t a, int64_t b) {
  return scores[a] > scores[b] || (scores[a] == scores[b] && a < b);
}

/// Sorts order[0..m) by nms_before (a strict total order, so the result is unique): bottom-up merge sort through
/// scratch (m entries).
LOCKSTEP_HD void nms_sort(const float* scores, int64_t* order, int64_t* scratch, int64_t m) {
  int64_t* src = order;
  int64_t* dst = scratch;
  for (int64_t width = 1; width < m; width *= 2) {
    for (int64_t lo = 0; lo < m; lo += 2 * width) {
      int64_t mid = lo + width < m ? lo + width : m;
      int64_t hi = lo + 2 * width < m ? lo + 2 * width : m;
      int64_t i = lo, j = mid, o = lo;
      while (i < mid && j < hi) dst[o++] = nms_before(scores, src[j], src[i]) ? src[j++] : src[i++];
      while (i < mid) dst[o++] = src[i++];
      while (j < hi) dst[o++] = src[j++];
    }
    int64_t* t = src;
    src = dst;
    dst = t;
  }
  if (src != order)
    for (int64_t i = 0; i < m; ++i) order[i] = src[i];
}

/// The greedy selection of one (batch, class) over n boxes (n x 4) and their scores: the candidates (score not NaN,
/// and above score_threshold when given) in nms_before order; each is kept unless its IoU with a box kept before it
/// exceeds iou_threshold, until max_per_class are kept. Writes the kept box indices to `selected`, best first, and
/// returns their count. order and scratch hold n entries each.
LOCKSTEP_HD int64_t nms_select(const float* boxes, const float* scores, int64_t n, const NmsSettings& s,
                               int64_t* order, int64_t* scratch, int64_t* selected) {
  int64_t m = 0;
  for (int64_t i = 0; i < n; ++i) {
    float v = scores[i];
    if (v == v && (!s.has_score_threshold || v > s.score_threshold)) order[m++] = i;
  }
  nms_sort(scores, order, scratch, m);
  int64_t count = 0;
  for (int64_t t = 0; t < m && count < s.max_per_class; ++t) {
    const float* box = boxes + order[t] * 4;
    bool keep = true;
    for (int64_t j = 0; j < count && keep; ++j)
      keep = !(box_iou_f32(box, boxes + selected[j] * 4, s.center_point_box) > s.iou_threshold);
    if (keep) selected[count++] = order[t];
  }
  return count;
}

/// RoiAlign's settings and inputs (x: N, C, H, W; rois: R, 4 as x1, y1, x2, y2; batch: R).
struct RoiAlignGeometry {
  const float* x;
  const float* rois;
  const int64_t* batch;
  int64_t channels, height, width, pooled_h, pooled_w, sampling_ratio;
  float spatial_scale;
  bool half_pixel, max_mode;
};

/// The value of one sampling point (y, x) of a plane: the four bilinear terms of the ONNX reference, each weight
/// times its input, combined by `take` (avg: ((t1 + t2) + t3) + t4; max: the largest). Outside [-1, H] x [-1, W]: 0.
template <class Take>
LOCKSTEP_HD float roi_align_sample_f32(const float* plane, int64_t h, int64_t w, float y, float x, Take take) {
  if (y < -1.0f || y > static_cast<float>(h) || x < -1.0f || x > static_cast<float>(w))
    return take(0.0f, 0.0f, 0.0f, 0.0f);
  y = y > 0.0f ? y : 0.0f;
  x = x > 0.0f ? x : 0.0f;
  int64_t y0 = static_cast<int64_t>(y), x0 = static_cast<int64_t>(x), y1 = y0 + 1, x1 = x0 + 1;
  if (y0 >= h - 1) y0 = y1 = h - 1, y = static_cast<float>(y0);
  if (x0 >= w - 1) x0 = x1 = w - 1, x = static_cast<float>(x0);
  const float ly = y - static_cast<float>(y0), lx = x - static_cast<float>(x0);
  const float hy = 1.0f - ly, hx = 1.0f - lx;
  return take((hy * hx) * plane[y0 * w + x0], (hy * lx) * plane[y0 * w + x1], (ly * hx) * plane[y1 * w + x0],
              (ly * lx) * plane[y1 * w + x1]);
}

/// Output element e of (R, C, pooled_h, pooled_w).
// Contract: the ONNX reference's sampling grid in float32, avg as a running sum from +0 in (iy, ix) order divided
// by the count, max as a running max; see docs/arithmetic.md#roialign.
LOCKSTEP_HD float roi_align_element_f32(const RoiAlignGeometry& g, int64_t e) {
  const int64_t pw = e % g.pooled_w, ph = (e / g.pooled_w) % g.pooled_h;
  const int64_t c = (e / (g.pooled_w * g.pooled_h)) % g.channels, r = e / (g.pooled_w * g.pooled_h * g.channels);
  const float* roi = g.rois + r * 4;
  const float offset = g.half_pixel ? 0.5f : 0.0f;
  const float start_w = roi[0] * g.spatial_scale - offset, start_h = roi[1] * g.spatial_scale - offset;
  float roi_w = (roi[2] * g.spatial_scale - offset) - start_w, roi_h = (roi[3] * g.spatial_scale - offset) - start_h;
  if (!g.half_pixel) {
    roi_w = roi_w > 1.0f ? roi_w : 1.0f;  // malformed rois are 1x1
    roi_h = roi_h > 1.0f ? roi_h : 1.0f;
  }
  const float bin_h = roi_h / static_cast<float>(g.pooled_h), bin_w = roi_w / static_cast<float>(g.pooled_w);
  const int64_t grid_h = g.sampling_ratio > 0 ? g.sampling_ratio : static_cast<int64_t>(ceil_f32(bin_h));
  const int64_t grid_w = g.sampling_ratio > 0 ? g.sampling_ratio : static_cast<int64_t>(ceil_f32(bin_w));
  const float* plane = g.x + (g.batch[r] * g.channels + c) * g.height * g.width;
  const float base_h = start_h + static_cast<float>(ph) * bin_h, base_w = start_w + static_cast<float>(pw) * bin_w;
  float acc = 0.0f;
  bool first = true;
  for (int64_t iy = 0; iy < grid_h; ++iy) {
    const float y = base_h + ((static_cast<float>(iy) + 0.5f) * bin_h) / static_cast<float>(grid_h);
    for (int64_t ix = 0; ix < grid_w; ++ix) {
      const float x = base_w + ((static_cast<float>(ix) + 0.5f) * bin_w) / static_cast<float>(grid_w);
      if (g.max_mode) {
        const float v = roi_align_sample_f32(plane, g.height, g.width, y, x, [](float a, float b, float c2, float d) {
          const float ab = a > b ? a : b, cd = c2 > d ? c2 : d;
          return ab > cd ? ab : cd;
        });
        acc = first || v > acc ? v : acc;
        first = false;
      } else {
        acc = acc + roi_align_sample_f32(plane, g.height, g.width, y, x,
                                         [](float a, float b, float c2, float d) { return ((a + b) + c2) + d; });
      }
    }
  }
  if (g.max_mode) return acc;
  const int64_t count = grid_h * grid_w > 1 ? grid_h * grid_w : 1;
  return acc / static_cast<float>(count);
}

}  // namespace lockstep::arith
