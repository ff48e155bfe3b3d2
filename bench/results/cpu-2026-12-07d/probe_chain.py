import sys, time
sys.path.insert(0, '/work/main/bench')
import numpy as np, lockstep
from conv_chain import chain_model
chs = [int(c) for c in sys.argv[1].split(':')]; hw=int(sys.argv[2]); k=int(sys.argv[3]); count=int(sys.argv[4]); secs=float(sys.argv[5])
m = chain_model(chs, hw, k, count)
o = lockstep.SessionOptions(); o.intra_op_num_threads = 1
s = lockstep.InferenceSession(m, o, providers=["CPUExecutionProvider"])
buf = np.empty(chs[0]*hw*hw + 16, np.float32); off = (-buf.ctypes.data % 64) // 4
x = buf[off:off + chs[0]*hw*hw].reshape(1, chs[0], hw, hw); x[...] = np.random.default_rng(0).standard_normal(x.shape)
t0 = time.time(); n = 0
while time.time() - t0 < secs: s.run(None, {"x": x}); n += 1
print(n, (time.time() - t0) / n * 1000 / count, "ms a conv")
