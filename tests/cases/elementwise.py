"""Cross-device cases for the elementwise family (docs/arithmetic.md#elementwise)."""

import numpy as np

from cases import case, rand, randint

F32 = np.float32
SPECIAL = np.array([0.0, -0.0, np.nan, np.inf, -np.inf, 1e-40, -1e-40, 3e38, -3e38, 1.0, -1.0, 0.5, -0.5,
                    1.5, 2.5, -2.5, 88.0, -88.0, 100.0, -100.0, 1e-8, 7.0, -7.0], F32)


def mixed(n, scale=4.0, seed=None):
    """Random floats over [-scale, scale] with the special values in front (NaN, +-inf, +-0, denormals)."""
    return np.concatenate([SPECIAL, rand(n, low=-scale, high=scale, seed=seed)]).astype(F32)


CASES = []

# ---- unary float ops: special values, odd sizes, rank 0, empty
UNARY_F32 = ["Relu", "Sigmoid", "Tanh", "Exp", "Log", "Sqrt", "Reciprocal", "Neg", "Abs", "Floor", "Ceil", "Round",
             "Sign", "Erf", "Softplus", "Sin", "Cos", "LeakyRelu", "Elu", "Selu", "HardSigmoid", "HardSwish",
             "Tan", "Sinh", "Cosh", "Asinh", "Acosh", "Atanh", "Asin", "Acos", "Atan"]
SINCE = {"Round": 11, "Sign": 9, "Erf": 9, "HardSwish": 14, "Sinh": 9, "Cosh": 9, "Asinh": 9, "Acosh": 9, "Atanh": 9}
for op in UNARY_F32:
    CASES.append(case(f"{op.lower()}_special", op, {"X": mixed(1001, seed=len(op))}, rtol=2e-5, atol=1e-6))
    CASES.append(case(f"{op.lower()}_3d", op, {"X": rand(3, 5, 7, low=-6, high=6)}, rtol=2e-5, atol=1e-6))
    CASES.append(case(f"{op.lower()}_rank0", op, {"X": np.array(0.75, F32)}, rtol=2e-5))
    CASES.append(case(f"{op.lower()}_empty", op, {"X": np.zeros((0, 3), F32)}))
    CASES.append(case(f"{op.lower()}_old_opset", op, {"X": rand(17, low=-3, high=3)}, opset=SINCE.get(op, 7),
                      rtol=2e-5, atol=1e-6))

