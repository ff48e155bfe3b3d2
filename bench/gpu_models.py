"""Side-by-side GPU latency: lockstep CUDA vs torch eager fp32 (TF32 off) on the fixture architectures.
  python3 bench/gpu_models.py [--runs R] [--batch B] [--models resnet50,bert_base_encoder,...]
Needs torch/torchvision/transformers and a GPU. lockstep is timed twice: through IOBinding with the inputs and
outputs resident on the GPU (the kernels alone, as torch's figure is, which the ratio compares), and through run()
with host arrays in and out (the copies at the graph's edges included)."""

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

def _bert():
    import transformers  # the fixture is BertModel's default configuration (BERT-base), exported at seq 128
    return transformers.BertModel(transformers.BertConfig())


# name: (build the torch model from torchvision, call it on the feeds as torch tensors)
TORCH_BUILDERS = {
    "resnet50": (lambda tv: tv.models.resnet50(weights=None), lambda m, f: m(f["input"])),
    "mobilenet_v3_large": (lambda tv: tv.models.mobilenet_v3_large(weights=None), lambda m, f: m(f["input"])),
    "efficientnet_b0": (lambda tv: tv.models.efficientnet_b0(weights=None), lambda m, f: m(f["input"])),
    "bert_base_encoder": (lambda tv: _bert(),
                          lambda m, f: m(input_ids=f["input_ids"], attention_mask=f["attention_mask"])),
}


def device_binding(lockstep, session, feeds):
    """An IOBinding with every input copied to the GPU once and every output left there."""
    binding = session.io_binding()
    for name, value in feeds.items():
        binding.bind_ortvalue_input(name, lockstep.OrtValue.ortvalue_from_numpy(value, "cuda", 0))
    for output in session.get_outputs():
        binding.bind_output(output.name, "cuda", 0)
    return binding


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
    parser.add_argument("--models", default=",".join(TORCH_BUILDERS),
                        help="comma-separated, from: " + ", ".join(TORCH_BUILDERS))
    args = parser.parse_args()
    import torch
    import torchvision

    import lockstep

    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    print(f"# {torch.cuda.get_device_name()}, batch {args.batch}, median of {args.runs}, fp32, TF32 off")
    print(f"{'model':<22}{'lockstep CUDA ms':>18}{'torch eager ms':>16}{'ratio':>8}{'lockstep run() ms':>19}")
    print(f"{'':<22}{'(IOBinding, GPU)':>18}{'(GPU tensors)':>16}{'':>8}{'(host in/out)':>19}")
    for name in args.models.split(","):
        build, call = TORCH_BUILDERS[name]
        data = restore_weights(onnx.load(os.path.join(FIXTURES, name + ".onnx"))).SerializeToString()
        feeds = inputs_for(name, batch=args.batch)
        session = lockstep.InferenceSession(data, providers=["CUDAExecutionProvider"])
        with_copies = median_ms(lambda: session.run(None, feeds), args.runs)
        binding = device_binding(lockstep, session, feeds)
        ours = median_ms(lambda: session.run_with_iobinding(binding), args.runs)
        model = build(torchvision).cuda().eval()
        torch_feeds = {k: torch.from_numpy(v).cuda() for k, v in feeds.items()}

        def torch_run():
            with torch.no_grad():
                call(model, torch_feeds)
            torch.cuda.synchronize()

        theirs = median_ms(torch_run, args.runs)
        same = [o.numpy().tobytes() for o in binding.get_outputs()] == [r.tobytes() for r in session.run(None, feeds)]
        print(f"{name:<22}{ours:>18.2f}{theirs:>16.2f}{ours / theirs:>8.2f}{with_copies:>19.2f}"
              f"{'  same bytes' if same else '  BYTES DIFFER between IOBinding and run()'}")


if __name__ == "__main__":
    main()
