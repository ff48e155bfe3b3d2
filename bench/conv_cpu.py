"""Single-Conv latency on the CPU: lockstep vs onnxruntime on the convolution shapes of ResNet-50, MobileNetV3-Large
and EfficientNet-B0 (batch 1),
runs interleaved one by one (the timing is lockstep.bench's, as in `lockstep bench --against onnxruntime`).
  python3 bench/conv_cpu.py [--threads 1,2] [--runs R] [--warmup W] [--shapes stem,3x3_64_56,...]
Prints one row per shape and thread count: p50 in ms of each runtime, the ratio, the paired ratio (the median over
rounds of lockstep's run / onnxruntime's run of the same round: steadier on a busy machine) and lockstep's GFLOP/s."""

import argparse

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from lockstep import bench

# name: (c_in, h_w, c_out, kernel, stride, pad[, group]); ResNet-50's conv shapes at input 224 (and the 3x3 stems of
# EfficientNet-B0 and MobileNetV3-Large), then depthwise
# (group = c_in) and small-K pointwise convs of MobileNetV3-Large and EfficientNet-B0.
SHAPES = {
    "stem_7x7_s2": (3, 224, 64, 7, 2, 3),
    "stem_3x3_s2_32": (3, 224, 32, 3, 2, 1),
    "stem_3x3_s2_16": (3, 224, 16, 3, 2, 1),
    "3x3_64_56": (64, 56, 64, 3, 1, 1),
    "3x3_128_28": (128, 28, 128, 3, 1, 1),
    "3x3_256_14": (256, 14, 256, 3, 1, 1),
    "3x3_512_7": (512, 7, 512, 3, 1, 1),
    "3x3_128_56_s2": (128, 56, 128, 3, 2, 1),
    "3x3_256_28_s2": (256, 28, 256, 3, 2, 1),
    "3x3_512_14_s2": (512, 14, 512, 3, 2, 1),
    "1x1_512_128_28": (512, 28, 128, 1, 1, 0),
    "1x1_256_64_56": (256, 56, 64, 1, 1, 0),
    "1x1_64_256_56": (64, 56, 256, 1, 1, 0),
    "1x1_1024_256_14": (1024, 14, 256, 1, 1, 0),
    "1x1_256_512_56_s2": (256, 56, 512, 1, 2, 0),
    "1x1_1024_2048_14_s2": (1024, 14, 2048, 1, 2, 0),
    "dw3x3_32_112": (32, 112, 32, 3, 1, 1, 32),
    "dw3x3_s2_96_112": (96, 112, 96, 3, 2, 1, 96),
    "dw5x5_s2_144_56": (144, 56, 144, 5, 2, 2, 144),
    "dw3x3_72_56": (72, 56, 72, 3, 1, 1, 72),
    "dw5x5_120_28": (120, 28, 120, 5, 1, 2, 120),
    "dw3x3_240_28": (240, 28, 240, 3, 1, 1, 240),
    "dw5x5_480_14": (480, 14, 480, 5, 1, 2, 480),
    "dw5x5_s2_672_14": (672, 14, 672, 5, 2, 2, 672),
    "dw3x3_s2_240_28": (240, 28, 240, 3, 2, 1, 240),
    "dw5x5_960_7": (960, 7, 960, 5, 1, 2, 960),
    "dw3x3_1152_7": (1152, 7, 1152, 3, 1, 1, 1152),
    "1x1_16_96_112": (16, 112, 96, 1, 1, 0),
    "1x1_16_16_112": (16, 112, 16, 1, 1, 0),
    "1x1_16_64_112": (16, 112, 64, 1, 1, 0),
    "1x1_64_24_56": (64, 56, 24, 1, 1, 0),
    "1x1_72_24_56": (72, 56, 24, 1, 1, 0),
    "1x1_96_24_56": (96, 56, 24, 1, 1, 0),
    "1x1_144_24_56": (144, 56, 24, 1, 1, 0),
    "1x1_120_40_28": (120, 28, 40, 1, 1, 0),
    "1x1_240_40_28": (240, 28, 40, 1, 1, 0),
    "1x1_240_80_14": (240, 14, 80, 1, 1, 0),
    "1x1_480_80_14": (480, 14, 80, 1, 1, 0),
    "1x1_24_72_56": (24, 56, 72, 1, 1, 0),
    "1x1_40_240_28": (40, 28, 240, 1, 1, 0),
    "1x1_80_480_14": (80, 14, 480, 1, 1, 0),
    "1x1_672_112_14": (672, 14, 112, 1, 1, 0),
    "1x1_192_1152_7": (192, 7, 1152, 1, 1, 0),
    "1x1_1152_192_7": (1152, 7, 192, 1, 1, 0),
    "patch16_768_224": (3, 224, 768, 16, 16, 0),
}


def conv_model(c_in, hw, c_out, kernel, stride, pad, group=1):
    rng = np.random.default_rng(0)
    w = rng.uniform(-0.1, 0.1, (c_out, c_in // group, kernel, kernel)).astype(np.float32)
    b = rng.uniform(-0.1, 0.1, c_out).astype(np.float32)
    node = helper.make_node("Conv", ["x", "w", "b"], ["y"], strides=[stride, stride], pads=[pad] * 4, group=group)
    graph = helper.make_graph([node], "conv", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, c_in, hw, hw])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                              [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8).SerializeToString()


def gflop(c_in, hw, c_out, kernel, stride, pad, group=1):
    out = (hw + 2 * pad - kernel) // stride + 1
    return 2.0 * c_out * out * out * c_in // group * kernel * kernel / 1e9


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", default="1")
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--shapes", default=",".join(SHAPES),
                        help="comma-separated names, or prefixes (stem, 3x3, 1x1, dw, ...), from: " + ", ".join(SHAPES))
    args = parser.parse_args()
    print(f"{'shape':<22}{'threads':>8}{'lockstep':>10}{'ort':>9}{'ratio':>7}{'paired':>7}{'GFLOP/s':>9}")
    names = [n for p in args.shapes.split(",") for n in SHAPES if n == p or (p not in SHAPES and n.startswith(p))]
    for name in names:
        shape = SHAPES[name]
        model = conv_model(*shape)
        x = np.random.default_rng(1).standard_normal((1, shape[0], shape[1], shape[1])).astype(np.float32)
        for threads in (int(t) for t in args.threads.split(",")):
            r = bench.measure(model, lambda _: {"x": x}, threads=threads, runs=args.runs, warmup=args.warmup,
                              against_onnxruntime=True)
            ours, theirs = r["lockstep"]["p50_ms"], r["onnxruntime"]["p50_ms"]
            print(f"{name:<22}{threads:>8}{ours:>10.2f}{theirs:>9.2f}{ours / theirs:>7.2f}"
                  f"{r['lockstep']['paired_ratio']:>7.2f}{gflop(*shape) / ours * 1e3:>9.1f}", flush=True)


if __name__ == "__main__":
    main()
