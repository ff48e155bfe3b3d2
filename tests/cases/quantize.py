"""Cross-device cases for the quantize family (QuantizeLinear, DequantizeLinear): per-tensor, per-axis and blocked
scales, every integer type lockstep quantizes to, ties (round half to even), saturation and NaN. The results are
exact integers (and one float product), so the references are numpy and the tolerance is 0."""

import numpy as np

from cases import case, rand

EXACT = dict(rtol=0, atol=0)
Q_TYPES = [np.int8, np.uint8, np.int16, np.uint16]


def expand(scale, x_shape, axis, block):
    """The scale of every element of x (per tensor, per axis or blocked)."""
    s = np.asarray(scale)
    if s.size == 1 and block == 0:
        return np.broadcast_to(s.reshape(()), x_shape)
    if block == 0:
        shape = [1] * len(x_shape)
        shape[axis] = -1
        return np.broadcast_to(s.reshape(shape), x_shape)
    return np.take(np.repeat(s, block, axis=axis), np.arange(x_shape[axis]), axis=axis)


def quantize_ref(axis=1, block=0, dtype=np.uint8):
    def ref(x, y_scale, y_zero_point=None):
        zp = np.zeros_like(y_scale, dtype=np.int64) if y_zero_point is None else y_zero_point.astype(np.int64)
        q = np.rint(x / expand(y_scale, x.shape, axis, block))
        q = np.nan_to_num(q, nan=0.0, posinf=2.0**31, neginf=-(2.0**31))
        info = np.iinfo(dtype)
        return [np.clip(q.astype(np.int64) + expand(zp, x.shape, axis, block), info.min, info.max).astype(dtype)]
    return ref


def dequantize_ref(axis=1, block=0):
    def ref(x, x_scale, x_zero_point=None):
        zp = 0 if x_zero_point is None else expand(x_zero_point.astype(np.int64), x.shape, axis, block)
        d = (x.astype(np.int64) - zp).astype(np.float32)
        return [d * expand(x_scale, x.shape, axis, block).astype(np.float32)]
    return ref


def full_range(dtype, *shape, seed):
    info = np.iinfo(dtype)
    return np.random.default_rng(seed).integers(info.min, info.max, size=shape, endpoint=True, dtype=dtype)


def ties_and_specials():
    return np.array([0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 1e9, -1e9, np.inf, -np.inf, np.nan, -0.0, 127.5, 300.0],
                    np.float32)


