"""`lockstep compare`: runs one model on several runtimes with the same inputs and measures each float output against
the float64 reference provider, and the runtimes against each other (bit identity, ulp distance).

compare() returns a plain dict (what `--json` writes):
  inputs.<name>: dtype, shape, how it was made
  outputs.<name>: dtype, shape, bit_identical (lockstep providers among themselves; None with fewer than two),
      max_ulp_between (the same providers), and per runtime: max_abs_vs_reference, max_rel_vs_reference,
      max_ulp_vs_reference, rel_l2_vs_reference, max_ulp_vs_baseline, bit_identical_to_baseline
  nodes, first_divergence (with per_node=True): every intermediate tensor compared the same way
"""

import os
import sys
import time

import numpy as np

import lockstep
from lockstep import reference

# lockstep's providers by their short names.
LOCKSTEP_PROVIDERS = {"cpu": lockstep.CPU, "cuda": lockstep.CUDA}
REFERENCE = "reference"
# A node's error against the reference "jumps" when its output's rel-L2 error exceeds this many times the largest
# of its inputs' and this floor (well above what one float32 op, or a long float32 sum, adds).
JUMP_FACTOR = 16.0
JUMP_FLOOR = 1e-5


class Runtime:
    """A runtime to compare: a name and a function from serialized model bytes to an object with run(names, feeds)."""

    def __init__(self, name, make_session, lockstep_provider=False):
        self.name = name
        self.make_session = make_session
        self.lockstep_provider = lockstep_provider


def _lockstep_runtime(name):
    provider = LOCKSTEP_PROVIDERS[name]
    if provider not in lockstep.get_available_providers():
        raise ValueError(f"provider '{name}' is not available here (available: "
                         f"{', '.join(lockstep.get_available_providers())})")
    return Runtime(name, lambda model: lockstep.InferenceSession(model, providers=[provider]), True)


def _onnxruntime_runtimes():
    try:
        import onnxruntime
    except ImportError:
        raise ValueError("--against onnxruntime needs the onnxruntime package") from None
    options = onnxruntime.SessionOptions()
    options.log_severity_level = 3
    found = [("onnxruntime-cpu", "CPUExecutionProvider")]
    if "CUDAExecutionProvider" in onnxruntime.get_available_providers():
        found.append(("onnxruntime-cuda", "CUDAExecutionProvider"))
    return [Runtime(name, lambda model, p=p: onnxruntime.InferenceSession(_readable_ir(model), options,
                                                                          providers=[p]))
            for name, p in found]


def _readable_ir(model_bytes, newest=10):
    """The model with its IR version lowered to one every onnxruntime since 1.16 reads: onnx 1.23 writes IR 14,
    which onnxruntime 1.30 refuses, though the graphs lockstep runs need nothing newer."""
    proto = _load(model_bytes)
    if proto.ir_version <= newest:
        return model_bytes
    proto.ir_version = newest
    return proto.SerializeToString()


def resolve_runtimes(providers, against=None):
    """Runtime objects for provider names (cpu, cuda, reference, or the full ...ExecutionProvider names) and
    Runtime objects, plus onnxruntime's when against == 'onnxruntime'. The float64 reference runs whatever is named;
    naming it adds a row of its results rounded once to float32."""
    aliases = {lockstep.CPU: "cpu", lockstep.CUDA: "cuda", reference.NAME: REFERENCE}
    if not providers:
        providers = ["cpu", "cuda"] if lockstep.CUDA in lockstep.get_available_providers() else ["cpu"]
    runtimes = []
    for p in providers:
        if isinstance(p, Runtime):
            runtimes.append(p)
            continue
        name = aliases.get(p, p)
        if name == REFERENCE:
            runtimes.append(Runtime(REFERENCE, None))  # its rows are the float64 results rounded once
            continue
        if name not in LOCKSTEP_PROVIDERS:
            raise ValueError(f"unknown provider '{p}' (use cpu, cuda or reference)")
        runtimes.append(_lockstep_runtime(name))
    if against == "onnxruntime":
        runtimes += _onnxruntime_runtimes()
    elif against:
        raise ValueError(f"--against takes onnxruntime, got '{against}'")
    return runtimes


# ------------------------------------------------------------------ inputs

