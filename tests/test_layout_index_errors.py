"""Bad inputs of the layout and index ops are clear errors naming the node, never crashes."""

import numpy as np
import pytest

import lockstep
from cases import case
from onnx_models import feeds_of, single_node_model

I64 = np.int64
F32 = np.float32

BAD = [
    (case("gather_nd_out_of_range", "GatherND", {"X": np.zeros((3, 2), F32), "I": np.array([[3]], I64)}, opset=13),
     "out of range"),
    (case("scatter_nd_out_of_range", "ScatterND", {"X": np.zeros(4, F32), "I": np.array([[-5]], I64),
                                                   "U": np.zeros(1, F32)}, opset=13), "out of range"),
    (case("scatter_elements_out_of_range", "ScatterElements",
          {"X": np.zeros((2, 2), F32), "I": np.array([[2, 0]], I64), "U": np.zeros((1, 2), F32)}, opset=13),
     "out of range"),
    (case("scatter_nd_bad_updates", "ScatterND", {"X": np.zeros((4, 3), F32), "I": np.array([[1]], I64),
                                                  "U": np.zeros(2, F32)}, opset=13), "updates shape"),
    (case("depth_to_space_indivisible", "DepthToSpace", {"X": np.zeros((1, 6, 2, 2), F32)},
          attrs={"blocksize": 2}, opset=13), "not divisible"),
    (case("space_to_depth_no_blocksize", "SpaceToDepth", {"X": np.zeros((1, 1, 2, 2), F32)}, opset=13),
     "blocksize must be positive"),
    (case("trilu_rank1", "Trilu", {"X": np.zeros(3, F32)}, opset=14), "rank >= 2"),
    (case("compress_long_condition", "Compress", {"X": np.zeros((2, 2), F32), "C": np.ones(3, bool)},
          attrs={"axis": 0}, opset=11), "longer"),
]


@pytest.mark.parametrize("c,message", BAD, ids=[c.name for c, _ in BAD])
def test_bad_input_is_a_clear_error(c, message):
    sess = lockstep.InferenceSession(single_node_model(c))
    with pytest.raises(lockstep.InvalidArgument, match=rf"\({c.op_type}\).*{message}"):
        sess.run(None, feeds_of(c))


def test_unknown_scatter_reduction_is_refused():
    c = case("scatter_nd_sub", "ScatterND", {"X": np.zeros(4, F32), "I": np.array([[1]], I64),
                                             "U": np.ones(1, F32)}, attrs={"reduction": "sub"}, opset=16)
    sess = lockstep.InferenceSession(single_node_model(c))
    with pytest.raises(lockstep.InvalidArgument, match="reduction must be none, add, mul, max or min, got 'sub'"):
        sess.run(None, feeds_of(c))
