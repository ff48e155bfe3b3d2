# Two profiled lockstep sessions of ViT-B/16 at 1 thread in one process (bench/nodes_cpu.py's node_times): the mean
# time of the 12 second-MLP MatMuls (K = 3072) in each. Run from the repository root with PYTHONPATH=python.
import sys, os, tempfile, time, numpy as np, onnx, lockstep
sys.path.insert(0, 'bench')
from nodes_cpu import FIXTURES, inputs_for, restore_weights, node_times
model = restore_weights(onnx.load(os.path.join(FIXTURES, "vit_b_16_features.onnx")))
data, feeds = model.SerializeToString(), inputs_for("vit_b_16_features")
with tempfile.TemporaryDirectory() as d:
    for s in range(2):
        print('start', s, time.time(), flush=True)
        t, _ = node_times(lockstep, data, feeds, 1, 8, os.path.join(d, f"ls{s}"))
        ff2 = [v for k, v in t.items() if k.endswith('mlp.3/MatMul')]
        print('end', s, time.time(), 'ff2 mean %.1f ms' % (np.mean(ff2) / 1e3), flush=True)
