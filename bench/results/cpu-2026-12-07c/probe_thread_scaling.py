"""Per-node lockstep time at 1 and at 2 threads on a model fixture, from lockstep's profiler (a plain session runs
first, so that no profiled session is the process's first), per op type and for the nodes that lose most:
  PYTHONPATH=python python3 bench/results/cpu-2026-12-07c/probe_thread_scaling.py MODEL [RUNS]
"""
import sys, os
import numpy as np, onnx
sys.path.insert(0, "bench"); sys.path.insert(0, "tests"); sys.path.insert(0, "tests/models")
import lockstep
from nodes_cpu import node_times, conv_kinds
from fixture_format import restore_weights
from test_models import FIXTURES, inputs_for
name = sys.argv[1]; runs = int(sys.argv[2]) if len(sys.argv) > 2 else 20
model = restore_weights(onnx.load(os.path.join(FIXTURES, name + ".onnx")))
data, feeds = model.SerializeToString(), inputs_for(name)
s = lockstep.InferenceSession(data, providers=["CPUExecutionProvider"]); [s.run(None, feeds) for _ in range(3)]
kinds = conv_kinds(model)
res = {}
for t in (1, 2, 1, 2):
    times, types = node_times(lockstep, data, feeds, t, runs, f"/tmp/probe/p{t}")
    for k, v in times.items(): res.setdefault((k, t), []).append(v)
med = {k: float(np.median(v)) for k, v in res.items()}
names = sorted({k for k, _ in med}, key=lambda k: -med[(k, 1)])
tot1 = sum(med[(k, 1)] for k in names); tot2 = sum(med[(k, 2)] for k in names)
print(f"total 1T {tot1/1000:.2f} ms  2T {tot2/1000:.2f} ms  speedup {tot1/tot2:.2f}")
by = {}
for k in names:
    ty = types.get(k, "") + ":" + kinds.get(k, "")
    a = by.setdefault(ty, [0, 0, 0]); a[0] += med[(k, 1)]; a[1] += med[(k, 2)]; a[2] += 1
for ty, (a, b, n) in sorted(by.items(), key=lambda x: -x[1][0]):
    print(f"{ty:32s} n={n:3d} 1T {a:8.0f} us 2T {b:8.0f} us speedup {a/max(b,1):.2f}  lost {b - a/2:7.0f} us")
print("worst nodes by 2T - 1T/2:")
for k in sorted(names, key=lambda k: -(med[(k, 2)] - med[(k, 1)] / 2))[:20]:
    print(f"{k[-55:]:55s} {types.get(k,'')}:{kinds.get(k,'')} 1T {med[(k,1)]:7.0f} 2T {med[(k,2)]:7.0f} speedup {med[(k,1)]/max(med[(k,2)],1):.2f}")
print("all conv nodes:")
for k in names:
    if "Conv" in types.get(k, ""):
        print(f"{k[-50:]:50s} {kinds.get(k,'')} 1T {med[(k,1)]:7.1f} 2T {med[(k,2)]:7.1f} speedup {med[(k,1)]/max(med[(k,2)],1e-3):.2f}")
