"""Silu (Sigmoid then Mul) alone, lockstep against onnxruntime, 1 thread: ns per element on 16x32x32, 96x56x56 and
96x112x112. Eighteenth session: 0.52 against 0.30-0.33 ns at both large sizes, so the op is bound by its arithmetic,
not by memory.  PYTHONPATH=python python3 bench/results/cpu-2026-12-07b/probe_silu.py"""
import sys, numpy as np, onnx
from onnx import helper, TensorProto
from lockstep import bench
def model(shape):
    n1 = helper.make_node("Sigmoid", ["X"], ["S"]); n2 = helper.make_node("Mul", ["X", "S"], ["Y"])
    g = helper.make_graph([n1, n2], "g", [helper.make_tensor_value_info("X", TensorProto.FLOAT, shape)],
                          [helper.make_tensor_value_info("Y", TensorProto.FLOAT, shape)])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
import lockstep, onnxruntime, time
for shape in ([1,16,32,32],[1,96,56,56],[1,96,112,112]):
    m = model(shape).SerializeToString()
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    res = {}
    for name, mod in (("ls", lockstep), ("ort", onnxruntime)):
        so = mod.SessionOptions(); so.intra_op_num_threads = 1
        s = mod.InferenceSession(m, so, providers=["CPUExecutionProvider"])
        for _ in range(3): s.run(None, {"X": x})
        ts = []
        for _ in range(50):
            t = time.perf_counter(); s.run(None, {"X": x}); ts.append(time.perf_counter() - t)
        res[name] = np.median(ts) * 1e6
    n = np.prod(shape)
    print(shape, {k: f"{v:.1f}us {v*1e3/n:.3f}ns/el" for k, v in res.items()})
