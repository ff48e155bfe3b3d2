"""One stride-2 stem Conv (3 input channels, COUT outputs, KxK, 224x224 input) followed by ACT (fused), run for SECS
seconds; prints runs and ms a run:
  PYTHONPATH=python python3 bench/results/cpu-2026-12-07c/probe_stem.py COUT K 224 THREADS SECS [Relu|HardSwish]
"""
import sys, time
import numpy as np, lockstep
from onnx import TensorProto, helper, numpy_helper
cout, k, hw, threads, secs = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5])
act = sys.argv[6] if len(sys.argv) > 6 else "Relu"
rng = np.random.default_rng(0)
w = rng.uniform(-0.1, 0.1, (cout, 3, k, k)).astype(np.float32); b = rng.uniform(-0.1, 0.1, cout).astype(np.float32)
nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[k // 2] * 4, strides=[2, 2]), helper.make_node(act, ["c"], ["y"])]
g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, hw, hw])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b")])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], ir_version=8).SerializeToString()
o = lockstep.SessionOptions(); o.intra_op_num_threads = threads
s = lockstep.InferenceSession(m, o, providers=["CPUExecutionProvider"])
x = rng.standard_normal((1, 3, hw, hw)).astype(np.float32)
t0 = time.time(); n = 0
while time.time() - t0 < secs: s.run(None, {"x": x}); n += 1
print(n, (time.time() - t0) / n * 1000, "ms")
