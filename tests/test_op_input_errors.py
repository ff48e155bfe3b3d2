"""Bad attributes and shapes of Einsum, the losses, Hardmax/LpNormalization/CumSum, LpPool, OneHot, TopK,
CenterCropPad, ReverseSequence, GridSample, Col2Im and NonMaxSuppression are clear errors naming the node and op,
never crashes."""

import numpy as np
import pytest

import lockstep
from cases import case
from onnx_models import feeds_of, single_node_model

I64 = np.int64
F32 = np.float32

BAD = [
    (case("einsum_wrong_term_count", "Einsum", {"a": np.zeros((2, 3), F32)}, attrs={"equation": "ij,jk->ik"},
          opset=12), "2 input terms for 1 inputs"),
    (case("einsum_rank_mismatch", "Einsum", {"a": np.zeros((2, 3), F32)}, attrs={"equation": "ijk->i"}, opset=12),
     "does not fit an operand of rank 2"),
    (case("einsum_size_mismatch", "Einsum", {"a": np.zeros((2, 3), F32), "b": np.zeros((4, 5), F32)},
          attrs={"equation": "ij,jk->ik"}, opset=12), "label j has sizes 3 and 4"),
    (case("einsum_unknown_output", "Einsum", {"a": np.zeros((2, 3), F32)}, attrs={"equation": "ij->z"}, opset=12),
     "output label z is in no input"),
    (case("einsum_bad_character", "Einsum", {"a": np.zeros((2, 3), F32)}, attrs={"equation": "i1->i"}, opset=12),
     "character '1'"),
    (case("nll_target_out_of_range", "NegativeLogLikelihoodLoss",
          {"X": np.zeros((2, 3), F32), "T": np.array([0, 3], I64)}, opset=13), r"target 3 at element 1 is outside \[0, 3\)"),
    (case("nll_target_shape", "NegativeLogLikelihoodLoss", {"X": np.zeros((2, 3, 4), F32), "T": np.zeros((2, 3), I64)},
          opset=13), "target shape"),
    (case("nll_bad_reduction", "NegativeLogLikelihoodLoss", {"X": np.zeros((2, 3), F32), "T": np.zeros(2, I64)},
          attrs={"reduction": "max"}, opset=13), "reduction must be none, sum or mean"),
    (case("sce_weight_shape", "SoftmaxCrossEntropyLoss",
          {"X": np.zeros((2, 3), F32), "T": np.zeros(2, I64), "W": np.ones(4, F32)}, opset=13), "weight must be"),
    (case("lpnorm_bad_p", "LpNormalization", {"x": np.zeros((2, 3), F32)}, attrs={"p": 3}, opset=22),
     "p must be 1 or 2"),
    (case("cumsum_axis_out_of_range", "CumSum", {"x": np.zeros((2, 3), F32), "axis": np.array(2, I64)}, opset=14,
          const=("axis",)), "axis"),
    (case("cumsum_axis_not_scalar", "CumSum", {"x": np.zeros((2, 3), F32), "axis": np.array([0, 1], I64)},
          opset=14, const=("axis",)), "axis must be one int32 or int64 element"),
    (case("lppool_bad_p", "LpPool", {"X": np.zeros((1, 1, 4, 4), F32)}, attrs={"kernel_shape": [2, 2], "p": 0},
          opset=18), "p must be at least 1"),
    (case("onehot_bad_values", "OneHot", {"I": np.zeros(2, I64), "D": np.array(3, I64), "V": np.zeros(3, F32)},
          opset=11, const=("D", "V")), "values must hold"),
    (case("onehot_bad_depth", "OneHot", {"I": np.zeros(2, I64), "D": np.array(0, I64), "V": np.zeros(2, F32)},
          opset=11, const=("D", "V")), "depth must be positive"),
    (case("center_crop_pad_size_count", "CenterCropPad", {"X": np.zeros((2, 3), F32), "S": np.array([2], I64)},
          opset=18, const=("S",)), "1 sizes for 2 axes"),
    (case("reverse_sequence_long_length", "ReverseSequence",
          {"X": np.zeros((3, 2), F32), "L": np.array([4, 1], I64)}, opset=10), r"sequence length 4 is outside \[0, 3\]"),
    (case("reverse_sequence_bad_axes", "ReverseSequence", {"X": np.zeros((3, 2), F32), "L": np.array([1, 1], I64)},
          attrs={"batch_axis": 0, "time_axis": 0}, opset=10), "batch_axis and time_axis"),
    (case("max_unpool_index_out_of_range", "MaxUnpool", {"X": np.zeros((1, 1, 1, 1), F32),
                                                          "I": np.array([[[[4]]]], I64)},
          attrs={"kernel_shape": [2, 2], "strides": [2, 2]}, opset=11), r"index 4 is outside \[0, 4\)"),
    (case("topk_k_too_large", "TopK", {"X": np.zeros((2, 3), F32), "K": np.array([4], I64)}, opset=11, outputs=2,
          const=("K",)), r"k = 4 is outside \[0, 3\]"),
    (case("gridsample_grid_rank", "GridSample", {"X": np.zeros((1, 2, 3, 4), F32), "grid": np.zeros((1, 5, 2), F32)},
          opset=20), r"input grid has shape \[1,5,2\]"),
    (case("gridsample_grid_last_dim", "GridSample",
          {"X": np.zeros((1, 2, 3, 4), F32), "grid": np.zeros((1, 5, 6, 3), F32)}, opset=20), "input grid has shape"),
    (case("gridsample_bad_padding", "GridSample",
          {"X": np.zeros((1, 2, 3, 4), F32), "grid": np.zeros((1, 5, 6, 2), F32)}, attrs={"padding_mode": "wrap"},
          opset=20), "unsupported padding_mode 'wrap'"),
    (case("gridsample_empty_axis", "GridSample",
          {"X": np.zeros((1, 2, 0, 4), F32), "grid": np.zeros((1, 5, 6, 2), F32)}, opset=20), "empty spatial axis"),
    (case("col2im_blocks_mismatch", "Col2Im", {"x": np.zeros((1, 4, 5), F32), "i": np.array([3, 3], I64),
                                               "b": np.array([2, 2], I64)}, opset=18, const=("i", "b")),
     r"must be \(N, C \* 4, 4\)"),
    (case("col2im_block_too_big", "Col2Im", {"x": np.zeros((1, 4, 1), F32), "i": np.array([3, 3], I64),
                                             "b": np.array([4, 2], I64)}, opset=18, const=("i", "b")),
     "does not fit image_shape"),
    (case("col2im_shape_lengths", "Col2Im", {"x": np.zeros((1, 4, 4), F32), "i": np.array([3, 3], I64),
                                             "b": np.array([2, 2, 1], I64)}, opset=18, const=("i", "b")),
     "input block_shape must be a 1-D int64 tensor of 2 entries"),
    (case("col2im_bad_strides", "Col2Im", {"x": np.zeros((1, 4, 4), F32), "i": np.array([3, 3], I64),
                                           "b": np.array([2, 2], I64)}, attrs={"strides": [1, 0]}, opset=18,
          const=("i", "b")), r"strides \[1,0\] has an entry below 1"),
    (case("nms_scores_shape", "NonMaxSuppression", {"b": np.zeros((1, 3, 4), F32), "s": np.zeros((1, 2, 4), F32)},
          opset=11), r"input scores must be \(1, classes, 3\)"),
    (case("nms_boxes_shape", "NonMaxSuppression", {"b": np.zeros((1, 3, 5), F32), "s": np.zeros((1, 2, 3), F32)},
          opset=11), "input boxes must be"),
    (case("nms_iou_range", "NonMaxSuppression", {"b": np.zeros((1, 3, 4), F32), "s": np.zeros((1, 2, 3), F32),
                                                 "m": np.array([2], I64), "t": np.array([1.5], F32)},
          opset=11, const=("m", "t")), r"iou_threshold must be in \[0, 1\]"),
    (case("nms_max_type", "NonMaxSuppression", {"b": np.zeros((1, 3, 4), F32), "s": np.zeros((1, 2, 3), F32),
                                                "m": np.array([2], np.int32)}, opset=11, const=("m",)),
     "input max_output_boxes_per_class must be one int64 value"),
    (case("nms_center_attr", "NonMaxSuppression", {"b": np.zeros((1, 3, 4), F32), "s": np.zeros((1, 2, 3), F32)},
          attrs={"center_point_box": 2}, opset=11), "center_point_box must be 0 or 1"),
]


@pytest.mark.parametrize("c,message", BAD, ids=[c.name for c, _ in BAD])
def test_bad_input_is_a_clear_error(c, message):
    with pytest.raises(lockstep.Fail, match=rf"\({c.op_type}\).*{message}"):
        sess = lockstep.InferenceSession(single_node_model(c))
        sess.run(None, feeds_of(c))
