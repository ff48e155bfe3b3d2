import sys, time
import numpy as np, lockstep
from onnx import TensorProto, helper, numpy_helper
cin, hw, cout, k, stride, threads, secs = [int(a) for a in sys.argv[1:8]]
rng = np.random.default_rng(0)
w = rng.uniform(-0.1, 0.1, (cout, cin, k, k)).astype(np.float32); b = rng.uniform(-0.1, 0.1, cout).astype(np.float32)
nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[k // 2] * 4, strides=[stride]*2), helper.make_node("Relu", ["c"], ["y"])]
g = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, cin, hw, hw])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b")])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], ir_version=8).SerializeToString()
o = lockstep.SessionOptions(); o.intra_op_num_threads = threads
s = lockstep.InferenceSession(m, o, providers=["CPUExecutionProvider"])
buf = np.empty(cin*hw*hw + 16, np.float32); off = (-buf.ctypes.data % 64) // 4
x = buf[off:off + cin*hw*hw].reshape(1, cin, hw, hw); x[...] = rng.standard_normal((1, cin, hw, hw))
t0 = time.time(); n = 0
while time.time() - t0 < secs: s.run(None, {"x": x}); n += 1
print(n, (time.time() - t0) / n * 1000, "ms")
