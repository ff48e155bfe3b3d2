"""Side-by-side GPU latency: lockstep CUDA vs torch eager fp32 (TF32 off) on the fixture architectures.
  python3 bench/gpu_models.py [--runs R] [--batch B]
Needs torch/torchvision/transformers and a GPU. lockstep's figure includes the host<->device copies at the
graph's edges (its API takes and returns host arrays); torch's does not."""

import argparse
import os
import sys
import time

import numpy as np
import onnx

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests"))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "models"))
from fixture_format import restore_weights  # noqa: E402
from test_models import FIXTURES, inputs_for  # noqa: E402

TORCH_BUILDERS = {
    "resnet50": lambda tv: tv.models.resnet50(weights=None),
    "mobilenet_v3_large": lambda tv: tv.models.mobilenet_v3_large(weights=None),
    "efficientnet_b0": lambda tv: tv.models.efficientnet_b0(weights=None),
}


def median_ms(fn, runs):
    fn()
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1e3)
    return float(np.median(times))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--batch", type=int, default=1)
    args = parser.parse_args()
    import torch
    import torchvision

    import lockstep

    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    print(f"# {torch.cuda.get_device_name()}, batch {args.batch}, median of {args.runs}, fp32, TF32 off")
    print(f"{'model':<22}{'lockstep CUDA ms':>18}{'torch eager ms':>16}{'ratio':>8}")
    for name, build in TORCH_BUILDERS.items():
        data = restore_weights(onnx.load(os.path.join(FIXTURES, name + ".onnx"))).SerializeToString()
        feeds = inputs_for(name, batch=args.batch)
        session = lockstep.InferenceSession(data, providers=["CUDAExecutionProvider"])
        ours = median_ms(lambda: session.run(None, feeds), args.runs)
        model = build(torchvision).cuda().eval()
        x = torch.from_numpy(feeds["input"]).cuda()

        def torch_run():
            with torch.no_grad():
                model(x)
            torch.cuda.synchronize()

        theirs = median_ms(torch_run, args.runs)
        print(f"{name:<22}{ours:>18.2f}{theirs:>16.2f}{ours / theirs:>8.2f}")


if __name__ == "__main__":
    main()
