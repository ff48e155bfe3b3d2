"""The paired ratio of a model fixture measured two ways in one process: the runtimes alternating run by run (as
bench/cpu_models.py does), and in blocks of N runs each:
  PYTHONPATH=python python3 bench/results/cpu-2026-12-07c/probe_interleaved_or_blocks.py MODEL THREADS [N]
"""
import sys, os, time
import numpy as np, onnx
sys.path.insert(0, "tests"); sys.path.insert(0, "tests/models")
import lockstep, onnxruntime
from fixture_format import restore_weights
from test_models import FIXTURES, inputs_for
name = sys.argv[1]; threads = int(sys.argv[2]); n = int(sys.argv[3]) if len(sys.argv) > 3 else 30
model = restore_weights(onnx.load(os.path.join(FIXTURES, name + ".onnx")))
data, feeds = model.SerializeToString(), inputs_for(name)
ss = []
for rt in (lockstep, onnxruntime):
    o = rt.SessionOptions(); o.intra_op_num_threads = threads
    o.add_session_config_entry("session.force_spinning_stop", "1")
    ss.append(rt.InferenceSession(data, o, providers=["CPUExecutionProvider"]))
def t(s):
    t0 = time.perf_counter(); s.run(None, feeds); return time.perf_counter() - t0
for s in ss: [t(s) for _ in range(3)]
for rep in range(2):
    a = [[], []]
    for _ in range(n):
        for i in (0, 1): a[i].append(t(ss[i]))
    b = [[t(ss[i]) for _ in range(n)] for i in (0, 1)]
    ma, mb = [np.median(x) * 1e3 for x in a], [np.median(x) * 1e3 for x in b]
    print(f"{name} {threads}T interleaved: ls {ma[0]:.2f} ort {ma[1]:.2f} ratio {ma[0]/ma[1]:.2f} | blocks: ls {mb[0]:.2f} ort {mb[1]:.2f} ratio {mb[0]/mb[1]:.2f}")
