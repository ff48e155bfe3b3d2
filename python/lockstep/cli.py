"""The `lockstep` command line: inspect a model, run it, compare providers.

  lockstep info MODEL
  lockstep run MODEL [--input NAME=FILE.npy ...] [--shape NAME=1x3x224x224 ...] [--provider cpu|cuda] [--threads N]
               [--output-dir DIR] [--seed S]
  lockstep check MODEL [--input NAME=FILE.npy ...] [--shape NAME=1x3x224x224 ...] [--seed S]
  lockstep bench MODEL [--provider cpu|cuda] [--threads N] [--shape NAME=1x3x224x224 ...] [--runs R] [--warmup W]
                 [--against onnxruntime] [--profile]
  lockstep compare MODEL [--providers cpu,cuda,reference] [--against onnxruntime] [--input NAME=FILE.npy ...]
                   [--shape NAME=1x3x224x224 ...] [--per-node] [--json FILE] [--report DIR] [--seed S]
  lockstep demo
"""

import argparse
import json
import os
import sys

import numpy as np

import lockstep
from lockstep import _core, bench
from lockstep import comparison as comparing

_NUMPY_TYPES = {
    "float": np.float32, "double": np.float64, "float16": np.float16, "int8": np.int8, "int16": np.int16,
    "int32": np.int32, "int64": np.int64, "uint8": np.uint8, "uint16": np.uint16, "uint32": np.uint32,
    "uint64": np.uint64, "bool": np.bool_,
}


def _shape_text(shape):
    if shape is None:
        return "(unknown rank)"
    return "[" + ", ".join("?" if d is None else str(d) for d in shape) + "]"


def _type_text(value_type):
    """"float" for "tensor(float)"; sequence and optional types as onnxruntime spells them."""
    return value_type[len("tensor("):-1] if value_type.startswith("tensor(") else value_type


def cmd_info(args):
    s = _core.summarize_model(args.model)
    print(f"model: {args.model}")
    print(f"producer: {s['producer_name'] or '-'}   graph: {s['graph_name'] or '-'}")
    print("opsets: " + ", ".join(f"{d or 'ai.onnx'} {v}" for d, v in s["opset_imports"]))
    print("inputs:")
    for name, value_type, shape in s["inputs"]:
        print(f"  {name}: {_type_text(value_type)} {_shape_text(shape)}")
    print("outputs:")
    for name, value_type, shape in s["outputs"]:
        print(f"  {name}: {_type_text(value_type)} {_shape_text(shape)}")
    print(f"ops ({sum(o[2] for o in s['ops'])} nodes):")
    print(f"  {'op':<28}{'count':>6}  {'cpu':<5}{'cuda'}")
    for op, domain, count, cpu, cuda in s["ops"]:
        label = op if not domain or domain == "ai.onnx" else f"{domain}.{op}"
        cuda_text = "yes" if cuda else ("cpu fallback" if cpu else "no")
        if not _core.built_with_cuda():
            cuda_text = "n/a (this build has no CUDA)"
        print(f"  {label:<28}{count:>6}  {'yes' if cpu else 'no':<5}{cuda_text}")
    return 0


def _ops_by_family():
    """{family: {op_type: (first opset, last opset, has a CUDA kernel)}} from the op table, in table order."""
    families = {}
    for family, op, since, until, cuda in _core.supported_ops():
        ops = families.setdefault(family, {})
        first, last, any_cuda = ops.get(op, (since, until, False))
        ops[op] = (min(first, since), max(last, until), any_cuda or cuda)
    return families


def cmd_ops(args):
    families = _ops_by_family()
    with_cuda = _core.built_with_cuda()
    if args.markdown:
        print("| family | ops |")
        print("|---|---|")
        for family, ops in families.items():
            names = [op + ("" if cuda or not with_cuda else " (CPU kernel only)") for op, (_, _, cuda) in ops.items()]
            print(f"| {family} | {', '.join(names)} |")
        return 0
    for family, ops in families.items():
        print(f"{family}:")
        for op, (since, until, cuda) in ops.items():
            devices = "cpu, cuda" if cuda else ("cpu (cuda falls back to it)" if with_cuda else "cpu")
            print(f"  {op:<34}opsets {f'{since}-{until}':<8}{devices}")
    if not with_cuda:
        print("(this build has no CUDA)")
    return 0