CASES += [
    case("relu_opset14_int32", "Relu", {"X": randint(50, low=-100, high=100, dtype=np.int32)}, opset=14),
    case("relu_opset14_int64", "Relu", {"X": randint(50, low=-100, high=100)}, opset=14,
         reference=lambda X: [np.maximum(X, 0)], note="onnxruntime has no int64 Relu"),
    case("relu_f64", "Relu", {"X": rand(33, dtype=np.float64)}),
    case("leakyrelu_alpha", "LeakyRelu", {"X": mixed(100)}, attrs={"alpha": 0.3}),
    case("elu_alpha", "Elu", {"X": mixed(100)}, attrs={"alpha": 0.7}, rtol=2e-5),
    case("elu_tiny", "Elu", {"X": rand(200, low=-1e-4, high=1e-4)}, rtol=2e-5),
    case("selu_attrs", "Selu", {"X": mixed(100)}, attrs={"alpha": 1.5, "gamma": 2.0}, rtol=2e-5),
    case("hardsigmoid_attrs", "HardSigmoid", {"X": mixed(100)}, attrs={"alpha": 0.4, "beta": 0.3}),
    case("gelu_none", "Gelu", {"X": mixed(1000)}, opset=20, rtol=2e-5, atol=1e-6),
    case("gelu_tanh", "Gelu", {"X": mixed(1000)}, attrs={"approximate": "tanh"}, opset=20, rtol=2e-5, atol=1e-6),
    case("exp_range", "Exp", {"X": rand(4096, low=-104, high=89)}, rtol=2e-5, atol=0),
    case("log_range", "Log", {"X": rand(4096, low=0, high=1e6)}, rtol=2e-5, atol=1e-6),
    case("sin_large", "Sin", {"X": rand(4096, low=-1e5, high=1e5)}, rtol=2e-5, atol=2e-6),
    case("cos_large", "Cos", {"X": rand(4096, low=-1e5, high=1e5)}, rtol=2e-5, atol=2e-6),
    case("tan_large", "Tan", {"X": rand(4096, low=-1e5, high=1e5)}, rtol=2e-5, atol=2e-6),
    case("sinh_range", "Sinh", {"X": rand(4096, low=-89.4, high=89.4)}, rtol=2e-5, atol=1e-6),
    case("cosh_range", "Cosh", {"X": rand(4096, low=-89.4, high=89.4)}, rtol=2e-5, atol=1e-6),
    case("asinh_range", "Asinh", {"X": rand(4096, low=-1e5, high=1e5)}, rtol=2e-5, atol=1e-6),
    case("acosh_range", "Acosh", {"X": rand(4096, low=1, high=1e5)}, rtol=2e-5, atol=1e-6),
    case("atanh_range", "Atanh", {"X": rand(4096, low=-1, high=1)}, rtol=2e-5, atol=1e-6),
    case("asin_range", "Asin", {"X": rand(4096, low=-1, high=1)}, rtol=2e-5, atol=1e-6),
    case("acos_range", "Acos", {"X": rand(4096, low=-1, high=1)}, rtol=2e-5, atol=1e-6),
    case("atan_range", "Atan", {"X": rand(4096, low=-1e3, high=1e3)}, rtol=2e-5, atol=1e-6),
    case("round_halves", "Round", {"X": (np.arange(-40, 40, dtype=F32) * 0.5 + 0.0).astype(F32)}, opset=11),
    case("floor_big", "Floor", {"X": rand(500, low=-1e8, high=1e8)}),
    case("neg_int32", "Neg", {"X": np.array([0, 1, -5, 2**31 - 1, -2**31], np.int32)}),
    case("neg_int64", "Neg", {"X": randint(20, low=-1000, high=1000)}),
    case("abs_int64", "Abs", {"X": randint(20, low=-1000, high=1000)}),
    case("abs_int32", "Abs", {"X": randint(20, low=-1000, high=1000, dtype=np.int32)}),
    case("abs_f64", "Abs", {"X": rand(20, dtype=np.float64)}),
    case("sign_int64", "Sign", {"X": randint(20, low=-5, high=5)}),
    case("sqrt_f64", "Sqrt", {"X": rand(20, low=0, high=9, dtype=np.float64)}),
    case("isnan", "IsNaN", {"X": mixed(50)}, opset=9),
    case("isnan_13", "IsNaN", {"X": mixed(50)}, opset=13),
    case("isinf", "IsInf", {"X": mixed(50)}, opset=10),
    case("isinf_neg_only", "IsInf", {"X": mixed(50)}, attrs={"detect_positive": 0}, opset=10),
    case("isinf_pos_only", "IsInf", {"X": mixed(50)}, attrs={"detect_negative": 0}, opset=20),
    case("not", "Not", {"X": rand(3, 4) > 0}),
    case("not_rank0", "Not", {"X": np.array(True)}),
]

# ---- binary arithmetic with broadcasting
SHAPES = [((3, 4, 5), (3, 4, 5)), ((3, 4, 5), (5,)), ((3, 1, 5), (1, 4, 1)), ((), (2, 3)), ((2, 3), ()),
          ((4, 1), (4, 70)), ((1,), (0, 3)), ((2, 1, 3, 1, 5), (4, 1, 6, 1)), ((65,), (1,)),
          # innermost dims of whole quads, each input running along them or broadcast across (CUDA's strided quads)
          ((2, 3, 8, 16), (2, 1, 1, 16)), ((4, 8), (4, 1)), ((3, 5, 1), (1, 1, 8))]
for op in ["Add", "Sub", "Mul", "Div", "Max", "Min"]:
    for i, (sa, sb) in enumerate(SHAPES):
        CASES.append(case(f"{op.lower()}_bcast{i}", op, {"A": rand(*sa, low=-3, high=3), "B": rand(*sb, low=-3, high=3)}))
    CASES.append(case(f"{op.lower()}_special", op, {"A": mixed(100, seed=1), "B": mixed(100, seed=2)[::-1].copy()},
                      atol=0, rtol=1e-6))
    CASES.append(case(f"{op.lower()}_int64", op, {"A": randint(3, 4, low=-50, high=50),
                                                  "B": randint(4, low=1, high=9)}))
    CASES.append(case(f"{op.lower()}_int32", op, {"A": randint(3, 4, low=-50, high=50, dtype=np.int32),
                                                  "B": randint(3, 1, low=1, high=9, dtype=np.int32)}))
    CASES.append(case(f"{op.lower()}_f64", op, {"A": rand(7, dtype=np.float64), "B": rand(7, dtype=np.float64)}))
    CASES.append(case(f"{op.lower()}_opset7", op, {"A": rand(2, 3), "B": rand(3)}, opset=8 if op in ("Max", "Min") else 7))

