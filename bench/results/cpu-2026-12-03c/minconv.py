import sys, time, numpy as np
sys.path.insert(0, "bench")
import conv_cpu
from lockstep import bench
for name in sys.argv[2].split(","):
    shape = conv_cpu.SHAPES[name]
    s = bench.lockstep_session(conv_cpu.conv_model(*shape), "cpu", int(sys.argv[1]))
    x = np.random.default_rng(1).standard_normal((1, shape[0], shape[1], shape[1])).astype(np.float32)
    for _ in range(3): s.run(None, {"x": x})
    ts = []
    for _ in range(30):
        t = time.perf_counter(); s.run(None, {"x": x}); ts.append(time.perf_counter() - t)
    ts.sort()
    print(f"{name:<22} min {ts[0]*1e3:7.3f}  p25 {ts[7]*1e3:7.3f} ms")
