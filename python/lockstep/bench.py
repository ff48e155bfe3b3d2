"""Latency measurement shared by `lockstep bench` and bench/cpu_models.py: session creation time and memory,
interleaved timed runs against onnxruntime, percentiles, and where a lockstep profile says the time goes."""

import ctypes
import ctypes.util
import time
from collections import defaultdict

import numpy as np

import lockstep

MEMORY_NOTE = ("RSS MiB: VmRSS growth from just before to just after creating the session (freed memory "
               "trimmed first); "
               "peak MiB: VmHWM after creating it minus VmRSS before (VmHWM reset just before), from /proc/self/status")


def _memory_kib():
    """(VmRSS, VmHWM) of this process in KiB."""
    values = {}
    with open("/proc/self/status") as f:
        for line in f:
            key, _, rest = line.partition(":")
            if key in ("VmRSS", "VmHWM"):
                values[key] = int(rest.split()[0])
    return values["VmRSS"], values["VmHWM"]


def _reset_peak_memory():
    """Sets VmHWM to the current RSS, so that the next peak belongs to what runs next. False where not allowed."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def _release_freed_memory():
    """Hands memory freed by earlier sessions back to the OS (glibc keeps it otherwise), so that it does not hide
    the growth of the next session. Does nothing on other C libraries."""
    libc = ctypes.CDLL(ctypes.util.find_library("c"))
    if hasattr(libc, "malloc_trim"):
        libc.malloc_trim(0)


def create_measured(make_session):
    """Calls make_session(); returns the session and a dict: create_ms, rss_mib, peak_mib (None if unmeasurable)."""
    _release_freed_memory()
    peak_known = _reset_peak_memory()
    rss_before, _ = _memory_kib()
    start = time.perf_counter()
    session = make_session()
    create_ms = (time.perf_counter() - start) * 1e3
    rss_after, peak = _memory_kib()
    return session, {"create_ms": create_ms, "rss_mib": (rss_after - rss_before) / 1024,
                     "peak_mib": (peak - rss_before) / 1024 if peak_known else None}


def time_interleaved(sessions, feeds, runs, warmup):
    """Warms each session up, then makes `runs` rounds of one timed run per session in turn, so that both
    runtimes see the same machine load. Returns one list of run times in ms per session."""
    for session in sessions:
        for _ in range(warmup):
            session.run(None, feeds)
    times = [[] for _ in sessions]
    for _ in range(runs):
        for session, session_times in zip(sessions, times):
            start = time.perf_counter()
            session.run(None, feeds)
            session_times.append((time.perf_counter() - start) * 1e3)
    return times


def lockstep_session(model, provider="cpu", threads=0, profiling=False, spinning_stop=False):
    """model: a path or serialized bytes. spinning_stop: the threads sleep once a run returns (as onnxruntime's
    session is made to, below, when the two are interleaved)."""
    options = lockstep.SessionOptions()
    options.intra_op_num_threads = threads
    options.enable_profiling = profiling
    if spinning_stop:
        options.add_session_config_entry("session.force_spinning_stop", "1")
    name = lockstep.CUDA if provider == "cuda" else lockstep.CPU
    return lockstep.InferenceSession(model, options, providers=[name])


def import_onnxruntime():
    try:
        import onnxruntime
    except ImportError:
        raise SystemExit("--against onnxruntime needs the onnxruntime package, which is not installed here "
                         "(pip install onnxruntime)") from None
    return onnxruntime


def onnxruntime_session(onnxruntime, model, provider="cpu", threads=0):
    name = "CUDAExecutionProvider" if provider == "cuda" else "CPUExecutionProvider"
    if name not in onnxruntime.get_available_providers():
        raise SystemExit(f"--against onnxruntime: this onnxruntime has no {name} "
                         f"(it has {', '.join(onnxruntime.get_available_providers())})")
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = threads
    # onnxruntime's workers keep spinning after a run by default, and lockstep's for up to 1 ms; interleaved, that
    # would take the cores from the other runtime's run that follows: both sessions stop spinning when a run
    # returns. Spinning during their own runs stays on.
    options.add_session_config_entry("session.force_spinning_stop", "1")
    try:
        return onnxruntime.InferenceSession(model, options, providers=[name])
    except Exception as e:  # onnxruntime's own error classes; the message says what it could not do
        raise SystemExit(f"--against onnxruntime: onnxruntime cannot load the model: {e}") from None


def summarize(times_ms):
    return {"p50_ms": float(np.percentile(times_ms, 50)), "p90_ms": float(np.percentile(times_ms, 90)),
            "min_ms": float(np.min(times_ms)), "runs": len(times_ms)}


def paired_ratio(ours_ms, theirs_ms):
    """The median over rounds of (our run / their run of the same round). On a machine whose speed drifts during a
    measurement (other tenants, clocks), two runs next to each other see nearly the same machine, so this ratio
    moves less between repeated measurements than the ratio of the two medians."""
    return float(np.median(np.asarray(ours_ms) / np.asarray(theirs_ms)))


def measure(model, feeds_for, provider="cpu", threads=1, runs=10, warmup=2, against_onnxruntime=False):
    """Times lockstep (and onnxruntime, interleaved) on one model. feeds_for(lockstep_session) gives the feeds.
    Returns {"lockstep": {...}, "onnxruntime": {...}}: p50_ms, p90_ms, min_ms, runs, create_ms, rss_mib, peak_mib;
    with onnxruntime, lockstep's also holds paired_ratio (see paired_ratio)."""
    onnxruntime = import_onnxruntime() if against_onnxruntime else None
    ours, results = create_measured(lambda: lockstep_session(model, provider, threads,
                                                             spinning_stop=against_onnxruntime))
    measured = {"lockstep": (ours, results)}
    if onnxruntime:
        measured["onnxruntime"] = create_measured(lambda: onnxruntime_session(onnxruntime, model, provider, threads))
    feeds = feeds_for(ours)
    names = list(measured)
    times = time_interleaved([measured[n][0] for n in names], feeds, runs, warmup)
    results = {name: {**summarize(t), **measured[name][1]} for name, t in zip(names, times)}
    if onnxruntime:
        results["lockstep"]["paired_ratio"] = paired_ratio(times[0], times[1])
    return results


