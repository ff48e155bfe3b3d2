"""ViT-B/16 at 1 thread in a process whose first session profiles (enable_profiling): run times in ms. Eighteenth
session: 320-330 ms a run, where the same runs without profiling, or a profiled session made after an unprofiled
one, took 230-245 ms; blocks of 2 MB or more on huge pages (madvise) brought it to 229-249.
  PYTHONPATH=python python3 bench/results/cpu-2026-12-07b/probe_profiled_first_session.py"""
import sys, os, json, tempfile, time, onnx
sys.path.insert(0, "tests"); sys.path.insert(0, "tests/models")
from fixture_format import restore_weights
from test_models import FIXTURES, inputs_for
import lockstep
model = restore_weights(onnx.load(os.path.join(FIXTURES, "vit_b_16_features.onnx")))
data, feeds = model.SerializeToString(), inputs_for("vit_b_16_features")
o = lockstep.SessionOptions(); o.intra_op_num_threads = 1; o.enable_profiling = True
o.profile_file_prefix = tempfile.mkdtemp() + "/p"
s = lockstep.InferenceSession(data, o, providers=["CPUExecutionProvider"])
for _ in range(6):
    t = time.perf_counter(); s.run(None, feeds); print("wall", round((time.perf_counter() - t) * 1e3, 1))
ev = json.load(open(s.end_profiling()))
print([r["dur"] // 1000 for r in ev if r["name"] == "model_run"])
for key in ("mlp.3/MatMul", "mlp.0/MatMul"):
    print(key, [e["dur"] for e in ev if "encoder_layer_3/" + key in e["name"]])
