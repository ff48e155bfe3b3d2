"""lockstep: an ONNX runtime whose CPU and CUDA providers return bit-identical results.

The API follows onnxruntime's, so ``import lockstep as ort`` runs existing scripts unchanged.
"""

import os
import warnings

import numpy as np

from . import _core, _values
from ._core import Fail, InvalidArgument, InvalidGraph, NoSuchFile, NotImplemented, RuntimeException
from ._values import (IOBinding, OrtAllocatorType, OrtDevice, OrtDeviceMemoryType, OrtMemoryInfo, OrtMemType,
                      OrtValue)

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


class GraphOptimizationLevel:
    ORT_DISABLE_ALL = 0
    ORT_ENABLE_BASIC = 1
    ORT_ENABLE_EXTENDED = 2
    ORT_ENABLE_ALL = 99


class ExecutionMode:
    ORT_SEQUENTIAL = 0
    ORT_PARALLEL = 1


class SessionOptions:
    """Session settings. Thread counts never change a bit of the results."""

    def __init__(self):
        self.intra_op_num_threads = 0
        self.inter_op_num_threads = 0
        self.graph_optimization_level = GraphOptimizationLevel.ORT_ENABLE_ALL
        self.log_severity_level = 2
        self.log_verbosity_level = 0
        self.execution_mode = ExecutionMode.ORT_SEQUENTIAL
        self.enable_cpu_mem_arena = True
        self.enable_mem_pattern = True
        self.optimized_model_filepath = ""
        self.logid = ""
        # One event per executed node, written by InferenceSession.end_profiling() to
        # <profile_file_prefix>_<date_time>.json, as onnxruntime does.
        self.enable_profiling = False
        self.profile_file_prefix = "onnxruntime_profile_"


class RunOptions:
    def __init__(self):
        self.log_severity_level = 2
        self.log_verbosity_level = 0
        self.logid = ""
        self.terminate = False


class NodeArg:
    """A graph input or output: name, shape (ints, symbolic dims as strings, None if unknown) and type."""

    def __init__(self, name, type_name, shape):
        self.name = name
        self.type = f"tensor({type_name})"
        self.shape = shape if shape is not None else []

    def __repr__(self):
        return f"NodeArg(name='{self.name}', type='{self.type}', shape={self.shape})"


class ModelMetadata:
    def __init__(self, d):
        self.producer_name = d["producer_name"]
        self.graph_name = d["graph_name"]
        self.domain = d["domain"]
        self.description = d["description"]
        self.graph_description = d["graph_description"]
        self.version = d["version"]
        self.custom_metadata_map = dict(d["custom_metadata_map"])


def _provider_name(p):
    return p[0] if isinstance(p, tuple) else p


def _resolve_providers(providers, provider_options):
    """Returns (provider, options) for the first usable provider, warning about unusable ones as onnxruntime does."""
    if not providers:
        return CPU, {}
    available = get_available_providers()
    names = [_provider_name(p) for p in providers]
    options = [dict(o or {}) for o in (provider_options or [{} for _ in names])]
    if len(options) != len(names):
        raise ValueError("'providers' and 'provider_options' should be the same length if both are given.")
    for i, p in enumerate(providers):
        if isinstance(p, tuple):
            options[i].update(p[1])
    for name in names:
        if name not in _KNOWN_PROVIDERS:
            raise ValueError(f"Unknown Provider Type: {name}. Available providers: {available}")
    for name, opts in zip(names, options):
        if name in available:
            return name, opts
        warnings.warn(f"Specified provider '{name}' is not in available provider names. "
                      f"Available providers: '{', '.join(available)}'")
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

    def _create(self, providers, provider_options):
        provider, opts = _resolve_providers(providers, provider_options)
        o = self._sess_options
        native_options = {
            "provider": "cuda" if provider == CUDA else "cpu",
            "device_id": int(opts.get("device_id", 0)),
            "intra_op_num_threads": int(o.intra_op_num_threads or 0),
            "graph_optimization_level": int(o.graph_optimization_level),
            "log_severity_level": int(o.log_severity_level),
            "enable_profiling": bool(o.enable_profiling),
            "profile_file_prefix": str(o.profile_file_prefix),
        }
        source = self._model_path if self._model_path is not None else self._model_bytes
        self._sess = _core.Session(source, native_options)
        self._providers = [CUDA, CPU] if provider == CUDA else [CPU]
        self._provider_options = {CUDA: {"device_id": str(native_options["device_id"])}} if provider == CUDA else {}
        self._provider_options[CPU] = {}
        self._inputs = [NodeArg(*i) for i in self._sess.inputs()]
        self._outputs = [NodeArg(*i) for i in self._sess.outputs()]

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
        """Rebuilds the session on other providers, as onnxruntime does."""
        self._create(providers, provider_options)

    def fallback_ops(self):
        """Op types that ran on the CPU in a CUDA session because they have no CUDA kernel."""
        return list(self._sess.fallback_ops())

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
        """Runs the model. output_names None means every output. Returns a list of numpy arrays."""
        required = [i.name for i in self._inputs]
        missing = [n for n in required if n not in input_feed]
        if missing:
            raise ValueError(f"Required inputs ({missing}) are missing from input feed ({list(input_feed)}).")
        if any(isinstance(value, OrtValue) for value in input_feed.values()):
            return _values.run_with_values_in_feed(self, output_names, input_feed)
        # np.ascontiguousarray would turn a rank-0 feed into rank 1.
        feeds = {name: np.asarray(value, order="C") for name, value in input_feed.items()}
        return self._sess.run(list(output_names or []), feeds)

    def run_with_ort_values(self, output_names, input_dict_ort_values, run_options=None):
        """Runs on OrtValue feeds (read in place on the session's device) and returns OrtValues, left on the session's
        device (CUDA outputs stay on the GPU)."""
        return _values.run_with_ort_values(self, output_names, input_dict_ort_values)

    def run_async(self, output_names, input_feed, callback, user_data, run_options=None):
        """Runs on another thread; calls callback(outputs, user_data, error_message) when done."""
        _values.run_async(self, output_names, input_feed, callback, user_data, run_options)

    def io_binding(self):
        return IOBinding(self)

    def run_with_iobinding(self, iobinding, run_options=None):
        """Runs with the inputs and outputs bound in `iobinding`; its get_outputs() then holds the results."""
        _values.run_with_iobinding(self, iobinding)

    def get_input_memory_infos(self):
        return _values.input_memory_infos(self)

    def get_output_memory_infos(self):
        return _values.output_memory_infos(self)


__all__ = [
    "InferenceSession", "SessionOptions", "RunOptions", "GraphOptimizationLevel", "ExecutionMode", "NodeArg",
    "ModelMetadata", "get_available_providers", "get_all_providers", "get_device", "Fail", "InvalidArgument",
    "InvalidGraph", "NoSuchFile", "NotImplemented", "RuntimeException", "OrtValue", "OrtDevice", "OrtMemoryInfo",
    "OrtAllocatorType", "OrtMemType", "OrtDeviceMemoryType", "IOBinding",
]
