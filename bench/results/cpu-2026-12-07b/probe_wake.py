"""A depthwise Conv (CHANNELS HW KERNEL STRIDE SPINNING_STOP) at 1 and 2 threads, lockstep alone. With
session.force_spinning_stop = 1 the worker sleeps between runs and the 2-thread run waits for it to wake.
  PYTHONPATH=python python3 bench/results/cpu-2026-12-07b/probe_wake.py 96 56 3 1 1"""
import sys, time, numpy as np
from onnx import helper, TensorProto
import lockstep
C, H, k, s = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
rng = np.random.default_rng(0)
w = rng.uniform(-1, 1, (C, 1, k, k)).astype(np.float32); b = rng.uniform(-1, 1, C).astype(np.float32)
node = helper.make_node("Conv", ["X", "W", "B"], ["Y"], group=C, kernel_shape=[k, k], strides=[s, s], pads=[k // 2] * 4)
g = helper.make_graph([node], "g", [helper.make_tensor_value_info("X", TensorProto.FLOAT, [1, C, H, H])],
    [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)],
    [helper.make_tensor("W", TensorProto.FLOAT, w.shape, w.ravel()), helper.make_tensor("B", TensorProto.FLOAT, b.shape, b.ravel())])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], ir_version=8).SerializeToString()
x = rng.standard_normal((1, C, H, H)).astype(np.float32)
sess = {}
for t in (1, 2):
    o = lockstep.SessionOptions(); o.intra_op_num_threads = t; o.add_session_config_entry("session.force_spinning_stop", sys.argv[5])
    sess[t] = lockstep.InferenceSession(m, o)
for rep in range(3):
    for t in (1, 2):
        ts = []
        for _ in range(200):
            t0 = time.perf_counter(); sess[t].run(None, {"X": x}); ts.append(time.perf_counter() - t0)
        print(t, "threads", round(np.median(ts) * 1e6, 1), "us", end="; ")
    print()
