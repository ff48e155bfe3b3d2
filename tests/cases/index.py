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

# OneHot: axes, negative and out-of-range indices, float and int64 indices, several value types.
for axis in (-1, 0, 1):
    CASES.append(case(f"onehot_axis{axis}", "OneHot",
                      {"I": i64([[1, 4, -1], [0, 7, -6]]), "D": np.array(5, np.int64),
                       "V": np.array([-2.0, 3.5], np.float32)}, attrs={"axis": axis}, opset=11, const=("D", "V"),
                      **EXACT))
CASES.append(case("onehot_float_indices_int_values", "OneHot",
                  {"I": np.array([0.0, 2.0, 1.0], np.float32), "D": np.array([3.0], np.float32),
                   "V": np.array([0, 9], np.int32)}, opset=11, const=("D", "V"), **EXACT,
                  reference=lambda I, D, V: [np.where(np.arange(3)[None, :] == I.astype(np.int64)[:, None], 9, 0)
                                             .astype(np.int32)],
                  note="onnxruntime has no OneHot for float indices and int32 values"))

# TopK: largest and smallest, axes, ties (the lower index first), k = 0 and k = n, ints, opset 9 (k attribute).
tie_rows = np.array([[3, 1, 3, 2, 1, 3], [0, 0, 0, 0, 0, 0]], np.float32)
for largest in (1, 0):
    for axis in (-1, 0, 1):
        CASES.append(case(f"topk_l{largest}_a{axis}", "TopK", {"X": rand(4, 6, 5, seed=70), "K": i64([3])},
                          attrs={"axis": axis, "largest": largest}, opset=11, outputs=2, const=("K",), **EXACT))
    CASES.append(case(f"topk_ties_l{largest}", "TopK", {"X": tie_rows, "K": i64([4])}, attrs={"largest": largest},
                      opset=11, outputs=2, const=("K",), **EXACT))
CASES.append(case("topk_k0", "TopK", {"X": rand(3, 4), "K": i64([0])}, opset=11, outputs=2, const=("K",), **EXACT))
CASES.append(case("topk_all_int64", "TopK", {"X": randint(3, 8, seed=71), "K": i64([8])}, opset=11, outputs=2,
                  const=("K",), reference=None, note="ties in random ints: onnxruntime's tie order is unspecified"))
CASES.append(case("topk_opset9_attribute", "TopK", {"X": rand(2, 9, seed=72)}, attrs={"k": 2}, opset=9, outputs=2,
                  **EXACT))

# Scatter (9, 10): the old name of ScatterElements.
CASES.append(case("scatter_opset9", "Scatter", {"X": rand(3, 4), "I": i64([[1, 0, 2, 3]]), "U": rand(1, 4, seed=9)},
                  attrs={"axis": 1}, opset=9, **EXACT))

# Scatter reductions (16+): repeated indices fold in update order on the host (add, mul, max, min).
for reduction in ("add", "mul", "max", "min"):
    CASES.append(case(f"scatter_nd_{reduction}", "ScatterND",
                      {"X": rand(6, 3, seed=98), "I": i64([[1], [4], [1], [1]]), "U": rand(4, 3, seed=99)},
                      attrs={"reduction": reduction}, opset=18, rtol=1e-6, atol=1e-7))
    CASES.append(case(f"scatter_elements_{reduction}_int32", "ScatterElements",
                      {"X": randint(3, 4, low=-5, high=5, dtype=np.int32), "I": i64([[0, 1, 0, 3], [0, 1, 2, 3]]),
                       "U": randint(2, 4, low=-5, high=5, dtype=np.int32, seed=100)},
                      attrs={"axis": 1, "reduction": reduction}, opset=18, **EXACT))

# MaxUnpool (9+): the indices of a MaxPool (natural shape), and into a larger output_shape.
_unpool_x = rand(1, 2, 2, 2, seed=101)
_unpool_i = i64([[[[5, 7], [13, 15]], [[16 + 0, 16 + 3], [16 + 9, 16 + 14]]]])
CASES += [
    case("max_unpool_natural", "MaxUnpool", {"X": _unpool_x, "I": _unpool_i},
         attrs={"kernel_shape": [2, 2], "strides": [2, 2]}, opset=11, **EXACT),
    case("max_unpool_output_shape", "MaxUnpool", {"X": _unpool_x, "I": _unpool_i, "S": i64([1, 2, 5, 5])},
         attrs={"kernel_shape": [2, 2], "strides": [2, 2]}, opset=11, const=("S",), rtol=0, atol=0,
         reference=lambda X, I, S: [np.pad(np.bincount(I.ravel(), X.ravel().astype(np.float64), 32)
                                           .astype(np.float32).reshape(1, 2, 4, 4), ((0, 0), (0, 0), (0, 1), (0, 1)))],
         note="the ONNX reference: the natural-shape result in the output's leading corner"),
]


