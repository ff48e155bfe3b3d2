"""The CUDA GEMM core on a GPU: bit identity with the CPU provider, then kernel times against torch fp32 (TF32 off).
  python3 bench/gpu_gemm.py [--check] [--bench] [--runs R] [--out DIR]     (neither flag: both)
  python3 bench/gpu_gemm.py --profile     (one run of each problem that scripts/gpu-gemm-check.sh profiles)
  python3 bench/gpu_gemm.py --tiles [--runs R] [--out DIR]   (every problem of tile_problems() under each forced tile)
Bit identity compares the raw float32 bits (uint32 views; NaN equals NaN whatever the payload, as the contract says)
of lockstep CUDA and lockstep CPU on MatMul, Gemm and
Conv shapes chosen to hit every path: odd M/N/K, K < 64, K not a multiple of 64, K = 4608, batched and broadcast
MatMul, transposed Gemm, convs with pads, strides, dilations and groups, split-K problems, convs whose column tiles
span several images, 1x1 convs read as 16-byte runs and with odd pixel planes.
Times: lockstep's kernel time is the sum of its CUDA kernels per run, read with torch.profiler (CUPTI sees
lockstep's kernels too), so the host<->device copies of session.run are left out; torch's is timed with CUDA
events around the op. Both are medians over the runs."""

import argparse
import json
import os
import statistics
import sys
import time

import numpy as np
from onnx import TensorProto, helper

import lockstep

RNG = np.random.default_rng(2026)


def model_of(op, inputs, attrs, out_name="Y"):
    graph_inputs = [helper.make_tensor_value_info(n, TensorProto.FLOAT, list(a.shape)) for n, a in inputs.items()]
    node = helper.make_node(op, list(inputs), [out_name], **attrs)
    graph = helper.make_graph([node], op, graph_inputs, [helper.make_empty_tensor_value_info(out_name)])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    return m.SerializeToString()


def session(model, provider):
    options = lockstep.SessionOptions()
    options.intra_op_num_threads = os.cpu_count()
    options.log_severity_level = 3
    return lockstep.InferenceSession(model, options, providers=[provider])


