#!/usr/bin/env python3
"""Run the ONNX backend node tests (onnx.backend.test.case.node) on a runtime.

The onnx wheel ships the case definitions but not their data, so the first
run generates the data into tests/node_data/onnx-<version>-ml_dtypes-<version>-v<format>/ in the
layout of onnx's own data dirs (node/<case>/model.onnx,
node/<case>/test_data_set_0/{input,output}_<i>.pb) and later runs reuse it.

    python tests/node/runner.py --runtime onnxruntime -j 2
    python tests/node/runner.py --expect tests/node/expect_cpu.txt
    python tests/node/runner.py --provider cuda --expect tests/node/expect_cuda.txt
    python tests/node/runner.py --expect tests/node/expect_cpu.txt --update-expectations
    python tests/node/runner.py --provider reference -j 2   # lockstep's float64 reference provider

The last line printed is always `N passed, M failed, K skipped`.
"""
from __future__ import annotations

import argparse
import datetime
import importlib
import json
import os
import re
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import warnings
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import onnx
from onnx import numpy_helper

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
CACHE_ROOT = REPO / "tests" / "node_data"
# Bump when the layout or the generation changes, so stale caches are ignored.
CACHE_FORMAT = 1
DEFAULT_RTOL = 1e-3
DEFAULT_ATOL = 1e-7
PROVIDERS = {"cpu": "CPUExecutionProvider", "cuda": "CUDAExecutionProvider",
             "reference": "ReferenceExecutionProvider"}
STATUSES = ("pass", "fail", "skip")
MAX_REASON = 300


@dataclass
class Result:
    name: str
    status: str  # pass | fail | skip
    reason: str = ""
    seconds: float = 0.0


@dataclass
class Case:
    name: str
    model: onnx.ModelProto
    model_bytes: bytes
    inputs: list = field(default_factory=list)
    outputs: list = field(default_factory=list)
    rtol: float = DEFAULT_RTOL
    atol: float = DEFAULT_ATOL


# ---------------------------------------------------------------- data cache


def default_data_dir() -> Path:
    # onnx generates the low-precision data (int4, float8, ...) through ml_dtypes, whose conversions differ between
    # versions: data made under another version must not be reused (a GPU machine's cache made without the pinned
    # wheel failed 24 int2/int4 Cast cases on every provider afterwards).
    try:
        import ml_dtypes
        dtypes = f"-ml_dtypes-{ml_dtypes.__version__}"
    except ImportError:
        dtypes = ""
    return CACHE_ROOT / f"onnx-{onnx.__version__}{dtypes}-v{CACHE_FORMAT}"


def value_kind(value_info: onnx.ValueInfoProto) -> str:
    return value_info.type.WhichOneof("value") or "unknown"


def to_proto(value, value_info: onnx.ValueInfoProto):
    kind, name = value_kind(value_info), value_info.name
    if kind == "sequence_type":
        return numpy_helper.from_list(value, name)
    if kind == "optional_type":
        return numpy_helper.from_optional(value, name)
    if kind == "map_type":
        return numpy_helper.from_dict(value, name)
    if isinstance(value, onnx.TensorProto):
        return value
    return numpy_helper.from_array(np.asarray(value), name)


def write_case(case_dir: Path, case) -> None:
    data_dir = case_dir / "test_data_set_0"
    data_dir.mkdir(parents=True)
    (case_dir / "model.onnx").write_bytes(case.model.SerializeToString())
    inputs, outputs = case.data_sets[0]
    graph = case.model.graph
    for prefix, values, infos in (("input", inputs, graph.input),
                                  ("output", outputs, graph.output)):
        for i, (value, info) in enumerate(zip(values, infos)):
            proto = to_proto(value, info)
            (data_dir / f"{prefix}_{i}.pb").write_bytes(proto.SerializeToString())


def collect_definitions() -> list:
    import onnx.backend.test.case.node as node_cases

    # The case definitions compute expected values with numpy and trip
    # overflow/NaN warnings on purpose.
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return list(node_cases.collect_testcases())


