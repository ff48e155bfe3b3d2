"""lockstep: an ONNX runtime whose CPU and CUDA providers return bit-identical results.

The API follows onnxruntime's, so ``import lockstep as ort`` runs existing scripts unchanged.
"""

import json
import os

import numpy as np

from . import _core, _values
from ._core import Fail, InvalidArgument, InvalidGraph, NoSuchFile, NotImplemented, RuntimeException
from ._adapters import AdapterFormat, LoraAdapter, with_adapter_feeds
from ._feeds import feed_array
from ._allocators import OrtArenaCfg, create_and_register_allocator, create_and_register_allocator_v2
from ._providers import check_and_normalize_provider_args
from ._sparse import OrtSparseFormat, SparseTensor
from ._options import ExecutionMode, ExecutionOrder, GraphOptimizationLevel, RunOptions, SessionOptions
from ._values import (IOBinding, OrtAllocatorType, OrtDevice, OrtDeviceMemoryType, OrtDeviceVendorId, OrtMemoryInfo,
                      OrtMemoryInfoDeviceType, OrtMemType, OrtValue)

__version__ = "0.1.0"

CPU = "CPUExecutionProvider"
CUDA = "CUDAExecutionProvider"
# Providers scripts written for onnxruntime may ask for; lockstep has only CPU and CUDA and skips the others.
_KNOWN_PROVIDERS = {CPU, CUDA, "TensorrtExecutionProvider", "ROCMExecutionProvider", "OpenVINOExecutionProvider",
                    "DnnlExecutionProvider", "CoreMLExecutionProvider", "DmlExecutionProvider"}


def get_available_providers():
    """Providers usable on this machine; CUDA is listed only when a GPU and driver are present."""
    return list(_core.available_providers())


def get_all_providers():
    return [CUDA, CPU]


def get_device():
    return "GPU" if CUDA in get_available_providers() else "CPU"


def get_version_string():
    return __version__


def get_build_info():
    cuda = "CUDA provider built" if _core.built_with_cuda() else "no CUDA provider"
    return f"lockstep Build Info: version={__version__}, {cuda}, float32 results bit-identical across providers"


def disable_telemetry_events():
    """Kept for onnxruntime compatibility: lockstep sends no telemetry."""


def enable_telemetry_events():
    """Kept for onnxruntime compatibility: lockstep sends no telemetry."""


_default_logger = {"severity": 2, "verbosity": 0}


def set_default_logger_severity(severity):
    """The log level of sessions whose options leave log_severity_level at -1: 0 verbose .. 4 fatal."""
    if not isinstance(severity, int) or not 0 <= severity <= 4:
        raise ValueError(f"log severity must be an int from 0 (verbose) to 4 (fatal), got {severity!r}")
    _default_logger["severity"] = severity


def set_default_logger_verbosity(verbosity):
    """Kept for onnxruntime compatibility; lockstep has no verbose-level log messages."""
    if not isinstance(verbosity, int):
        raise TypeError(f"log verbosity must be an int, got {verbosity!r}")
    _default_logger["verbosity"] = verbosity


def set_seed(seed):
    """Kept for onnxruntime compatibility: lockstep has no random ops, so no result depends on a seed."""
    if not isinstance(seed, int):
        raise TypeError(f"seed must be an int, got {seed!r}")


class NodeArg:
    """A graph input or output: name, shape (ints, symbolic dims as strings, None if unknown) and type."""

    def __init__(self, name, type_name, shape):
        self.name = name
        self.type = type_name  # onnxruntime's spelling: "tensor(float)", "seq(tensor(int64))", "optional(...)"
        self.shape = shape if shape is not None else []

    def __repr__(self):
        return f"NodeArg(name='{self.name}', type='{self.type}', shape={self.shape})"


class EpAssignedNode:
    """A node of the graph lockstep runs: name, op_type and domain ("" for ONNX's own ops, "lockstep" for the
    nodes lockstep fuses)."""

    def __init__(self, name, op_type, domain):
        self.name, self.op_type, self.domain = name, op_type, domain

    def __repr__(self):
        return f"EpAssignedNode(name='{self.name}', op_type='{self.op_type}', domain='{self.domain}')"


class EpAssignedSubgraph:
    """The nodes one provider runs as one unit. Every lockstep node runs its own kernel, so each holds one node."""

    def __init__(self, ep_name, nodes):
        self.ep_name = ep_name
        self._nodes = list(nodes)

    def get_nodes(self):
        return list(self._nodes)

    def __repr__(self):
        return f"EpAssignedSubgraph(ep_name='{self.ep_name}', nodes={self._nodes})"


