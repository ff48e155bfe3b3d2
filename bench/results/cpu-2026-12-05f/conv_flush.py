# Probe (sixth session, 2026-12-05): single Conv sessions timed with the caches flushed between runs (a pass
# over FLUSH MB), as a model reads each layer's weights from memory; variants are environment settings read by a
# temporary build, none of which remain in the code. Usage: PYTHONPATH=python python3 conv_flush.py THREADS RUNS
# FLUSH_MB "c:hw:cout:k:stride;..." ""
import sys, os, time, numpy as np
from onnx import helper, TensorProto, numpy_helper
import lockstep as ort
# usage: convflush.py threads runs flushMB shapes variant...
threads=int(sys.argv[1]); runs=int(sys.argv[2]); flush_mb=int(sys.argv[3]); shapes=[tuple(int(v) for v in s.split(":")) for s in sys.argv[4].split(";")]
variants=[dict(kv.split("=") for kv in v.split(",") if kv) for v in sys.argv[5:]]
allkeys=set(k for v in variants for k in v)
rng=np.random.default_rng(0)
big=np.ones(flush_mb*1024*1024//4, np.float32)
def sess(c,hw,co,k,st):
    W=numpy_helper.from_array(rng.standard_normal((co,c,k,k)).astype(np.float32),"W")
    B=numpy_helper.from_array(rng.standard_normal((co,)).astype(np.float32),"B")
    node=helper.make_node("Conv",["x","W","B"],["y"],pads=[k//2]*4,strides=[st,st])
    g=helper.make_graph([node],"g",[helper.make_tensor_value_info("x",TensorProto.FLOAT,[1,c,hw,hw])],[helper.make_tensor_value_info("y",TensorProto.FLOAT,None)],[W,B])
    m=helper.make_model(g,opset_imports=[helper.make_opsetid("",17)])
    o=ort.SessionOptions(); o.intra_op_num_threads=threads
    return ort.InferenceSession(m.SerializeToString(),o,providers=["CPUExecutionProvider"]), rng.standard_normal((1,c,hw,hw)).astype(np.float32)
ss=[sess(*s) for s in shapes]
ts=[[[] for _ in variants] for _ in shapes]
for r in range(runs):
    for j,(s,x) in enumerate(ss):
        for i,v in enumerate(variants):
            for kk in allkeys: os.environ.pop(kk,None)
            os.environ.update(v)
            if flush_mb: big += 1.0
            t=time.perf_counter(); s.run(None,{"x":x}); ts[j][i].append(time.perf_counter()-t)
print(f"flush {flush_mb} MB; "+"shape".ljust(18)+"".join(f"{v or 'base':>14s}" for v in sys.argv[5:]))
for sh,row in zip(shapes,ts):
    print(":".join(map(str,sh)).ljust(18)+"".join(f"{1000*np.median(t):14.3f}" for t in row))