_NUMPY = {1: np.float32, 11: np.float64, 10: np.float16, 2: np.uint8, 3: np.int8, 4: np.uint16, 5: np.int16,
          6: np.int32, 7: np.int64, 12: np.uint32, 13: np.uint64, 9: np.bool_}
# Default sizes for symbolic dims that --shape does not give: batch 1, images 224x224, sequences 16, others 1.
_IMAGE_SIDE, _SEQUENCE = 224, 16


def parse_shapes(items):
    """['NAME=1x3x224x224', ...] -> {NAME: [1, 3, 224, 224]}"""
    shapes = {}
    for item in items or []:
        name, _, text = item.partition("=")
        try:
            shapes[name] = [int(d) for d in text.split("x")]
        except ValueError:
            raise ValueError(f"--shape takes NAME=DIMS with DIMS like 1x3x224x224, got '{item}'") from None
    return shapes


def _default_dim(axis, rank, is_float):
    if axis == 0:
        return 1
    if is_float and rank == 4 and axis >= 2:
        return _IMAGE_SIDE
    if not is_float and axis == rank - 1:
        return _SEQUENCE
    return 1


def _index_bounds(graph):
    """Input name -> exclusive upper bound of valid integer values, where a Gather (embedding lookup, indices) or
    GatherElements reads it as indices into a tensor of known size."""
    sizes = {t.name: list(t.dims) for t in graph.initializer}
    sizes.update({n.output[0]: list(a.t.dims) for n in graph.node if n.op_type == "Constant"
                  for a in n.attribute if a.name == "value"})
    bounds = {}
    for node in graph.node:
        if node.op_type not in ("Gather", "GatherElements") or len(node.input) < 2:
            continue
        data = sizes.get(node.input[0])
        axis = next((a.i for a in node.attribute if a.name == "axis"), 0)
        if data and -len(data) <= axis < len(data):
            bounds[node.input[1]] = min(bounds.get(node.input[1], data[axis]), data[axis])
    return bounds


def make_inputs(model_proto, given=None, shapes=None, seed=0):
    """(feeds, description): the given arrays, and seeded random ones for the other inputs: standard normal floats,
    integers in [0, n) when they index a tensor of n, 0 or 1 for an input named like a mask, else [0, 10); random
    bools. Symbolic dims come from `shapes`
    or the defaults above, and `description` says which were used."""
    graph = model_proto.graph
    initializers = {t.name for t in graph.initializer}
    args = [v for v in graph.input if v.name not in initializers]
    shapes, given = dict(shapes or {}), dict(given or {})
    unknown = (set(shapes) | set(given)) - {a.name for a in args}
    if unknown:
        raise ValueError(f"no input of the model is named {', '.join(sorted(unknown))} "
                         f"(inputs: {', '.join(a.name for a in args)})")
    bounds = _index_bounds(graph)
    rng = np.random.default_rng(seed)
    feeds, description = {}, {}
    for arg in args:
        np_type = _NUMPY.get(arg.type.tensor_type.elem_type)
        if arg.name in given:
            feeds[arg.name] = np.asarray(given[arg.name])
            description[arg.name] = {"source": "given"}
        else:
            if np_type is None:
                raise ValueError(f"input '{arg.name}': cannot make random values of its element type")
            dims, defaulted = _dims(arg, shapes.get(arg.name), np.issubdtype(np_type, np.floating))
            bound = bounds.get(arg.name) or (2 if "mask" in arg.name.lower() else None)
            feeds[arg.name], source = _random(np_type, dims, bound, rng)
            description[arg.name] = {"source": source}
            if defaulted:
                description[arg.name]["defaulted_dims"] = defaulted
        description[arg.name].update(dtype=str(feeds[arg.name].dtype), shape=list(feeds[arg.name].shape))
    return feeds, description


def _dims(arg, shape, is_float):
    """(dims, {symbolic name: default used}) of one input."""
    if shape is not None:
        return list(shape), {}
    declared = arg.type.tensor_type.shape.dim
    dims, defaulted = [], {}
    for axis, d in enumerate(declared):
        if d.HasField("dim_value"):
            dims.append(d.dim_value)
        else:
            dims.append(_default_dim(axis, len(declared), is_float))
            defaulted[d.dim_param or f"axis {axis}"] = dims[-1]
    return dims, defaulted


