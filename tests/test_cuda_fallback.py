"""The CPU fallback inside a CUDA session: an op without a CUDA kernel runs on the CPU kernel, is logged, and the
result keeps the same bits. The first tests take Conv's kernel away with LOCKSTEP_CUDA_DISABLE_OPS (read when the
CUDA provider is created); the last runs the ops that have no CUDA kernel at all."""

import os
import subprocess
import sys

import pytest

import lockstep

pytestmark = pytest.mark.skipif(lockstep.CUDA not in lockstep.get_available_providers(), reason="no GPU on this machine")

SCRIPT = r"""
import numpy as np
from onnx import TensorProto, helper, numpy_helper
import lockstep
rng = np.random.default_rng(5)
w = numpy_helper.from_array(rng.standard_normal((8, 3, 3, 3)).astype(np.float32), "w")
graph = helper.make_graph(
    [helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1], name="conv0"), helper.make_node("Neg", ["c"], ["y"])],
    "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 16, 16])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], initializer=[w])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()
x = rng.standard_normal((2, 3, 16, 16)).astype(np.float32)
cuda = lockstep.InferenceSession(model, providers=["CUDAExecutionProvider"])
cpu = lockstep.InferenceSession(model, providers=["CPUExecutionProvider"])
a, b = cuda.run(None, {"x": x})[0], cpu.run(None, {"x": x})[0]
print("fallback:", ",".join(cuda.fallback_ops()))
print("identical:", a.tobytes() == b.tobytes())
"""


def test_op_without_cuda_kernel_falls_back_with_same_bits():
    env = {**os.environ, "LOCKSTEP_CUDA_DISABLE_OPS": "Conv"}
    run = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert "fallback: Conv" in run.stdout
    assert "identical: True" in run.stdout
    assert "no kernel for Conv" in run.stderr and "conv0" in run.stderr


DISABLED_FALLBACK_SCRIPT = SCRIPT.split("x = rng")[0] + r"""
options = lockstep.SessionOptions()
options.add_session_config_entry("session.disable_cpu_ep_fallback", "1")
try:
    lockstep.InferenceSession(model, options, providers=["CUDAExecutionProvider"])
    print("created")
except lockstep.NotImplemented as e:
    print("refused:", e)
"""


def test_disabled_cpu_fallback_refuses_the_session_naming_the_node():
    env = {**os.environ, "LOCKSTEP_CUDA_DISABLE_OPS": "Conv"}
    run = subprocess.run([sys.executable, "-c", DISABLED_FALLBACK_SCRIPT], env=env, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert "refused:" in run.stdout and "conv0" in run.stdout and "no kernel for Conv" in run.stdout


CPU_ONLY_SCRIPT = r"""
import numpy as np
from onnx import TensorProto, helper, numpy_helper
import lockstep
rng = np.random.default_rng(6)
w = numpy_helper.from_array(rng.integers(-128, 128, (8, 2)).astype(np.int8), "w")
scale = numpy_helper.from_array(rng.standard_normal(4).astype(np.float32), "scale")
bias = numpy_helper.from_array(rng.standard_normal(4).astype(np.float32), "bias")
graph = helper.make_graph(
    [helper.make_node("LRN", ["x"], ["l"], size=3, name="lrn0"),
     helper.make_node("GroupNormalization", ["l", "scale", "bias"], ["g"], num_groups=2, name="gn0"),
     helper.make_node("Neg", ["g"], ["y"]),
     helper.make_node("MatMulInteger", ["q", "w"], ["m"], name="mmi0"),
     helper.make_node("ConvInteger", ["qx", "qw"], ["c"], pads=[1, 1, 1, 1], name="ci0")],
    "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 4, 5, 5]),
          helper.make_tensor_value_info("q", TensorProto.UINT8, [3, 8]),
          helper.make_tensor_value_info("qx", TensorProto.UINT8, [1, 2, 6, 6]),
          helper.make_tensor_value_info("qw", TensorProto.UINT8, [3, 2, 3, 3])],
    [helper.make_tensor_value_info(n, t, None) for n, t in
     [("y", TensorProto.FLOAT), ("m", TensorProto.INT32), ("c", TensorProto.INT32)]], initializer=[w, scale, bias])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)]).SerializeToString()
feeds = {"x": rng.standard_normal((2, 4, 5, 5)).astype(np.float32),
         "q": rng.integers(0, 256, (3, 8)).astype(np.uint8),
         "qx": rng.integers(0, 256, (1, 2, 6, 6)).astype(np.uint8),
         "qw": rng.integers(0, 256, (3, 2, 3, 3)).astype(np.uint8)}
cuda = lockstep.InferenceSession(model, providers=["CUDAExecutionProvider"])
cpu = lockstep.InferenceSession(model, providers=["CPUExecutionProvider"])
a, b = cuda.run(None, feeds), cpu.run(None, feeds)
print("fallback:", ",".join(sorted(cuda.fallback_ops())))
print("identical:", all(x.tobytes() == y.tobytes() for x, y in zip(a, b)))
"""


def test_ops_without_a_cuda_kernel_run_on_the_cpu_in_a_cuda_session_with_same_bits():
    run = subprocess.run([sys.executable, "-c", CPU_ONLY_SCRIPT], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert "fallback: ConvInteger,GroupNormalization,LRN,MatMulInteger" in run.stdout
    assert "identical: True" in run.stdout