def generate(data_dir: Path) -> None:
    tmp = Path(tempfile.mkdtemp(prefix=data_dir.name + ".tmp-", dir=data_dir.parent))
    index = {}
    for case in collect_definitions():
        write_case(tmp / "node" / case.name, case)
        index[case.name] = {"rtol": case.rtol, "atol": case.atol}
    (tmp / "index.json").write_text(json.dumps(index, indent=0, sort_keys=True))
    try:
        tmp.rename(data_dir)
    except OSError:  # another process finished first; its copy is as good
        shutil.rmtree(tmp, ignore_errors=True)


def load_index(data_dir: Path | None = None) -> tuple[Path, dict]:
    """Case name -> {rtol, atol}; generates the data on first use."""
    data_dir = Path(data_dir) if data_dir else default_data_dir()
    index_file = data_dir / "index.json"
    if not index_file.exists() and data_dir == default_data_dir():
        data_dir.parent.mkdir(parents=True, exist_ok=True)
        generate(data_dir)
    if index_file.exists():
        return data_dir, json.loads(index_file.read_text())
    # A plain onnx data dir (e.g. onnx/backend/test/data) has no index.
    names = sorted(p.parent.name for p in (data_dir / "node").glob("*/model.onnx"))
    return data_dir, {n: {"rtol": DEFAULT_RTOL, "atol": DEFAULT_ATOL} for n in names}


def read_tensor(path: Path):
    proto = onnx.TensorProto()
    proto.ParseFromString(path.read_bytes())
    # to_array may return a read-only view of the proto's bytes; these tests
    # are about the ops, so feed ordinary arrays (read-only feeds belong in
    # the API tests).
    return np.array(numpy_helper.to_array(proto))


def read_value(path: Path, value_info: onnx.ValueInfoProto):
    """A case's input or output: an array, a list of arrays (a sequence), or
    None or either of those (an optional)."""
    kind = value_kind(value_info)
    if kind == "tensor_type":
        return read_tensor(path)
    proto = onnx.SequenceProto() if kind == "sequence_type" else onnx.OptionalProto()
    proto.ParseFromString(path.read_bytes())
    value = numpy_helper.to_list(proto) if kind == "sequence_type" else numpy_helper.to_optional(proto)
    return [np.array(v) for v in value] if isinstance(value, list) else value


def load_case(data_dir: Path, name: str, tol: dict) -> Case:
    case_dir = data_dir / "node" / name
    model_bytes = (case_dir / "model.onnx").read_bytes()
    model = onnx.load_model_from_string(model_bytes)
    case = Case(name, model, model_bytes, rtol=tol.get("rtol", DEFAULT_RTOL),
                atol=tol.get("atol", DEFAULT_ATOL))
    if not supported_types(model):
        return case  # skipped before running; no need to decode the data
    data = case_dir / "test_data_set_0"
    case.inputs = [read_value(data / f"input_{i}.pb", v) for i, v in enumerate(model.graph.input)]
    case.outputs = [read_value(data / f"output_{i}.pb", v) for i, v in enumerate(model.graph.output)]
    return case


def tensors_inside(type_proto: onnx.TypeProto) -> bool:
    """A tensor, a sequence of tensors, or an optional of either."""
    kind = type_proto.WhichOneof("value")
    if kind == "sequence_type":
        return type_proto.sequence_type.elem_type.WhichOneof("value") == "tensor_type"
    if kind == "optional_type":
        return tensors_inside(type_proto.optional_type.elem_type)
    return kind == "tensor_type"


def supported_types(model: onnx.ModelProto) -> bool:
    """Graph inputs and outputs are tensors, sequences of tensors or optionals
    of those (no maps)."""
    return all(tensors_inside(v.type) for v in list(model.graph.input) + list(model.graph.output))


# ---------------------------------------------------------------- running


SOURCE_LOCATION = re.compile(r"\S+\.(?:c|cc|cpp|cxx|cu|cuh|h|hpp):\d+:?\s+")