def _random(np_type, dims, bound, rng):
    if np_type == np.bool_:
        return rng.integers(0, 2, size=dims).astype(np.bool_), "random bools"
    if np.issubdtype(np_type, np.integer):
        high = bound if bound else 10
        why = {None: "", 2: " (a mask, by its name)"}.get(bound, " (indices: the size they index)")
        return rng.integers(0, high, size=dims).astype(np_type), f"random integers in [0, {high}){why}"
    return rng.standard_normal(size=dims).astype(np_type), "standard normal"


# ------------------------------------------------------------------ figures


def _ordered(a):
    """float32/float64 bits as integers ordered like the floats (a difference counts ulps)."""
    bits = np.ascontiguousarray(a).view(np.int32 if a.dtype == np.float32 else np.int64).astype(np.int64)
    return np.where(bits < 0, np.int64(-(2 ** (8 * a.dtype.itemsize - 1))) - bits, bits)


def _both_nan_or_equal_bits(a, b):
    uint = np.dtype(f"u{a.dtype.itemsize}")
    same = np.ascontiguousarray(a).view(uint) == np.ascontiguousarray(b).view(uint)
    if a.dtype.kind == "f":
        same |= np.isnan(a) & np.isnan(b)
    return same


def between(a, b):
    """(bit-identical, max ulp distance) of two results of one output; NaN equals NaN."""
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype != b.dtype or a.shape != b.shape:
        return False, None
    a, b = a.ravel(), b.ravel()
    same = _both_nan_or_equal_bits(a, b)
    if same.all():
        return True, 0
    if a.dtype not in (np.float32, np.float64):
        return False, None
    differ = ~same
    if (np.isnan(a) | np.isnan(b))[differ].any():
        return False, float("inf")
    return False, int(np.abs(_ordered(a)[differ] - _ordered(b)[differ]).max())


def against_reference(value, exact):
    """Errors of a float result against the unrounded float64 result: max abs, max rel (over nonzero reference
    values), max ulp (in float32 ulps of the reference value, so a correctly rounded result is at most 0.5) and
    rel-L2. Elements where both are NaN, or both the same infinity, count as exact; any other NaN or infinity makes
    the figures inf and is counted in nonfinite_mismatches."""
    y = np.asarray(value).astype(np.float64).ravel()
    r = np.asarray(exact).astype(np.float64).ravel()
    if y.shape != r.shape:
        return {"error": f"shape {list(np.shape(value))}, reference {list(np.shape(exact))}"}
    agree = (np.isnan(y) & np.isnan(r)) | (np.isinf(y) & (y == r))
    finite = np.isfinite(y) & np.isfinite(r)
    bad = int((~agree & ~finite).sum())
    err = np.abs(y[finite] - r[finite])
    ref = r[finite]
    spacing = np.spacing(np.abs(ref).astype(np.float32)).astype(np.float64)
    nonzero = ref != 0
    norm = np.sqrt(np.sum(ref * ref))
    figures = {
        "max_abs_vs_reference": float(err.max()) if err.size else 0.0,
        "max_rel_vs_reference": float((err[nonzero] / np.abs(ref[nonzero])).max()) if nonzero.any() else 0.0,
        "max_ulp_vs_reference": float((err / spacing).max()) if err.size else 0.0,
        "rel_l2_vs_reference": float(np.sqrt(np.sum(err * err)) / norm) if norm > 0 else float(np.sqrt(np.sum(err * err))),
        "nonfinite_mismatches": bad,
    }
    if bad:
        figures.update({k: float("inf") for k in figures if k != "nonfinite_mismatches"})
    return figures


def ulp_errors(value, exact):
    """Per-element error in float32 ulps of the float64 value (0 where both are the same NaN/infinity, inf where
    only one is)."""
    y = np.asarray(value).astype(np.float64).ravel()
    r = np.asarray(exact).astype(np.float64).ravel()
    with np.errstate(all="ignore"):
        errors = np.abs(y - r) / np.spacing(np.abs(r).astype(np.float32)).astype(np.float64)
    errors[(np.isnan(y) & np.isnan(r)) | (np.isinf(y) & (y == r))] = 0.0
    return np.where(np.isnan(errors), np.inf, errors)