RECORD_ASSIGNMENTS = "session.record_ep_graph_assignment_info"
OPTIMIZED_EXTERNAL_FILE = "session.optimized_model_external_initializers_file_name"
OPTIMIZED_EXTERNAL_MIN_SIZE = "session.optimized_model_external_initializers_min_size_in_bytes"


class ModelMetadata:
    def __init__(self, d):
        self.producer_name = d["producer_name"]
        self.graph_name = d["graph_name"]
        self.domain = d["domain"]
        self.description = d["description"]
        self.graph_description = d["graph_description"]
        self.version = d["version"]
        self.custom_metadata_map = dict(d["custom_metadata_map"])


def _native_options(o, provider, opts):
    """The native Session's options from SessionOptions and the chosen provider's options."""
    o.check_config_entries()
    severity = o.log_severity_level if o.log_severity_level >= 0 else _default_logger["severity"]
    return {
        "provider": "cuda" if provider == CUDA else "cpu",
        "device_id": int(opts.get("device_id", 0)),
        "intra_op_num_threads": int(o.intra_op_num_threads or 0),
        "force_spinning_stop": o.config_entries().get("session.force_spinning_stop") == "1",
        "graph_optimization_level": int(o.graph_optimization_level),
        "log_severity_level": int(severity),
        "enable_profiling": bool(o.enable_profiling),
        "profile_file_prefix": str(o.profile_file_prefix),
        "free_dimension_overrides_by_name": dict(o._free_dims_by_name),
        "free_dimension_overrides_by_denotation": dict(o._free_dims_by_denotation),
        "disable_cpu_fallback": o.config_entries().get("session.disable_cpu_ep_fallback") == "1",
        "optimized_model_filepath": os.fspath(o.optimized_model_filepath),
        "initializers": {name: v._tensor for name, v in o._initializers.items()},
        "external_initializers": {name: v._tensor for name, v in o._external_initializers.items()},
        "external_files_in_memory": o._memory_file_views(),
        "optimized_model_external_initializers_file_name": o.config_entries().get(OPTIMIZED_EXTERNAL_FILE, ""),
        "optimized_model_external_initializers_min_size_in_bytes": int(
            o.config_entries().get(OPTIMIZED_EXTERNAL_MIN_SIZE, "1024")),
        "max_tensor_bytes": int(o.config_entries().get("session.lockstep.max_tensor_bytes", "0")),
        "max_cached_host_bytes": int(o.config_entries().get("session.lockstep.max_cached_host_bytes", "-1")),
        "max_cached_device_bytes": int(o.config_entries().get("session.lockstep.max_cached_device_bytes", "-1")),
    }


def _provider_name(p):
    return p[0] if isinstance(p, tuple) else p


def _resolve_providers(providers, provider_options):
    """Returns (provider, options) for the first usable provider; check_and_normalize_provider_args warns about
    unusable ones, as onnxruntime does."""
    available = get_available_providers()
    names, options = check_and_normalize_provider_args(providers, provider_options, available)
    for name in names:
        if name not in _KNOWN_PROVIDERS:
            raise ValueError(f"Unknown Provider Type: {name}. Available providers: {available}")
    for name, opts in zip(names, options):
        if name in available:
            return name, opts
    return CPU, {}


