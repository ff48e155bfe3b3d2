"""Probe (seventeenth session): N depthwise convs of one shape side by side on one input, lockstep (and onnxruntime,
which reorders for each), ms per conv.  python3 probe_dw.py CHANNELS HW KERNEL STRIDE N THREADS [lockstep|both] [RUNS]"""
import sys, time, numpy as np
from onnx import TensorProto, helper, numpy_helper
import lockstep, onnxruntime
c, hw, k, st, n, t = [int(v) for v in sys.argv[1:7]]
which = sys.argv[7] if len(sys.argv) > 7 else "both"
rng = np.random.default_rng(0)
nodes, inits, outs = [], [], []
for i in range(n):
    w = rng.uniform(-0.5, 0.5, (c, 1, k, k)).astype(np.float32); b = rng.uniform(-0.1, 0.1, c).astype(np.float32)
    inits += [numpy_helper.from_array(w, f"w{i}"), numpy_helper.from_array(b, f"b{i}")]
    nodes.append(helper.make_node("Conv", ["x", f"w{i}", f"b{i}"], [f"y{i}"], group=c, pads=[k // 2] * 4, strides=[st, st]))
    outs.append(helper.make_tensor_value_info(f"y{i}", TensorProto.FLOAT, None))
g = helper.make_graph(nodes, "dw", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, c, hw, hw])], outs, inits)
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], ir_version=8).SerializeToString()
x = rng.standard_normal((1, c, hw, hw)).astype(np.float32)
for rt in ([lockstep, onnxruntime] if which == "both" else [lockstep]):
    o = rt.SessionOptions(); o.intra_op_num_threads = t
    s = rt.InferenceSession(m, o, providers=["CPUExecutionProvider"])
    for _ in range(5): s.run(None, {"x": x})
    ts = []
    for _ in range(int(sys.argv[8]) if len(sys.argv) > 8 else 50):
        t0 = time.perf_counter(); s.run(None, {"x": x}); ts.append(time.perf_counter() - t0)
    print(rt.__name__, f"{np.median(ts)/n*1e3:.4f} ms per conv")