# GCC's __PRETTY_FUNCTION__: optional return type/specifiers, a qualified name.
SIGNATURE_HEAD = re.compile(r"(?:[\w:<>,*&~]+ ){0,3}[\w~<>,]*::[\w:~<>,]*\(")
SIGNATURE_TAIL = re.compile(r"::\S+| const\b| volatile\b| override\b| noexcept\b| \[with [^\]]*\]")


def after_parens(text: str, i: int) -> int:
    """Index after the parenthesis that closes text[i] == '(', or -1."""
    depth = 0
    for j in range(i, len(text)):
        depth += {"(": 1, ")": -1}.get(text[j], 0)
        if depth == 0:
            return j + 1
    return -1


def skip_signature(text: str, i: int) -> int:
    """Index after a C++ function signature starting at text[i], or i if none."""
    head = SIGNATURE_HEAD.match(text, i)
    j = after_parens(text, head.end() - 1) if head else -1
    if j < 0:
        return i
    while tail := SIGNATURE_TAIL.match(text, j):
        j = tail.end()
    return j + (text[j:j + 1] == " ")


def strip_source_locations(text: str) -> str:
    """Drop `file.cc:123 ns::Func(args...)` prefixes: they crowd the real
    message out of a one-line reason and change with every rebuild."""
    out, pos = [], 0
    for m in SOURCE_LOCATION.finditer(text):
        if m.start() < pos:
            continue
        out.append(text[pos:m.start()])
        pos = skip_signature(text, m.end())
    return "".join(out) + text[pos:]


def one_line(text: str) -> str:
    text = strip_source_locations(" ".join(str(text).split()))
    return text if len(text) <= MAX_REASON else text[: MAX_REASON - 3] + "..."


def describe(exc: BaseException) -> str:
    return one_line(f"{type(exc).__name__}: {exc}")


def make_session(rt, model_bytes: bytes, provider: str, threads: int):
    if provider == "reference":  # lockstep's float64 yardstick, whatever --runtime says
        from lockstep.reference import ReferenceSession
        return ReferenceSession(model_bytes)
    opts = rt.SessionOptions()
    if threads:
        opts.intra_op_num_threads = threads
    try:
        opts.log_severity_level = 3  # onnxruntime: keep warnings off the console
    except Exception:
        pass
    sess = rt.InferenceSession(model_bytes, sess_options=opts, providers=[PROVIDERS[provider]])
    active = getattr(sess, "get_providers", lambda: [PROVIDERS[provider]])()
    if PROVIDERS[provider] not in active:
        raise RuntimeError(f"{PROVIDERS[provider]} not active (session has {active})")
    return sess


def run_model(rt, case: Case, provider: str, threads: int) -> tuple[list, object]:
    sess = make_session(rt, case.model_bytes, provider, threads)
    feeds = {vi.name: x for vi, x in zip(case.model.graph.input, case.inputs)}
    names = [vi.name for vi in case.model.graph.output]
    return list(sess.run(names, feeds)), sess


# Ops whose CPU kernel a CUDA session runs by design (strings and maps live on the host; README).
HOST_ONLY_OPS = {"StringConcat", "StringSplit", "StringNormalizer", "RegexFullMatch", "LabelEncoder", "OneHotEncoder",
                 "CategoryMapper", "ZipMap", "DictVectorizer"}


def cpu_fallback(sess) -> list[str]:
    """Op types a GPU session ran on the CPU (lockstep's fallback_ops)."""
    return sorted(set(getattr(sess, "fallback_ops", list)()))


def is_float(dtype: np.dtype) -> bool:
    return dtype.kind == "f" or "float" in dtype.name  # ml_dtypes floats are kind 'V'


def is_native(dtype: np.dtype) -> bool:
    return dtype.kind in "biufcOSU"