CASES += [
    case("div_int_trunc", "Div", {"A": np.array([7, -7, 7, -7, 0, -9], np.int64),
                                  "B": np.array([2, 2, -2, -2, 3, 4], np.int64)}),
    case("div_int_zero", "Div", {"A": np.array([7, -7, 0, -2**63], np.int64), "B": np.array([0, 0, 0, -1], np.int64)},
         reference=lambda A, B: [np.array([0, 0, 0, -2**63], np.int64)], note="ORT traps on x/0; lockstep gives 0"),
    case("add_int_wrap", "Add", {"A": np.array([2**31 - 1, -2**31], np.int32), "B": np.array([1, -1], np.int32)},
         reference=lambda A, B: [np.array([-2**31, 2**31 - 1], np.int32)]),
    case("max_ties_zero", "Max", {"A": np.array([0.0, -0.0, np.nan, 1.0], F32), "B": np.array([-0.0, 0.0, 1.0, np.nan], F32)}),
    case("min_ties_zero", "Min", {"A": np.array([0.0, -0.0, np.nan, 1.0], F32), "B": np.array([-0.0, 0.0, 1.0, np.nan], F32)}),
    case("pow_basic", "Pow", {"X": rand(3, 4, low=0.1, high=3), "Y": rand(3, 4, low=-3, high=3)}, rtol=2e-5),
    case("pow_square", "Pow", {"X": mixed(300), "Y": np.array(2.0, F32)}, rtol=1e-6, atol=0, const=("Y",)),
    # y == 3 is (x*x)*x, two roundings, as onnxruntime computes it: its bits exactly.
    case("pow_cube", "Pow", {"X": mixed(300, seed=5), "Y": np.array(3.0, F32)}, rtol=0, atol=0, const=("Y",),
         reference=lambda X, Y: [(X * X) * X]),
    case("pow_special", "Pow", {"X": mixed(60, seed=3), "Y": mixed(60, seed=4)}, rtol=2e-5),
    case("pow_neg_base_int_exp", "Pow", {"X": rand(20, low=-3, high=3), "Y": np.array([3.0], F32)}, rtol=2e-5),
    case("pow_exp_int64", "Pow", {"X": rand(4, 5, low=-3, high=3), "Y": np.array(3, np.int64)}, opset=13, rtol=2e-5, const=("Y",)),
    case("pow_exp_int32", "Pow", {"X": rand(4, 5, low=-3, high=3), "Y": randint(5, low=0, high=4, dtype=np.int32)},
         opset=15, rtol=2e-5),
    case("pow_opset7", "Pow", {"X": rand(4, 5, low=0, high=3), "Y": rand(5)}, opset=7, rtol=2e-5),
    case("mod_int_floor", "Mod", {"A": randint(40, low=-50, high=50), "B": randint(40, low=1, high=7) *
                                  np.where(randint(40, low=0, high=2) == 0, -1, 1)}, opset=10),
    case("mod_int_fmod", "Mod", {"A": randint(40, low=-50, high=50, dtype=np.int32),
                                 "B": randint(40, low=1, high=7, dtype=np.int32)}, attrs={"fmod": 1}, opset=13),
    case("mod_int_zero", "Mod", {"A": np.array([5, -5], np.int64), "B": np.array([0, 0], np.int64)},
         reference=lambda A, B: [np.array([0, 0], np.int64)], note="ORT traps on x mod 0; lockstep gives 0"),
    case("mod_float", "Mod", {"A": mixed(200, scale=100), "B": mixed(200, scale=10, seed=9)}, attrs={"fmod": 1},
         rtol=0, atol=0, reference=lambda A, B: [np.fmod(A, B)], note="fmod is exact"),
    case("mod_float_bcast", "Mod", {"A": rand(3, 4, low=-20, high=20), "B": np.array(3.5, F32)}, attrs={"fmod": 1}, const=("B",),
         atol=0, rtol=0),
    case("mod_float_denormal", "Mod", {"A": np.array([1e-39, 3e38, -3e38, 5e-45, 1.0], F32),
                                       "B": np.array([3e-40, 1e-38, 7e-45, 1e-45, 1e-44], F32)},
         attrs={"fmod": 1}, reference=lambda A, B: [np.fmod(A, B)], atol=0, rtol=0),
    case("prelu_channel", "PRelu", {"X": rand(2, 3, 4, 5), "slope": rand(3, 1, 1)}),
    case("prelu_scalar", "PRelu", {"X": mixed(100), "slope": np.array([0.25], F32)}),
    case("prelu_full", "PRelu", {"X": rand(2, 3), "slope": rand(2, 3)}, opset=9),
    case("prelu_opset16", "PRelu", {"X": rand(2, 3, 4), "slope": rand(4)}, opset=16),
]