def _random_input(dtype, dims, rng):
    np_type = _NUMPY_TYPES.get(dtype)
    if np_type is None:
        raise SystemExit(f"cannot make a random input of type {dtype}")
    if np_type == np.bool_:
        return rng.integers(0, 2, size=dims).astype(np.bool_)
    if np.issubdtype(np_type, np.integer):
        return rng.integers(0, 10, size=dims).astype(np_type)
    return rng.standard_normal(size=dims).astype(np_type)


def _parse_shapes(items):
    """--shape NAME=1x3x224x224 ... -> {NAME: [1, 3, 224, 224]}"""
    try:
        return comparing.parse_shapes(items)
    except ValueError as e:
        raise SystemExit(str(e)) from None


def _given_inputs(items):
    """--input NAME=FILE.npy ... -> {NAME: array}"""
    given = {}
    for item in items or []:
        name, _, path = item.partition("=")
        if not path:
            raise SystemExit(f"--input takes NAME=FILE.npy, got '{item}'")
        given[name] = np.load(path)
    return given


def _feeds(session, given, seed, shapes=None):
    """Given inputs, and seeded random ones for the rest: of the --shape given, else the declared shape with
    symbolic dims set to 1."""
    shapes = dict(shapes or {})
    unknown = set(shapes) - {arg.name for arg in session.get_inputs()}
    if unknown:
        raise SystemExit(f"--shape names no input of the model: {', '.join(sorted(unknown))}")
    rng = np.random.default_rng(seed)
    explicit = _given_inputs(given)
    feeds = {}
    for arg in session.get_inputs():
        if arg.name in explicit:
            feeds[arg.name] = explicit.pop(arg.name)
        else:
            dims = shapes.get(arg.name) or [d if isinstance(d, int) else 1 for d in (arg.shape or [])]
            feeds[arg.name] = _random_input(arg.type[7:-1], dims, rng)
    if explicit:
        raise SystemExit(f"unknown input names: {', '.join(explicit)}")
    return feeds


def cmd_run(args):
    session = bench.lockstep_session(args.model, args.provider, args.threads)
    feeds = _feeds(session, args.input, args.seed, _parse_shapes(args.shape))
    outputs = session.run(None, feeds)
    if args.output_dir:
        os.makedirs(args.output_dir, exist_ok=True)
    for arg, value in zip(session.get_outputs(), outputs):
        if not isinstance(value, np.ndarray):  # a sequence (list), map (dict) or empty optional (None)
            size = "None" if value is None else f"{len(value)} {'items' if isinstance(value, list) else 'entries'}"
            print(f"{arg.name}: {arg.type}, {size} (not saved: .npy holds arrays)")
            continue
        summary = f"{arg.name}: {value.dtype} {list(value.shape)}"
        if value.size and value.dtype.kind == "f":
            summary += f"  min {value.min():.6g} max {value.max():.6g} mean {value.mean(dtype=np.float64):.6g}"
        print(summary)
        if args.output_dir:
            np.save(os.path.join(args.output_dir, arg.name.replace("/", "_") + ".npy"), value)
    print(f"provider: {session.get_providers()[0]}")
    return 0


def cmd_check(args):
    """Runs the model on every available provider and compares each output with the CPU's, bit for bit."""
    providers = lockstep.get_available_providers()
    cpu = bench.lockstep_session(args.model, "cpu", 0)
    feeds = _feeds(cpu, args.input, args.seed, _parse_shapes(args.shape))
    reference = cpu.run(None, feeds)
    if lockstep.CUDA not in providers:
        print("only the CPU provider is available here: nothing to compare (run this on a machine with a GPU)")
        return 0
    cuda = bench.lockstep_session(args.model, "cuda", 0)
    results = cuda.run(None, feeds)
    differing = 0
    for arg, a, b in zip(cpu.get_outputs(), reference, results):
        same = _same_bits(a, b)
        differing += not same
        print(f"{arg.name}: {'bit-identical' if same else 'DIFFERENT'} ({a.dtype} {list(a.shape)})")
    if cuda.fallback_ops():
        print("ran on the CPU inside the CUDA session (no CUDA kernel): " + ", ".join(cuda.fallback_ops()))
    print(f"{len(reference) - differing} of {len(reference)} outputs bit-identical between CPU and CUDA")
    return 1 if differing else 0


