"""Probe (seventeenth session): N Conv -> HardSwish pairs side by side on one input, lockstep unfused (level 0) and
fused (99), ms per pair.  python3 probe_hs.py C_IN C_OUT HW KERNEL N [dw]"""
import sys, time, numpy as np
from onnx import TensorProto, helper, numpy_helper
import lockstep
ci, co, hw, k, n = [int(v) for v in sys.argv[1:6]]
rng = np.random.default_rng(0)
nodes, inits, outs = [], [], []
grp = ci if (len(sys.argv) > 6 and sys.argv[6] == "dw") else 1
for i in range(n):
    w = rng.uniform(-0.2, 0.2, (co, ci // grp, k, k)).astype(np.float32); b = rng.uniform(-0.1, 0.1, co).astype(np.float32)
    inits += [numpy_helper.from_array(w, f"w{i}"), numpy_helper.from_array(b, f"b{i}")]
    nodes.append(helper.make_node("Conv", ["x", f"w{i}", f"b{i}"], [f"c{i}"], pads=[k // 2] * 4, group=grp))
    nodes.append(helper.make_node("HardSwish", [f"c{i}"], [f"y{i}"]))
    outs.append(helper.make_tensor_value_info(f"y{i}", TensorProto.FLOAT, None))
g = helper.make_graph(nodes, "hs", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, ci, hw, hw])], outs, inits)
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], ir_version=8).SerializeToString()
x = rng.standard_normal((1, ci, hw, hw)).astype(np.float32)
for level in (lockstep.GraphOptimizationLevel.ORT_DISABLE_ALL, lockstep.GraphOptimizationLevel.ORT_ENABLE_ALL):
    o = lockstep.SessionOptions(); o.intra_op_num_threads = 1; o.graph_optimization_level = level
    s = lockstep.InferenceSession(m, o, providers=["CPUExecutionProvider"])
    for _ in range(5): s.run(None, {"x": x})
    ts = []
    for _ in range(40):
        t0 = time.perf_counter(); s.run(None, {"x": x}); ts.append(time.perf_counter() - t0)
    print(level, f"{np.median(ts)/n*1e3:.4f} ms per conv+hardswish")
