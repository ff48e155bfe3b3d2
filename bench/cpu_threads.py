"""Where thread scaling stops: lockstep vs onnxruntime latency (interleaved, as bench/cpu_models.py) and lockstep's
per-op-type and per-node profile at several intra-op thread counts, on the model fixtures of tests/test_models.py.
  python3 bench/cpu_threads.py [--threads 1,2,4,8,16] [--models resnet50,bert_base_encoder] [--runs R] [--warmup W]
                               [--json PATH]
Prints, per model: p50 of both runtimes per thread count; then ms per run of each op type and of the slowest
nodes per thread count, with the speed-up over the first thread count."""

import argparse
import json
import os
import sys
from collections import defaultdict

from lockstep import bench

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from cpu_models import commit, machine, model_bytes  # noqa: E402
from test_models import inputs_for  # noqa: E402


def per_key_ms(node_events, runs, key):
    totals = defaultdict(int)
    for e in node_events:
        totals[key(e)] += e["duration_ns"]
    return {k: ns / 1e6 / runs for k, ns in totals.items()}


def print_scaling(title, rows, thread_counts, count):
    """rows: {name: {threads: ms}}; prints the `count` names with most time at the first thread count."""
    first = thread_counts[0]
    names = sorted(rows, key=lambda n: -rows[n].get(first, 0.0))[:count]
    print(f"  {title:<44}" + "".join(f"{t:>8}" for t in thread_counts) + f"{'speed-up':>10}")
    for name in names:
        shown = name if len(name) < 44 else "..." + name[-40:]
        ms = [rows[name].get(t, 0.0) for t in thread_counts]
        gain = ms[0] / ms[-1] if ms[-1] > 0 else float("inf")
        print(f"  {shown:<44}" + "".join(f"{v:>8.2f}" for v in ms) + f"{gain:>10.2f}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", default="1,2,4,8,16")
    parser.add_argument("--models", default="resnet50,bert_base_encoder")
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--nodes", type=int, default=12, help="slowest nodes shown per model")
    parser.add_argument("--json", metavar="PATH")
    args = parser.parse_args()
    thread_counts = [int(t) for t in args.threads.split(",")]
    onnxruntime = bench.import_onnxruntime()
    print(f"# {machine()['cpu']}, nproc {machine()['nproc']}, commit {os.environ.get('LOCKSTEP_COMMIT', commit())}, "
          f"onnxruntime {onnxruntime.__version__}; batch 1, {args.runs} runs after {args.warmup} warm-up")
    record = []
    for name in args.models.split(","):
        data = model_bytes(name)
        feeds = lambda session: inputs_for(name)  # noqa: E731
        print(f"\n## {name}\n  {'threads':>8}{'lockstep p50':>14}{'ort p50':>10}{'ratio':>8}{'in nodes':>10}")
        op_rows, node_rows = defaultdict(dict), defaultdict(dict)
        for t in thread_counts:
            r = bench.measure(data, feeds, "cpu", t, args.runs, args.warmup, True)
            events, run_ms, _ = bench.profile(data, feeds, "cpu", t, args.runs, args.warmup)
            in_nodes = sum(e["duration_ns"] for e in events) / 1e6 / args.runs
            ours, theirs = r["lockstep"]["p50_ms"], r["onnxruntime"]["p50_ms"]
            print(f"  {t:>8}{ours:>14.2f}{theirs:>10.2f}{ours / theirs:>8.2f}{in_nodes:>10.2f}")
            for op, ms in per_key_ms(events, args.runs, lambda e: e["op_type"]).items():
                op_rows[op][t] = ms
            for node, ms in per_key_ms(events, args.runs, lambda e: f"{e['name']} ({e['op_type']})").items():
                node_rows[node][t] = ms
            record.append({"model": name, "threads": t, **r, "ops_ms": per_key_ms(events, args.runs,
                                                                                 lambda e: e["op_type"])})
        print_scaling("op type, ms per run at threads", op_rows, thread_counts, 15)
        print_scaling("node, ms per run at threads", node_rows, thread_counts, args.nodes)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"machine": machine(), "results": record}, f, indent=1)


if __name__ == "__main__":
    main()