def cmd_bench(args):
    """Latency percentiles, creation time and memory of lockstep (and onnxruntime, interleaved run by run)."""
    if args.runs < 1 or args.warmup < 0:
        raise SystemExit(f"--runs must be at least 1 and --warmup at least 0, got {args.runs} and {args.warmup}")
    threads = args.threads or os.cpu_count()
    shapes = _parse_shapes(args.shape)

    def feeds_for(session):
        return _feeds(session, None, args.seed, shapes)

    against = args.against == "onnxruntime"
    results = bench.measure(args.model, feeds_for, args.provider, threads, args.runs, args.warmup, against)
    peer = f", interleaved run by run with onnxruntime {bench.import_onnxruntime().__version__}" if against else ""
    print(f"model: {args.model}  provider: {args.provider}  threads: {threads}  "
          f"runs: {args.runs} after {args.warmup} warm-up{peer}")
    print(f"{'':<14}{'p50 ms':>10}{'p90 ms':>10}{'create ms':>11}{'RSS MiB':>10}{'peak MiB':>10}")
    for name, r in results.items():
        peak = "n/a" if r["peak_mib"] is None else f"{r['peak_mib']:.1f}"
        print(f"{name:<14}{r['p50_ms']:>10.3f}{r['p90_ms']:>10.3f}{r['create_ms']:>11.1f}{r['rss_mib']:>10.1f}{peak:>10}")
    if against:
        ours, theirs = results["lockstep"], results["onnxruntime"]
        print(f"lockstep/onnxruntime: p50 {ours['p50_ms'] / theirs['p50_ms']:.2f}, "
              f"p90 {ours['p90_ms'] / theirs['p90_ms']:.2f}, paired {ours['paired_ratio']:.2f} (the median of the "
              f"rounds' run-by-run ratios)")
    print(bench.MEMORY_NOTE)
    if args.profile:
        events, run_ms, trace_path = bench.profile(args.model, feeds_for, args.provider, threads, args.runs, args.warmup)
        bench.print_profile(events, args.runs, run_ms, trace_path)
    return 0


def _print_inputs(described):
    print("inputs:")
    for name, d in described.items():
        defaults = d.get("defaulted_dims")
        note = ("; symbolic dims set to " + ", ".join(f"{k}={v}" for k, v in defaults.items()) +
                " (give --shape NAME=DIMS to change)") if defaults else ""
        print(f"  {name}: {d['dtype']} {d['shape']} {d['source']}{note}")


def _print_outputs(result):
    widths = [11, 11, 10, 11, 16]
    heads = [label if key != "max_ulp_vs_baseline" else f"ulp vs {result['baseline']}"
             for key, label, _ in comparing.FIGURES]
    print(f"{'output / runtime':<30}" + "".join(f"{h:>{w}}" for h, w in zip(heads, widths)))
    for name, entry in result["outputs"].items():
        same = entry["bit_identical"]
        identity = "" if same is None else ("  lockstep providers bit-identical" if same else
                                            f"  lockstep providers DIFFER (max {entry['max_ulp_between']} ulp)")
        print(f"{name} ({entry['dtype']} {entry['shape']}){identity}")
        for runtime in result["runtimes"]:
            cells = [comparing.format_figure(entry[runtime].get(key), form) for key, _, form in comparing.FIGURES]
            print(f"  {runtime:<28}" + "".join(f"{c:>{w}}" for c, w in zip(cells, widths)))


def _print_divergence(found):
    for pair, node in found["between"].items():
        print(f"{pair}: " + ("identical in every node" if node is None else
                             f"first divergent node {node['node']} ({node['op']}, inputs {node['input_shapes']}), "
                             f"max {node['max_ulp']} ulp"))
    for runtime, node in found["error_jump"].items():
        print(f"{runtime} vs float64: " + ("no node's error jumps" if node is None else
                                          f"error jumps at node {node['node']} ({node['op']}, inputs "
                                          f"{node['input_shapes']}): rel-L2 {node['rel_l2']:.3e}, inputs' "
                                          f"{node['inputs_rel_l2']:.3e}"))


def cmd_compare(args):
    """Every output on each runtime against the float64 reference and against each other."""
    providers = [p.strip() for p in args.providers.split(",") if p.strip()] if args.providers else None
    try:
        result = comparing.compare(args.model, providers, _given_inputs(args.input), _parse_shapes(args.shape),
                                   args.against, args.per_node, args.seed, args.report, progress=True)
    except (ValueError, ImportError) as e:
        raise SystemExit(f"lockstep compare: {e}") from None
    print(f"model: {args.model}  seed: {args.seed}  runtimes: {', '.join(result['runtimes'])}  "
          "(errors against the float64 reference provider)")
    _print_inputs(result["inputs"])
    _print_outputs(result)
    if args.per_node:
        _print_divergence(result["first_divergence"])
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=1)
        print(f"wrote {args.json}")
    if args.report:
        print(f"wrote {result['report']}")
    return 1 if any(e["bit_identical"] is False for e in result["outputs"].values()) else 0


