import sys, numpy as np, onnx
from onnx import helper, TensorProto
from lockstep import bench
cases = {"bert_k_0231": ([1, 128, 12, 64], [0, 2, 3, 1]), "bert_q_0213": ([1, 128, 12, 64], [0, 2, 1, 3]),
         "nchw_nhwc_64x56": ([1, 64, 56, 56], [0, 2, 3, 1]), "nhwc_nchw_56x64": ([1, 56, 56, 64], [0, 3, 1, 2]),
         "int64_2d": ([512, 384], [1, 0])}
for name, (shape, perm) in cases.items():
    dt = TensorProto.INT64 if name.startswith("int64") else TensorProto.FLOAT
    n = helper.make_node("Transpose", ["x"], ["y"], perm=perm)
    g = helper.make_graph([n], "t", [helper.make_tensor_value_info("x", dt, shape)], [helper.make_tensor_value_info("y", dt, None)])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], ir_version=8).SerializeToString()
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32 if dt == TensorProto.FLOAT else np.int64)
    r = bench.measure(m, lambda s: {"x": x}, threads=int(sys.argv[1]), runs=200, warmup=20, against_onnxruntime=True)
    print(f"{name:20s} {r['lockstep']['p50_ms']*1e3:8.1f} us  ort {r['onnxruntime']['p50_ms']*1e3:8.1f} us  paired {r['lockstep']['paired_ratio']:.2f}")
