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


# MatMulInteger and ConvInteger: exact int32 results, numpy references in int64 cast to int32 (which wraps).
def matmul_integer_ref(A, B, a_zero_point=None, b_zero_point=None):
    a = A.astype(np.int64) - (0 if a_zero_point is None else a_zero_point.astype(np.int64).reshape(-1, 1))
    b = B.astype(np.int64) - (0 if b_zero_point is None else b_zero_point.astype(np.int64))
    return [np.matmul(a, b).astype(np.int32)]


def conv_integer_ref(pads=(0, 0, 0, 0), strides=(1, 1), dilations=(1, 1), group=1):
    def ref(x, w, x_zero_point=None, w_zero_point=None):
        xs = x.astype(np.int64) - (0 if x_zero_point is None else np.int64(x_zero_point))
        ws = w.astype(np.int64) - (0 if w_zero_point is None else w_zero_point.astype(np.int64).reshape(-1, 1, 1, 1))
        xs = np.pad(xs, ((0, 0), (0, 0), (pads[0], pads[2]), (pads[1], pads[3])))
        n, c, h, wd = xs.shape
        m, cg, kh, kw = ws.shape
        oh = (h - (kh - 1) * dilations[0] - 1) // strides[0] + 1
        ow = (wd - (kw - 1) * dilations[1] - 1) // strides[1] + 1
        y = np.zeros((n, m, oh, ow), np.int64)
        mg = m // group
        for o in range(m):
            g = o // mg
            for i in range(kh):
                for j in range(kw):
                    patch = xs[:, g * cg:(g + 1) * cg, i * dilations[0]:i * dilations[0] + strides[0] * oh:strides[0],
                               j * dilations[1]:j * dilations[1] + strides[1] * ow:strides[1]]
                    y[:, o] += np.einsum("nchw,c->nhw", patch, ws[o, :, i, j])
        return [y.astype(np.int32)]
    return ref


def qrand(*shape, dtype=np.uint8, seed=None):
    info = np.iinfo(dtype)
    return np.random.default_rng(seed).integers(info.min, int(info.max) + 1, size=shape).astype(dtype)


for i, (ta, tb) in enumerate([(np.uint8, np.uint8), (np.uint8, np.int8), (np.int8, np.int8), (np.int8, np.uint8)]):
    CASES.append(case(f"matmulinteger_{i}", "MatMulInteger",
                      {"A": qrand(5, 33, dtype=ta, seed=300 + i), "B": qrand(33, 7, dtype=tb, seed=310 + i),
                       "a_zero_point": qrand(dtype=ta, seed=320 + i), "b_zero_point": qrand(dtype=tb, seed=330 + i)},
                      opset=10, reference=matmul_integer_ref, **EXACT))
CASES += [
    case("matmulinteger_batched_bcast", "MatMulInteger",
         {"A": qrand(2, 3, 4, 16, seed=340), "B": qrand(3, 16, 5, dtype=np.int8, seed=341)}, opset=10,
         reference=matmul_integer_ref, **EXACT),
    case("matmulinteger_per_row_col", "MatMulInteger",
         {"A": qrand(4, 9, seed=342), "B": qrand(9, 6, seed=343), "a_zero_point": qrand(4, seed=344),
          "b_zero_point": qrand(6, seed=345)}, opset=10, reference=matmul_integer_ref, const=("b_zero_point",),
         **EXACT, note="per-row a_zero_point: onnxruntime takes one element only; numpy reference"),
    case("matmulinteger_vectors", "MatMulInteger", {"A": qrand(12, seed=346), "B": qrand(12, 3, seed=347)}, opset=10,
         reference=matmul_integer_ref, **EXACT),
]
CI_CASES = [("plain", {}), ("pads", {"pads": (1, 2, 1, 0)}), ("strided", {"strides": (2, 1), "dilations": (1, 2)}),
            ("group", {"group": 2, "pads": (1, 1, 1, 1)})]