# ---- variadic
CASES += [
    case("sum_3", "Sum", {"a": rand(3, 4), "b": rand(4), "c": rand(3, 1)}),
    case("sum_1", "Sum", {"a": rand(3, 4)}),
    case("sum_5_special", "Sum", {k: mixed(50, seed=i) for i, k in enumerate("abcde")}),
    case("mean_3", "Mean", {"a": rand(3, 4), "b": rand(4), "c": rand(3, 1)}),
    case("mean_1", "Mean", {"a": rand(3, 4)}),
    case("mean_opset7", "Mean", {"a": rand(3, 4), "b": rand(3, 4)}, opset=7),
    case("max_4", "Max", {"a": mixed(40, seed=1), "b": mixed(40, seed=2), "c": mixed(40, seed=3), "d": rand(1)}),
    case("min_4", "Min", {"a": mixed(40, seed=1), "b": mixed(40, seed=2), "c": mixed(40, seed=3), "d": rand(1)}),
    case("max_1", "Max", {"a": rand(5)}),
    case("max_int64_3", "Max", {"a": randint(3, 4, low=-9, high=9), "b": randint(4, low=-9, high=9),
                                "c": randint(1, low=-9, high=9)}, opset=13),
    case("sum_empty", "Sum", {"a": np.zeros((0, 4), F32), "b": rand(4)}),
]

# ---- comparisons and logic
CMP = [("Equal", 7), ("Greater", 7), ("Less", 7), ("GreaterOrEqual", 12), ("LessOrEqual", 12)]
for op, since in CMP:
    CASES += [
        case(f"{op.lower()}_f32", op, {"A": mixed(60, seed=5), "B": mixed(60, seed=5)[::-1].copy()},
             opset=max(since, 11)),
        case(f"{op.lower()}_bcast", op, {"A": randint(3, 4, low=0, high=3).astype(F32), "B": np.array([1.0], F32)},
             opset=max(since, 11)),
        case(f"{op.lower()}_int64", op, {"A": randint(3, 4, low=0, high=3), "B": randint(4, low=0, high=3)},
             opset=max(since, 9)),
        case(f"{op.lower()}_int32", op, {"A": randint(3, 4, low=0, high=3, dtype=np.int32),
                                         "B": randint(3, 1, low=0, high=3, dtype=np.int32)}, opset=max(since, 9)),
        case(f"{op.lower()}_opset16", op, {"A": rand(2, 3), "B": rand(1, 3)}, opset=16),
    ]
CASES.append(case("equal_bool", "Equal", {"A": rand(3, 4) > 0, "B": rand(4) > 0}, opset=11))
CASES.append(case("equal_int64_opset7", "Equal", {"A": randint(6, low=0, high=3), "B": randint(6, low=0, high=3)},
                  opset=7))
for op in ["And", "Or", "Xor"]:
    CASES += [
        case(f"{op.lower()}_same", op, {"A": rand(3, 4) > 0, "B": rand(3, 4) > 0}),
        case(f"{op.lower()}_bcast", op, {"A": rand(2, 1, 4) > 0, "B": rand(3, 1) > 0}, opset=7),
        case(f"{op.lower()}_empty", op, {"A": np.zeros((0,), bool), "B": rand(1) > 0}),
    ]

