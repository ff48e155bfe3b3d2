"""Cross-device cases for the detection family (docs/arithmetic.md#detection): NonMaxSuppression, whose output is
integer indices, so CPU and onnxruntime must agree exactly, and RoiAlign. Inputs use their own seeds, so that this
file, read before the others, leaves the shared random stream as it was."""

import numpy as np

from cases import case, rand

F32 = np.float32
EXACT = dict(rtol=0, atol=0)


def _boxes(batches, n, seed, center=False):
    """Random boxes in a 10 x 10 field: corners in either order, or centers with positive sizes."""
    if center:
        xy = rand(batches, n, 2, low=0.0, high=10.0, seed=seed)
        wh = rand(batches, n, 2, low=0.5, high=4.0, seed=seed + 1)
        return np.concatenate([xy, wh], axis=2)
    a = rand(batches, n, 2, low=0.0, high=10.0, seed=seed)
    size = rand(batches, n, 2, low=-4.0, high=4.0, seed=seed + 1)
    return np.concatenate([a, a + size], axis=2)


def _nms(name, batches, classes, n, seed, max_out=3, iou=0.4, score=None, center=0, scores=None):
    inputs = {"boxes": _boxes(batches, n, seed, center=bool(center)),
              "scores": scores if scores is not None else rand(batches, classes, n, low=0.0, high=1.0, seed=seed + 2),
              "max_output_boxes_per_class": np.array([max_out], np.int64),
              "iou_threshold": np.array([iou], F32)}
    inputs["score_threshold"] = None if score is None else np.array([score], F32)
    return case(name, "NonMaxSuppression", inputs, attrs={"center_point_box": center},
                const=("max_output_boxes_per_class", "iou_threshold", "score_threshold"), opset=11, **EXACT)


# Scores with many exact ties (quantized to tenths), so that the tie order by index decides.
_TIED = np.round(rand(2, 3, 37, low=0.0, high=1.0, seed=520) * 10).astype(F32) / F32(10)

CASES = [
    _nms("nms_one_class", 1, 1, 23, seed=500),
    _nms("nms_batches_classes", 3, 4, 41, seed=503, max_out=7, iou=0.3),
    _nms("nms_score_threshold", 2, 3, 29, seed=506, max_out=100, iou=0.5, score=0.35),
    _nms("nms_center_point_box", 2, 2, 31, seed=509, max_out=9, iou=0.2, center=1),
    _nms("nms_iou_zero", 1, 2, 19, seed=512, max_out=19, iou=0.0),
    _nms("nms_iou_one", 1, 2, 17, seed=515, max_out=5, iou=1.0),
    _nms("nms_tied_scores", 2, 3, 37, seed=518, max_out=11, iou=0.25, scores=_TIED),
    _nms("nms_max_zero", 2, 2, 13, seed=521, max_out=0),
    _nms("nms_large", 1, 5, 517, seed=524, max_out=60, iou=0.45, score=0.05),
]

# RoiAlign: avg and max, both coordinate modes (opset 16) and opset 10's, adaptive and fixed sampling, rois past
# the image's edges; onnxruntime as the reference.
_ROIS = np.array([[0.5, 1.0, 6.0, 7.5], [2.0, 0.0, 9.5, 4.0], [-2.0, -1.0, 3.0, 11.0], [4.0, 4.0, 4.2, 4.1]],
                 np.float32)


def _roi_align(name, opset=16, **attrs):
    inputs = {"X": rand(2, 3, 10, 9, seed=700), "rois": _ROIS, "batch_indices": np.array([0, 1, 1, 0], np.int64)}
    return case(name, "RoiAlign", inputs, attrs={"output_height": 3, "output_width": 2, **attrs}, opset=opset,
                rtol=1e-5, atol=1e-6)


CASES += [
    _roi_align("roi_align_avg_half_pixel", spatial_scale=0.9),
    _roi_align("roi_align_avg_output_half_pixel_ratio2", coordinate_transformation_mode="output_half_pixel",
               sampling_ratio=2),
    _roi_align("roi_align_max", mode="max", sampling_ratio=3),
    _roi_align("roi_align_opset10", opset=10, spatial_scale=0.5),
]
