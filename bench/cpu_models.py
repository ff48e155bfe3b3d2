"""Side-by-side CPU latency: lockstep vs onnxruntime on the model fixtures of tests/test_models.py, batch 1, same
machine, same intra-op thread count, runs interleaved one by one (the timing is lockstep.bench's, as in
`lockstep bench --against onnxruntime`).
  python3 bench/cpu_models.py [--threads 1,2] [--runs R] [--warmup W] [--models resnet50,...]
                              [--json PATH] [--plot PNG] [--profile]
Prints one row per model and thread count; --profile adds lockstep's top op types and nodes per model at the
first thread count."""

import argparse
import datetime
import json
import os
import subprocess
import sys

import onnx

from lockstep import bench

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests"))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "models"))
from fixture_format import restore_weights  # noqa: E402
from test_models import FIXTURES, MODELS, inputs_for  # noqa: E402


def machine():
    with open("/proc/cpuinfo") as f:
        model = next((line.split(":", 1)[1].strip() for line in f if line.startswith("model name")), "unknown")
    return {"cpu": model, "nproc": os.cpu_count()}


def commit():
    if os.environ.get("LOCKSTEP_COMMIT"):  # a copied tree (the GPU machine's) has no usable .git
        return os.environ["LOCKSTEP_COMMIT"]

    def git(*words):
        return subprocess.run(["git", "-C", HERE, *words], capture_output=True, text=True).stdout.strip()
    return git("rev-parse", "--short", "HEAD") + ("-dirty" if git("status", "--porcelain", "--untracked-files=no") else "")


def model_bytes(name):
    return restore_weights(onnx.load(os.path.join(FIXTURES, name + ".onnx"))).SerializeToString()


def print_row(name, threads, r):
    ours, theirs = r["lockstep"], r["onnxruntime"]
    print(f"{name:<20}{threads:>4}{ours['p50_ms']:>9.1f}{ours['p90_ms']:>9.1f}{theirs['p50_ms']:>9.1f}"
          f"{theirs['p90_ms']:>9.1f}{ours['p50_ms'] / theirs['p50_ms']:>8.2f}{ours['paired_ratio']:>8.2f}"
          f"{ours['create_ms']:>9.0f}"
          f"{theirs['create_ms']:>9.0f}{ours['rss_mib']:>8.0f}{theirs['rss_mib']:>8.0f}")


def plot(results, path):
    try:
        import matplotlib
    except ImportError:
        print(f"--plot {path}: matplotlib is not installed here (pip install matplotlib); no plot written")
        return
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    thread_counts = sorted({r["threads"] for r in results})
    models = list(dict.fromkeys(r["model"] for r in results))
    fig, axes = plt.subplots(1, len(thread_counts), figsize=(5 * len(thread_counts), 4), squeeze=False)
    for ax, threads in zip(axes[0], thread_counts):
        rows = {r["model"]: r for r in results if r["threads"] == threads}
        for offset, runtime in ((-0.2, "lockstep"), (0.2, "onnxruntime")):
            ax.bar([i + offset for i in range(len(models))], [rows[m][runtime]["p50_ms"] for m in models], 0.4,
                   label=runtime)
        ax.set_xticks(range(len(models)), models, rotation=30, ha="right")
        ax.set_ylabel("p50 latency, ms (batch 1)")
        ax.set_title(f"{threads} thread{'s' if threads > 1 else ''}")
        ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    print(f"plot written to {path}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", default="1,2", help="comma-separated intra-op thread counts")
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--models", default=",".join(MODELS))
    parser.add_argument("--json", metavar="PATH", help="write the results and the machine, date and commit here")
    parser.add_argument("--plot", metavar="PNG", help="bar chart of p50 latencies (needs matplotlib)")
    parser.add_argument("--profile", action="store_true", help="lockstep's top op types and nodes per model")
    args = parser.parse_args()
    thread_counts = [int(t) for t in args.threads.split(",")]
    onnxruntime = bench.import_onnxruntime()
    about = {"date": datetime.date.today().isoformat(), "machine": machine(), "commit": commit(),
             "onnxruntime": onnxruntime.__version__, "runs": args.runs, "warmup": args.warmup}
    print(f"# {about['date']}, {about['machine']['cpu']}, nproc {about['machine']['nproc']}, commit {about['commit']}, "
          f"onnxruntime {about['onnxruntime']}; batch 1, {args.runs} interleaved runs after {args.warmup} warm-up")
    print(f"{'':<24}{'lockstep':>18}{'onnxruntime':>18}{'':>16}{'create ms':>18}{'RSS MiB':>16}")
    print(f"{'model':<20}{'thr':>4}{'p50':>9}{'p90':>9}{'p50':>9}{'p90':>9}{'ratio':>8}{'paired':>8}"
          f"{'ours':>9}{'ort':>9}{'ours':>8}{'ort':>8}")
    results = []
    for name in args.models.split(","):
        data = model_bytes(name)
        for threads in thread_counts:
            r = bench.measure(data, lambda session: inputs_for(name), "cpu", threads, args.runs, args.warmup, True)
            print_row(name, threads, r)
            results.append({"model": name, "threads": threads, **r})
    print("ratio: lockstep p50 / onnxruntime p50; paired: the median over rounds of lockstep's run / onnxruntime's "
          "run of the same round. " + bench.MEMORY_NOTE)
    if args.profile:
        for name in args.models.split(","):
            print(f"\n## {name}, {thread_counts[0]} thread(s)")
            events, run_ms, trace_path = bench.profile(model_bytes(name), lambda session: inputs_for(name), "cpu",
                                                       thread_counts[0], args.runs, args.warmup)
            bench.print_profile(events, args.runs, run_ms, trace_path)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({**about, "results": results}, f, indent=1)
    if args.plot:
        plot(results, args.plot)


if __name__ == "__main__":
    main()
