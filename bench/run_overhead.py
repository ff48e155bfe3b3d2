"""The fixed cost of a run: lockstep and onnxruntime on chains of 1, 21 and 41 tiny nodes (Relu, then Tanh, on 16
floats), graph optimizations off, 1 thread, median microseconds of R calls of InferenceSession.run.
  python3 bench/run_overhead.py [--runs R]
The slope between chain lengths is the cost per node; what is left at one node, the cost of run() itself."""

import argparse
import time

import numpy as np
import onnxruntime
from onnx import TensorProto, helper

import lockstep


def chain(length, op):
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16])
    y = helper.make_tensor_value_info(f"t{length}", TensorProto.FLOAT, [1, 16])
    nodes = [helper.make_node(op, [f"t{i}" if i else "x"], [f"t{i + 1}"]) for i in range(length)]
    graph = helper.make_graph(nodes, "chain", [x], [y])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=9).SerializeToString()


def session(runtime, model):
    options = runtime.SessionOptions()
    options.intra_op_num_threads = 1
    options.graph_optimization_level = runtime.GraphOptimizationLevel.ORT_DISABLE_ALL
    return runtime.InferenceSession(model, options, providers=["CPUExecutionProvider"])


def median_us(sess, feeds, runs):
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        sess.run(None, feeds)
        times.append(time.perf_counter() - t)
    return float(np.median(times)) * 1e6


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=2000)
    args = parser.parse_args()
    feeds = {"x": np.ones((1, 16), np.float32)}
    print(f"{'op':<6}{'nodes':>6}{'lockstep us':>13}{'onnxruntime us':>16}")
    for op in ("Relu", "Tanh"):
        for length in (1, 21, 41):
            model = chain(length, op)
            ours, theirs = session(lockstep, model), session(onnxruntime, model)
            print(f"{op:<6}{length:>6}{median_us(ours, feeds, args.runs):>13.1f}{median_us(theirs, feeds, args.runs):>16.1f}")


if __name__ == "__main__":
    main()