def output_figures(results, exact, runtimes):
    """The figures of one output from each runtime's result and the float64 one."""
    first = next(iter(results.values()))
    entry = {"dtype": str(first.dtype), "shape": list(first.shape)}
    ours = [rt.name for rt in runtimes if rt.lockstep_provider and rt.name in results]
    pairs = [between(results[ours[0]], results[n]) for n in ours[1:]]
    entry["bit_identical"] = all(p[0] for p in pairs) if pairs else None
    entry["max_ulp_between"] = max((p[1] for p in pairs), key=lambda u: -1 if u is None else u) if pairs else None
    baseline = ours[0] if ours else None
    for name, value in results.items():
        figures = {}
        if exact is not None and np.asarray(value).dtype.kind == "f":
            figures.update(against_reference(value, exact))
        elif exact is not None:
            figures["mismatches_vs_reference"] = int((np.asarray(value) != np.asarray(exact)).sum()) \
                if np.shape(value) == np.shape(exact) else None
        if baseline and name != baseline:
            same, ulp = between(results[baseline], value)
            figures.update(bit_identical_to_baseline=same, max_ulp_vs_baseline=ulp)
        entry[name] = figures
    return entry


# The figures of each runtime's row in the tables: key, heading, format.
FIGURES = [("max_abs_vs_reference", "max abs", "{:.3e}"), ("max_rel_vs_reference", "max rel", "{:.3e}"),
           ("max_ulp_vs_reference", "max ulp", "{:.2f}"), ("rel_l2_vs_reference", "rel-L2", "{:.3e}"),
           ("max_ulp_vs_baseline", "ulp vs baseline", "{}")]


def format_figure(value, form):
    """A figure for a table: '-' for none, yes/no for a bool."""
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    return form.format(value)


# ------------------------------------------------------------------ running


class Progress:
    """A one-line progress bar on stderr (only on a terminal; nothing otherwise)."""

    def __init__(self, total, enabled):
        self.total, self.done = max(total, 1), 0
        self.enabled = enabled and sys.stderr.isatty()
        self.start = time.monotonic()

    def step(self, what):
        self.done += 1
        if self.enabled:
            filled = int(30 * self.done / self.total)
            sys.stderr.write(f"\r[{'#' * filled}{'.' * (30 - filled)}] {self.done}/{self.total} "
                             f"{time.monotonic() - self.start:6.1f}s {what[:40]:<40}")
            sys.stderr.flush()

    def close(self):
        if self.enabled:
            sys.stderr.write("\n")


def _load(model):
    onnx = reference._onnx()
    if isinstance(model, onnx.ModelProto):
        return model
    if isinstance(model, (bytes, bytearray, memoryview)):
        return onnx.load_model_from_string(bytes(model))
    return onnx.load(model)


def _with_intermediates(proto):
    """The model with every top-level node output made a graph output too (typed where shape inference knows)."""
    onnx = reference._onnx()
    extended = onnx.ModelProto()
    extended.CopyFrom(proto)
    try:
        inferred = onnx.shape_inference.infer_shapes(extended).graph.value_info
    except Exception:
        inferred = []
    known = {v.name: v for v in inferred}
    present = {o.name for o in extended.graph.output}
    for node in extended.graph.node:
        for name in node.output:
            if name and name not in present:
                extended.graph.output.append(known.get(name) or onnx.helper.make_empty_tensor_value_info(name))
                present.add(name)
    return extended


def _rounded(value):
    # lockstep has no float64 tensors, so every float64 reference value stands for a float32 one.
    value = np.asarray(value)
    return value.astype(np.float32) if value.dtype == np.float64 else value


def _run(runtime, model_bytes, feeds, names):
    session = runtime.make_session(model_bytes)
    return dict(zip(names, session.run(names, feeds)))


