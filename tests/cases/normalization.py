"""Cross-device cases of the normalization family (docs/arithmetic.md#normalization)."""

import numpy as np

from cases import case, rand

CASES = []


def bn_inputs(shape, seed, per_element=False):
    c = shape[1]
    pshape = shape[1:] if per_element else (c,)
    return {"X": rand(*shape, seed=seed), "scale": rand(*pshape, seed=seed + 1),
            "B": rand(*pshape, seed=seed + 2), "input_mean": rand(*pshape, seed=seed + 3),
            "input_var": rand(*pshape, low=0.1, high=2.0, seed=seed + 4)}


BN_CONST = ("scale", "B", "input_mean", "input_var")
for opset in (7, 9, 14, 15, 23):
    CASES.append(case(f"batchnorm_o{opset}", "BatchNormalization", bn_inputs((2, 5, 7, 6), 40), opset=opset,
                      const=BN_CONST))
    CASES.append(case(f"batchnorm_feeds_o{opset}", "BatchNormalization", bn_inputs((3, 4), 41), opset=opset,
                      attrs={"epsilon": 1e-3}))
CASES += [
    case("batchnorm_3d", "BatchNormalization", bn_inputs((2, 3, 4, 5, 6), 42), opset=15, const=BN_CONST),
    case("batchnorm_1d", "BatchNormalization", bn_inputs((2, 3, 33), 43), opset=15, const=BN_CONST),
    case("batchnorm_training_mode0", "BatchNormalization", bn_inputs((2, 3, 4), 44), opset=14,
         attrs={"training_mode": 0, "momentum": 0.8}, const=BN_CONST),
    case("batchnorm_spatial1_o7", "BatchNormalization", bn_inputs((2, 3, 4), 45), opset=7, attrs={"spatial": 1},
         const=BN_CONST),
    case("batchnorm_spatial0_o7", "BatchNormalization", bn_inputs((2, 3, 4), 46, per_element=True), opset=7,
         attrs={"spatial": 0}, const=BN_CONST, reference=lambda X, scale, B, input_mean, input_var: [
             ((X - input_mean) * (scale / np.sqrt(input_var + np.float32(1e-5))) + B).astype(np.float32)],
         note="onnxruntime dropped spatial=0; numpy reference"),
    case("batchnorm_empty", "BatchNormalization", {**bn_inputs((2, 3, 4), 47), "X": np.zeros((0, 3, 4), np.float32)},
         opset=15, const=BN_CONST),
]

def batchnorm_training_reference(X, scale, B, input_mean, input_var, momentum=0.9, epsilon=1e-5):
    """BatchNormalization-15 in training mode, in float64: Y, running_mean, running_var (biased batch variance)."""
    x = X.astype(np.float64)
    axes = (0,) + tuple(range(2, x.ndim))
    shape = (1, -1) + (1,) * (x.ndim - 2)
    mean, var = x.mean(axis=axes), x.var(axis=axes)
    y = (x - mean.reshape(shape)) / np.sqrt(var.reshape(shape) + epsilon) * scale.reshape(shape) + B.reshape(shape)
    return [a.astype(np.float32) for a in (y, input_mean * momentum + mean * (1 - momentum),
                                           input_var * momentum + var * (1 - momentum))]