def mismatch_summary(out: np.ndarray, ref: np.ndarray, rtol: float, atol: float) -> str:
    a, b = out.astype(np.float64), ref.astype(np.float64)
    with np.errstate(all="ignore"):
        bad = ~np.isclose(a, b, rtol=rtol, atol=atol, equal_nan=True)
        err = np.abs(a - b)[bad]
        rel = (err / np.abs(b[bad]))
    err, rel = err[np.isfinite(err)], rel[np.isfinite(rel)]
    max_abs = f"{err.max():.3g}" if err.size else "inf/nan"
    max_rel = f"{rel.max():.3g}" if rel.size else "inf"
    return f"{bad.sum()}/{bad.size} mismatched, max abs err {max_abs}, max rel err {max_rel}"


def compare_output(i: int, name: str, out, ref, rtol: float, atol: float) -> str | None:
    """None if `out` matches `ref` as onnx's backend test runner would judge it."""
    where = f"output {i} ({name})"
    if ref is None or isinstance(ref, list):  # an empty optional, or a sequence
        if ref is None or not isinstance(out, list) or len(out) != len(ref):
            return None if out is None and ref is None else f"{where}: got {_value_text(out)}, expected {_value_text(ref)}"
        for k, (o, r) in enumerate(zip(out, ref)):
            reason = compare_output(i, f"{name}[{k}]", o, r, rtol, atol)
            if reason:
                return reason
        return None
    if not isinstance(out, np.ndarray):
        return f"{where}: got {type(out).__name__}, not numpy.ndarray"
    if out.shape != ref.shape:
        return f"{where}: shape {out.shape}, expected {ref.shape}"
    if ref.dtype == object:
        out_s, ref_s = out.astype(object), ref.astype(object)
        bad = int(sum(x != y for x, y in zip(out_s.ravel(), ref_s.ravel())))
        return f"{where}: {bad}/{ref.size} strings differ" if bad else None
    if out.dtype != ref.dtype:
        return f"{where}: dtype {out.dtype}, expected {ref.dtype}"
    if ref.dtype.name == "bfloat16":
        rtol = max(rtol, 2**-6)  # two bfloat16 ulps, as onnx's runner allows
    if not is_native(ref.dtype):  # numpy cannot promote ml_dtypes with float
        out, ref = out.astype(np.float32), ref.astype(np.float32)
    try:
        np.testing.assert_allclose(out, ref, rtol=rtol, atol=atol)
    except AssertionError:
        return f"{where}: {mismatch_summary(out, ref, rtol, atol)}"
    return None


def compare_outputs(case: Case, outs: list) -> str | None:
    if len(outs) != len(case.outputs):
        return f"{len(outs)} outputs, expected {len(case.outputs)}"
    names = [vi.name for vi in case.model.graph.output]
    for i, (out, ref) in enumerate(zip(outs, case.outputs)):
        reason = compare_output(i, names[i], out, ref, case.rtol, case.atol)
        if reason:
            return reason
    return None


# ----------------------------------------------------- bitwise vs the CPU


def ordered_ints(bits: np.ndarray, nbits: int) -> list[int]:
    """Sign-magnitude float bit patterns -> ints whose difference counts ulps
    (-0.0 sits one below +0.0, so a sign flip of zero counts)."""
    sign = 1 << (nbits - 1)
    return [-(int(b) & (sign - 1)) - 1 if int(b) & sign else int(b) for b in bits]


def float_nan(x: np.ndarray) -> np.ndarray:
    return np.isnan(x.astype(np.float32) if not is_native(x.dtype) else x)


def ulp_distances(a: np.ndarray, b: np.ndarray, ua: np.ndarray, ub: np.ndarray) -> list[int]:
    """Distances between mismatched elements: ulps for floats, units for ints."""
    if is_float(a.dtype):
        nbits = 8 * a.dtype.itemsize
        return [abs(x - y) for x, y in zip(ordered_ints(ua, nbits), ordered_ints(ub, nbits))]
    if a.dtype.kind in "biu" or "int" in a.dtype.name:  # ml_dtypes int4/int2 too
        return [abs(int(x) - int(y)) for x, y in zip(a.astype(object), b.astype(object))]
    return []


