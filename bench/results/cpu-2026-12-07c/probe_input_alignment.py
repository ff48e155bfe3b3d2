"""12 1x1 Convs reading a graph input in place, the input in numpy's own array (16-byte aligned at this size) or
copied to a 2 MB-aligned buffer (the VM gives no transparent huge pages: AnonHugePages stays 0, so only the
alignment differs):
  PYTHONPATH=python python3 bench/results/cpu-2026-12-07c/probe_input_alignment.py C_IN C_OUT HW
"""
import sys, time, mmap
import numpy as np, lockstep
from onnx import TensorProto, helper, numpy_helper
cin, cout, hw = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
rng = np.random.default_rng(0); nodes, inits, outs = [], [], []
for i in range(12):
    inits += [numpy_helper.from_array(rng.uniform(-.05, .05, (cout, cin, 1, 1)).astype(np.float32), f"w{i}")]
    nodes.append(helper.make_node("Conv", ["x", f"w{i}"], [f"y{i}"]))
    outs.append(helper.make_tensor_value_info(f"y{i}", TensorProto.FLOAT, None))
g = helper.make_graph(nodes, "fan", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, cin, hw, hw])], outs, inits)
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], ir_version=8).SerializeToString()
x = rng.standard_normal((1, cin, hw, hw)).astype(np.float32)
size = 4 << 20
buf = mmap.mmap(-1, size * 2)
buf.madvise(mmap.MADV_HUGEPAGE)
base = np.frombuffer(buf, dtype=np.uint8)
off = (-base.ctypes.data) % (2 << 20)
xh = base[off:off + x.nbytes].view(np.float32).reshape(x.shape); xh[...] = x
print("AnonHuge", [l for l in open("/proc/self/smaps_rollup") if "AnonHuge" in l])
o = lockstep.SessionOptions(); o.intra_op_num_threads = 1
s = lockstep.InferenceSession(m, o, providers=["CPUExecutionProvider"])
def t(a):
    t0 = time.perf_counter(); s.run(None, {"x": a}); return time.perf_counter() - t0
for _ in range(3): t(x); t(xh)
a, b = [], []
for _ in range(30): a.append(t(x)); b.append(t(xh))
print(f"{cin}->{cout} on {hw}: numpy array (address % 64 = {x.ctypes.data % 64}) {np.median(a)/12*1e3:.3f} ms, 2 MB-aligned copy {np.median(b)/12*1e3:.3f} ms a conv")