# BatchNormalization training_mode = 1 (opsets 14, 15): the batch's statistics per channel over (N, spatial), Y,
# and running_mean / running_var with the biased variance (onnxruntime's and the ONNX reference's).
BN_TRAIN = ["Y", "running_mean", "running_var"]
CASES += [
    case("batchnorm_training_o14", "BatchNormalization", bn_inputs((2, 5, 7, 6), 80), opset=14,
         attrs={"training_mode": 1}, outputs=BN_TRAIN, const=BN_CONST, atol=1e-5, rtol=1e-4),
    case("batchnorm_training_o15_momentum", "BatchNormalization", bn_inputs((3, 4, 9), 81), opset=15,
         attrs={"training_mode": 1, "momentum": 0.7, "epsilon": 1e-3}, outputs=BN_TRAIN, atol=1e-5, rtol=1e-4),
    case("batchnorm_training_rank2", "BatchNormalization", bn_inputs((37, 3), 82), opset=15,
         attrs={"training_mode": 1}, outputs=BN_TRAIN, atol=1e-5, rtol=1e-4),
    case("batchnorm_training_long", "BatchNormalization",
         {**bn_inputs((3, 2, 65, 7), 83), "X": rand(3, 2, 65, 7, low=9, high=11, seed=83)}, opset=15,
         attrs={"training_mode": 1, "momentum": 0.25}, outputs=BN_TRAIN, atol=1e-4, rtol=1e-3,
         note="mean near 10: the two-pass variance"),
    case("batchnorm_training_no_running_mean", "BatchNormalization", bn_inputs((2, 3, 4, 4), 85), opset=15,
         attrs={"training_mode": 1, "momentum": 0.5}, outputs=["Y", "", "running_var"], atol=1e-5, rtol=1e-4,
         reference=lambda **v: batchnorm_training_reference(**v, momentum=0.5)[::2],
         note="onnxruntime 1.30 crashes when running_mean is left out; float64 numpy reference"),
]

# InstanceNormalization: rows over the spatial dims of each (n, c).
for i, shape in enumerate([(2, 3, 5, 7), (1, 4, 100), (2, 2, 3, 4, 5), (3, 2, 1), (1, 3, 65, 65)]):
    c = shape[1]
    CASES.append(case(f"instancenorm_{i}", "InstanceNormalization",
                      {"input": rand(*shape, seed=50 + i), "scale": rand(c, seed=60 + i), "B": rand(c, seed=70 + i)},
                      opset=7 if i == 0 else 22, const=("scale", "B"), atol=1e-5, rtol=1e-4))
CASES.append(case("instancenorm_eps", "InstanceNormalization",
                  {"input": rand(2, 3, 9, seed=55), "scale": rand(3, seed=56), "B": rand(3, seed=57)},
                  attrs={"epsilon": 0.1}, opset=17))
CASES.append(case("instancenorm_offset", "InstanceNormalization",
                  {"input": rand(2, 3, 40, low=99, high=101, seed=58), "scale": rand(3, seed=59),
                   "B": rand(3, seed=60)}, opset=17, atol=1e-4, rtol=1e-3,
                  note="large mean: two-pass variance keeps accuracy"))

# LayerNormalization (opset 17).
LN_SHAPES = [((2, 3, 8), -1), ((4, 130), 1), ((2, 3, 4, 5), 2), ((2, 3, 4, 5), -3), ((2, 3, 4), 0), ((5, 768), -1)]
for i, (shape, axis) in enumerate(LN_SHAPES):
    block = shape[axis:] if axis >= 0 else shape[len(shape) + axis:]
    x = rand(*shape, seed=80 + i)
    s, b = rand(*block, seed=90 + i), rand(*block, seed=100 + i)
    CASES.append(case(f"layernorm_{i}", "LayerNormalization", {"X": x, "Scale": s, "B": b},
                      attrs={"axis": axis}, opset=17, const=("Scale", "B"), atol=1e-5, rtol=1e-4))
    CASES.append(case(f"layernorm_{i}_stats", "LayerNormalization", {"X": x, "Scale": s, "B": b},
                      attrs={"axis": axis, "epsilon": 1e-3}, opset=17, outputs=3, atol=1e-5, rtol=1e-4))
