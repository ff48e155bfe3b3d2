"""Cross-device cases for the layout family (Trilu, DepthToSpace, SpaceToDepth, EyeLike): exact copies, so the
reference comparison uses rtol=atol=0."""

import numpy as np

from cases import case, rand, randint

EXACT = dict(rtol=0, atol=0)


def depth_to_space_dcr(X, b=2):
    n, c, h, w = X.shape
    y = X.reshape(n, b, b, c // (b * b), h, w).transpose(0, 3, 4, 1, 5, 2)
    return [y.reshape(n, c // (b * b), h * b, w * b)]


def k(v):
    return np.array(v, dtype=np.int64)


CASES = [
    # Trilu: upper/lower, k positive, negative and beyond the matrix, batches, non-square, int and bool types.
    case("trilu_upper", "Trilu", {"X": rand(5, 7)}, opset=14, **EXACT),
    case("trilu_lower_k", "Trilu", {"X": rand(3, 6, 5), "k": k(-2)}, attrs={"upper": 0}, const=("k",), opset=14,
         **EXACT),
    case("trilu_upper_k_big", "Trilu", {"X": rand(2, 4, 3), "k": k(9)}, const=("k",), opset=14, **EXACT),
    case("trilu_lower_int8", "Trilu", {"X": randint(2, 2, 9, 4, dtype=np.int8), "k": k(1)}, attrs={"upper": 0},
         const=("k",), opset=14, reference=lambda X, k: [np.tril(X, int(k))],
         note="onnxruntime has no int8 Trilu", **EXACT),
    case("trilu_bool_fed_k", "Trilu", {"X": rand(6, 6) > 0, "k": k(-1)}, opset=14, **EXACT),
    case("trilu_empty", "Trilu", {"X": rand(0, 5)}, opset=14, **EXACT),
    # DepthToSpace: DCR (default) and CRD, block 2 and 3, odd spatial sizes, int64 and double.
    case("depth_to_space_dcr", "DepthToSpace", {"X": rand(2, 8, 3, 5)}, attrs={"blocksize": 2}, opset=13, **EXACT),
    case("depth_to_space_crd", "DepthToSpace", {"X": rand(1, 18, 4, 3)}, attrs={"blocksize": 3, "mode": "CRD"},
         opset=13, **EXACT),
    case("depth_to_space_int64", "DepthToSpace", {"X": randint(1, 4, 2, 2)}, attrs={"blocksize": 2}, opset=11,
         reference=depth_to_space_dcr, note="onnxruntime has no int64 DepthToSpace", **EXACT),
    case("depth_to_space_double_opset7", "DepthToSpace", {"X": rand(1, 9, 2, 1, dtype=np.float64)},
         attrs={"blocksize": 3}, opset=7, **EXACT),
    # SpaceToDepth: block 2 and 3, channels > 1, float16.
    case("space_to_depth_2", "SpaceToDepth", {"X": rand(2, 3, 4, 6)}, attrs={"blocksize": 2}, opset=13, **EXACT),
    case("space_to_depth_3", "SpaceToDepth", {"X": rand(1, 2, 9, 3)}, attrs={"blocksize": 3}, opset=13, **EXACT),
    case("space_to_depth_f16", "SpaceToDepth", {"X": rand(1, 5, 2, 4, dtype=np.float16)}, attrs={"blocksize": 2},
         opset=13, **EXACT),
    # EyeLike: k on and off the diagonal, non-square, output dtype different from the input's.
    case("eye_like_square", "EyeLike", {"X": rand(5, 5)}, opset=9, **EXACT),
    case("eye_like_k", "EyeLike", {"X": rand(4, 7)}, attrs={"k": 2}, opset=9, **EXACT),
    case("eye_like_neg_k_int32", "EyeLike", {"X": rand(6, 3)}, attrs={"k": -1, "dtype": 6}, opset=9, **EXACT),
    case("eye_like_double_from_int", "EyeLike", {"X": randint(3, 4)}, attrs={"dtype": 11}, opset=9, **EXACT),
    # Dropout (inference): identity and a mask of ones; training_mode with ratio 0 is the same.
    case("dropout_opset7", "Dropout", {"X": rand(3, 5)}, attrs={"ratio": 0.3}, opset=7, **EXACT),
    case("dropout_mask_opset10", "Dropout", {"X": rand(4, 3)}, outputs=2, opset=10,
         reference=lambda X: [X, np.ones(X.shape, bool)],
         note="onnxruntime's opset-10 inference mask is all false; the onnx reference's is all true", **EXACT),
    case("dropout_ratio_input", "Dropout", {"X": rand(2, 7), "ratio": np.float32(0.4)}, const=("ratio",),
         outputs=2, opset=13, **EXACT),
    case("dropout_training_zero_ratio", "Dropout",
         {"X": rand(5, 2), "ratio": np.float32(0.0), "training_mode": np.array(True)}, const=("ratio",),
         outputs=2, opset=22, **EXACT),
]

# CenterCropPad (18): crop and pad on one call, odd differences (the smaller half first), listed axes, ints.
def _center_crop_pad(x, sizes, axes):
    out = np.zeros([sizes[axes.index(d)] if d in axes else n for d, n in enumerate(x.shape)], x.dtype)
    src, dst = [], []
    for d, n in enumerate(x.shape):
        m = out.shape[d]
        lo = abs(n - m) // 2
        src.append(slice(lo, lo + m) if n > m else slice(0, n))
        dst.append(slice(lo, lo + n) if m > n else slice(0, m))
    out[tuple(dst)] = x[tuple(src)]
    return out


for name, shape, sizes, axes in (("crop_pad", (5, 8, 3), [8, 5, 3], [0, 1, 2]), ("odd", (7, 4), [4, 7], [0, 1]),
                                 ("axes", (3, 9, 6), [4, 3], [-1, 1])):
    x = rand(*shape, seed=95)
    CASES.append(case(f"center_crop_pad_{name}", "CenterCropPad", {"X": x, "S": np.array(sizes, np.int64)},
                      attrs={"axes": axes} if name == "axes" else {}, opset=18, const=("S",), rtol=0, atol=0,
                      reference=lambda X, S, axes=axes: [_center_crop_pad(X, list(S), [a % X.ndim for a in axes])]))

# ReverseSequence (10): time-major and batch-major, lengths 0..T, int data.
CASES += [
    case("reverse_sequence_time_major", "ReverseSequence", {"X": rand(5, 4, 3, seed=96),
                                                            "L": np.array([5, 0, 2, 1], np.int64)},
         attrs={"batch_axis": 1, "time_axis": 0}, opset=10, **EXACT),
    case("reverse_sequence_batch_major", "ReverseSequence", {"X": randint(3, 6, dtype=np.int32, seed=97),
                                                             "L": np.array([6, 3, 1], np.int64)},
         attrs={"batch_axis": 0, "time_axis": 1}, opset=10, **EXACT),
]