def bitwise_diff(a: np.ndarray, b: np.ndarray) -> tuple[str, int] | None:
    """None if a and b are equal bit for bit (any NaN equals any NaN), else
    (description, worst distance in ulps; -1 where ulps mean nothing)."""
    if a.dtype != b.dtype or a.shape != b.shape:
        return f"{a.dtype}{list(a.shape)} vs {b.dtype}{list(b.shape)}", -1
    if a.dtype == object:
        bad = sum(x != y for x, y in zip(a.ravel(), b.ravel()))
        return (f"{bad}/{a.size} strings differ", -1) if bad else None
    uint = np.dtype(f"u{a.dtype.itemsize}")
    ua = np.ascontiguousarray(a).view(uint).ravel()
    ub = np.ascontiguousarray(b).view(uint).ravel()
    bad = ua != ub
    if is_float(a.dtype):
        bad &= ~(float_nan(a).ravel() & float_nan(b).ravel())
    if not bad.any():
        return None
    dist = ulp_distances(a.ravel()[bad], b.ravel()[bad], ua[bad], ub[bad])
    worst = max(dist, default=-1)
    text = f"{int(bad.sum())}/{a.size} differ" + (f", worst {worst} ulp" if worst >= 0 else "")
    return text, worst


def _value_text(value) -> str:
    if value is None:
        return "no value (an empty optional)"
    return f"a sequence of {len(value)}" if isinstance(value, list) else type(value).__name__


def value_bitwise_diff(a, b) -> tuple[str, int] | None:
    """bitwise_diff for arrays, sequences (item by item) and empty optionals."""
    if a is None or b is None or isinstance(a, list) or isinstance(b, list):
        if not (isinstance(a, list) and isinstance(b, list)):
            return None if a is None and b is None else (f"{_value_text(a)} vs {_value_text(b)}", -1)
        if len(a) != len(b):
            return f"sequences of {len(a)} vs {len(b)}", -1
        diffs = [d for d in (bitwise_diff(np.asarray(x), np.asarray(y)) for x, y in zip(a, b)) if d]
        return max(diffs, key=lambda d: d[1]) if diffs else None
    return bitwise_diff(np.asarray(a), np.asarray(b))


def compare_bitwise(case: Case, cpu_outs: list, outs: list) -> str | None:
    """The mismatching output with the largest ulp distance, described."""
    names = [vi.name for vi in case.model.graph.output]
    diffs = []
    for i, (c, o) in enumerate(zip(cpu_outs, outs)):
        diff = value_bitwise_diff(c, o)
        if diff:
            diffs.append((diff[1], f"output {i} ({names[i]}) not bitwise equal to CPU: {diff[0]}"))
    return max(diffs)[1] if diffs else None


# ----------------------------------------------------------- one case


def run_case(rt, case: Case, provider: str, threads: int = 0) -> Result:
    start = time.perf_counter()
    status, reason = evaluate(rt, case, provider, threads)
    return Result(case.name, status, reason, round(time.perf_counter() - start, 4))


def evaluate(rt, case: Case, provider: str, threads: int) -> tuple[str, str]:
    if not supported_types(case.model):
        return "skip", "map type"
    try:
        outs, sess = run_model(rt, case, provider, threads)
        reason = compare_outputs(case, outs)
        if reason or provider != "cuda":
            return ("fail", reason) if reason else ("pass", "")
        reason = check_against_cpu(rt, case, outs, threads)
        if reason:
            return "fail", reason
        # Correct, but a case run by CPU kernels says nothing about the GPU
        # ones; as a skip, losing a GPU kernel shows up as a regression.
        # Strings live on the host by design (README), so the string ops pass.
        fallback = [op for op in cpu_fallback(sess) if op not in HOST_ONLY_OPS]
        if fallback:
            return "skip", "ran on the CPU: no CUDA kernel for " + ", ".join(fallback)
    except Exception as exc:
        return "fail", describe(exc)
    return "pass", ""