CASES += [
    case("layernorm_nobias", "LayerNormalization", {"X": rand(3, 40, seed=110), "Scale": rand(40, seed=111)},
         opset=17, atol=1e-5, rtol=1e-4),
    case("layernorm_nobias_none", "LayerNormalization",
         {"X": rand(3, 40, seed=112), "Scale": rand(40, seed=113), "B": None}, opset=17, reference=None,
         note="onnxruntime 1.30 crashes (segfault) on an empty-named B input; cross-device only"),
    case("layernorm_bcast_scale", "LayerNormalization",
         {"X": rand(2, 3, 4, seed=114), "Scale": rand(1, 4, seed=115), "B": rand(4, seed=116)},
         attrs={"axis": 1}, opset=17, atol=1e-5, rtol=1e-4),
    case("layernorm_scalar_scale", "LayerNormalization",
         {"X": rand(2, 6, seed=117), "Scale": rand(1, seed=118), "B": rand(1, seed=119)}, opset=18,
         atol=1e-5, rtol=1e-4),
    case("layernorm_stats_partial", "LayerNormalization",
         {"X": rand(2, 50, seed=120), "Scale": rand(50, seed=121), "B": rand(50, seed=122)}, opset=17,
         outputs=["Y", "", "InvStdDev"], atol=1e-5, rtol=1e-4),
    case("layernorm_offset", "LayerNormalization",
         {"X": rand(4, 64, low=999, high=1001, seed=123), "Scale": rand(64, seed=124), "B": rand(64, seed=125)},
         opset=17, atol=1e-3, rtol=1e-3, note="large mean: two-pass variance"),
    case("layernorm_special", "LayerNormalization",
         {"X": np.array([[1, 2, np.nan, 4], [np.inf, 1, 2, 3], [5, 5, 5, 5]], np.float32),
          "Scale": rand(4, seed=126), "B": rand(4, seed=127)}, opset=17, reference=None,
         note="NaN/inf rows become NaN; constant rows give B"),
    case("layernorm_empty_rows", "LayerNormalization",
         {"X": np.zeros((0, 8), np.float32), "Scale": rand(8, seed=128), "B": rand(8, seed=129)}, opset=17),
]


def rms_reference(axis=-1, epsilon=1e-5):
    def run(X, scale):
        x = X.astype(np.float64)
        axes = tuple(range(axis % X.ndim, X.ndim))
        return [(x / np.sqrt(np.mean(x * x, axis=axes, keepdims=True) + epsilon) * scale).astype(np.float32)]

    return run


# RMSNormalization (opset 23): the LayerNormalization row with the mean fixed at +0 and no bias.
RMS_SHAPES = [((2, 3, 8), -1, (8,)), ((4, 130), 1, (130,)), ((2, 3, 4, 5), 2, (1, 5)), ((2, 3, 4), 0, (3, 4)),
              ((3, 768), -1, (1,)), ((2, 5, 7), -2, (5, 7))]
for i, (shape, axis, scale_shape) in enumerate(RMS_SHAPES):
    CASES.append(case(f"rmsnorm_{i}", "RMSNormalization", {"X": rand(*shape, seed=130 + i),
                                                           "scale": rand(*scale_shape, seed=140 + i)},
                      attrs={"axis": axis, "epsilon": 1e-3 if i % 2 else 1e-5}, opset=23, const=("scale",),
                      reference=rms_reference(axis, 1e-3 if i % 2 else 1e-5), atol=1e-5, rtol=1e-4))
CASES += [
    case("rmsnorm_special", "RMSNormalization",
         {"X": np.array([[1, -0.0, np.nan, 4], [np.inf, 1, 2, 3], [-0.0, 0, -0.0, 0]], np.float32),
          "scale": rand(4, seed=150)}, opset=23, reference=None,
         note="NaN/inf rows become NaN; an all-zero row keeps the zeros' signs (x / sqrt(eps))"),
    case("rmsnorm_empty_rows", "RMSNormalization",
         {"X": np.zeros((0, 8), np.float32), "scale": rand(8, seed=151)}, opset=23, reference=rms_reference()),
]

def group_norm_f64(x, scale, bias, groups, epsilon=1e-5):
    rows = x.astype(np.float64).reshape(x.shape[0], groups, -1)
    y = (rows - rows.mean(-1, keepdims=True)) / np.sqrt(rows.var(-1, keepdims=True) + epsilon)
    shape = (1, -1) + (1,) * (x.ndim - 2)
    return (y.reshape(x.shape) * scale.reshape(shape) + bias.reshape(shape)).astype(np.float32)


# GroupNormalization: each (n, group) block of channels is one row; scale and bias per group (18) or per channel (21).
GN_SHAPES = [((2, 6, 5, 7), 3), ((1, 4, 100), 2), ((2, 6, 3, 4, 5), 6), ((3, 4, 9), 1), ((2, 8), 4)]
for i, (shape, groups) in enumerate(GN_SHAPES):
    for opset, params in ((18, groups), (21, shape[1])):
        CASES.append(case(f"groupnorm_{i}_o{opset}", "GroupNormalization",
                          {"X": rand(*shape, seed=130 + i), "scale": rand(params, seed=140 + i),
                           "bias": rand(params, seed=150 + i)},
                          attrs={"num_groups": groups}, opset=opset, const=("scale", "bias"), atol=1e-5, rtol=1e-4))
