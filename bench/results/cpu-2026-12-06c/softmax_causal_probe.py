import numpy as np
from onnx import TensorProto, helper, numpy_helper
from lockstep import bench
def model(replacing):
    nodes=[helper.make_node("Softmax",["X"],["S" if replacing else "Y"],axis=-1)]
    inits=[]
    if replacing:
        nodes+= [helper.make_node("IsNaN",["S"],["B"]), helper.make_node("Where",["B","Z","S"],["Y"])]
        inits=[numpy_helper.from_array(np.array(0.0,np.float32),"Z")]
    g=helper.make_graph(nodes,"g",[helper.make_tensor_value_info("X",TensorProto.FLOAT,[1,12,128,128])],[helper.make_tensor_value_info("Y",TensorProto.FLOAT,None)],inits)
    m=helper.make_model(g,opset_imports=[helper.make_opsetid("",17)]); m.ir_version=8; return m.SerializeToString()
x=np.random.default_rng(0).standard_normal((1,12,128,128)).astype(np.float32)
xm=x.copy(); tri=np.triu(np.ones((128,128),bool),1); xm[:,:,tri]=np.finfo(np.float32).min
for rep in (False,True):
  for name,inp in (("random",x),("causal",xm)):
    r=bench.measure(model(rep), lambda s: {"X":inp}, threads=1, runs=100, warmup=10, against_onnxruntime=True)
    print(f"replacing={rep} {name}: ours {r['lockstep']['p50_ms']:.3f} ort {r['onnxruntime']['p50_ms']:.3f}")