def check_against_cpu(rt, case: Case, outs: list, threads: int) -> str | None:
    try:
        cpu_outs, _ = run_model(rt, case, "cpu", threads)
    except Exception:
        return None  # bit-exactness is only required where the CPU passes
    if compare_outputs(case, cpu_outs):
        return None
    return compare_bitwise(case, cpu_outs, outs)


def run_named(rt, data_dir: Path, index: dict, name: str, provider: str, threads: int) -> Result:
    try:
        case = load_case(data_dir, name, index[name])
    except Exception as exc:
        return Result(name, "fail", "loading the case: " + describe(exc))
    return run_case(rt, case, provider, threads)


# ------------------------------------------------ isolated worker processes


class Worker:
    """A child process that runs cases one at a time, so a crash or a hang
    costs one case, not the run."""

    def __init__(self, argv: list[str], timeout: float):
        self.argv, self.timeout = argv, timeout
        self.proc = None
        self.buf, self.eof = b"", False

    def start(self) -> None:
        self.log = tempfile.TemporaryFile()
        # The parent may have found the runtime through a sys.path edit
        # (conftest, a build dir); the child must find the same one.
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
        self.proc = subprocess.Popen(self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=self.log, env=env)
        self.buf, self.eof = b"", False
        if self.readline(max(self.timeout, 120)) != "ready":
            raise RuntimeError("worker did not start: " + self.stop())

    def readline(self, timeout: float) -> str | None:
        deadline = time.monotonic() + timeout
        fd = self.proc.stdout.fileno()
        while b"\n" not in self.buf:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                return None
            chunk = os.read(fd, 65536)
            if not chunk:
                self.eof = True
                return None
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        return line.decode()

    def stop(self) -> str:
        """Kill the child; describe how it ended and its last stderr line."""
        if self.proc.poll() is None:
            self.proc.kill()
        rc = self.proc.wait()
        how = f"killed by {signal.Signals(-rc).name}" if rc < 0 else f"exit status {rc}"
        self.log.seek(0)
        lines = [l for l in self.log.read().decode(errors="replace").splitlines() if l.strip()]
        self.proc = None
        return how + (f"; last stderr: {lines[-1]}" if lines else "")

    def run(self, name: str) -> Result:
        if self.proc is None:
            self.start()
        start = time.perf_counter()
        try:
            self.proc.stdin.write(name.encode() + b"\n")
            self.proc.stdin.flush()
        except BrokenPipeError:
            pass
        line = self.readline(self.timeout)
        if line is not None:
            return Result(**json.loads(line))
        timed_out = not self.eof
        how = self.stop()
        why = f"timed out after {self.timeout:g}s" if timed_out else f"worker crashed ({how})"
        return Result(name, "fail", one_line(why), round(time.perf_counter() - start, 4))

    def close(self) -> None:
        if self.proc is not None:
            self.proc.stdin.close()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def worker_argv(runtime: str, provider: str, data_dir: Path, threads: int) -> list[str]:
    return [sys.executable, str(Path(__file__).resolve()), "--worker",
            "--runtime", runtime, "--provider", provider,
            "--data-dir", str(data_dir), "--threads", str(threads)]


def worker_main(args) -> int:
    protocol = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)  # whatever the runtime prints must not corrupt the protocol
    rt = importlib.import_module(args.runtime)
    data_dir, index = load_index(args.data_dir)
    protocol.write("ready\n")
    for line in sys.stdin:
        res = run_named(rt, data_dir, index, line.strip(), args.provider, args.threads)
        protocol.write(json.dumps(asdict(res)) + "\n")
    return 0


