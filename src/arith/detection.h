// The NonMaxSuppression contract in code (docs/arithmetic.md#detection): the IoU of two boxes, the order of the
// candidates by score, and the greedy selection of one (batch, class). Plain C++ on the host, __host__ __device__
// under nvcc, so both devices compare the same float32 IoUs and keep the same boxes.
#pragma once

#include <cstdint>

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

}  // namespace lockstep::arith