class InferenceSession:
    """Loads an ONNX model (a path or serialized bytes) and runs it, as onnxruntime.InferenceSession does."""

    def __init__(self, path_or_bytes, sess_options=None, providers=None, provider_options=None, **kwargs):
        if isinstance(path_or_bytes, (str, os.PathLike)):
            self._model_path = os.fspath(path_or_bytes)
            self._model_bytes = None
        elif isinstance(path_or_bytes, (bytes, bytearray, memoryview)):
            self._model_path = None
            self._model_bytes = bytes(path_or_bytes)
        else:
            raise TypeError(f"Unable to load from type '{type(path_or_bytes)}'")
        self._sess_options = sess_options or SessionOptions()
        self._create(providers, provider_options)

    def _create(self, providers, provider_options, from_model_config=False):
        provider, opts = _resolve_providers(providers, provider_options)
        o = self._sess_options
        native_options = _native_options(o, provider, opts)
        source = self._model_path if self._model_path is not None else self._model_bytes
        self._sess = _core.Session(source, native_options)
        config = self._sess.metadata()["custom_metadata_map"].get("ort_config")
        if config is not None and os.environ.get("ORT_LOAD_CONFIG_FROM_MODEL") == "1" and not from_model_config:
            o.apply_model_config(json.loads(config), "the model's ort_config")
            return self._create(providers, provider_options, from_model_config=True)
        self._records_assignments = o.config_entries().get(RECORD_ASSIGNMENTS) == "1"
        self._providers = [CUDA, CPU] if provider == CUDA else [CPU]
        self._provider_options = {CUDA: {"device_id": str(native_options["device_id"])}} if provider == CUDA else {}
        self._provider_options[CPU] = {}
        self._inputs = [NodeArg(*i) for i in self._sess.inputs()]
        self._outputs = [NodeArg(*i) for i in self._sess.outputs()]
        # What run() reads on every call. An optional input may be left out, or given None: it is then empty.
        self._required_inputs = [i.name for i in self._inputs if not i.type.startswith("optional(")]
        self._declared_types = {i.name: i.type for i in self._inputs}

    def get_inputs(self):
        return list(self._inputs)

    def get_outputs(self):
        return list(self._outputs)

    def get_overridable_initializers(self):
        return []

    def get_modelmeta(self):
        return ModelMetadata(self._sess.metadata())

    def get_providers(self):
        return list(self._providers)

    def get_provider_options(self):
        return dict(self._provider_options)

    def get_session_options(self):
        return self._sess_options

    def set_providers(self, providers=None, provider_options=None):
        """Rebuilds the session on other providers, as onnxruntime does; an unknown provider name raises
        lockstep.Fail (a RuntimeError, onnxruntime's type here; the constructor raises ValueError)."""
        names = [_provider_name(p) for p in providers or []]
        unknown = [n for n in names if n not in _KNOWN_PROVIDERS]
        if unknown:
            raise Fail(f"Unknown Provider Type: {unknown[0]}")
        self._create(providers, provider_options)

    def fallback_ops(self):
        """Op types that ran on the CPU in a CUDA session because they have no CUDA kernel."""
        return list(self._sess.fallback_ops())

    def get_provider_graph_assignment_info(self):
        """The provider of each node of the main graph, in execution order, one EpAssignedSubgraph per node, when the
        session was created with the config entry session.record_ep_graph_assignment_info = "1" (lockstep.Fail
        otherwise, as in onnxruntime). The graph is the one lockstep runs: constants folded, nodes fused. A CUDA
        session lists a node without a CUDA kernel under the CPU, and a node that reads strings too once a run has
        given it some."""
        if not self._records_assignments:
            raise Fail(f"Session configuration entry '{RECORD_ASSIGNMENTS}' must be set to \"1\" to retrieve EP "
                       "graph assignment information.")
        return [EpAssignedSubgraph(provider, [EpAssignedNode(name, op_type, "" if domain == "ai.onnx" else domain)])
                for name, op_type, domain, provider in self._sess.node_assignments()]

    def end_profiling(self):
        """Writes the profile (a Chrome trace, onnxruntime's format) and returns its path; "" when not profiling."""
        return self._sess.end_profiling()

    def get_profiling_start_time_ns(self):
        return self._sess.profiling_start_time_ns()

    def profile_events(self):
        """The profile recorded so far, as dicts (category, name, op_type, provider, inputs and outputs as
        (dtype, dims) pairs, start_ns, duration_ns). A lockstep extension: onnxruntime only writes the file."""
        return list(self._sess.profile_events())

    def run(self, output_names, input_feed, run_options=None):
        """Runs the model. output_names None means every output. Returns a list of numpy arrays (a list of them for
        a sequence output, None for an empty optional). Adapters active in run_options add their parameters to the
        feeds."""
        input_feed = with_adapter_feeds(input_feed, getattr(run_options, "_adapters", None))
        missing = [n for n in self._required_inputs if n not in input_feed]
        if missing:
            raise ValueError(f"Required inputs ({missing}) are missing from input feed ({list(input_feed)}).")
        native = _native_run_options(run_options)
        if any(isinstance(value, OrtValue) for value in input_feed.values()):
            return _values.run_with_values_in_feed(self, output_names, input_feed, native)
        declared = self._declared_types
        feeds = {name: feed_array(name, value, declared.get(name)) for name, value in input_feed.items()
                 if value is not None or not declared.get(name, "").startswith("optional(")}
        return self._sess.run(list(output_names or []), feeds, native)

    def run_with_ort_values(self, output_names, input_dict_ort_values, run_options=None):
        """Runs on OrtValue feeds (read in place on the session's device) and returns OrtValues, left on the session's
        device (CUDA outputs stay on the GPU)."""
        input_dict_ort_values = with_adapter_feeds(input_dict_ort_values, getattr(run_options, "_adapters", None),
                                                   OrtValue.ortvalue_from_numpy)
        return _values.run_with_ort_values(self, output_names, input_dict_ort_values, _native_run_options(run_options))

    def run_async(self, output_names, input_feed, callback, user_data, run_options=None):
        """Runs on another thread; calls callback(outputs, user_data, error_message) when done."""
        _values.run_async(self, output_names, input_feed, callback, user_data, run_options)

    def io_binding(self):
        return IOBinding(self)

    def run_with_iobinding(self, iobinding, run_options=None):
        """Runs with the inputs and outputs bound in `iobinding`; its get_outputs() then holds the results."""
        _values.run_with_iobinding(self, iobinding, _native_run_options(run_options))

    def create_ortvalue_from_shape_and_type(self, shape, element_type, device_type="cpu", device_id=0, vendor_id=-1):
        """An uninitialised OrtValue on the CPU or on this session's device, owned by this session: run(),
        run_with_ort_values() and IOBinding refuse it in another session (or after set_providers), and
        update_inplace() refuses to copy between it and another session's value (ValueError)."""
        return _values.create_session_ortvalue(self, shape, element_type, device_type, device_id)

    def _validate_ortvalue_ownership(self, values):
        """ValueError unless each of `values` is a value no session owns, or one this session made."""
        _values.check_ownership(self, values)

    def run_with_ortvaluevector(self, run_options, feed_names, feeds, fetch_names, fetches, fetch_devices):
        """onnxruntime's vector-based run: `feeds` and `fetches` are OrtValueVectors (native values), `fetches` is
        filled with one value per name in `fetch_names`, each on the device of its entry in `fetch_devices`."""
        if len(feed_names) != len(feeds) or len(fetch_names) != len(fetch_devices):
            raise InvalidArgument(f"run_with_ortvaluevector: {len(feed_names)} feed names for {len(feeds)} feeds, "
                                  f"{len(fetch_names)} fetch names for {len(fetch_devices)} devices")
        session_device, _ = _values._session_device(self)
        places = ["cuda" if d.device_type() == OrtDevice.cuda() and session_device == "cuda" else "cpu"
                  for d in fetch_devices]
        tensors = self._sess.run_tensors(list(fetch_names), {n: feeds[i] for i, n in enumerate(feed_names)}, places,
                                         _native_run_options(run_options))
        fetches.clear()
        for tensor in tensors:
            fetches.push_back(tensor)

    def get_input_epdevices(self):
        """One entry per input, as onnxruntime: None, because lockstep's providers are not plugin EP devices."""
        return [None for _ in self._inputs]

    def get_input_memory_infos(self):
        return _values.input_memory_infos(self)

    def get_output_memory_infos(self):
        return _values.output_memory_infos(self)


