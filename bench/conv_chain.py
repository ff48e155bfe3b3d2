"""Convolutions with their weights coming from memory, as in a model: a chain of N Conv + Relu nodes of one shape,
each with its own weights (a 3x3 conv on 256 channels has 2.4 MB of them), lockstep vs onnxruntime interleaved (the
timing is lockstep.bench's). A single Conv run again and again keeps its weights in the caches, which flatters
whichever runtime reads them less well; onnxruntime's NCHWc reorders, which a single Conv pays and a model does
not, are paid once per chain here.
  python3 bench/conv_chain.py CHANNELS HW [--kernel 3] [--count 24] [--threads 1,2]
CHANNELS is one count (c -> c) or a cycle such as 1024:256 (1024 -> 256 -> 1024 -> ...). Prints per-conv p50 in ms
of each runtime and the paired ratio (the median over rounds of lockstep's run / onnxruntime's run)."""

import argparse

import numpy as np
from onnx import TensorProto, helper, numpy_helper

from lockstep import bench


def chain_model(channels, hw, kernel, count):
    rng = np.random.default_rng(0)
    nodes, inits, prev = [], [], "x"
    for i in range(count):
        c_in, c_out = channels[i % len(channels)], channels[(i + 1) % len(channels)]
        w = rng.uniform(-0.05, 0.05, (c_out, c_in, kernel, kernel)).astype(np.float32)
        b = rng.uniform(-0.1, 0.1, c_out).astype(np.float32)
        inits += [numpy_helper.from_array(w, f"w{i}"), numpy_helper.from_array(b, f"b{i}")]
        nodes.append(helper.make_node("Conv", [prev, f"w{i}", f"b{i}"], [f"c{i}"], pads=[kernel // 2] * 4))
        nodes.append(helper.make_node("Relu", [f"c{i}"], [f"y{i}"]))
        prev = f"y{i}"
    graph = helper.make_graph(nodes, "chain", [helper.make_tensor_value_info("x", TensorProto.FLOAT,
                                                                           [1, channels[0], hw, hw])],
                              [helper.make_tensor_value_info(prev, TensorProto.FLOAT, None)], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8).SerializeToString()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("channels")
    parser.add_argument("hw", type=int)
    parser.add_argument("--kernel", type=int, default=3)
    parser.add_argument("--count", type=int, default=24)
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    channels = [int(c) for c in args.channels.split(":")]
    model = chain_model(channels, args.hw, args.kernel, args.count)
    x = np.random.default_rng(1).standard_normal((1, channels[0], args.hw, args.hw)).astype(np.float32)
    for threads in (int(t) for t in args.threads.split(",")):
        r = bench.measure(model, lambda _: {"x": x}, threads=threads, runs=args.runs, warmup=3,
                          against_onnxruntime=True)
        ours, theirs = r["lockstep"]["p50_ms"] / args.count, r["onnxruntime"]["p50_ms"] / args.count
        print(f"{args.kernel}x{args.kernel} {args.channels} on {args.hw}x{args.hw}, {args.count} in a row, "
              f"{threads} thread(s): lockstep {ours:.3f} ms, onnxruntime {theirs:.3f} ms a conv, "
              f"paired {r['lockstep']['paired_ratio']:.2f}", flush=True)


if __name__ == "__main__":
    main()