def profile(model, feeds_for, provider="cpu", threads=1, runs=10, warmup=2):
    """Runs a profiling lockstep session; returns (node events of the timed runs, total run ms, trace path)."""
    session = lockstep_session(model, provider, threads, profiling=True)
    feeds = feeds_for(session)
    for _ in range(warmup):
        session.run(None, feeds)
    first = len(session.profile_events())
    for _ in range(runs):
        session.run(None, feeds)
    events = session.profile_events()[first:]
    trace_path = session.end_profiling()
    run_ms = sum(e["duration_ns"] for e in events if e["name"] == "model_run") / 1e6
    return [e for e in events if e["category"] == "Node"], run_ms, trace_path


def top_op_types(node_events, runs, run_ms, count=15):
    """[(op type, nodes per run, ms per run, % of run time)], most time first."""
    totals, counts = defaultdict(int), defaultdict(int)
    for e in node_events:
        totals[e["op_type"]] += e["duration_ns"]
        counts[e["op_type"]] += 1
    rows = [(op, counts[op] // runs, ns / 1e6 / runs, 100 * ns / 1e6 / run_ms) for op, ns in totals.items()]
    return sorted(rows, key=lambda r: -r[2])[:count]


def top_nodes(node_events, runs, run_ms, count=10):
    """[(node name, op type, ms per run, % of run time, output shapes)], most time first."""
    totals, first_seen = defaultdict(int), {}
    for e in node_events:
        totals[e["name"]] += e["duration_ns"]
        first_seen.setdefault(e["name"], e)
    rows = [(name, first_seen[name]["op_type"], ns / 1e6 / runs, 100 * ns / 1e6 / run_ms,
             " ".join(f"{dtype}{list(dims)}" for dtype, dims in first_seen[name]["outputs"]))
            for name, ns in totals.items()]
    return sorted(rows, key=lambda r: -r[2])[:count]


def print_profile(node_events, runs, run_ms, trace_path):
    """Prints the top op types and nodes of a profile() result."""
    in_nodes = sum(e["duration_ns"] for e in node_events) / 1e6
    print(f"lockstep profile: {run_ms / runs:.2f} ms per run, {100 * in_nodes / run_ms:.1f}% of it inside nodes; "
          f"trace: {trace_path}")
    print(f"  {'op type':<24}{'count':>7}{'ms/run':>10}{'% of run':>10}")
    for op, n, ms, share in top_op_types(node_events, runs, run_ms):
        print(f"  {op:<24}{n:>7}{ms:>10.3f}{share:>10.1f}")
    print(f"  {'node':<40}{'op type':<20}{'ms/run':>10}{'% of run':>10}  output")
    for name, op, ms, share, outputs in top_nodes(node_events, runs, run_ms):
        shown = name if len(name) < 40 else "..." + name[-36:]  # exporters' names differ in their tails
        print(f"  {shown:<40}{op:<20}{ms:>10.3f}{share:>10.1f}  {outputs}")