# ---- Clip: attributes before opset 11, optional inputs after
BOUNDS = ("min", "max")  # initializers (as exported models have them); clip_inputs feeds them
CASES += [
    case("clip_attrs", "Clip", {"X": mixed(100)}, attrs={"min": -0.5, "max": 0.5}, opset=7),
    case("clip_attr_min_only", "Clip", {"X": mixed(100)}, attrs={"min": 0.0}, opset=10),
    case("clip_attr_none", "Clip", {"X": mixed(100)}, opset=9),
    case("clip_inputs", "Clip", {"X": mixed(100), "min": np.array(-0.5, F32), "max": np.array(0.5, F32)}, opset=11),
    case("clip_no_min", "Clip", {"X": mixed(100), "min": None, "max": np.array(0.5, F32)}, opset=13, const=BOUNDS),
    case("clip_no_max", "Clip", {"X": mixed(100), "min": np.array(-0.5, F32)}, opset=12, const=BOUNDS),
    case("clip_no_bounds", "Clip", {"X": mixed(100)}, opset=13),
    case("clip_min_gt_max", "Clip", {"X": mixed(100), "min": np.array(1.0, F32), "max": np.array(0.0, F32)}, opset=13, const=BOUNDS),
    case("clip_nan_bound", "Clip", {"X": mixed(100), "min": np.array(np.nan, F32), "max": np.array(0.5, F32)},
         opset=13, const=BOUNDS),
    case("clip_const_bounds", "Clip", {"X": rand(3, 4), "min": np.array(-0.2, F32), "max": np.array(0.2, F32)},
         opset=13, const=("min", "max")),
    case("clip_int64", "Clip", {"X": randint(30, low=-20, high=20), "min": np.array(-5, np.int64),
                                "max": np.array(7, np.int64)}, opset=12, const=BOUNDS),
    case("clip_int32_no_max", "Clip", {"X": randint(30, low=-20, high=20, dtype=np.int32),
                                       "min": np.array(-5, np.int32)}, opset=13, const=BOUNDS),
    case("clip_uint8", "Clip", {"X": randint(30, low=0, high=255, dtype=np.uint8), "min": np.array(10, np.uint8),
                                "max": np.array(200, np.uint8)}, opset=13, const=BOUNDS),
    case("clip_empty", "Clip", {"X": np.zeros((2, 0), F32), "min": np.array(0, F32)}, opset=13, const=BOUNDS),
]

# ---- Where: 3-way broadcasting, any dtype
CASES += [
    case("where_f32", "Where", {"C": rand(3, 4) > 0, "X": rand(3, 4), "Y": rand(3, 4)}, opset=9),
    case("where_bcast3", "Where", {"C": rand(2, 1, 4) > 0, "X": rand(3, 1), "Y": rand(1)}, opset=16),
    case("where_int64", "Where", {"C": rand(5) > 0, "X": randint(5), "Y": np.array(-1, np.int64)}),
    case("where_int32", "Where", {"C": rand(2, 5) > 0, "X": randint(5, dtype=np.int32), "Y": randint(2, 1, dtype=np.int32)}),
    case("where_bool", "Where", {"C": rand(6) > 0, "X": rand(6) > 0, "Y": rand(6) > 0},
         reference=lambda C, X, Y: [np.where(C, X, Y)], note="onnxruntime has no bool Where"),
    case("where_u8", "Where", {"C": rand(6) > 0, "X": randint(6, dtype=np.uint8), "Y": randint(6, dtype=np.uint8)}),
    case("where_f64", "Where", {"C": rand(6) > 0, "X": rand(6, dtype=np.float64), "Y": rand(6, dtype=np.float64)}),
    case("where_f16", "Where", {"C": rand(6) > 0, "X": rand(6).astype(np.float16), "Y": rand(6).astype(np.float16)}),
    case("where_nan", "Where", {"C": rand(23) > 0, "X": mixed(0), "Y": mixed(0)[::-1].copy()}),
    case("where_scalar_cond", "Where", {"C": np.array(True), "X": rand(2, 3), "Y": rand(2, 3)}),
    case("where_empty", "Where", {"C": np.zeros((0, 2), bool), "X": rand(2), "Y": rand(1)}),
]

# ---- Cast


def saturating_int(x, dtype):
    """The contract's real -> int: truncate toward zero, NaN -> 0, saturate out of range."""
    info = np.iinfo(dtype)
    out = []
    for v in np.asarray(x, np.float64).ravel():
        v = float(v)
        out.append(0 if v != v else info.min if v <= info.min else info.max if v >= info.max else int(v))
    return np.array(out, dtype=dtype).reshape(np.shape(x))


INT_TYPES = [(np.int8, 3), (np.int16, 5), (np.int32, 6), (np.int64, 7), (np.uint8, 2), (np.uint16, 4),
             (np.uint32, 12), (np.uint64, 13)]