def run_isolated(names: list[str], argv: list[str], jobs: int, timeout: float) -> dict:
    results, lock = {}, threading.Lock()
    pending = list(reversed(names))

    def drain() -> None:
        worker = Worker(argv, timeout)
        while True:
            with lock:
                if not pending:
                    break
                name = pending.pop()
            try:
                res = worker.run(name)
            except Exception as exc:
                res = Result(name, "fail", describe(exc))
            with lock:
                results[name] = res
        worker.close()

    # Daemon threads, so that Ctrl-C ends the run.
    threads = [threading.Thread(target=drain, daemon=True) for _ in range(max(1, jobs))]
    for t in threads:
        t.start()
    for t in threads:
        while t.is_alive():
            t.join(0.5)
    return results


# ------------------------------------------------------------- the run


def provider_missing(rt, provider: str) -> str | None:
    if provider == "reference":
        return None
    available = getattr(rt, "get_available_providers", lambda: [PROVIDERS[provider]])()
    if PROVIDERS[provider] in available:
        return None
    return f"{PROVIDERS[provider]} is not available in {rt.__name__} (it has {available})"


def select_names(index: dict, pattern: str | None) -> list[str]:
    names = sorted(index)
    return [n for n in names if re.search(pattern, n)] if pattern else names


def run_cases(names: list[str], runtime: str, provider: str, data_dir: Path, index: dict,
              jobs: int = 1, isolate: bool = False, threads: int = 0,
              timeout: float = 300) -> dict:
    """Case name -> Result. Runs in-process unless jobs > 1 or isolate."""
    if jobs > 1 or isolate:
        argv = worker_argv(runtime, provider, data_dir, threads)
        return run_isolated(names, argv, jobs, timeout)
    rt = importlib.import_module(runtime)
    return {n: run_named(rt, data_dir, index, n, provider, threads) for n in names}


def summary(results: dict) -> str:
    counts = {s: sum(r.status == s for r in results.values()) for s in STATUSES}
    return f"{counts['pass']} passed, {counts['fail']} failed, {counts['skip']} skipped"


# ----------------------------------------------------------- expectations


def read_expectations(path: Path) -> dict:
    """Case name -> (status, reason)."""
    expected = {}
    for line in Path(path).read_text().splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        parts = line.split(None, 2)
        status = parts[1] if len(parts) > 1 else ""
        if status not in STATUSES:
            raise ValueError(f"{path}: bad line: {line!r}")
        expected[parts[0]] = (status, parts[2] if len(parts) > 2 else "")
    return expected


def expectation_lines(entries: dict) -> list[str]:
    return [f"{name}  {status}" + (f"  {reason}" if reason else "")
            for name, (status, reason) in sorted(entries.items())]


def write_expectations(path: Path, entries: dict, runtime: str, provider: str) -> None:
    fake = {n: Result(n, s) for n, (s, _) in entries.items()}
    rel = os.path.relpath(path, REPO)
    header = [
        f"# ONNX backend node tests: expected results for {runtime}, provider {provider}.",
        f"# Generated {datetime.date.today().isoformat()} from onnx {onnx.__version__}"
        f" ({len(entries)} cases: {summary(fake)}).",
        "# Regenerate with:",
        f"#   python tests/node/runner.py --runtime {runtime} --provider {provider}"
        f" --expect {rel} --update-expectations",
        "# Format: case_name  pass | case_name  fail  reason | case_name  skip  reason",
        "# A case listed as pass that does not pass is a regression (non-zero exit).",
    ]
    Path(path).write_text("\n".join(header + expectation_lines(entries)) + "\n")


@dataclass
class Diff:
    regressions: list = field(default_factory=list)
    unexpected_passes: list = field(default_factory=list)
    new_cases: list = field(default_factory=list)
    stale: list = field(default_factory=list)


def compare_expectations(results: dict, expected: dict, complete: bool = True) -> Diff:
    diff = Diff()
    for name, res in sorted(results.items()):
        want = expected.get(name, (None, ""))[0]
        if want is None:
            diff.new_cases.append(res)
        elif want == "pass" and res.status != "pass":
            diff.regressions.append(res)
        elif want != "pass" and res.status == "pass":
            diff.unexpected_passes.append(res)
    if complete:
        diff.stale = sorted(set(expected) - set(results))
    return diff


