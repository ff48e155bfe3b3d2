"""Cross-device cases for the index family (GatherND, ScatterND, ScatterElements, Compress, NonZero): exact, so the
reference comparison uses rtol=atol=0."""

import numpy as np

from cases import case, rand, randint

EXACT = dict(rtol=0, atol=0)


def i64(rows):
    return np.array(rows, dtype=np.int64)


CASES = [
    # GatherND: whole slices, single elements, negative indices, batch_dims (12+), int32 indices.
    case("gather_nd_slices", "GatherND", {"X": rand(4, 3, 5), "I": i64([[1], [3], [0]])}, opset=11, **EXACT),
    case("gather_nd_elements", "GatherND", {"X": rand(4, 3, 5), "I": i64([[1, 2, 4], [-1, 0, -5]])}, opset=13,
         **EXACT),
    case("gather_nd_batch", "GatherND", {"X": rand(2, 5, 3, 2), "I": i64([[[4, 1]], [[0, -1]]])},
         attrs={"batch_dims": 1}, opset=13, **EXACT),
    case("gather_nd_int8", "GatherND", {"X": randint(3, 7, dtype=np.int8), "I": i64([[2, 6], [0, 0], [1, 3]])},
         opset=13, **EXACT),
    # ScatterND: element and slice updates, negative indices, int types.
    case("scatter_nd_elements", "ScatterND",
         {"X": rand(7, 3), "I": i64([[0, 2], [6, 0], [-1, 1]]), "U": rand(3, seed=3)}, opset=13, **EXACT),
    case("scatter_nd_slices", "ScatterND", {"X": rand(5, 4, 3), "I": i64([[4], [1]]), "U": rand(2, 4, 3, seed=4)},
         opset=16, **EXACT),
    case("scatter_nd_int64", "ScatterND", {"X": randint(9), "I": i64([[8], [0], [3]]), "U": randint(3, seed=5)},
         opset=11, **EXACT),
    # ScatterElements: axis 0, 1 and negative; negative indices; updates smaller than data.
    case("scatter_elements_axis0", "ScatterElements",
         {"X": rand(4, 5), "I": i64([[3, 0, 1, 2, 0]]), "U": rand(1, 5, seed=6)}, opset=13, **EXACT),
    case("scatter_elements_axis1_neg", "ScatterElements",
         {"X": rand(3, 6), "I": i64([[-1, 2], [0, 5], [4, -6]]), "U": rand(3, 2, seed=7)}, attrs={"axis": -1},
         opset=16, **EXACT),
    case("scatter_elements_3d_uint8", "ScatterElements",
         {"X": randint(2, 3, 4, dtype=np.uint8), "I": i64([[[2], [0]], [[1], [2]]]),
          "U": randint(2, 2, 1, dtype=np.uint8, seed=8)}, attrs={"axis": 1}, opset=18, **EXACT),
    # Compress: flattened, along an axis, a condition shorter than the dim, nothing kept.
    case("compress_flat", "Compress", {"X": rand(3, 4), "C": rand(9, seed=9) > 0}, opset=11, **EXACT),
    case("compress_axis1", "Compress", {"X": rand(2, 5, 3), "C": np.array([1, 0, 1, 1, 0], bool)},
         attrs={"axis": 1}, opset=11, **EXACT),
    case("compress_neg_axis_short", "Compress", {"X": rand(4, 3), "C": np.array([0, 1], bool)},
         attrs={"axis": -2}, opset=11, **EXACT),
    case("compress_none_kept", "Compress", {"X": randint(3, 3), "C": np.zeros(3, bool)}, attrs={"axis": 0},
         opset=11, **EXACT),
    # NonZero: floats with -0 and NaN, ints, bool, rank 3, all zero.
    case("nonzero_float", "NonZero", {"X": np.array([[0.0, -0.0, 1.5], [np.nan, 0.0, -2.0]], np.float32)},
         opset=13, **EXACT),
    case("nonzero_int_rank3", "NonZero", {"X": randint(2, 3, 4, high=3)}, opset=13, **EXACT),
    case("nonzero_bool", "NonZero", {"X": rand(5, 7) > 0.3}, opset=9, **EXACT),
    case("nonzero_all_zero", "NonZero", {"X": np.zeros((3, 2), np.int32)}, opset=13, **EXACT),
]
