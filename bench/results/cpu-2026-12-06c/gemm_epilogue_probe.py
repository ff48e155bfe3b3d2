import numpy as np
from onnx import TensorProto, helper
from lockstep import bench
def model(M,K,N, kind):
    rng=np.random.default_rng(0)
    w=rng.uniform(-1,1,(K,N)).astype(np.float32); b=rng.uniform(-1,1,N).astype(np.float32)
    inits=[helper.make_tensor("W",TensorProto.FLOAT,w.shape,w.ravel()), helper.make_tensor("B",TensorProto.FLOAT,b.shape,b.ravel())]
    if kind=="gemm": nodes=[helper.make_node("Gemm",["X","W","B"],["Y"])]; shape=[M,K]
    else: nodes=[helper.make_node("MatMul",["X","W"],["Y0"]), helper.make_node("Add",["Y0","B"],["Y"])]; shape=[M,K]
    g=helper.make_graph(nodes,"g",[helper.make_tensor_value_info("X",TensorProto.FLOAT,shape)],[helper.make_tensor_value_info("Y",TensorProto.FLOAT,None)],inits)
    m=helper.make_model(g,opset_imports=[helper.make_opsetid("",17)]); m.ir_version=8; return m.SerializeToString(), shape
for M,K,N in [(128,768,3072),(128,3072,768),(128,768,2304),(128,768,768)]:
  for kind in ("gemm","matmul"):
    m,shape=model(M,K,N,kind)
    r=bench.measure(m, lambda s: {"X":np.random.default_rng(1).standard_normal(shape).astype(np.float32)}, threads=1, runs=30, warmup=5, against_onnxruntime=True)
    l=r["lockstep"]; o=r["onnxruntime"]
    print(f"{kind} {M}x{K}x{N}: ours {l['p50_ms']:.3f} ort {o['p50_ms']:.3f} paired {l['paired_ratio']:.3f}", flush=True)
