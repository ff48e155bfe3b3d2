"""Side-by-side CPU latency: lockstep vs onnxruntime on the model fixtures, same machine, same thread count.
  python3 bench/cpu_models.py [--threads N] [--runs R] [--models resnet50,...]
Prints one row per model: median ms for each runtime and the ratio."""

import argparse
import os
import platform
import sys
import time

import numpy as np
import onnx

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests"))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "models"))
from fixture_format import restore_weights  # noqa: E402
from test_models import FIXTURES, MODELS, inputs_for  # noqa: E402


def median_ms(session, feeds, runs):
    session.run(None, feeds)
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        session.run(None, feeds)
        times.append((time.perf_counter() - start) * 1e3)
    return float(np.median(times))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--threads", type=int, default=os.cpu_count())
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--models", default=",".join(MODELS))
    args = parser.parse_args()
    import lockstep
    import onnxruntime

    print(f"# CPU, {args.threads} threads, {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
          f"median of {args.runs}; onnxruntime {onnxruntime.__version__}")
    print(f"{'model':<22}{'lockstep ms':>12}{'onnxruntime ms':>16}{'ratio':>8}")
    for name in args.models.split(","):
        data = restore_weights(onnx.load(os.path.join(FIXTURES, name + ".onnx"))).SerializeToString()
        feeds = inputs_for(name)
        ours_options = lockstep.SessionOptions()
        ours_options.intra_op_num_threads = args.threads
        theirs_options = onnxruntime.SessionOptions()
        theirs_options.intra_op_num_threads = args.threads
        ours = median_ms(lockstep.InferenceSession(data, ours_options), feeds, args.runs)
        theirs = median_ms(onnxruntime.InferenceSession(data, theirs_options, providers=["CPUExecutionProvider"]),
                           feeds, args.runs)
        print(f"{name:<22}{ours:>12.1f}{theirs:>16.1f}{ours / theirs:>8.2f}")


if __name__ == "__main__":
    main()
