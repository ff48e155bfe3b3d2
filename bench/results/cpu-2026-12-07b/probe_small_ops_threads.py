"""Small memory-bound ops (an SE block's Mul, residual Adds, global pools) at 1 and 2 threads, lockstep alone,
median us of 400 runs (a run's own cost included).  PYTHONPATH=python python3 bench/results/cpu-2026-12-07b/probe_small_ops_threads.py"""
import sys, time, numpy as np
from onnx import helper, TensorProto
import lockstep
def model(op, shape, shape_b=None):
    ins = [helper.make_tensor_value_info("X", TensorProto.FLOAT, shape)]
    if shape_b: ins.append(helper.make_tensor_value_info("B", TensorProto.FLOAT, shape_b))
    n = helper.make_node(op, ["X", "B"] if shape_b else ["X"], ["Y"])
    g = helper.make_graph([n], "g", ins, [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], ir_version=8).SerializeToString()
cases = [("Mul", [1, 72, 28, 28], [1, 72, 1, 1]), ("Mul", [1, 120, 28, 28], [1, 120, 1, 1]), ("Mul", [1, 672, 14, 14], [1, 672, 1, 1]),
         ("Add", [1, 40, 28, 28], [1, 40, 28, 28]), ("Add", [1, 112, 14, 14], [1, 112, 14, 14]),
         ("GlobalAveragePool", [1, 960, 7, 7], None), ("GlobalAveragePool", [1, 240, 28, 28], None), ("GlobalAveragePool", [1, 672, 14, 14], None)]
rng = np.random.default_rng(0)
for op, sa, sb in cases:
    m = model(op, sa, sb); feeds = {"X": rng.standard_normal(sa).astype(np.float32)}
    if sb: feeds["B"] = rng.standard_normal(sb).astype(np.float32)
    out = []
    for t in (1, 2):
        o = lockstep.SessionOptions(); o.intra_op_num_threads = t
        s = lockstep.InferenceSession(m, o)
        for _ in range(50): s.run(None, feeds)
        ts = []
        for _ in range(400):
            t0 = time.perf_counter(); s.run(None, feeds); ts.append(time.perf_counter() - t0)
        out.append(np.median(ts) * 1e6)
    print(f"{op} {sa} 1T {out[0]:.1f} us 2T {out[1]:.1f} us")