def compare(model, providers=None, inputs=None, shapes=None, **options):
    """What `lockstep compare` computes, as a dict: each output of `model` on each of `providers` (cpu, cuda,
    reference) against a float64 reference and against each other. options: against='onnxruntime',
    per_node=True, seed, report=DIR. See lockstep.comparison."""
    from .comparison import compare as run_comparison

    return run_comparison(model, providers, inputs, shapes, **options)


def _native_run_options(run_options):
    """The flag object a run polls between nodes and Loop/Scan iterations (RunOptions.terminate, settable from
    another thread)."""
    if run_options is None:
        return None
    if not isinstance(run_options, RunOptions):
        raise TypeError(f"run_options must be a lockstep.RunOptions, got {type(run_options).__name__}")
    return run_options._native


__all__ = [
    "InferenceSession", "SessionOptions", "RunOptions", "GraphOptimizationLevel", "ExecutionMode", "ExecutionOrder",
    "NodeArg", "ModelMetadata", "get_available_providers", "get_all_providers", "get_device", "get_version_string",
    "get_build_info", "set_default_logger_severity", "set_default_logger_verbosity", "set_seed", "Fail",
    "InvalidArgument", "InvalidGraph", "NoSuchFile", "NotImplemented", "RuntimeException", "OrtValue", "OrtDevice",
    "OrtMemoryInfo", "OrtAllocatorType", "OrtMemType", "OrtDeviceMemoryType", "IOBinding", "compare",
    "SparseTensor", "OrtSparseFormat", "OrtDeviceVendorId", "OrtMemoryInfoDeviceType", "disable_telemetry_events", "enable_telemetry_events",
    "OrtArenaCfg", "create_and_register_allocator", "create_and_register_allocator_v2", "EpAssignedNode",
    "EpAssignedSubgraph", "AdapterFormat", "LoraAdapter",
]