def compare(model, providers=None, inputs=None, shapes=None, against=None, per_node=False, seed=0,
            report=None, progress=False):
    """Runs `model` (a path, bytes or ModelProto) on each of `providers` (names: cpu, cuda, reference; or Runtime
    objects) and, with against='onnxruntime', on onnxruntime, all on the same inputs (`inputs`: name -> array; the
    others seeded random, of `shapes`: name -> dims), and returns the figures described in this module's docstring.
    With `report` (a directory) it also writes the HTML report there.
    """
    proto = _load(model)
    runtimes = resolve_runtimes(providers, against)
    feeds, described = make_inputs(proto, inputs, shapes, seed)
    run_proto = _with_intermediates(proto) if per_node else proto
    model_bytes = run_proto.SerializeToString()
    outputs = [o.name for o in proto.graph.output]
    names = [o.name for o in run_proto.graph.output]
    bar = Progress(len(runtimes) + 2 + bool(report), progress)
    bar.step("float64 reference")
    session = reference.ReferenceSession(run_proto)
    exact = session.run_float64(None, feeds, intermediate=True) if per_node else \
        dict(zip(outputs, session.run_float64(outputs, feeds)))
    results = {}
    for runtime in runtimes:
        bar.step(runtime.name)
        if runtime.name == REFERENCE:
            results[REFERENCE] = {n: _rounded(exact[n]) for n in names if n in exact}
        else:
            results[runtime.name] = _run(runtime, model_bytes, feeds, names)
    bar.step("figures")
    result = {
        "model": os.fspath(model) if isinstance(model, (str, os.PathLike)) else "<in memory>",
        "seed": seed,
        "runtimes": [rt.name for rt in runtimes],
        "baseline": next((rt.name for rt in runtimes if rt.lockstep_provider), None),
        "inputs": described,
        "outputs": {name: output_figures({r: results[r][name] for r in results}, exact.get(name), runtimes)
                    for name in outputs},
    }
    if per_node:
        result["nodes"] = _node_figures(proto, results, exact, runtimes)
        result["first_divergence"] = first_divergence(result["nodes"], runtimes)
    if report:
        bar.step("report")
        from lockstep import report as html_report

        errors = {(name, r): ulp_errors(results[r][name], exact[name]) for name in outputs for r in results
                  if name in exact and np.asarray(results[r][name]).dtype.kind == "f"}
        result["report"] = html_report.write_report(result, errors, report)
    bar.close()
    return result


def _node_figures(proto, results, exact, runtimes):
    """Per top-level node, in graph order: op, name, input shapes and the figures of each float output."""
    shapes = {}
    for values in [exact] + list(results.values()):
        shapes.update({k: list(np.shape(v)) for k, v in values.items() if k not in shapes})
    nodes = []
    for index, node in enumerate(proto.graph.node):
        tensors = {}
        for name in node.output:
            if name and all(name in values for values in results.values()):
                tensors[name] = output_figures({r: results[r][name] for r in results}, exact.get(name), runtimes)
        nodes.append({"index": index, "name": node.name or f"#{index}", "op": node.op_type,
                      "inputs": list(node.input), "input_shapes": [shapes.get(i) for i in node.input],
                      "outputs": tensors})
    return nodes


def _node_error(node, runtime):
    errors = [t[runtime].get("rel_l2_vs_reference") for t in node["outputs"].values()
              if runtime in t and t[runtime].get("rel_l2_vs_reference") is not None]
    return max(errors) if errors else None


def first_divergence(nodes, runtimes):
    """For each pair of runtimes (baseline first) the first node whose outputs differ in any bit, and for each
    runtime the first node whose error against the reference jumps (see JUMP_FACTOR and JUMP_FLOOR)."""
    found = {"between": {}, "error_jump": {}}
    names = [rt.name for rt in runtimes]
    for other in [n for n in names[1:] if n != REFERENCE]:
        pair = f"{names[0]} vs {other}"
        for node in nodes:
            ulps = [t[other].get("max_ulp_vs_baseline") for t in node["outputs"].values()
                    if other in t and t[other].get("bit_identical_to_baseline") is False]
            if ulps:
                found["between"][pair] = _describe(node, max_ulp=max(u for u in ulps if u is not None) if
                                                   any(u is not None for u in ulps) else None)
                break
        else:
            found["between"][pair] = None
    for runtime in names:
        error_of = {}
        found["error_jump"][runtime] = None
        for node in nodes:
            err = _node_error(node, runtime)
            for tensor in node["outputs"]:
                error_of[tensor] = err or 0.0
            inputs_err = max((error_of.get(i, 0.0) for i in node["inputs"]), default=0.0)
            if err is not None and err > max(JUMP_FACTOR * inputs_err, JUMP_FLOOR):
                found["error_jump"][runtime] = _describe(node, rel_l2=err, inputs_rel_l2=inputs_err)
                break
    return found


def _describe(node, **figures):
    return {"node": node["name"], "index": node["index"], "op": node["op"], "input_shapes": node["input_shapes"],
            **figures}