CASES += [
    case("groupnorm_eps_feeds", "GroupNormalization",
         {"X": rand(2, 4, 6, seed=160), "scale": rand(4, seed=161), "bias": rand(4, seed=162)},
         attrs={"num_groups": 2, "epsilon": 0.1}, opset=21, atol=1e-5, rtol=1e-4),
    case("groupnorm_offset", "GroupNormalization",
         {"X": rand(2, 4, 30, low=99, high=101, seed=163), "scale": rand(4, seed=164), "bias": rand(4, seed=165)},
         attrs={"num_groups": 2}, opset=21, atol=1e-4, rtol=1e-3, reference=lambda X, scale, bias: [
             group_norm_f64(X, scale, bias, 2)],
         note="large mean: two-pass variance; onnxruntime's single-pass variance is 0.3% off, float64 reference"),
]

def lrn_f64(size, alpha=1e-4, beta=0.75, bias=1.0):
    def ref(X):
        x = X.astype(np.float64)
        c = x.shape[1]
        sums = np.stack([np.sum(x[:, max(0, i - (size - 1) // 2):min(c, i + size // 2 + 1)] ** 2, axis=1)
                         for i in range(c)], axis=1)
        return [(x / (bias + alpha / size * sums) ** beta).astype(np.float32)]
    return ref


# LRN: the squares of the channel window, added in ascending channel order. onnxruntime takes 4-D X and odd sizes
# only; the other cases have a float64 numpy reference.
for i, (shape, attrs) in enumerate([((2, 5, 4, 4), {"size": 3}), ((1, 7, 9), {"size": 4, "alpha": 0.01}),
                                    ((2, 3, 2, 3, 4), {"size": 5, "beta": 0.5, "bias": 2.0}),
                                    ((1, 16, 13, 13), {"size": 5, "alpha": 1e-3, "beta": 0.75, "bias": 1.0}),
                                    ((2, 4), {"size": 1})]):
    ort_ok = len(shape) == 4 and attrs["size"] % 2 == 1
    CASES.append(case(f"lrn_{i}", "LRN", {"X": rand(*shape, low=-3, high=3, seed=170 + i)}, attrs=attrs, opset=13,
                      reference="onnxruntime" if ort_ok else lrn_f64(**attrs)))


def mvn_reference(axes=(0, 2, 3)):
    """onnx's function body in float64: (X - mean) / (sqrt(mean(X^2) - mean^2) + 1e-9), means over `axes`."""
    def run(X):
        x = X.astype(np.float64)
        m = np.mean(x, axis=tuple(axes), keepdims=True)
        var = np.mean(x * x, axis=tuple(axes), keepdims=True) - m * m
        return [((x - m) / (np.sqrt(var) + 1e-9)).astype(X.dtype)]

    return run


# MeanVarianceNormalization (9, 13): run as its function body (docs/arithmetic.md#expanded-ops), each body op
# keeping its own contract; checked against the body in float64 (onnxruntime's own kernel computes it otherwise).
for opset in (9, 13, 18, 23):
    CASES.append(case(f"mvn_o{opset}", "MeanVarianceNormalization", {"X": rand(2, 3, 5, 4, seed=160 + opset)},
                      opset=opset, reference=mvn_reference()))
for i, axes in enumerate([[1], [2, 3], [0, 1, 2, 3], [-1], [0, 2]]):
    CASES.append(case(f"mvn_axes_{i}", "MeanVarianceNormalization",
                      {"X": rand(3, 4, 6, 5, low=-3, high=5, seed=170 + i)}, attrs={"axes": axes}, opset=13,
                      reference=mvn_reference(axes)))
CASES += [
    case("mvn_rank3_axes", "MeanVarianceNormalization", {"X": rand(4, 7, 9, seed=181)}, attrs={"axes": [0, 2]},
         opset=18, reference=mvn_reference((0, 2))),
]
