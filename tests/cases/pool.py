"""Cross-device cases of the pool family (docs/arithmetic.md#pool)."""

import numpy as np

from cases import case, rand, randint

CASES = []


def pool(name, op, x, opset=19, outputs=1, **attrs):
    kw = {}
    for k in ("reference", "note", "atol", "rtol"):
        if k in attrs:
            kw[k] = attrs.pop(k)
    return case(name, op, {"X": x}, attrs=attrs, opset=opset, outputs=outputs, **kw)


X2 = rand(2, 3, 11, 13, seed=200)
X1 = rand(2, 3, 37, seed=201)
X3 = rand(1, 2, 7, 8, 9, seed=202)

for op in ("MaxPool", "AveragePool"):
    CASES += [
        pool(f"{op}_2d_basic", op, X2, kernel_shape=[3, 3]),
        pool(f"{op}_2d_stride", op, X2, kernel_shape=[3, 2], strides=[2, 3]),
        pool(f"{op}_2d_pads", op, X2, kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]),
        pool(f"{op}_2d_pads_asym", op, X2, kernel_shape=[4, 3], strides=[2, 1], pads=[2, 0, 1, 2]),
        pool(f"{op}_2d_same_upper", op, X2, kernel_shape=[3, 4], strides=[2, 2], auto_pad="SAME_UPPER"),
        pool(f"{op}_2d_same_lower", op, X2, kernel_shape=[3, 4], strides=[2, 2], auto_pad="SAME_LOWER"),
        pool(f"{op}_2d_valid", op, X2, kernel_shape=[3, 4], strides=[2, 2], auto_pad="VALID"),
        pool(f"{op}_2d_ceil", op, X2, kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1),
        pool(f"{op}_2d_ceil_pads", op, X2, kernel_shape=[3, 3], strides=[3, 3], pads=[1, 1, 1, 1], ceil_mode=1),
        pool(f"{op}_2d_dilations", op, X2, kernel_shape=[3, 3], dilations=[2, 2]),
        pool(f"{op}_2d_dil_pads_ceil", op, X2, kernel_shape=[2, 3], dilations=[2, 3], pads=[1, 2, 1, 2],
             strides=[2, 2], ceil_mode=1),
        pool(f"{op}_1d", op, X1, kernel_shape=[5], strides=[2], pads=[2, 2]),
        pool(f"{op}_1d_ceil", op, X1, kernel_shape=[4], strides=[3], ceil_mode=1),
        pool(f"{op}_3d", op, X3, kernel_shape=[2, 3, 3], strides=[1, 2, 2], pads=[0, 1, 1, 1, 1, 0]),
        pool(f"{op}_3d_same", op, X3, kernel_shape=[3, 3, 3], strides=[2, 2, 2], auto_pad="SAME_UPPER"),
        pool(f"{op}_big_window", op, rand(1, 2, 12, 12, seed=203), kernel_shape=[9, 8], pads=[2, 2, 2, 2],
             note="81+ taps: more than 32 and 64 terms"),
        pool(f"{op}_o10", op, X2, opset=10, kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1),
        pool(f"{op}_o7", op, X2, opset=7, kernel_shape=[2, 2], strides=[2, 2]),
        pool(f"{op}_o11", op, X2, opset=11, kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        pool(f"{op}_o22", op, X2, opset=22, kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        pool(f"{op}_empty_batch", op, np.zeros((0, 3, 5, 5), np.float32), kernel_shape=[2, 2]),
    ]

for cip in (0, 1):
    CASES += [
        pool(f"AveragePool_cip{cip}_pads", "AveragePool", X2, kernel_shape=[3, 3], pads=[1, 1, 1, 1],
             count_include_pad=cip),
        pool(f"AveragePool_cip{cip}_ceil", "AveragePool", X2, kernel_shape=[3, 3], strides=[2, 2],
             pads=[1, 1, 1, 1], ceil_mode=1, count_include_pad=cip),
        pool(f"AveragePool_cip{cip}_same", "AveragePool", X2, kernel_shape=[4, 4], strides=[3, 3],
             auto_pad="SAME_LOWER", count_include_pad=cip),
        pool(f"AveragePool_cip{cip}_3d", "AveragePool", X3, kernel_shape=[3, 3, 3], pads=[1, 1, 1, 1, 1, 1],
             count_include_pad=cip),
        pool(f"AveragePool_cip{cip}_o7", "AveragePool", X2, opset=7, kernel_shape=[3, 3], pads=[1, 1, 1, 1],
             count_include_pad=cip),
    ]

special = rand(1, 2, 9, 9, seed=204)
special.flat[::7] = np.nan
special.flat[3::11] = np.inf
special.flat[5::13] = -np.inf
special.flat[6::5] = -0.0
CASES += [
    pool("MaxPool_indices", "MaxPool", X2, opset=12, outputs=2, kernel_shape=[3, 3], strides=[2, 2],
         pads=[1, 1, 1, 1]),
    pool("MaxPool_indices_colmajor", "MaxPool", X2, opset=12, outputs=2, kernel_shape=[3, 2], storage_order=1),
    pool("MaxPool_indices_3d", "MaxPool", X3, opset=12, outputs=2, kernel_shape=[2, 2, 2], strides=[2, 2, 2]),
    pool("MaxPool_indices_o8", "MaxPool", X2, opset=8, outputs=2, kernel_shape=[2, 2], strides=[2, 2]),
    pool("MaxPool_ties", "MaxPool", np.round(X2 * 2).astype(np.float32), opset=12, outputs=2,
         kernel_shape=[3, 3], note="ties: the first tap in row-major kernel order wins"),
    pool("MaxPool_int8", "MaxPool", randint(1, 2, 8, 8, low=-100, high=100, dtype=np.int8, seed=205), opset=12,
         kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
    pool("MaxPool_uint8", "MaxPool", randint(1, 2, 8, 8, low=0, high=250, dtype=np.uint8, seed=206), opset=12,
         kernel_shape=[2, 2], strides=[2, 2]),
    pool("MaxPool_special", "MaxPool", special, opset=12, outputs=2, kernel_shape=[3, 3], pads=[1, 1, 1, 1],
         reference=None, note="NaN wins (first NaN); onnxruntime lets NaN lose"),
    pool("AveragePool_special", "AveragePool", special, kernel_shape=[3, 3], pads=[1, 1, 1, 1],
         count_include_pad=1, reference=None, note="NaN/inf propagate; -0 terms"),
]

# Odd widths and tails for the CPU vector kernels (16 or 8 output columns a register; border columns).
X_ODD = rand(2, 3, 15, 37, seed=220)
for op in ("MaxPool", "AveragePool"):
    CASES += [
        pool(f"{op}_odd_resnet_stem", op, X_ODD, kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]),
        pool(f"{op}_odd_5x5_s3_asym", op, X_ODD, kernel_shape=[5, 5], strides=[3, 3], pads=[2, 1, 0, 2]),
        pool(f"{op}_odd_7x7_s1", op, X_ODD, kernel_shape=[7, 7], pads=[3, 3, 3, 3], note="49 terms: > 32 lanes"),
        pool(f"{op}_odd_dil_ceil", op, X_ODD, kernel_shape=[3, 2], strides=[2, 3], dilations=[2, 2],
             pads=[1, 1, 1, 1], ceil_mode=1),
    ]
CASES += [
    pool("AveragePool_odd_cip1_3x3_s1", "AveragePool", X_ODD, kernel_shape=[3, 3], pads=[1, 1, 1, 1],
         count_include_pad=1),
]

for op in ("GlobalAveragePool", "GlobalMaxPool"):
    CASES += [
        case(f"{op}_2d", op, {"X": rand(2, 5, 7, 7, seed=210)}),
        case(f"{op}_1d", op, {"X": rand(2, 3, 100, seed=211)}),
        case(f"{op}_3d", op, {"X": rand(1, 3, 4, 5, 6, seed=212)}),
        case(f"{op}_large", op, {"X": rand(1, 4, 56, 56, seed=213)}, atol=1e-5),
        case(f"{op}_single", op, {"X": rand(3, 2, 1, 1, seed=214)}),
        case(f"{op}_special", op, {"X": special}, reference=None, note="NaN/inf per the contract"),
        case(f"{op}_o7", op, {"X": rand(2, 3, 4, 4, seed=215)}, opset=7),
    ]

# LpPool: p 1, 2 and 3; 1-D, 2-D and 3-D; pads (padding taps are +0 terms), strides, dilations, auto_pad.
LP = [
    ("1d", (2, 3, 17), {"kernel_shape": [3]}),
    ("2d", (1, 3, 9, 9), {"kernel_shape": [3, 3]}),
    ("2d_pads", (1, 2, 8, 7), {"kernel_shape": [3, 2], "pads": [1, 0, 1, 1]}),
    ("2d_strides", (1, 2, 9, 9), {"kernel_shape": [3, 3], "strides": [2, 2]}),
    ("2d_dilations", (1, 2, 9, 9), {"kernel_shape": [2, 2], "dilations": [2, 2]}),
    ("2d_same_upper", (1, 2, 7, 7), {"kernel_shape": [3, 3], "auto_pad": "SAME_UPPER"}),
    ("2d_big_window", (1, 1, 12, 12), {"kernel_shape": [8, 8]}),
    ("3d", (1, 2, 5, 5, 5), {"kernel_shape": [2, 2, 2]}),
]
for name, shape, attrs in LP:
    for p in (1, 2, 3):
        CASES.append(case(f"lppool_{name}_p{p}", "LpPool", {"X": rand(*shape, seed=60)}, attrs={**attrs, "p": p},
                          opset=18, rtol=1e-5, atol=1e-6))
