"""Per-node CPU time, lockstep against onnxruntime, from both runtimes' own profilers (enable_profiling), on a model
fixture of tests/test_models.py: per op type (with lockstep's conv kinds: 1x1, 3x3, depthwise, stride 2), then the
slowest nodes with onnxruntime's time for the same node and the ratio.
  python3 bench/nodes_cpu.py MODEL [--threads 1] [--runs 10] [--top 40]
onnxruntime renames what it fuses: a Conv fused with its activation carries the activation's name (matched back to
the Conv here), its NCHWc convs carry the output's name (matched), and what it fuses differently (QuickGelu,
BiasGelu, MatMulScaleFusion, Reorder*) is listed as unmatched. Medians over the timed runs, one session at a time
(not interleaved: compare op types and nodes, not the totals of two separate moments)."""

import argparse
import collections
import json
import os
import sys
import tempfile

import numpy as np
import onnx
import onnxruntime

import lockstep

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests"))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "models"))
from fixture_format import restore_weights  # noqa: E402
from test_models import FIXTURES, inputs_for  # noqa: E402


def node_times(runtime, model_bytes, feeds, threads, runs, prefix):
    """{node name: median microseconds} of the timed runs, and {node name: op type} (lockstep's own names)."""
    options = runtime.SessionOptions()
    options.intra_op_num_threads = threads
    options.enable_profiling = True
    options.profile_file_prefix = prefix
    session = runtime.InferenceSession(model_bytes, options, providers=["CPUExecutionProvider"])
    for _ in range(runs + 2):
        session.run(None, feeds)
    with open(session.end_profiling()) as f:
        events = json.load(f)
    durations, op_types = collections.defaultdict(list), {}
    for e in events:
        if e.get("cat") == "Node" and e["name"].endswith("_kernel_time"):
            name = e["name"][: -len("_kernel_time")]
            for suffix in ("_output_0_nchwc", "/QuickGeluFusion/", "_output_0"):
                name = name.replace(suffix, "")
            durations[name].append(e["dur"])
            op_types[name] = e.get("args", {}).get("op_name", "")
    return {k: float(np.median(v[2:] or v)) for k, v in durations.items()}, op_types


def conv_kinds(model):
    """{Conv node name: 'dw3x3s2', 'conv1x1', ...}."""
    kinds = {}
    for n in model.graph.node:
        if n.op_type != "Conv":
            continue
        a = {x.name: onnx.helper.get_attribute_value(x) for x in n.attribute}
        k, s = a.get("kernel_shape", [0, 0]), a.get("strides", [1, 1])
        kinds[n.name] = ("dw" if a.get("group", 1) > 1 else "conv") + f"{k[0]}x{k[-1]}" + ("s2" if s[0] == 2 else "")
    return kinds


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("model")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--top", type=int, default=40)
    args = parser.parse_args()
    model = restore_weights(onnx.load(os.path.join(FIXTURES, args.model + ".onnx")))
    data, feeds = model.SerializeToString(), inputs_for(args.model)
    with tempfile.TemporaryDirectory() as folder:
        ours, op_types = node_times(lockstep, data, feeds, args.threads, args.runs, os.path.join(folder, "lockstep"))
        theirs, _ = node_times(onnxruntime, data, feeds, args.threads, args.runs, os.path.join(folder, "ort"))
    producer = {o: n for n in model.graph.node for o in n.output}
    for n in model.graph.node:  # a Conv fused with its activation: onnxruntime names it after the activation
        source = producer.get(n.input[0]) if n.input else None
        if n.name in theirs and source is not None and source.op_type == "Conv" and source.name not in theirs:
            theirs[source.name] = theirs.pop(n.name)
    kinds = conv_kinds(model)
    print(f"{args.model}, {args.threads} thread(s): lockstep {sum(ours.values()) / 1e3:.2f} ms in {len(ours)} nodes, "
          f"onnxruntime {sum(theirs.values()) / 1e3:.2f} ms in {len(theirs)} nodes")
    by_type = collections.defaultdict(lambda: [0.0, 0.0])
    for name, t in ours.items():
        kind = op_types.get(name, "") + (":" + kinds[name] if name in kinds else "")
        by_type[kind][0] += t
        by_type[kind][1] += theirs.get(name, 0.0)
    print(f"{'op type':<28}{'lockstep ms':>12}{'onnxruntime ms (same nodes)':>29}")
    for kind, (t, tb) in sorted(by_type.items(), key=lambda x: -x[1][0]):
        print(f"{kind:<28}{t / 1e3:>12.2f}{tb / 1e3:>29.2f}")
    print(f"{'node':<48}{'op type':>22}{'lockstep us':>12}{'ort us':>9}{'ratio':>7}")
    for name, t in sorted(ours.items(), key=lambda x: -x[1])[: args.top]:
        kind = op_types.get(name, "") + (":" + kinds[name] if name in kinds else "")
        tb = theirs.get(name)
        shown = name if len(name) <= 47 else "..." + name[-44:]
        print(f"{shown:<48}{kind:>22}{t:>12.0f}" + (f"{tb:>9.0f}{t / tb:>7.2f}" if tb else f"{'---':>9}"))
    unmatched = {k: round(v) for k, v in theirs.items() if k not in ours}
    if unmatched:
        print("onnxruntime nodes with no lockstep node of that name (us):", unmatched)


if __name__ == "__main__":
    main()
