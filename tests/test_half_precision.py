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
