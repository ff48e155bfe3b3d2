"""Attention's batched MatMuls as single nodes, lockstep against onnxruntime at 1 thread: QK^T ([1,12,S,64] x
[1,12,64,S]) and PV ([1,12,S,S] x [1,12,S,64]), medians of REPS runs each.
  PYTHONPATH=<package> python3 attention_matmul_probe.py [S=197] [REPS=200]"""
import sys, time, numpy as np, onnx
from onnx import helper, TensorProto
import lockstep, onnxruntime
H, S, D = 12, int(sys.argv[1]) if len(sys.argv) > 1 else 197, 64
reps = int(sys.argv[2]) if len(sys.argv) > 2 else 200
def model(a_shape, b_shape):
    g = helper.make_graph([helper.make_node("MatMul", ["a", "b"], ["y"])], "g",
        [helper.make_tensor_value_info("a", TensorProto.FLOAT, a_shape), helper.make_tensor_value_info("b", TensorProto.FLOAT, b_shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], ir_version=8).SerializeToString()
rng = np.random.default_rng(0)
for name, a_shape, b_shape in [("QK^T", [1, H, S, D], [1, H, D, S]), ("PV", [1, H, S, S], [1, H, S, D])]:
    feeds = {"a": rng.standard_normal(a_shape).astype(np.float32), "b": rng.standard_normal(b_shape).astype(np.float32)}
    m = model(a_shape, b_shape)
    res = {}
    for rt in (lockstep, onnxruntime):
        o = rt.SessionOptions(); o.intra_op_num_threads = 1
        s = rt.InferenceSession(m, o, providers=["CPUExecutionProvider"])
        for _ in range(10): s.run(None, feeds)
        ts = []
        for _ in range(reps):
            t = time.perf_counter(); s.run(None, feeds); ts.append(time.perf_counter() - t)
        res[rt.__name__] = np.median(ts) * 1e6
    print(name, S, {k: round(v) for k, v in res.items()}, "ratio %.2f" % (res["lockstep"] / res["onnxruntime"]))