def merged_entries(results: dict, expected: dict, complete: bool) -> dict:
    entries = {} if complete else dict(expected)
    entries.update({n: (r.status, r.reason) for n, r in results.items()})
    return entries


# ------------------------------------------------------------------ CLI


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--runtime", default="lockstep", help="module with an onnxruntime-like API")
    p.add_argument("--provider", default="cpu", choices=sorted(PROVIDERS))
    p.add_argument("--filter", help="only cases whose name matches this regex (re.search)")
    p.add_argument("--expect", type=Path, help="expectation list to check against")
    p.add_argument("--update-expectations", action="store_true",
                   help="rewrite the --expect file from this run")
    p.add_argument("--report", type=Path, help="write per-case results as JSON")
    p.add_argument("-j", "--jobs", type=int, default=1,
                   help="parallel worker processes (implies --isolate when > 1)")
    p.add_argument("--isolate", action="store_true",
                   help="run cases in child processes so crashes/hangs cost one case")
    p.add_argument("--timeout", type=float, default=300,
                   help="per-case limit in seconds (isolated runs only)")
    p.add_argument("--threads", type=int, default=0,
                   help="SessionOptions.intra_op_num_threads (0: runtime default)")
    p.add_argument("--data-dir", type=Path,
                   help="case data (default: generated under tests/node_data/)")
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.update_expectations and not args.expect:
        p.error("--update-expectations needs --expect FILE")
    return args


def print_results(results: dict) -> None:
    for name, res in sorted(results.items()):
        if res.status != "pass":
            print(f"{res.status.upper()} {name}: {res.reason}")


def print_diff(diff: Diff) -> None:
    for res in diff.regressions:
        print(f"REGRESSION {res.name}: expected pass, got {res.status}: {res.reason}")
    for res in diff.unexpected_passes:
        print(f"unexpected pass (update the list): {res.name}")
    for res in diff.new_cases:
        print(f"new case (not in the list): {res.name}: {res.status}")
    for name in diff.stale:
        print(f"stale entry (no such case): {name}")


def write_report(path: Path, results: dict, args, seconds: float) -> None:
    report = {
        "runtime": args.runtime, "provider": args.provider, "onnx": onnx.__version__,
        "date": datetime.datetime.now().isoformat(timespec="seconds"),
        "summary": summary(results), "seconds": round(seconds, 2),
        "results": [asdict(r) for _, r in sorted(results.items())],
    }
    Path(path).write_text(json.dumps(report, indent=1) + "\n")


def main(argv=None) -> int:
    args = parse_args(argv)
    if args.worker:
        return worker_main(args)
    start = time.perf_counter()
    rt = importlib.import_module(args.runtime)  # fail once, loudly, not once per case
    missing = provider_missing(rt, args.provider)
    if missing:
        print(missing, file=sys.stderr)
        return 2
    data_dir, index = load_index(args.data_dir)
    names = select_names(index, args.filter)
    results = run_cases(names, args.runtime, args.provider, data_dir, index,
                        args.jobs, args.isolate, args.threads, args.timeout)
    elapsed = time.perf_counter() - start
    print_results(results)
    status = int(any(r.status == "fail" for r in results.values()))
    if args.expect:
        expected = read_expectations(args.expect) if args.expect.exists() else {}
        complete = not args.filter
        diff = compare_expectations(results, expected, complete)
        print_diff(diff)
        status = int(bool(diff.regressions))
        if args.update_expectations:
            entries = merged_entries(results, expected, complete)
            write_expectations(args.expect, entries, args.runtime, args.provider)
            print(f"wrote {args.expect} ({len(entries)} cases)")
            status = 0
    if args.report:
        write_report(args.report, results, args, elapsed)
    sys.stdout.flush()
    print(f"time: {elapsed:.1f}s", file=sys.stderr)
    print(summary(results))
    return status


if __name__ == "__main__":
    sys.exit(main())