def unique_ref(axis=None, sorted_=1):
    """numpy's unique (sorted), or its groups in the order of first occurrence."""
    def ref(X):
        y, first, inverse, counts = np.unique(X, return_index=True, return_inverse=True, return_counts=True,
                                              axis=axis)
        inverse = inverse.reshape(-1)
        if not sorted_:
            order = np.argsort(first, kind="stable")
            position = np.empty_like(order)
            position[order] = np.arange(len(order))
            y, first, counts, inverse = np.take(y, order, axis=axis or 0), first[order], counts[order], position[inverse]
        return [y, first.astype(np.int64), inverse.astype(np.int64), counts.astype(np.int64)]
    return ref


UNIQUE_OUT = ["y", "indices", "inverse_indices", "counts"]
CASES += [
    case("unique_sorted_float", "Unique", {"X": np.array([2.0, -1.0, 2.0, 0.5, -1.0, 7.0, 0.5], np.float32)},
         outputs=UNIQUE_OUT, opset=11, reference=unique_ref(), **EXACT),
    case("unique_unsorted_int", "Unique",
         {"X": np.random.default_rng(500).integers(0, 6, size=(4, 5)).astype(np.int64)}, attrs={"sorted": 0},
         outputs=UNIQUE_OUT, opset=11, reference=unique_ref(sorted_=0), **EXACT),
    case("unique_axis_rows", "Unique",
         {"X": np.array([[1, 0, 2], [3, 1, 1], [1, 0, 2], [0, 5, 5], [3, 1, 1]], np.int32)}, attrs={"axis": 0},
         outputs=UNIQUE_OUT, opset=11, reference=unique_ref(axis=0), **EXACT),
    case("unique_axis_columns_3d", "Unique",
         {"X": np.random.default_rng(501).integers(0, 2, size=(2, 6, 2)).astype(np.uint8)}, attrs={"axis": -2},
         outputs=UNIQUE_OUT, opset=11, reference=unique_ref(axis=1), **EXACT),
    case("unique_only_values", "Unique", {"X": np.array([True, False, True], bool)}, opset=11,
         reference=lambda X: [np.unique(X)], **EXACT),
]

# TensorScatter (24): the KV-cache update, linear and circular (wrapping past the end), default and explicit
# axes, with and without write_indices; any element type (it moves bytes).


def _tensor_scatter_reference(axis=-2, mode="linear"):
    def run(past_cache, update, write_indices=None):
        out = past_cache.copy()
        ax = axis % past_cache.ndim
        length, steps = past_cache.shape[ax], update.shape[ax]
        w = np.zeros(past_cache.shape[0], np.int64) if write_indices is None else write_indices
        for prefix in np.ndindex(past_cache.shape[:ax]):
            for s in range(steps):
                p = w[prefix[0]] + s
                out[prefix + ((p % length) if mode == "circular" else p,)] = update[prefix + (s,)]
        return [out]

    return run


CASES += [
    case("tensor_scatter_linear", "TensorScatter", {"past_cache": rand(2, 3, 8, 4, seed=80),
                                                    "update": rand(2, 3, 2, 4, seed=81),
                                                    "write_indices": np.array([1, 6], np.int64)},
         opset=24, reference=_tensor_scatter_reference(), **EXACT),
    case("tensor_scatter_circular_wrap", "TensorScatter", {"past_cache": rand(2, 5, 3, seed=82),
                                                           "update": rand(2, 4, 3, seed=83),
                                                           "write_indices": np.array([3, 0], np.int64)},
         attrs={"axis": 1, "mode": "circular"}, opset=24,
         reference=_tensor_scatter_reference(axis=1, mode="circular"), **EXACT),
    case("tensor_scatter_prefill_float16", "TensorScatter", {"past_cache": rand(1, 2, 6, 3, seed=84).astype(np.float16),
                                                             "update": rand(1, 2, 4, 3, seed=85).astype(np.float16)},
         opset=24, reference=_tensor_scatter_reference(), **EXACT),
]
