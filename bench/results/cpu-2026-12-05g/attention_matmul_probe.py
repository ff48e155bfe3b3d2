# Probe (seventh session): batched attention MatMuls of BERT-base and ViT-B/16 shapes, lockstep against onnxruntime
# on the same feeds, runs interleaved one by one. Usage: PYTHONPATH=python python3 attention_matmul_probe.py THREADS
import numpy as np, onnx, time, sys
from onnx import helper, TensorProto
import lockstep, onnxruntime
def model(sa, sb):
    g = helper.make_graph([helper.make_node('MatMul', ['a','b'], ['y'])], 'g',
        [helper.make_tensor_value_info('a', TensorProto.FLOAT, sa), helper.make_tensor_value_info('b', TensorProto.FLOAT, sb)],
        [helper.make_tensor_value_info('y', TensorProto.FLOAT, None)])
    return helper.make_model(g, opset_imports=[helper.make_opsetid('', 17)], ir_version=8).SerializeToString()
threads = int(sys.argv[1]) if len(sys.argv) > 1 else 1
for sa, sb in [([1,12,128,64],[1,12,64,128]), ([1,12,128,128],[1,12,128,64]), ([1,12,197,64],[1,12,64,197]), ([1,12,197,197],[1,12,197,64])]:
    m = model(sa, sb); rng = np.random.default_rng(0)
    feeds = {'a': rng.standard_normal(sa, dtype=np.float32), 'b': rng.standard_normal(sb, dtype=np.float32)}
    so = lockstep.SessionOptions(); so.intra_op_num_threads = threads
    ls = lockstep.InferenceSession(m, so, providers=['CPUExecutionProvider'])
    oo = onnxruntime.SessionOptions(); oo.intra_op_num_threads = threads
    os_ = onnxruntime.InferenceSession(m, oo, providers=['CPUExecutionProvider'])
    tl, to = [], []
    for r in range(200):
        t=time.perf_counter(); ls.run(None, feeds); tl.append(time.perf_counter()-t)
        t=time.perf_counter(); os_.run(None, feeds); to.append(time.perf_counter()-t)
    fl = 2*np.prod(sa)*sb[-1]
    a, b = np.median(tl)*1e6, np.median(to)*1e6
    print(f"{sa} x {sb}: lockstep {a:.0f} us ({fl/a/1e3:.0f} GF/s)  ort {b:.0f} us  ratio {a/b:.2f}")
