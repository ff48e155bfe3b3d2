"""Memory over many runs with varying input shapes (issue 7): does it stay flat?

One session of a small dynamic-shape model, a conv stem followed by an attention block over its positions:
    x float[N, 3, H, W] -> Conv 3x3 (8 ch) -> Relu -> MaxPool 2x2 -> Reshape/Transpose to [N, L, 8], L = H/2 * W/2
    -> scores = softmax(h h^T / sqrt 8) -> context = scores h -> LayerNorm -> ReduceMean over L -> y float[N, 8]
run --runs times (default 10,000), each with a batch N in 1..4 and H, W in 4..--max-side (even, default 32) drawn at random, so that
every intermediate size changes from run to run. Prints the process's RSS (and, with --provider cuda, the device's
used memory from cudaMemGetInfo) after the first run, then every --every runs, and the growth from the first
reading after warm-up (the first --every runs) to the end.
Freed blocks are kept for reuse (src/runtime/caching_allocator.h), a request taking the smallest kept block within
twice its size. On the host the kept bytes are bounded (by default twice the peak in use; session config entry
session.lockstep.max_cached_host_bytes), so RSS levels off early: on the 2-core machine, 10,000 default runs
(900 shapes) end at 65 MiB (145 MiB when every size was kept), --max-side 64 for 2,000 runs at 180 MiB (3,044 MiB).
The CUDA provider's device pool has the same default bound (session.lockstep.max_cached_device_bytes), its blocks
beyond the bound released when a run ends; --max-side 96 (attention scores up to 85 MB) shows it with large sizes.
    python3 bench/stable_memory.py [--provider cpu|cuda] [--runs N] [--every K] [--max-side S] [--threads T]
                                 [--max-cached-bytes B]"""

import argparse
import ctypes
import sys
import time

import numpy as np
from onnx import TensorProto, helper, numpy_helper

import lockstep


def model_bytes():
    rng = np.random.default_rng(0)

    def const(name, shape):
        return numpy_helper.from_array(rng.standard_normal(shape).astype(np.float32) * 0.3, name)

    f = TensorProto.FLOAT
    nodes = [
        helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c"], ["r"]),
        helper.make_node("MaxPool", ["r"], ["p"], kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Reshape", ["p", "flat"], ["pf"]),                # [N, 8, L]
        helper.make_node("Transpose", ["pf"], ["h"], perm=[0, 2, 1]),     # [N, L, 8]
        helper.make_node("Transpose", ["h"], ["ht"], perm=[0, 2, 1]),
        helper.make_node("MatMul", ["h", "ht"], ["s"]),                  # [N, L, L]
        helper.make_node("Mul", ["s", "scale"], ["ss"]),
        helper.make_node("Softmax", ["ss"], ["a"], axis=-1),
        helper.make_node("MatMul", ["a", "h"], ["ctx"]),                 # [N, L, 8]
        helper.make_node("LayerNormalization", ["ctx", "gamma", "beta"], ["n"], axis=-1),
        helper.make_node("ReduceMean", ["n"], ["y"], axes=[1], keepdims=0),  # [N, 8]
    ]
    inits = [const("w", (8, 3, 3, 3)), const("b", (8,)), const("gamma", (8,)), const("beta", (8,)),
             numpy_helper.from_array(np.array([0, 8, -1], np.int64), "flat"),
             numpy_helper.from_array(np.array(8 ** -0.5, np.float32), "scale")]
    graph = helper.make_graph(nodes, "varying", [helper.make_tensor_value_info("x", f, ["N", 3, "H", "W"])],
                              [helper.make_tensor_value_info("y", f, ["N", 8])], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8).SerializeToString()


def rss_mib():
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmRSS:")) / 1024


class DeviceMemory:
    """Used device memory (total - free) from the CUDA runtime's cudaMemGetInfo, loaded through ctypes."""

    def __init__(self):
        for name in ("libcudart.so", "libcudart.so.13", "libcudart.so.12"):
            try:
                self.cudart = ctypes.CDLL(name)
                break
            except OSError:
                continue
        else:
            raise RuntimeError("--provider cuda: the CUDA runtime library (libcudart.so) was not found")

    def used_mib(self):
        free, total = ctypes.c_size_t(), ctypes.c_size_t()
        err = self.cudart.cudaMemGetInfo(ctypes.byref(free), ctypes.byref(total))
        if err != 0:
            raise RuntimeError(f"cudaMemGetInfo failed with CUDA error {err}")
        return (total.value - free.value) / 2**20


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--provider", choices=["cpu", "cuda"], default="cpu")
    parser.add_argument("--runs", type=int, default=10_000)
    parser.add_argument("--every", type=int, default=1000)
    parser.add_argument("--max-side", type=int, default=32, help="largest H and W (even sizes from 4 up)")
    parser.add_argument("--threads", type=int, default=0, help="intra-op threads (0: lockstep's default)")
    parser.add_argument("--max-cached-bytes", type=int, default=-1,
                        help="the session's max_cached_host_bytes and max_cached_device_bytes (-1: the default bound)")
    args = parser.parse_args()

    provider = lockstep.CUDA if args.provider == "cuda" else lockstep.CPU
    if provider not in lockstep.get_available_providers():
        print(f"{provider} is not available in this build/machine", file=sys.stderr)
        return 2
    device = DeviceMemory() if args.provider == "cuda" else None
    options = lockstep.SessionOptions()
    options.intra_op_num_threads = args.threads
    if args.max_cached_bytes >= 0:
        for where in ("host", "device"):
            options.add_session_config_entry(f"session.lockstep.max_cached_{where}_bytes", str(args.max_cached_bytes))
    session = lockstep.InferenceSession(model_bytes(), options, providers=[provider])
    rng = np.random.default_rng(1)
    sizes = set()

    def reading(run):
        line = f"after run {run:>6}: RSS {rss_mib():8.1f} MiB"
        return line + (f", device used {device.used_mib():8.1f} MiB" if device else "")

    start = time.perf_counter()
    warm = None
    for run in range(1, args.runs + 1):
        n, h, w = int(rng.integers(1, 5)), 2 * int(rng.integers(2, args.max_side // 2 + 1)), 2 * int(rng.integers(2, args.max_side // 2 + 1))
        sizes.add((n, h, w))
        (y,) = session.run(None, {"x": rng.standard_normal((n, 3, h, w)).astype(np.float32)})
        if y.shape != (n, 8) or not np.all(np.isfinite(y)):
            print(f"run {run}: output {y.shape} for input [{n},3,{h},{w}] is wrong", file=sys.stderr)
            return 1
        if run == 1 or run % args.every == 0 or run == args.runs:
            print(reading(run), flush=True)
            if run == min(args.every, args.runs):
                warm = (rss_mib(), device.used_mib() if device else None)
    end = (rss_mib(), device.used_mib() if device else None)
    print(f"{args.runs} runs on {provider}, {len(sizes)} distinct input shapes, {time.perf_counter() - start:.0f} s")
    print(f"RSS growth from run {min(args.every, args.runs)} to the end: {end[0] - warm[0]:+.1f} MiB"
          + (f"; device memory growth {end[1] - warm[1]:+.1f} MiB" if device else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
