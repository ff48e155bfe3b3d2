"""Where a model's GPU time goes: lockstep's kernels (and torch eager's, side by side) per run, by kernel.
  python3 bench/gpu_profile.py [--models bert_base_encoder,resnet50] [--batch 1] [--runs 5] [--top 15]
Needs torch/torchvision/transformers and a GPU. lockstep runs through IOBinding with inputs and outputs resident on
the GPU; the kernels are read with torch.profiler (CUPTI lists every kernel of the process, lockstep's included).
Per model it prints the wall time per run, the summed kernel time (the difference is launch and host overhead, or
idle GPU), the kernel count, and the kernels that take the most time."""

import argparse
import collections
import os
import sys
import time

import onnx

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from gpu_gemm import kernel_events  # noqa: E402
from gpu_models import TORCH_BUILDERS, device_binding, restore_weights, FIXTURES, inputs_for  # noqa: E402


def short_name(name, width=110):
    """The kernel's name with its template arguments, without the parameter list and namespaces."""
    name = name.removeprefix("void ").replace("(anonymous namespace)::", "")
    for prefix in ("lockstep::cuda::", "at::native::"):
        name = name.replace(prefix, "")
    depth = 0
    for i, ch in enumerate(name):  # cut at the first "(" outside template brackets: the parameter list
        depth += ch == "<"
        depth -= ch == ">"
        if ch == "(" and depth == 0 and i > 0:
            name = name[:i]
            break
    return name if len(name) <= width else name[: width - 3] + "..."


def profile_runs(fn, runs):
    """Wall ms per run (median), and {kernel: (calls per run, ms per run)} over `runs` profiled runs."""
    import torch
    from torch.profiler import ProfilerActivity, profile

    fn()
    torch.cuda.synchronize()
    walls = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        walls.append((time.perf_counter() - t0) * 1e3)
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(runs):
            fn()
        torch.cuda.synchronize()
    calls, ms = collections.Counter(), collections.Counter()
    for name, us in kernel_events(prof):
        calls[short_name(name)] += 1
        ms[short_name(name)] += us / 1e3
    table = {k: (calls[k] / runs, ms[k] / runs) for k in ms}
    return sorted(walls)[len(walls) // 2], table


def report(label, wall, table, top):
    total = sum(t for _, t in table.values())
    count = sum(c for c, _ in table.values())
    print(f"  {label}: wall {wall:.2f} ms per run, kernels {total:.2f} ms ({total / wall:.0%} of wall), "
          f"{count:.0f} launches")
    for name, (c, t) in sorted(table.items(), key=lambda kv: -kv[1][1])[:top]:
        print(f"    {t:8.3f} ms {t / total:6.1%} {c:5.0f}x  {name}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--models", default="bert_base_encoder,resnet50")
    parser.add_argument("--batch", type=int, default=1)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--top", type=int, default=15)
    args = parser.parse_args()
    import torch
    import torchvision

    import lockstep

    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    print(f"# {torch.cuda.get_device_name()}, batch {args.batch}, {args.runs} profiled runs, fp32, TF32 off")
    for name in args.models.split(","):
        print(name)
        data = restore_weights(onnx.load(os.path.join(FIXTURES, name + ".onnx"))).SerializeToString()
        feeds = inputs_for(name, batch=args.batch)
        session = lockstep.InferenceSession(data, providers=["CUDAExecutionProvider"])
        binding = device_binding(lockstep, session, feeds)
        report("lockstep", *profile_runs(lambda: session.run_with_iobinding(binding), args.runs), args.top)
        build, call = TORCH_BUILDERS[name]
        model = build(torchvision).cuda().eval()
        torch_feeds = {k: torch.from_numpy(v).cuda() for k, v in feeds.items()}

        def torch_run():
            with torch.no_grad():
                call(model, torch_feeds)

        report("torch eager", *profile_runs(torch_run, args.runs), args.top)
        del session, binding, model
        torch.cuda.empty_cache()


if __name__ == "__main__":
    main()