CASES = [
    case(f"quantize_{np.dtype(t).name}", "QuantizeLinear",
         {"x": np.concatenate([rand(50, low=-400, high=400, seed=200 + i), ties_and_specials()]),
          "y_scale": np.float32(0.75), "y_zero_point": np.array(3, t)},
         opset=21, reference=quantize_ref(dtype=t), **EXACT)
    for i, t in enumerate(Q_TYPES)
] + [
    case("quantize_no_zero_point", "QuantizeLinear", {"x": rand(3, 7, low=-300, high=300, seed=210),
                                                       "y_scale": np.float32(1.0)},
         opset=13, reference=quantize_ref(), **EXACT),
    case("quantize_per_axis", "QuantizeLinear",
         {"x": rand(2, 3, 4, low=-50, high=50, seed=211), "y_scale": np.array([0.5, 1.25, 3.0], np.float32),
          "y_zero_point": np.array([-3, 0, 7], np.int8)},
         opset=13, reference=quantize_ref(axis=1, dtype=np.int8), **EXACT),
    case("quantize_blocked", "QuantizeLinear",
         {"x": rand(3, 5, low=-50, high=50, seed=212), "y_scale": rand(3, 3, low=0.5, high=2.0, seed=213),
          "y_zero_point": full_range(np.int16, 3, 3, seed=214) // 1000},
         attrs={"axis": 1, "block_size": 2}, opset=21, reference=quantize_ref(axis=1, block=2, dtype=np.int16),
         **EXACT),
    case("quantize_output_dtype", "QuantizeLinear", {"x": rand(9, low=-5e4, high=7e4, seed=215),
                                                      "y_scale": np.float32(0.5)},
         attrs={"output_dtype": 4}, opset=21, reference=quantize_ref(dtype=np.uint16), **EXACT),
] + [
    case(f"dequantize_{np.dtype(t).name}", "DequantizeLinear",
         {"x": full_range(t, 4, 9, seed=220 + i), "x_scale": np.float32(0.37),
          "x_zero_point": np.array(np.iinfo(t).max // 3, t)},
         opset=21, reference=dequantize_ref(), **EXACT)
    for i, t in enumerate(Q_TYPES)
] + [
    case("dequantize_int32", "DequantizeLinear", {"x": full_range(np.int32, 40, seed=230),
                                                   "x_scale": np.float32(1e-3)},
         opset=13, reference=dequantize_ref(), note="int32 to float rounds once, then one product", **EXACT),
    case("dequantize_per_axis", "DequantizeLinear",
         {"x": full_range(np.uint8, 3, 4, seed=231), "x_scale": np.array([0.5, 2.0, 0.1, 7.0], np.float32),
          "x_zero_point": np.array([0, 128, 255, 3], np.uint8)},
         attrs={"axis": -1}, opset=13, reference=dequantize_ref(axis=1), **EXACT),
    case("dequantize_blocked", "DequantizeLinear",
         {"x": full_range(np.int8, 2, 7, 2, seed=232), "x_scale": rand(2, 3, 2, low=0.1, high=1.0, seed=233),
          "x_zero_point": full_range(np.int8, 2, 3, 2, seed=234)},
         attrs={"axis": 1, "block_size": 3}, opset=21, reference=dequantize_ref(axis=1, block=3), **EXACT),
]


def qlinear_matmul_ref(a, a_scale, a_zero_point, b, b_scale, b_zero_point, y_scale, y_zero_point):
    acc = np.matmul(a.astype(np.int64) - a_zero_point.astype(np.int64), b.astype(np.int64) - b_zero_point.astype(np.int64))
    multiplier = (np.float32(a_scale.reshape(-1)[0]) * np.float32(b_scale.reshape(-1)[0])) / np.float32(y_scale.reshape(-1)[0])
    q = np.rint(acc.astype(np.float32) * np.float32(multiplier)).astype(np.int64) + int(y_zero_point.reshape(-1)[0])
    info = np.iinfo(y_zero_point.dtype)
    return [np.clip(q, info.min, info.max).astype(y_zero_point.dtype)]


def qlinear_inputs(a_type, b_type, y_type, a_shape, b_shape, seed, scale_type=np.float32):
    return {"a": full_range(a_type, *a_shape, seed=seed), "a_scale": np.array([0.02], scale_type),
            "a_zero_point": np.array([3], a_type), "b": full_range(b_type, *b_shape, seed=seed + 1),
            "b_scale": np.array([0.0125], scale_type), "b_zero_point": np.array([-2 if b_type == np.int8 else 130], b_type),
            "y_scale": np.array([0.7], scale_type), "y_zero_point": np.array([5], y_type)}


CASES += [
    case("qlinear_matmul_u8", "QLinearMatMul", qlinear_inputs(np.uint8, np.uint8, np.uint8, (5, 70), (70, 9), 240),
         opset=10, reference=qlinear_matmul_ref, note="K = 70; many outputs saturate", **EXACT),
    case("qlinear_matmul_mixed_batched", "QLinearMatMul",
         qlinear_inputs(np.int8, np.uint8, np.int8, (2, 3, 4), (2, 4, 6), 242), opset=21,
         reference=qlinear_matmul_ref, **EXACT),
    case("qlinear_matmul_shared_b_f16_scales", "QLinearMatMul",
         qlinear_inputs(np.uint8, np.int8, np.uint8, (3, 2, 8), (8, 5), 244, scale_type=np.float16), opset=21,
         reference=None, note="float16 scales: the onnx reference multiplies them in float16, lockstep in float",
         **EXACT),
]

CASES += [
    case("dynamic_quantize_mixed", "DynamicQuantizeLinear", {"x": rand(4, 33, low=-3, high=5, seed=250)}, outputs=3,
         opset=11, **EXACT),
    case("dynamic_quantize_positive", "DynamicQuantizeLinear", {"x": rand(50, low=0.5, high=9, seed=251)},
         outputs=3, opset=11, note="min(0, min x) = 0: zero point 0", **EXACT),
    case("dynamic_quantize_negative", "DynamicQuantizeLinear", {"x": rand(2, 3, 5, low=-7, high=-1, seed=252)},
         outputs=3, opset=11, note="max(0, max x) = 0: zero point 255", **EXACT),
]
