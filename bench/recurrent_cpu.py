"""Single recurrent nodes on the CPU: lockstep vs onnxruntime, microseconds per time step (the node's run time over
its sequence length), runs interleaved one by one, medians.
  python3 bench/recurrent_cpu.py [--threads 1] [--runs 40]
Shapes: the lstm_tagger fixture's layer (hidden 48), a wide LSTM (hidden 256), a batched LSTM (batch 16) and a GRU."""

import argparse
import time

import numpy as np
import onnxruntime
from onnx import TensorProto, helper, numpy_helper

import lockstep

GATES = {"LSTM": 4, "GRU": 3, "RNN": 1}
# (op, seq, batch, input, hidden)
SHAPES = [("LSTM", 200, 1, 32, 48), ("LSTM", 100, 1, 256, 256), ("LSTM", 50, 16, 128, 128), ("GRU", 200, 1, 32, 48)]


def model(op, seq, batch, inputs, hidden):
    rows = GATES[op] * hidden
    rng = np.random.default_rng(0)
    weights = [numpy_helper.from_array((rng.standard_normal(shape) * 0.1).astype(np.float32), name)
               for name, shape in [("W", (1, rows, inputs)), ("R", (1, rows, hidden)), ("B", (1, 2 * rows))]]
    node = helper.make_node(op, ["X", "W", "R", "B"], ["Y"], hidden_size=hidden)
    graph = helper.make_graph([node], op.lower(),
                              [helper.make_tensor_value_info("X", TensorProto.FLOAT, [seq, batch, inputs])],
                              [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)], weights)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)], ir_version=8).SerializeToString()


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--runs", type=int, default=40)
    args = parser.parse_args()
    print(f"{'node':<32}{'lockstep us/step':>18}{'onnxruntime':>13}{'ratio':>8}")
    for op, seq, batch, inputs, hidden in SHAPES:
        data = model(op, seq, batch, inputs, hidden)
        feeds = {"X": np.random.default_rng(1).standard_normal((seq, batch, inputs)).astype(np.float32)}
        options = lockstep.SessionOptions()
        options.intra_op_num_threads = args.threads
        ours = lockstep.InferenceSession(data, options)
        theirs_options = onnxruntime.SessionOptions()
        theirs_options.intra_op_num_threads = args.threads
        theirs = onnxruntime.InferenceSession(data, theirs_options, providers=["CPUExecutionProvider"])
        times = [[], []]
        for _ in range(args.runs):
            for session, spent in zip((ours, theirs), times):
                start = time.perf_counter()
                session.run(None, feeds)
                spent.append(time.perf_counter() - start)
        a, b = (np.median(t) / seq * 1e6 for t in times)
        name = f"{op} seq {seq} batch {batch} in {inputs} h {hidden}"
        print(f"{name:<32}{a:>18.2f}{b:>13.2f}{a / b:>8.2f}")


if __name__ == "__main__":
    main()
