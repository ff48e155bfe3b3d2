"""Summarises an A/B file written by bench/ab_builds.sh: alternating processes of two builds ('== old' / '== new'
lines before each process's output) running bench/cpu_models.py or bench/conv_cpu.py. Per model or conv shape, the
median over rounds of each build's p50 and of its paired ratio against onnxruntime (the ratio of neighbouring runs,
steadier on a busy machine), and every round's paired ratio.
  python3 bench/summarize_ab.py FILE"""
import collections
import statistics
import sys


def row_figures(fields):
    """(lockstep p50, onnxruntime p50, paired ratio) of a result row of either script, else None."""
    if len(fields) < 7 or not fields[1].isdigit():
        return None
    try:
        if len(fields) >= 12:  # cpu_models.py: model thr p50 p90 p50 p90 ratio paired ...
            return float(fields[2]), float(fields[4]), float(fields[7])
        return float(fields[2]), float(fields[3]), float(fields[5])  # conv_cpu.py: shape thr ours ort ratio paired
    except ValueError:
        return None


rows = collections.defaultdict(lambda: collections.defaultdict(list))
build = None
for line in open(sys.argv[1]):
    if line.startswith("=="):
        build = line.split()[1]
        continue
    figures = row_figures(line.split())
    if build and figures:
        rows[f"{line.split()[0]} ({line.split()[1]} thr)"][build].append(figures)
for name, by_build in rows.items():
    cells = []
    for b in ("old", "new"):
        v = by_build[b]
        if not v:
            continue
        cells.append(f"{b}: {statistics.median(x[0] for x in v):7.2f} ms (ort {statistics.median(x[1] for x in v):7.2f}), "
                     f"paired {statistics.median(x[2] for x in v):.2f} [{', '.join(f'{x[2]:.2f}' for x in v)}]")
    print(f"{name:<28} " + "   ".join(cells))
