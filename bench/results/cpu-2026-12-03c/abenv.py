import os, sys, time, numpy as np
sys.path.insert(0, "bench")
import conv_cpu
from lockstep import bench
var = sys.argv[1]
for name in sys.argv[2].split(","):
    shape = conv_cpu.SHAPES[name]
    s = bench.lockstep_session(conv_cpu.conv_model(*shape), "cpu", 1)
    x = np.random.default_rng(1).standard_normal((1, shape[0], shape[1], shape[1])).astype(np.float32)
    ts = {0: [], 1: []}
    for i in range(124):
        mode = i % 2
        if mode: os.environ[var] = "1"
        else: os.environ.pop(var, None)
        t = time.perf_counter(); s.run(None, {"x": x}); dt = time.perf_counter() - t
        if i >= 4: ts[mode].append(dt * 1e3)
    os.environ.pop(var, None)
    new, old = sorted(ts[0]), sorted(ts[1])
    print(f"{name:<22} new min {new[0]:6.3f} p50 {new[30]:6.3f} | old min {old[0]:6.3f} p50 {old[30]:6.3f} | p50 new/old {new[30]/old[30]:.2f}")
