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


# The ops that have no CUDA kernel at all are the string ops (host-only by design: string tensors live on the
# host). Their outputs feed float work that runs on the GPU (Cast, Mul, Add), so the bits of the host results
# cross to the device and back.
CPU_ONLY_SCRIPT = r"""
import numpy as np
from onnx import TensorProto, helper, numpy_helper
import lockstep
bias = numpy_helper.from_array(np.array([0.5, -1.25, 3.0], np.float32), "bias")
suffix = numpy_helper.from_array(np.array(["-x"], dtype=object), "suffix")
graph = helper.make_graph(
    [helper.make_node("StringNormalizer", ["s"], ["n"], case_change_action="LOWER", name="norm0"),
     helper.make_node("StringConcat", ["n", "suffix"], ["c"], name="cat0"),
     helper.make_node("StringSplit", ["c"], ["parts", "counts"], delimiter="-", name="split0"),
     helper.make_node("RegexFullMatch", ["n"], ["hit"], pattern="[a-z]+[0-9]", name="re0"),
     helper.make_node("Cast", ["hit"], ["hitf"], to=TensorProto.FLOAT),
     helper.make_node("Cast", ["counts"], ["countf"], to=TensorProto.FLOAT),
     helper.make_node("Mul", ["hitf", "countf"], ["m"]),
     helper.make_node("Add", ["m", "bias"], ["y"])],
    "g", [helper.make_tensor_value_info("s", TensorProto.STRING, [3])],
    [helper.make_tensor_value_info(n, t, None) for n, t in
     [("c", TensorProto.STRING), ("parts", TensorProto.STRING), ("hit", TensorProto.BOOL), ("y", TensorProto.FLOAT)]],
    initializer=[bias, suffix])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)])
model.ir_version = 9
model = model.SerializeToString()
feeds = {"s": np.array(["Ab1-Cd", "EF2", "g-h-I3"], dtype=object)}
cuda = lockstep.InferenceSession(model, providers=["CUDAExecutionProvider"])
cpu = lockstep.InferenceSession(model, providers=["CPUExecutionProvider"])
a, b = cuda.run(None, feeds), cpu.run(None, feeds)
same = lambda x, y: x.dtype == y.dtype and x.shape == y.shape and (
    x.tolist() == y.tolist() if x.dtype == object else x.tobytes() == y.tobytes())
print("fallback:", ",".join(sorted(cuda.fallback_ops())))
print("identical:", all(same(x, y) for x, y in zip(a, b)))
print("hit:", b[2].tolist())
"""


def test_ops_without_a_cuda_kernel_run_on_the_cpu_in_a_cuda_session_with_same_bits():
    run = subprocess.run([sys.executable, "-c", CPU_ONLY_SCRIPT], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert "fallback: RegexFullMatch,StringConcat,StringNormalizer,StringSplit" in run.stdout
    assert "identical: True" in run.stdout
    assert "hit: [False, True, False]" in run.stdout
