import sys, time, numpy as np, lockstep
from onnx import helper, TensorProto
sa = [int(v) for v in sys.argv[1].split(',')]; sb = [int(v) for v in sys.argv[2].split(',')]; secs = float(sys.argv[3])
g = helper.make_graph([helper.make_node('MatMul', ['a','b'], ['y'])], 'g',
    [helper.make_tensor_value_info('a', TensorProto.FLOAT, sa), helper.make_tensor_value_info('b', TensorProto.FLOAT, sb)],
    [helper.make_tensor_value_info('y', TensorProto.FLOAT, None)])
m = helper.make_model(g, opset_imports=[helper.make_opsetid('', 17)], ir_version=8).SerializeToString()
so = lockstep.SessionOptions(); so.intra_op_num_threads = 1
s = lockstep.InferenceSession(m, so, providers=['CPUExecutionProvider'])
def aligned(shape):
    n = int(np.prod(shape)); buf = np.empty(n + 16, np.float32); off = (-buf.ctypes.data % 64) // 4
    x = buf[off:off+n].reshape(shape); x[...] = np.random.default_rng(0).standard_normal(shape); return x
feeds = {'a': aligned(sa), 'b': aligned(sb)}
t0 = time.time(); n = 0
while time.time() - t0 < secs: s.run(None, feeds); n += 1
print(n, (time.time() - t0) / n * 1e6, "us")
