"""Summarises an A/B file written by alternating `bench/cpu_models.py` processes of two builds ('== old' / '== new'
lines before each process's rows): per model, the median over rounds of each build's p50 and of its paired ratio
against onnxruntime (the ratio of neighbouring runs, steadier on a busy machine).
  python3 summarize_ab.py FILE"""
import collections
import statistics
import sys

rows = collections.defaultdict(lambda: collections.defaultdict(list))
build = None
for line in open(sys.argv[1]):
    if line.startswith("=="):
        build = line.split()[1]
    elif line.strip() and not line.startswith("#"):
        f = line.split()
        rows[f[0]][build].append((float(f[2]), float(f[4]), float(f[7])))
for model, by_build in rows.items():
    cells = []
    for b in ("old", "new"):
        v = by_build[b]
        cells.append(f"{b}: {statistics.median(x[0] for x in v):6.1f} ms (ort {statistics.median(x[1] for x in v):6.1f}), "
                     f"paired {statistics.median(x[2] for x in v):.2f} [{', '.join(f'{x[2]:.2f}' for x in v)}]")
    print(f"{model:<20} " + "   ".join(cells))