in_range = rand(64, low=-100, high=100)
for dt, code in INT_TYPES:
    name = np.dtype(dt).name
    src = np.abs(in_range) if np.dtype(dt).kind == "u" else in_range
    CASES.append(case(f"cast_f32_to_{name}", "Cast", {"X": src}, attrs={"to": code}))
    CASES.append(case(f"cast_{name}_to_f32", "Cast", {"X": randint(64, low=0, high=100).astype(dt)}, attrs={"to": 1}))
    CASES.append(case(f"cast_{name}_to_int64", "Cast", {"X": randint(64, low=0, high=100).astype(dt)},
                      attrs={"to": 7}))
    CASES.append(case(f"cast_{name}_to_bool", "Cast", {"X": randint(64, low=0, high=3).astype(dt)}, attrs={"to": 9}))
    CASES.append(case(f"cast_f32_special_to_{name}", "Cast", {"X": mixed(200, scale=1e10)}, attrs={"to": code},
                      reference=lambda X, dt=dt: [saturating_int(X, dt)],
                      note="lockstep saturates and maps NaN to 0; onnxruntime's x86 result is undefined"))
CASES += [
    case("cast_f32_to_f64", "Cast", {"X": mixed(100)}, attrs={"to": 11}),
    case("cast_f64_to_f32", "Cast", {"X": np.concatenate([mixed(10).astype(np.float64), np.array([1e300, -1e300, 1e-300, 1 + 2**-30])])},
         attrs={"to": 1}),
    case("cast_f64_to_int64", "Cast", {"X": rand(20, low=-1e15, high=1e15, dtype=np.float64)}, attrs={"to": 7}),
    case("cast_int64_to_f32_round", "Cast", {"X": np.array([2**24 + 1, 2**53 + 1, -(2**62) - 1, 2**63 - 1, -2**63], np.int64)},
         attrs={"to": 1}),
    case("cast_uint64_big_to_f32", "Cast", {"X": np.array([2**64 - 1, 2**63 + 1, 2**24 + 1], np.uint64)}, attrs={"to": 1}),
    case("cast_int64_to_int32_wrap", "Cast", {"X": np.array([2**40 + 5, -1, 2**31], np.int64)}, attrs={"to": 6}),
    case("cast_int32_to_uint8_wrap", "Cast", {"X": np.array([300, -1, 255], np.int32)}, attrs={"to": 2}),
    case("cast_f32_to_bool", "Cast", {"X": mixed(20)}, attrs={"to": 9}),
    case("cast_bool_to_f32", "Cast", {"X": rand(10) > 0}, attrs={"to": 1}),
    case("cast_bool_to_int64", "Cast", {"X": rand(10) > 0}, attrs={"to": 7}),
    case("cast_f32_to_f16", "Cast", {"X": np.concatenate([mixed(500, scale=70000), rand(100, low=-1e-5, high=1e-5)])},
         attrs={"to": 10}),
    case("cast_f16_to_f32", "Cast", {"X": mixed(500, scale=60000).astype(np.float16)}, attrs={"to": 1}),
    case("cast_f16_to_int64", "Cast", {"X": rand(50, low=-100, high=100).astype(np.float16)}, attrs={"to": 7}),
    case("cast_f32_to_f32", "Cast", {"X": mixed(20)}, attrs={"to": 1}),
    case("cast_opset9", "Cast", {"X": rand(4, 5)}, attrs={"to": 7}, opset=9),
    case("cast_opset6to7", "Cast", {"X": rand(4, 5)}, attrs={"to": 11}, opset=7),
    case("cast_opset19", "Cast", {"X": rand(4, 5)}, attrs={"to": 6}, opset=19),
    case("cast_opset21", "Cast", {"X": randint(4, 5)}, attrs={"to": 1}, opset=21),
    case("cast_rank0", "Cast", {"X": np.array(3.7, F32)}, attrs={"to": 7}),
    case("cast_empty", "Cast", {"X": np.zeros((0, 2), F32)}, attrs={"to": 7}),
    case("castlike", "CastLike", {"X": rand(3, 4, low=-9, high=9), "T": np.zeros((1,), np.int32)}, opset=15),
    case("castlike_f16", "CastLike", {"X": rand(3, 4), "T": np.zeros((1,), np.float16)}, opset=19),
]

# Pow with integer bases (exact, wrapping) and uint exponents; Mod's float floor remainder (fmod = 0, opset 28).
def _int_pow(X, Y):
    with np.errstate(over="ignore"):
        return [np.power(X, Y)]


