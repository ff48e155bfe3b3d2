"""12 Convs of one shape reading the same 64-byte-aligned input, each with its own weights, lockstep against
onnxruntime interleaved, ms a conv and the paired ratio. onnxruntime reorders the input once and each of the 12
outputs back to NCHW, which a model does not: read the ratios of different shapes against each other.
  PYTHONPATH=python python3 bench/results/cpu-2026-12-07c/probe_pointwise_fan.py C_IN C_OUT HW KERNEL THREADS [ROUNDS]
"""
import sys, time
import numpy as np, lockstep, onnxruntime
from onnx import TensorProto, helper, numpy_helper
cin, cout, hw, k, threads = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
rounds = int(sys.argv[6]) if len(sys.argv) > 6 else 20
rng = np.random.default_rng(0); nodes, inits, outs = [], [], []
for i in range(12):
    inits += [numpy_helper.from_array(rng.uniform(-.05, .05, (cout, cin, k, k)).astype(np.float32), f"w{i}"),
              numpy_helper.from_array(rng.uniform(-.1, .1, cout).astype(np.float32), f"b{i}")]
    nodes.append(helper.make_node("Conv", ["x", f"w{i}", f"b{i}"], [f"y{i}"], pads=[k // 2] * 4))
    outs.append(helper.make_tensor_value_info(f"y{i}", TensorProto.FLOAT, None))
g = helper.make_graph(nodes, "fan", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, cin, hw, hw])], outs, inits)
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], ir_version=8).SerializeToString()
x0 = rng.standard_normal((1, cin, hw, hw)).astype(np.float32)
raw = np.empty(x0.size + 16, np.float32); off = (-raw.ctypes.data // 4) % 16
x = raw[off:off + x0.size].reshape(x0.shape); x[...] = x0; assert x.ctypes.data % 64 == 0
ss = []
for rt in (lockstep, onnxruntime):
    o = rt.SessionOptions(); o.intra_op_num_threads = threads; o.add_session_config_entry("session.force_spinning_stop", "1")
    ss.append(rt.InferenceSession(m, o, providers=["CPUExecutionProvider"]))
ts = [[], []]
for r in range(rounds + 2):
    for i in (0, 1):
        t0 = time.perf_counter(); ss[i].run(None, {"x": x}); ts[i].append(time.perf_counter() - t0)
a, b = np.array(ts[0][2:]), np.array(ts[1][2:])
print(f"{cin}->{cout} {k}x{k} on {hw}x{hw} {threads}T: lockstep {np.median(a)/12*1e3:.3f} ort {np.median(b)/12*1e3:.3f} ms a conv, paired {np.median(a/b):.2f}")