def rand(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def conv_inputs(n, c, h, w, cout, k, group=1, bias=True):
    x = {"X": rand(n, c, h, w), "W": rand(cout, c // group, k, k)}
    if bias:
        x["B"] = rand(cout)
    return x


def check_cases():
    """(name, op, inputs, attrs)"""
    cases = []
    for m, k, n in [(1, 1, 1), (5, 7, 9), (67, 130, 45), (129, 63, 257), (130, 64, 131), (3, 65, 300),
                    (200, 4608, 49), (49, 4608, 512), (512, 2304, 196), (33, 1000, 1), (1, 777, 1024),
                    (1024, 1024, 1024), (4096, 4096, 4096)]:
        cases.append((f"matmul_{m}x{k}x{n}", "MatMul", {"A": rand(m, k), "B": rand(k, n)}, {}))
    cases.append(("matmul_batched_3x70x130x45", "MatMul", {"A": rand(3, 70, 130), "B": rand(3, 130, 45)}, {}))
    cases.append(("matmul_broadcast_2x1x17x99_3x99x31", "MatMul", {"A": rand(2, 1, 17, 99), "B": rand(3, 99, 31)}, {}))
    cases.append(("matmul_shared_b_8x64x256_256x128", "MatMul", {"A": rand(8, 64, 256), "B": rand(256, 128)}, {}))
    for ta, tb in [(0, 0), (1, 0), (0, 1), (1, 1)]:
        for m, k, n in [(70, 13, 37), (300, 200, 260), (64, 4608, 20)]:
            a = rand(k, m) if ta else rand(m, k)
            b = rand(n, k) if tb else rand(k, n)
            cases.append((f"gemm_t{ta}{tb}_{m}x{k}x{n}", "Gemm", {"A": a, "B": b, "C": rand(n)},
                          {"transA": ta, "transB": tb, "alpha": 0.7, "beta": -1.3}))
    convs = [  # name, (n, c, h, w, cout, k), attrs, group
        ("conv_seed_256x14_3x3_p1", (1, 256, 14, 14, 256, 3), {"pads": [1, 1, 1, 1]}, 1),
        ("conv_resnet_conv1_7x7_s2", (1, 3, 224, 224, 64, 7), {"pads": [3, 3, 3, 3], "strides": [2, 2]}, 1),
        ("conv_512x7_3x3_p1_k4608", (1, 512, 7, 7, 512, 3), {"pads": [1, 1, 1, 1]}, 1),
        ("conv_2048x7_1x1", (1, 2048, 7, 7, 512, 1), {}, 1),
        ("conv_64x56_1x1", (2, 64, 56, 56, 256, 1), {}, 1),
        ("conv_1024x14_1x1_s2", (1, 1024, 14, 14, 2048, 1), {"strides": [2, 2]}, 1),
        ("conv_odd_5x13x11_3x3_s2_p1", (3, 5, 13, 11, 7, 3), {"pads": [1, 0, 2, 1], "strides": [2, 1]}, 1),
        ("conv_dilated_9x20_3x3_d2", (2, 9, 20, 20, 17, 3), {"dilations": [2, 2], "pads": [2, 2, 2, 2]}, 1),
        ("conv_grouped_32x15_3x3_g4", (2, 32, 15, 15, 48, 3), {"group": 4, "pads": [1, 1, 1, 1]}, 4),
        ("conv_depthwise_32x28_3x3", (1, 32, 28, 28, 32, 3), {"group": 32, "pads": [1, 1, 1, 1]}, 32),
        ("conv_bs32_128x28_3x3_p1", (32, 128, 28, 28, 128, 3), {"pads": [1, 1, 1, 1]}, 1),
        ("conv_bs32_512x7_3x3_p1", (32, 512, 7, 7, 512, 3), {"pads": [1, 1, 1, 1]}, 1),
        # images folded into N: tiles that span images, split-K across several images, 1x1 as 16-byte runs
        ("conv_bs3_13x7_3x3_p1_tiles_span_images", (3, 13, 7, 7, 130, 3), {"pads": [1, 1, 1, 1]}, 1),
        ("conv_bs2_512x7_3x3_p1_split", (2, 512, 7, 7, 512, 3), {"pads": [1, 1, 1, 1]}, 1),
        ("conv_bs3_21x6_1x1_vector_k_tail", (3, 21, 6, 6, 10, 1), {}, 1),
        ("conv_bs5_40x6_1x1_g2_vector", (5, 40, 6, 6, 24, 1), {"group": 2}, 2),
        ("conv_bs3_30x5_1x1_odd_plane", (3, 30, 5, 5, 70, 1), {}, 1),
        ("conv_bs32_256x14_1x1", (32, 256, 14, 14, 64, 1), {}, 1),
    ]
    for name, (n, c, h, w, cout, k), attrs, group in convs:
        cases.append((name, "Conv", conv_inputs(n, c, h, w, cout, k, group), attrs))
    x = rand(2, 6, 9, 9)
    x[0, 0, 0, 0], x[1, 2, 3, 4] = np.nan, np.inf
    cases.append(("conv_nan_inf", "Conv", {"X": x, "W": rand(4, 6, 3, 3), "B": rand(4)}, {"pads": [1, 1, 1, 1]}))
    cases.append(("conv_no_bias_k_lt_64", "Conv", conv_inputs(1, 3, 10, 10, 5, 3, bias=False), {}))
    return cases


def check_bits(log):
    failures = 0
    for name, op, inputs, attrs in check_cases():
        model = model_of(op, inputs, attrs)
        t0 = time.perf_counter()
        cpu = session(model, lockstep.CPU).run(None, inputs)[0]
        cuda = session(model, lockstep.CUDA).run(None, inputs)[0]
        # The contract's comparison: bits, except that two NaNs are equal whatever their payloads.
        both_nan = np.isnan(cpu) & np.isnan(cuda) if cpu.shape == cuda.shape else None
        differs = None if both_nan is None else (cpu.view(np.uint32) != cuda.view(np.uint32)) & ~both_nan
        same = differs is not None and not differs.any()
        diff = "" if same else f" differing elements: {'shape' if differs is None else int(differs.sum())}"
        payloads = 0 if both_nan is None else int((both_nan & (cpu.view(np.uint32) != cuda.view(np.uint32))).sum())
        if payloads:
            diff += f" (NaN on both, payloads differ: {payloads})"
        line = f"{'same bits' if same else 'DIFFERENT'}  {name} {cpu.shape} ({time.perf_counter() - t0:.1f} s){diff}"
        print(line, flush=True)
        log.write(line + "\n")
        failures += not same
    return failures


def kernel_events(prof):
    """(name, microseconds) of every GPU kernel the profiler saw, lockstep's included (raw CUPTI records)."""
    try:
        raw = list(prof.profiler.kineto_results.events())
    except AttributeError:  # another torch: the processed events carry the kernels too
        return [(e.name, e.device_time) for e in prof.events() if e.device_type.name == "CUDA"]
    out = []
    for e in raw:
        if e.device_type().name != "CUDA":
            continue
        name = e.name()
        if "memcpy" in name.lower() or "memset" in name.lower():
            continue
        us = e.duration_ns() / 1e3 if hasattr(e, "duration_ns") else e.duration_us()
        out.append((name, us))
    return out


def lockstep_kernel_ms(model, inputs, runs):
    """Median over runs of the summed duration of the CUDA kernels one session.run launches, and of its wall time
    (copies included)."""
    import torch
    from torch.profiler import ProfilerActivity, profile

    s = session(model, lockstep.CUDA)
    s.run(None, inputs)
    per_run, walls, kernels = [], [], {}
    for _ in range(runs):
        t0 = time.perf_counter()
        s.run(None, inputs)
        walls.append((time.perf_counter() - t0) * 1e3)
    for _ in range(runs):
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            s.run(None, inputs)
            torch.cuda.synchronize()
        total = 0.0
        for name, us in kernel_events(prof):
            total += us
            short = name.split("<")[0].split("(")[0][-40:]
            kernels[short] = kernels.get(short, 0.0) + us / runs
        per_run.append(total / 1e3)
    return statistics.median(per_run), statistics.median(walls), kernels


def torch_ms(fn, runs):
    import torch

    fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(runs):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times)


def bench(log, runs):
    import torch
    import torch.nn.functional as F

    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    header = (f"{'problem':<30}{'lockstep ms':>12}{'TFLOP/s':>9}{'torch ms':>10}{'TFLOP/s':>9}{'ours/torch':>11}"
              f"{'run() wall ms':>14}")
    print(header, flush=True)
    log.write(header + "\n")

    def row(name, flop, ours, wall, theirs, kernels):
        tflops = flop / ours / 1e9 if ours > 0 else float("nan")
        line = (f"{name:<30}{ours:>12.4f}{tflops:>9.2f}{theirs:>10.4f}{flop / theirs / 1e9:>9.2f}"
                f"{ours / theirs:>11.2f}{wall:>14.3f}")
        print(line, flush=True)
        log.write(line + "   " + json.dumps({k: round(v, 1) for k, v in kernels.items()}) + "\n")
        log.flush()

    for n in [4096, 8192]:
        a, b = rand(n, n), rand(n, n)
        ours, wall, kernels = lockstep_kernel_ms(model_of("MatMul", {"A": a, "B": b}, {}), {"A": a, "B": b}, runs)
        ta, tb = torch.from_numpy(a).cuda(), torch.from_numpy(b).cuda()
        theirs = torch_ms(lambda: torch.matmul(ta, tb), runs)
        row(f"MatMul {n}^3", 2.0 * n**3, ours, wall, theirs, kernels)
    convs = [  # resnet-50 convs: (c, hw, cout, k, stride, pad)
        ("conv1 7x7/2 3->64 224", (3, 224, 64, 7, 2, 3)),
        ("l1 3x3 64 56", (64, 56, 64, 3, 1, 1)),
        ("l1 1x1 64->256 56", (64, 56, 256, 1, 1, 0)),
        ("l2 3x3 128 28", (128, 28, 128, 3, 1, 1)),
        ("l3 3x3 256 14", (256, 14, 256, 3, 1, 1)),
        ("l3 1x1 1024->256 14", (1024, 14, 256, 1, 1, 0)),
        ("l4 3x3 512 7", (512, 7, 512, 3, 1, 1)),
        ("l4 1x1 2048->512 7", (2048, 7, 512, 1, 1, 0)),
        ("l4 1x1 512->2048 7", (512, 7, 2048, 1, 1, 0)),
        ("ds 1x1/2 1024->2048 14", (1024, 14, 2048, 1, 2, 0)),
    ]
    big = {"l1 3x3 64 56", "l1 1x1 64->256 56", "l2 3x3 128 28", "l3 3x3 256 14", "l4 3x3 512 7"}
    for bs in [1, 32, 128]:
        for name, (c, hw, cout, k, stride, pad) in convs:
            if bs == 128 and name not in big:
                continue
            inputs = conv_inputs(bs, c, hw, hw, cout, k)
            attrs = {"strides": [stride, stride], "pads": [pad] * 4}
            ours, wall, kernels = lockstep_kernel_ms(model_of("Conv", inputs, attrs), inputs, runs)
            x, w, bias = (torch.from_numpy(inputs[n]).cuda() for n in ("X", "W", "B"))
            theirs = torch_ms(lambda: F.conv2d(x, w, bias, stride=stride, padding=pad), runs)
            out = (hw + 2 * pad - k) // stride + 1
            flop = 2.0 * bs * cout * out * out * c * k * k
            row(f"bs{bs} {name}", flop, ours, wall, theirs, kernels)


TILES = ["128x128x8", "128x128x4", "64x128x8", "64x128x8/3", "64x64x8", "64x64x4", "64x64x4/4"]


def tile_problems():
    """(name, op, input shapes, attrs, flop): the GEMMs of BERT-base and ResNet-50 at batch 1, 32 and 128."""
    problems = []
    for m, k, n in [(128, 768, 768), (128, 768, 3072), (128, 3072, 768), (4096, 768, 768), (4096, 768, 3072),
                    (4096, 3072, 768), (4096, 4096, 4096)]:
        problems.append((f"MatMul {m}x{k}x{n}", "MatMul", {"A": (m, k), "B": (k, n)}, {}, 2.0 * m * k * n))
    for name, a, b in [("QK^T", (32, 12, 128, 64), (32, 12, 64, 128)), ("PV", (32, 12, 128, 128), (32, 12, 128, 64))]:
        flop = 2.0 * 32 * 12 * a[2] * a[3] * b[3]
        problems.append((f"bs32 attention {name}", "MatMul", {"A": a, "B": b}, {}, flop))
    for bs, c, hw, cout, k in [(1, 512, 7, 512, 3), (1, 256, 14, 256, 3), (32, 64, 56, 64, 3), (32, 128, 28, 128, 3),
                               (32, 256, 14, 256, 3), (32, 512, 7, 512, 3), (32, 64, 56, 256, 1),
                               (32, 1024, 14, 256, 1), (128, 64, 56, 64, 3), (128, 256, 14, 256, 3),
                               (128, 128, 28, 128, 3)]:
        pad = k // 2
        flop = 2.0 * bs * cout * hw * hw * c * k * k
        problems.append((f"bs{bs} conv {k}x{k} {c}->{cout} {hw}", "Conv",
                         {"X": (bs, c, hw, hw), "W": (cout, c, k, k), "B": (cout,)}, {"pads": [pad] * 4}, flop))
    return problems


def tile_worker(runs):
    """One process, one LOCKSTEP_CUDA_GEMM_TILE: per problem, the kernel ms and the sha256 of the output bytes."""
    out = {}
    for name, op, inputs, attrs, _ in tile_inputs():
        print(f"{os.environ.get('LOCKSTEP_CUDA_GEMM_TILE', 'auto')}: {name}", file=sys.stderr, flush=True)
        model = model_of(op, inputs, attrs)
        ms, _, kernels = lockstep_kernel_ms(model, inputs, runs)
        out[name] = {"ms": ms, "sha": output_sha(model, inputs, lockstep.CUDA), "kernels": sorted(kernels)}
    print("TILE-RESULT " + json.dumps(out), flush=True)


def tile_inputs():
    """tile_problems() with their inputs, the same in every process (seeded by the problem's name)."""
    import zlib

    for name, op, shapes, attrs, flop in tile_problems():
        rng = np.random.default_rng(zlib.crc32(name.encode()))
        yield name, op, {n: rng.standard_normal(s).astype(np.float32) for n, s in shapes.items()}, attrs, flop


def output_sha(model, inputs, provider):
    import hashlib

    return hashlib.sha256(session(model, provider).run(None, inputs)[0].tobytes()).hexdigest()


def tiles(log, runs):
    """Every problem under each forced tile and under the automatic choice, in one process per setting; the bytes
    of every setting must equal the CPU provider's (the tile is not part of the contract)."""
    import subprocess

    results = {}
    for tile in ["auto"] + TILES:
        env = dict(os.environ)
        env.pop("LOCKSTEP_CUDA_GEMM_TILE", None)
        if tile != "auto":
            env["LOCKSTEP_CUDA_GEMM_TILE"] = tile
        proc = subprocess.run([sys.executable, "-X", "faulthandler", __file__, "--tile-worker", "--runs", str(runs)],
                              env=env, capture_output=True, text=True)
        line = [l for l in proc.stdout.splitlines() if l.startswith("TILE-RESULT ")]
        if proc.returncode or not line:
            failure = f"{tile}: worker failed, exit status {proc.returncode}\n{proc.stderr[-3000:]}"
            print(failure, flush=True)
            log.write(failure + "\n")
            continue
        results[tile] = json.loads(line[0][len("TILE-RESULT "):])
    if "auto" not in results:
        return 1
    results["cpu"] = {name: {"sha": output_sha(model_of(op, inputs, attrs), inputs, lockstep.CPU)}
                      for name, op, inputs, attrs, _ in tile_inputs()}
    settings = [t for t in results if t != "cpu"]
    header = f"{'problem':<34}" + "".join(f"{t:>11}" for t in settings) + "   auto kernels"
    print(header)
    log.write(header + "\n")
    differ = 0
    for name, _, _, _, flop in tile_problems():
        shas = {results[t][name]["sha"] for t in settings + ["cpu"]}
        differ += len(shas) > 1
        cells = "".join(f"{results[t][name]['ms']:>11.4f}" for t in settings)
        line = f"{name:<34}{cells}   {','.join(results['auto'][name]['kernels'])}{'' if len(shas) == 1 else '  BITS DIFFER'}"
        print(line)
        log.write(line + "\n")
        best = min(settings[1:], key=lambda t: results[t][name]["ms"])
        log.write(f"    best forced tile {best}: {flop / results[best][name]['ms'] / 1e9:.1f} TFLOP/s; "
                  f"auto {flop / results['auto'][name]['ms'] / 1e9:.1f} TFLOP/s\n")
    line = f"bits: {differ} of {len(tile_problems())} problems differ between the tile settings and the CPU"
    print(line)
    log.write(line + "\n")
    return 1 if differ or len(settings) < len(TILES) + 1 else 0


def profile_targets():
    """One run each of the problems ncu looks at (scripts/gpu-gemm-check.sh with GEMM_NCU=1)."""
    problems = [("MatMul", {"A": rand(4096, 4096), "B": rand(4096, 4096)}, {})]
    for n, c, hw, cout, k, pad in [(32, 128, 28, 128, 3, 1), (32, 512, 7, 512, 3, 1), (32, 64, 56, 256, 1, 0)]:
        problems.append(("Conv", conv_inputs(n, c, hw, hw, cout, k), {"pads": [pad] * 4}))
    for op, inputs, attrs in problems:
        session(model_of(op, inputs, attrs), lockstep.CUDA).run(None, inputs)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--check", action="store_true", help="bit identity only")
    parser.add_argument("--bench", action="store_true", help="timings only")
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--out", default=".")
    parser.add_argument("--profile", action="store_true", help="one run of each problem ncu looks at, nothing else")
    parser.add_argument("--tiles", action="store_true", help="the problems of tile_problems() under every tile")
    parser.add_argument("--tile-worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    assert lockstep.CUDA in lockstep.get_available_providers(), "no CUDA provider"
    if args.profile:
        profile_targets()
        return 0
    if args.tile_worker:
        tile_worker(args.runs)
        return 0
    if args.tiles:
        with open(os.path.join(args.out, "gemm_tiles.txt"), "w") as log:
            return tiles(log, args.runs)
    failures = 0
    if not args.bench:
        with open(os.path.join(args.out, "gemm_bits.txt"), "w") as log:
            failures = check_bits(log)
        print(f"bit identity: {failures} of {len(check_cases())} cases differ")
    if not args.check:
        with open(os.path.join(args.out, "gemm_bench.txt"), "w") as log:
            bench(log, args.runs)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