CASES += [
    case("pow_int32_int32", "Pow", {"X": randint(30, low=-9, high=9, dtype=np.int32),
                                     "Y": randint(30, low=0, high=9, dtype=np.int32)}, opset=15, rtol=0, atol=0),
    case("pow_int64_wraps", "Pow", {"X": np.array([3, -7, 2, 1, -1, 0], np.int64),
                                     "Y": np.array([45, 31, 64, 1000, 7, 0], np.int64)}, opset=15, rtol=0, atol=0,
         reference=_int_pow, note="numpy wraps like lockstep"),
    case("pow_int_negative_exponent", "Pow", {"X": np.array([1, -1, -1, 2, 0, -3], np.int32),
                                               "Y": np.array([-3, -3, -2, -1, -2, -1], np.int32)}, opset=15,
         reference=lambda X, Y: [np.array([1, -1, 1, 0, 0, 0], np.int32)], note="truncated 1/x^-y; 0^-y = 0"),
    case("pow_int32_float_exponent", "Pow", {"X": randint(12, low=0, high=6, dtype=np.int32),
                                              "Y": rand(12, low=0, high=4)}, opset=15,
         reference=lambda X, Y: [np.trunc(np.power(X.astype(np.float32), Y)).astype(np.int32)], rtol=0, atol=1),
    case("pow_float_uint64_exponent", "Pow", {"X": rand(10, low=-2, high=2), "Y": randint(10, high=5, dtype=np.uint64)},
         opset=15, rtol=2e-5, reference=lambda X, Y: [np.power(X, Y.astype(np.float32))],
         note="onnxruntime has no Pow with a uint64 exponent"),
    case("mod_float_floor", "Mod", {"A": mixed(200, scale=100), "B": mixed(200, scale=10, seed=9)}, opset=28,
         rtol=0, atol=0, reference=lambda A, B: [np.mod(A, B)], note="numpy's floor remainder; ORT lacks opset 28"),
]

# ThresholdedRelu, Swish (opset 24), SwiGLU (28), and the bitwise ops (opset 18) on every integer type.
def _sigmoid(v):
    return 1.0 / (1.0 + np.exp(-v.astype(np.float64)))


CASES += [
    case("thresholded_relu_default", "ThresholdedRelu", {"X": mixed(200)}, opset=10),
    case("thresholded_relu_alpha", "ThresholdedRelu", {"X": mixed(200, seed=21)}, attrs={"alpha": 0.5}, opset=22),
    case("swish_alpha", "Swish", {"X": rand(300, low=-20, high=20, seed=22)}, attrs={"alpha": 0.7}, opset=24,
         reference=lambda X: [(X * _sigmoid(0.7 * X)).astype(np.float32)], rtol=1e-5, atol=1e-6,
         note="onnxruntime 1.30 has no Swish"),
    case("swiglu_default", "SwiGLU", {"A": rand(4, 50, low=-20, high=20, seed=24), "B": rand(4, 50, seed=25)}, opset=28,
         reference=lambda A, B: [(A * _sigmoid(A) * B).astype(np.float32)], rtol=1e-5, atol=1e-6,
         note="onnxruntime 1.30 has no SwiGLU"),
    case("swiglu_alpha", "SwiGLU", {"A": rand(2, 3, 40, low=-20, high=20, seed=26), "B": rand(2, 3, 40, seed=27)},
         attrs={"alpha": 1.702}, opset=28, reference=lambda A, B: [(A * _sigmoid(np.float32(1.702) * A) * B)
                                                                  .astype(np.float32)], rtol=1e-5, atol=1e-6,
         note="onnxruntime 1.30 has no SwiGLU"),
]
for t in (np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64):
    info = np.iinfo(t)
    a = np.random.default_rng(23).integers(info.min, info.max, size=(3, 7), dtype=t, endpoint=True)
    b = np.random.default_rng(24).integers(info.min, info.max, size=(7,), dtype=t, endpoint=True)
    name = np.dtype(t).name
    CASES.append(case(f"bitwise_not_{name}", "BitwiseNot", {"X": a}, opset=18, rtol=0, atol=0,
                      reference=lambda X: [np.bitwise_not(X)]))
    for op, fn in (("BitwiseAnd", np.bitwise_and), ("BitwiseOr", np.bitwise_or), ("BitwiseXor", np.bitwise_xor)):
        CASES.append(case(f"{op.lower()}_{name}", op, {"A": a, "B": b}, opset=18, rtol=0, atol=0,
                          reference=lambda A, B, fn=fn: [fn(A, B)]))