def _same_bits(a, b):
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    if a.dtype.kind == "f":
        both_nan = np.isnan(a) & np.isnan(b)
        return bool(np.all((a.view(f"u{a.itemsize}") == b.view(f"u{b.itemsize}")) | both_nan))
    return a.tobytes() == b.tobytes()


SHAPE_HELP = "dims of a random input (symbolic dims default to 1)"


def main(argv=None):
    parser = argparse.ArgumentParser(prog="lockstep", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    info = sub.add_parser("info", help="inputs, outputs, opsets and op support of a model")
    info.add_argument("model")
    info.set_defaults(fn=cmd_info)
    ops = sub.add_parser("ops", help="every op lockstep implements, by family, with opsets and devices")
    ops.add_argument("--markdown", action="store_true", help="the README's table of families and ops")
    ops.set_defaults(fn=cmd_ops)
    run = sub.add_parser("run", help="run a model on seeded random (or given) inputs")
    run.add_argument("model")
    run.add_argument("--input", action="append", metavar="NAME=FILE.npy")
    run.add_argument("--shape", action="append", metavar="NAME=1x3x224x224", help=SHAPE_HELP)
    run.add_argument("--provider", choices=["cpu", "cuda"], default="cpu")
    run.add_argument("--threads", type=int, default=0)
    run.add_argument("--output-dir")
    run.add_argument("--seed", type=int, default=0)
    run.set_defaults(fn=cmd_run)
    check = sub.add_parser("check", help="run on CPU and CUDA and compare every output bit for bit")
    check.add_argument("model")
    check.add_argument("--input", action="append", metavar="NAME=FILE.npy")
    check.add_argument("--shape", action="append", metavar="NAME=1x3x224x224", help=SHAPE_HELP)
    check.add_argument("--seed", type=int, default=0)
    check.set_defaults(fn=cmd_check)
    timing = sub.add_parser("bench", help="latency p50/p90, creation time and memory, optionally against onnxruntime")
    timing.add_argument("model")
    timing.add_argument("--provider", choices=["cpu", "cuda"], default="cpu")
    timing.add_argument("--threads", type=int, default=0, help="intra-op threads of both runtimes (default: nproc)")
    timing.add_argument("--shape", action="append", metavar="NAME=1x3x224x224", help=SHAPE_HELP)
    timing.add_argument("--runs", type=int, default=20)
    timing.add_argument("--warmup", type=int, default=3)
    timing.add_argument("--seed", type=int, default=0)
    timing.add_argument("--against", choices=["onnxruntime"])
    timing.add_argument("--profile", action="store_true", help="a separate profiled pass: top op types and nodes")
    timing.set_defaults(fn=cmd_bench)
    comparison = sub.add_parser("compare", help="errors of each runtime against a float64 reference, and between them")
    comparison.add_argument("model")
    comparison.add_argument("--providers", help="comma-separated: cpu, cuda, reference (default: cpu and, with a "
                            "GPU, cuda; the float64 reference always runs)")
    comparison.add_argument("--against", choices=["onnxruntime"], help="also run onnxruntime (CPU, and CUDA where "
                            "its CUDA provider is installed)")
    comparison.add_argument("--input", action="append", metavar="NAME=FILE.npy")
    comparison.add_argument("--shape", action="append", metavar="NAME=1x3x224x224",
                            help="dims of a random input (symbolic dims default to batch 1, images 224x224, "
                                 "integer sequences 16, others 1)")
    comparison.add_argument("--per-node", action="store_true", help="compare every intermediate tensor and name the "
                            "first node where runtimes diverge or the error against float64 jumps")
    comparison.add_argument("--json", metavar="FILE", help="write the figures as JSON")
    comparison.add_argument("--report", metavar="DIR", help="write an HTML report with error histograms")
    comparison.add_argument("--seed", type=int, default=0)
    comparison.set_defaults(fn=cmd_compare)
    demo = sub.add_parser("demo", help="the onnxruntime issue 21220 Conv on every provider, compared bit for bit")
    demo.set_defaults(fn=lambda a: __import__("lockstep.demo").demo.main())
    args = parser.parse_args(argv)
    try:
        return args.fn(args)
    except lockstep.Fail as e:
        print(f"lockstep: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
