"""Single-op CPU timings, lockstep against onnxruntime: depthwise Conv, pools, float math (docs/performance.md).

Each op is a one-node ONNX model built with onnx.helper (weights as initializers, seeded random inputs); the two
runtimes are timed interleaved at the same thread count by lockstep.bench.measure, and the medians printed.

    PYTHONPATH=python python3 bench/ops_cpu.py [--threads 1] [--runs 30] [--warmup 3] [--ops dw3x3_s1,...]
"""

import argparse

import numpy as np
import onnx
from onnx import TensorProto, helper

from lockstep import bench


def _depthwise(channels, size, kernel, stride):
    rng = np.random.default_rng(0)
    w = rng.uniform(-1, 1, (channels, 1, kernel, kernel)).astype(np.float32)
    b = rng.uniform(-1, 1, channels).astype(np.float32)
    node = helper.make_node("Conv", ["X", "W", "B"], ["Y"], group=channels, kernel_shape=[kernel, kernel],
                            strides=[stride, stride], pads=[kernel // 2] * 4)
    inits = [helper.make_tensor("W", TensorProto.FLOAT, w.shape, w.ravel()),
             helper.make_tensor("B", TensorProto.FLOAT, b.shape, b.ravel())]
    return node, inits, [1, channels, size, size]


def _pool(op, channels, size, kernel, stride, pad, **attrs):
    node = helper.make_node(op, ["X"], ["Y"], kernel_shape=[kernel, kernel], strides=[stride, stride],
                            pads=[pad] * 4, **attrs)
    return node, [], [1, channels, size, size]


def _unary(op, shape=(1, 256, 56, 56), **attrs):
    return helper.make_node(op, ["X"], ["Y"], **attrs), [], list(shape)


OPS = {
    "dw3x3_s1_96x56": lambda: _depthwise(96, 56, 3, 1),
    "dw3x3_s2_96x112": lambda: _depthwise(96, 112, 3, 2),
    "dw3x3_s1_240x28": lambda: _depthwise(240, 28, 3, 1),
    "dw5x5_s1_240x28": lambda: _depthwise(240, 28, 5, 1),
    "dw5x5_s2_240x28": lambda: _depthwise(240, 28, 5, 2),
    "dw3x3_s1_672x14": lambda: _depthwise(672, 14, 3, 1),
    "maxpool3x3_s2_64x112": lambda: _pool("MaxPool", 64, 112, 3, 2, 1),
    "avgpool3x3_s1_64x56": lambda: _pool("AveragePool", 64, 56, 3, 1, 1),
    "avgpool3x3_s1_cip_64x56": lambda: _pool("AveragePool", 64, 56, 3, 1, 1, count_include_pad=1),
    "avgpool2x2_s2_64x56": lambda: _pool("AveragePool", 64, 56, 2, 2, 0),
    "exp_256x56x56": lambda: _unary("Exp"),
    "log_256x56x56": lambda: _unary("Log"),
    "tanh_256x56x56": lambda: _unary("Tanh"),
    "erf_256x56x56": lambda: _unary("Erf"),
    "sigmoid_256x56x56": lambda: _unary("Sigmoid"),
    "softplus_256x56x56": lambda: _unary("Softplus"),
    "elu_256x56x56": lambda: _unary("Elu"),
    "gelu_256x56x56": lambda: _unary("Gelu"),
    "gelu_tanh_256x56x56": lambda: _unary("Gelu", approximate="tanh"),
    "hardswish_16x112x112": lambda: _unary("HardSwish", (1, 16, 112, 112)),
    "hardswish_240x28x28": lambda: _unary("HardSwish", (1, 240, 28, 28)),
    "relu_64x56x56": lambda: _unary("Relu", (1, 64, 56, 56)),
    "softmax_12x128x128": lambda: _unary("Softmax", (1, 12, 128, 128), axis=-1),
    "softmax_12x197x197": lambda: _unary("Softmax", (1, 12, 197, 197), axis=-1),
    "gap_1152x7x7": lambda: _unary("GlobalAveragePool", (1, 1152, 7, 7)),
    "gap_672x14x14": lambda: _unary("GlobalAveragePool", (1, 672, 14, 14)),
    "gap_144x56x56": lambda: _unary("GlobalAveragePool", (1, 144, 56, 56)),
    "logsoftmax_12x128x128": lambda: _unary("LogSoftmax", (1, 12, 128, 128), axis=-1),
}


def model_bytes(node, inits, x_shape):
    x = helper.make_tensor_value_info("X", TensorProto.FLOAT, x_shape)
    y = helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)
    graph = helper.make_graph([node], node.op_type.lower(), [x], [y], initializer=inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)], ir_version=9).SerializeToString()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--ops", default=",".join(OPS),
                        help="comma-separated names, or prefixes (dw, maxpool, exp, ...), from: " + ", ".join(OPS))
    args = parser.parse_args()
    print(f"{'op':26} {'lockstep ms':>12} {'onnxruntime ms':>15} {'ratio':>7}")
    wanted = args.ops.split(",")
    for name in [n for n in OPS if any(n == w or n.startswith(w) for w in wanted)]:
        node, inits, x_shape = OPS[name]()
        x = np.random.default_rng(1).uniform(-4, 4, x_shape).astype(np.float32)
        if node.op_type == "Log":
            x = np.abs(x)
        r = bench.measure(model_bytes(node, inits, x_shape), lambda _session: {"X": x}, threads=args.threads,
                          runs=args.runs, warmup=args.warmup, against_onnxruntime=True)
        ours, theirs = r["lockstep"]["p50_ms"], r["onnxruntime"]["p50_ms"]
        print(f"{name:26} {ours:12.3f} {theirs:15.3f} {ours / theirs:7.2f}", flush=True)


if __name__ == "__main__":
    main()