# Celu, Softsign, Shrink, Mish: special values and wide ranges.
CASES += [
    case("celu_default", "Celu", {"X": mixed(200, scale=10)}, opset=12),
    case("celu_alpha", "Celu", {"X": mixed(200, scale=10, seed=25)}, attrs={"alpha": 2.5}, opset=12),
    case("softsign", "Softsign", {"X": mixed(200, scale=100)}, opset=7),
    case("shrink_default", "Shrink", {"X": mixed(200, scale=2)}, opset=9),
    case("shrink_bias", "Shrink", {"X": mixed(200, scale=2, seed=26)}, attrs={"lambd": 1.0, "bias": 0.25}, opset=9),
    case("mish", "Mish", {"X": rand(300, low=-30, high=30, seed=27)}, opset=18, rtol=1e-5, atol=1e-6),
]

# Exp and Log on double (binary64 exp_f64/log_f64, docs/arithmetic.md#binary64-exp-and-log) against numpy's longdouble
# functions rounded to double; rtol 2^-52 is one ulp of the result's binade (tests/test_math_f64.py counts ulps
# exactly over a million inputs). Mod on double: exact, so numpy's fmod (fmod = 1) and floor remainder (opset 28).
F64_SPECIAL = np.array([0.0, -0.0, np.nan, np.inf, -np.inf, 1.0, -1.0, 0.5, 2.0, 1e-300, 5e-324, -5e-324, 1e300,
                        -1e300, 709.0, -708.0, 1 + 2.0**-52, 1 - 2.0**-53, 0.6931471805599453, 2.0**-1022], np.float64)


def _long(f):
    def ref(X):
        with np.errstate(all="ignore"):
            return [f(X.astype(np.longdouble)).astype(np.float64)]
    return ref


def _f64_mixed(n, low, high, seed):
    return np.concatenate([F64_SPECIAL, rand(n, low=low, high=high, dtype=np.float64, seed=seed)])


def _f64_mod_operands(seed):
    """Dividends and divisors of every magnitude (huge quotients, denormals), with the special values."""
    rng = np.random.default_rng(seed)
    mag = lambda n: rng.uniform(-1, 1, n) * np.exp2(rng.integers(-1074, 1024, n).astype(np.float64))
    a = np.concatenate([F64_SPECIAL, mag(300), rng.uniform(-100, 100, 100)])
    b = np.concatenate([F64_SPECIAL[::-1], mag(300), rng.uniform(-10, 10, 100)])
    return a, b


CASES += [
    case("exp_f64", "Exp", {"X": _f64_mixed(500, -745.0, 709.7, 60)}, reference=_long(np.exp), rtol=2.0**-52,
         atol=5e-324, note="atol: one ulp of the denormal results"),
    case("exp_f64_small", "Exp", {"X": rand(3, 41, low=-1, high=1, dtype=np.float64, seed=61)},
         reference=_long(np.exp), rtol=2.0**-52, atol=0, opset=13),
    case("log_f64", "Log", {"X": np.abs(_f64_mixed(500, 0.0, 1e6, 62))}, reference=_long(np.log), rtol=2.0**-52,
         atol=0),
    case("log_f64_near_one", "Log", {"X": rand(3, 41, low=0.5, high=2.0, dtype=np.float64, seed=63)},
         reference=_long(np.log), rtol=2.0**-52, atol=0, opset=13),
]
_MOD_A, _MOD_B = _f64_mod_operands(64)
CASES += [
    case("mod_f64_fmod", "Mod", {"A": _MOD_A, "B": _MOD_B}, attrs={"fmod": 1}, rtol=0, atol=0,
         reference=lambda A, B: [np.fmod(A, B)], note="fmod is exact"),
    case("mod_f64_floor", "Mod", {"A": _MOD_A, "B": _MOD_B}, opset=28, rtol=0, atol=0,
         reference=lambda A, B: [np.mod(A, B)], note="numpy's floor remainder; ORT lacks opset 28"),
    case("mod_f64_bcast", "Mod", {"A": rand(3, 4, low=-20, high=20, dtype=np.float64), "B": np.array(-3.25)},
         attrs={"fmod": 1}, const=("B",), rtol=0, atol=0),
]
