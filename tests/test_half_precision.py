"""The half-precision rule beyond single nodes (tests/cases/half_precision.py checks it node by node): constant
folding applies it too, and ops that move or select bytes keep float16 and bfloat16 values as they are."""

import ml_dtypes
import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

import lockstep
from bits import same_bits

HALF = {"f16": (np.float16, TensorProto.FLOAT16), "bf16": (ml_dtypes.bfloat16, TensorProto.BFLOAT16)}


def model_of(nodes, inputs, outputs, initializers=(), opset=21):
    graph = helper.make_graph(nodes, "half", inputs, outputs, initializer=list(initializers))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 10
    return model.SerializeToString()


@pytest.mark.parametrize("half", HALF, ids=list(HALF))
def test_folded_constants_follow_the_rule(half):
    dtype, code = HALF[half]
    rng = np.random.default_rng(7)
    a, b = (rng.uniform(-3, 3, 64).astype(dtype) for _ in range(2))
    x = rng.uniform(-3, 3, 64).astype(dtype)
    # Mul of two initializers folds at session creation; Add reads a feed and runs in the executor.
    model = model_of([helper.make_node("Mul", ["a", "b"], ["ab"]), helper.make_node("Add", ["ab", "x"], ["y"])],
                     [helper.make_tensor_value_info("x", code, [64])],
                     [helper.make_tensor_value_info("y", code, [64])],
                     [numpy_helper.from_array(a, "a"), numpy_helper.from_array(b, "b")])
    (y,) = lockstep.InferenceSession(model).run(None, {"x": x})
    ab = (a.astype(np.float32) * b.astype(np.float32)).astype(dtype)
    want = (ab.astype(np.float32) + x.astype(np.float32)).astype(dtype)
    assert y.dtype == dtype and same_bits(y, want)


@pytest.mark.parametrize("half", HALF, ids=list(HALF))
def test_moving_ops_keep_half_values(half):
    dtype, code = HALF[half]
    # Every 16-bit pattern, NaN payloads and subnormals included, through Transpose, Where and Concat.
    x = np.arange(1 << 16, dtype=np.uint16).view(dtype).reshape(256, 256)
    cond = np.random.default_rng(3).integers(0, 2, (256, 256)).astype(bool)
    model = model_of(
        [helper.make_node("Transpose", ["x"], ["t"], perm=[1, 0]),
         helper.make_node("Where", ["c", "t", "x"], ["w"]),
         helper.make_node("Concat", ["w", "x"], ["y"], axis=0)],
        [helper.make_tensor_value_info("x", code, [256, 256]), helper.make_tensor_value_info("c", TensorProto.BOOL,
                                                                                           [256, 256])],
        [helper.make_tensor_value_info("y", code, [512, 256])])
    (y,) = lockstep.InferenceSession(model).run(None, {"x": x, "c": cond})
    want = np.concatenate([np.where(cond, x.T, x), x])
    assert y.dtype == dtype and y.shape == want.shape and y.tobytes() == want.tobytes()  # NaN payloads too


def rounding(name, code):
    """Nodes that round float32 value `name` to the half type `code` and widen it again: `name_r`."""
    return [helper.make_node("Cast", [name], [name + "_h"], to=code),
            helper.make_node("Cast", [name + "_h"], [name + "_r"], to=TensorProto.FLOAT)]


@pytest.mark.parametrize("half", HALF, ids=list(HALF))
def test_values_between_ops_that_compute_stay_float(half):
    dtype, code = HALF[half]
    rng = np.random.default_rng(11)
    x = rng.uniform(-2, 2, (4, 6)).astype(dtype)
    w = rng.uniform(-2, 2, (24,)).astype(dtype)
    shape = np.array([24], np.int64)
    # a and b stay in float32 (read only by Reshape, which moves them, and by ops that compute); c and d are graph
    # outputs, so they are rounded, also for the Add that reads them.
    nodes = [helper.make_node("Exp", ["x"], ["a"]), helper.make_node("Reshape", ["a", "shape"], ["b"]),
             helper.make_node("Mul", ["b", "w"], ["c"]), helper.make_node("Sigmoid", ["a"], ["s"]),
             helper.make_node("Flatten", ["s"], ["sf"], axis=0), helper.make_node("Reshape", ["sf", "shape"], ["d"]),
             helper.make_node("Add", ["c", "d"], ["e"])]
    outputs = [helper.make_tensor_value_info(n, code, None) for n in ("c", "d", "e")]
    model = model_of(nodes, [helper.make_tensor_value_info("x", code, [4, 6])], outputs,
                     [numpy_helper.from_array(w, "w"), numpy_helper.from_array(shape, "shape")])
    got = lockstep.InferenceSession(model).run(None, {"x": x})
    for name, g, r in zip("cde", got, float32_reference(x, w, shape, dtype, code, rounded=("c", "d"))):
        assert g.dtype == dtype and same_bits(g, r), name
    # Rounding a as well would give other bits: the check above sees the difference.
    also_a = float32_reference(x, w, shape, dtype, code, rounded=("a", "c", "d"))
    assert not same_bits(got[0], also_a[0])


def float32_reference(x, w, shape, dtype, code, rounded):
    """The graph above in float32, with Casts that round the `rounded` values to the half type."""
    def value(name):
        return name + "_r" if name in rounded else name

    nodes = [helper.make_node("Exp", ["x"], ["a"]), helper.make_node("Reshape", [value("a"), "shape"], ["b"]),
             helper.make_node("Mul", ["b", "w"], ["c"]), helper.make_node("Sigmoid", [value("a")], ["s"]),
             helper.make_node("Flatten", ["s"], ["sf"], axis=0), helper.make_node("Reshape", ["sf", "shape"], ["d"]),
             helper.make_node("Add", [value("c"), value("d")], ["e"])]
    for name in rounded:
        nodes += rounding(name, code)
    model = model_of(nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 6])],
                     [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in ("c", "d", "e")],
                     [numpy_helper.from_array(w.astype(np.float32), "w"), numpy_helper.from_array(shape, "shape")])
    return [y.astype(dtype) for y in lockstep.InferenceSession(model).run(None, {"x": x.astype(np.float32)})]