for i, (name, attrs) in enumerate(CI_CASES):
    g = attrs.get("group", 1)
    for tx, tw in ((np.uint8, np.uint8), (np.int8, np.uint8), (np.uint8, np.int8)):
        tag = f"{np.dtype(tx).name}_{np.dtype(tw).name}"
        CASES.append(case(f"convinteger_{name}_{tag}", "ConvInteger",
                          {"x": qrand(2, 4, 7, 8, dtype=tx, seed=350 + i), "w": qrand(6, 4 // g, 3, 2, dtype=tw, seed=360 + i),
                           "x_zero_point": qrand(dtype=tx, seed=370 + i), "w_zero_point": qrand(dtype=tw, seed=380 + i)},
                          attrs={k: list(v) if isinstance(v, tuple) else v for k, v in attrs.items()}, opset=10,
                          const=("w",), reference=conv_integer_ref(**attrs), **EXACT))
CASES.append(case("convinteger_per_channel_zp", "ConvInteger",
                  {"x": qrand(1, 3, 5, 5, seed=390), "w": qrand(4, 3, 2, 2, seed=391), "x_zero_point": None,
                   "w_zero_point": qrand(4, seed=392)}, opset=10, reference=conv_integer_ref(), **EXACT))
CASES.append(case("matmulinteger_accumulation_wraps", "MatMulInteger",
                  {"A": np.full((2, 70000), 255, np.uint8), "B": np.full((70000, 3), 255, np.uint8)}, opset=10,
                  reference=matmul_integer_ref, **EXACT,
                  note="255*255*70000 exceeds 2^31: the int32 sum wraps, as numpy's int64 -> int32 cast does"))


# QLinearConv: ConvInteger's sum plus the int32 bias, one rounding to float, times the channel's multiplier
# (x_scale * w_scale[m]) / y_scale, round half to even, plus y's zero point, saturated.
def qlinear_conv_ref(pads=(0, 0, 0, 0), strides=(1, 1), dilations=(1, 1), group=1):
    conv = conv_integer_ref(pads, strides, dilations, group)

    def ref(x, x_scale, x_zero_point, w, w_scale, w_zero_point, y_scale, y_zero_point, B=None):
        acc = conv(x, w, x_zero_point, w_zero_point)[0].astype(np.int64)
        if B is not None:
            acc = (acc + B.astype(np.int64).reshape(1, -1, 1, 1)).astype(np.int32)
        scales = np.broadcast_to(w_scale.astype(np.float32).reshape(-1), (w.shape[0],))
        multiplier = (np.float32(x_scale.reshape(-1)[0]) * scales) / np.float32(y_scale.reshape(-1)[0])
        q = np.rint(acc.astype(np.float32) * multiplier.reshape(1, -1, 1, 1).astype(np.float32)).astype(np.int64)
        info = np.iinfo(y_zero_point.dtype)
        return [np.clip(q + int(y_zero_point.reshape(-1)[0]), info.min, info.max).astype(y_zero_point.dtype)]
    return ref


for i, (name, attrs) in enumerate(CI_CASES):
    g = attrs.get("group", 1)
    tx, tw, ty = [(np.uint8, np.int8, np.uint8), (np.int8, np.int8, np.int8), (np.uint8, np.uint8, np.int8),
                  (np.int8, np.uint8, np.uint8)][i]
    per_channel = i % 2 == 1
    CASES.append(case(
        f"qlinearconv_{name}", "QLinearConv",
        {"x": qrand(2, 4, 7, 8, dtype=tx, seed=400 + i), "x_scale": np.array(0.05, np.float32),
         "x_zero_point": qrand(dtype=tx, seed=410 + i), "w": qrand(6, 4 // g, 3, 2, dtype=tw, seed=420 + i),
         "w_scale": (rand(6, low=0.002, high=0.02, seed=430 + i) if per_channel else np.array(0.01, np.float32)),
         "w_zero_point": qrand(6, dtype=tw, seed=440 + i) if per_channel else qrand(dtype=tw, seed=440 + i),
         "y_scale": np.array(0.35, np.float32), "y_zero_point": qrand(dtype=ty, seed=450 + i),
         "B": np.random.default_rng(460 + i).integers(-3000, 3000, size=6).astype(np.int32)},
        attrs={k: list(v) if isinstance(v, tuple) else v for k, v in attrs.items()}, opset=10,
        const=("w", "w_scale", "w_zero_point"), reference=qlinear_conv_ref(**attrs), **EXACT,
        note="per-channel w_scale and w_zero_point" if per_channel else ""))
CASES.append(case("qlinearconv_no_bias", "QLinearConv",
                  {"x": qrand(1, 3, 6, 6, seed=470), "x_scale": np.array(0.1, np.float32),
                   "x_zero_point": np.array(128, np.uint8), "w": qrand(2, 3, 3, 3, seed=471),
                   "w_scale": np.array(0.003, np.float32), "w_zero_point": np.array(127, np.uint8),
                   "y_scale": np.array(0.5, np.float32), "y_zero_point": np.array(10, np.uint8)},
                  opset=10, reference=qlinear_conv_ref(), **EXACT))
