"""SessionOptions and RunOptions as onnxruntime has them: a fixed set of typed attributes (a misspelt name raises
AttributeError, a value of the wrong type TypeError), config entries kept as strings, free-dimension overrides."""

import enum

import numpy as np

from . import _core


class GraphOptimizationLevel(enum.IntEnum):
    ORT_DISABLE_ALL = 0
    ORT_ENABLE_BASIC = 1
    ORT_ENABLE_EXTENDED = 2
    ORT_ENABLE_LAYOUT = 3
    ORT_ENABLE_ALL = 99


class ExecutionMode(enum.IntEnum):
    ORT_SEQUENTIAL = 0
    ORT_PARALLEL = 1


class ExecutionOrder(enum.IntEnum):
    DEFAULT = 0
    PRIORITY_BASED = 1
    MEMORY_EFFICIENT = 2


def _as_int(name, value):
    if isinstance(value, (bool, int, np.integer)):
        return int(value)
    raise TypeError(f"{name} must be an int, got {type(value).__name__} {value!r}")


def _as_bool(name, value):
    if isinstance(value, (bool, int, np.integer, np.bool_)):
        return bool(value)
    raise TypeError(f"{name} must be a bool, got {type(value).__name__} {value!r}")


def _as_str(name, value):
    if isinstance(value, str):
        return value
    raise TypeError(f"{name} must be a str, got {type(value).__name__} {value!r}")


def _as_enum(cls):
    def convert(name, value):
        # onnxruntime takes only enum members; lockstep also takes their int values, which older scripts pass.
        if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
            try:
                return cls(int(value))
            except ValueError:
                pass
        raise TypeError(f"{name} must be a {cls.__name__} ({', '.join(m.name for m in cls)}), got {value!r}")
    return convert


class _Attribute:
    """A typed attribute: assignments are converted (or refused) by `convert`; each instance keeps its own value."""

    def __init__(self, convert, default):
        self.convert, self.default = convert, default

    def __set_name__(self, owner, name):
        self.name = name

    def __get__(self, obj, owner=None):
        return self if obj is None else obj._values.get(self.name, self.default)

    def __set__(self, obj, value):
        obj._values[self.name] = self.convert(self.name, value)


class _ConfigEntries:
    """Key/value strings as onnxruntime's session and run config entries: unknown keys are kept and readable."""

    __slots__ = ("_values", "_entries")
    _what = "configuration"

    def __init__(self):
        self._values = {}
        self._entries = {}

    def _add_entry(self, key, value):
        self._entries[_as_str("config key", key)] = _as_str(f"config value of '{key}'", value)

    def _get_entry(self, key):
        if key not in self._entries:
            raise RuntimeError(f"{type(self).__name__} does not have {self._what} with key: {key}")
        return self._entries[key]

    def config_entries(self):
        """All entries set so far (a lockstep extension)."""
        return dict(self._entries)


# Session config keys lockstep acts on, with the values it accepts; every other key is kept and has no effect.
SESSION_CONFIG_KEYS = {
    # "1": creating a CUDA session fails when a node has no CUDA kernel (it would run on the CPU).
    # "1": the CPU threads sleep as soon as a run returns, instead of spinning up to 1 ms for the next one.
    "session.force_spinning_stop": ("0", "1"),
    "session.disable_cpu_ep_fallback": ("0", "1"),
    # Denormals are kept: flushing them to zero would change bits (docs/arithmetic.md, build rules).
    "session.set_denormal_as_zero": ("0",),
    # Only ONNX models load; the ORT flatbuffer format is not supported.
    "session.load_model_format": ("ONNX",),
    # lockstep's own: the most bytes one tensor computed by a run may take ("0": no cap); a node whose output would
    # be larger fails, naming itself, before anything is allocated (C++ SessionOptions::max_tensor_bytes).
    "session.lockstep.max_tensor_bytes": str.isdigit,
    # lockstep's own: the most bytes of freed host memory a session keeps for reuse (C++
    # SessionOptions::max_cached_host_bytes; unset: twice the most its host tensors have held at once, and never
    # less than the blocks its last run used).
    "session.lockstep.max_cached_host_bytes": str.isdigit,
    # lockstep's own: the same for the CUDA provider's freed device memory (C++ SessionOptions::max_cached_device_bytes).
    "session.lockstep.max_cached_device_bytes": str.isdigit,
    # With optimized_model_filepath: the file (relative to the optimized model's folder) its initializers of at least
    # ..._min_size_in_bytes (default 1024) go to as external data; strings stay inline. Any name is taken here.
    "session.optimized_model_external_initializers_file_name": lambda name: True,
    "session.optimized_model_external_initializers_min_size_in_bytes": str.isdigit,
}


class SessionOptions(_ConfigEntries):
    """Session settings, as onnxruntime.SessionOptions. Thread counts never change a bit of the results."""

    __slots__ = ("_free_dims_by_name", "_free_dims_by_denotation", "_initializers", "_external_initializers",
                 "_memory_files")

    intra_op_num_threads = _Attribute(_as_int, 0)
    inter_op_num_threads = _Attribute(_as_int, 0)
    graph_optimization_level = _Attribute(_as_enum(GraphOptimizationLevel), GraphOptimizationLevel.ORT_ENABLE_ALL)
    execution_mode = _Attribute(_as_enum(ExecutionMode), ExecutionMode.ORT_SEQUENTIAL)
    execution_order = _Attribute(_as_enum(ExecutionOrder), ExecutionOrder.DEFAULT)
    # -1: the default logger's severity (set_default_logger_severity, 2 = warning unless changed).
    log_severity_level = _Attribute(_as_int, -1)
    log_verbosity_level = _Attribute(_as_int, 0)
    logid = _Attribute(_as_str, "")
    enable_cpu_mem_arena = _Attribute(_as_bool, True)
    enable_mem_pattern = _Attribute(_as_bool, True)
    enable_mem_reuse = _Attribute(_as_bool, True)
    # lockstep is deterministic whatever this says.
    use_deterministic_compute = _Attribute(_as_bool, False)
    use_per_session_threads = _Attribute(_as_bool, True)
    optimized_model_filepath = _Attribute(_as_str, "")
    # One event per executed node, written by InferenceSession.end_profiling() to
    # <profile_file_prefix>_<date_time>.json, as onnxruntime does.
    enable_profiling = _Attribute(_as_bool, False)
    profile_file_prefix = _Attribute(_as_str, "onnxruntime_profile_")

    def __init__(self):
        super().__init__()
        self._free_dims_by_name = {}
        self._free_dims_by_denotation = {}
        self._initializers = {}
        self._external_initializers = {}
        self._memory_files = {}

    def add_session_config_entry(self, key, value):
        self._add_entry(key, value)

    def get_session_config_entry(self, key):
        return self._get_entry(key)

    def add_free_dimension_override_by_name(self, dim_name, dim_value):
        """Fixes every graph-input dim whose dim_param is `dim_name` to `dim_value`."""
        self._free_dims_by_name[_as_str("dim_name", dim_name)] = _as_int("dim_value", dim_value)

    def add_free_dimension_override_by_denotation(self, dim_denotation, dim_value):
        """Fixes every symbolic graph-input dim whose denotation (e.g. "DATA_BATCH") is `dim_denotation`."""
        self._free_dims_by_denotation[_as_str("dim_denotation", dim_denotation)] = _as_int("dim_value", dim_value)

    def add_initializer(self, name, ort_value):
        """Replaces the model's initializer `name` with a host OrtValue of the same type and shape, which the caller
        keeps alive while sessions use it (the session reads its memory; no copy)."""
        self._initializers[_as_str("name", name)] = _host_ortvalue("add_initializer", name, ort_value)

    def add_external_initializers(self, names, ort_values):
        """Gives the values of initializers whose data the model keeps in external files, as onnxruntime does: the
        files are not read (they need not exist). Each name must be such an initializer of the main graph, and each
        value a host OrtValue of its type and shape (checked when a session is created). The session reads the
        values' memory, as add_initializer's."""
        for name, value in _rows("add_external_initializers", names, ort_values=ort_values):
            _add_once("add_external_initializers", self._external_initializers, name,
                      _host_ortvalue("add_external_initializers", name, value))

    def add_external_initializers_from_files_in_memory(self, names, buffers, lengths):
        """Gives the contents of external data files, by the location the model's tensors name (a model loaded from
        bytes can then have external data). Each buffer is any bytes-like object; its first `length` bytes are the
        file. Sessions copy what they read, so a buffer need only live until the sessions are created."""
        what = "add_external_initializers_from_files_in_memory"
        for name, buffer, length in _rows(what, names, buffers=buffers, lengths=lengths):
            _file_bytes(name, buffer, length)  # checked now; viewed again only while a session is created
            _add_once(what, self._memory_files, name, (buffer, length))

    def _memory_file_views(self):
        """The in-memory files as uint8 arrays over the buffers. Only a session's creation holds them: an exported
        view would stop the caller from closing an mmap (BufferError) once the sessions exist."""
        return {name: _file_bytes(name, buffer, length) for name, (buffer, length) in self._memory_files.items()}

    def apply_model_config(self, config, what):
        """Sets the attributes a model's embedded onnxruntime config ("ort_config" metadata, read when the
        environment has ORT_LOAD_CONFIG_FROM_MODEL=1) names in its "session_options"."""
        for key, value in config.get("session_options", {}).items():
            if not isinstance(getattr(type(self), key, None), _Attribute):
                raise ValueError(f"{what}: session option '{key}' of the model's ort_config is not one lockstep "
                                 "knows")
            setattr(self, key, bool(value) if isinstance(getattr(type(self), key).default, bool) else value)

    def register_custom_ops_library(self, library_path):
        from ._core import NotImplemented as _NotImplemented
        raise _NotImplemented(f"custom op libraries are not supported (asked for '{library_path}'): lockstep can "
                              "only promise identical bits for kernels it implements on both providers")

    def check_config_entries(self):
        """Raises ValueError for a value lockstep cannot honour of a key it acts on (see SESSION_CONFIG_KEYS)."""
        for key, accepted in SESSION_CONFIG_KEYS.items():
            value = self._entries.get(key)
            if value is None or (value in accepted if isinstance(accepted, tuple) else accepted(value)):
                continue
            expected = ", ".join(accepted) if isinstance(accepted, tuple) else "a non-negative integer"
            raise ValueError(f"session config entry '{key}' = '{value}' is not supported by lockstep "
                             f"(accepted: {expected})")


def _host_ortvalue(api, name, value):
    from ._values import OrtValue
    if not isinstance(value, OrtValue):
        raise TypeError(f"{api}: '{name}' must be an OrtValue, got {type(value).__name__}")
    if value.device_name() != "cpu":
        raise ValueError(f"{api}: '{name}' must be an OrtValue on the CPU, as in onnxruntime")
    return value


def _rows(api, names, **columns):
    """(name, value...) rows of equal-length lists, as onnxruntime takes them."""
    names, columns = list(names), {key: list(values) for key, values in columns.items()}
    for key, values in columns.items():
        if len(values) != len(names):
            raise ValueError(f"{api}: {len(names)} names and {len(values)} {key}; they must pair up")
    for name in names:
        _as_str(f"{api}: a name", name)
    return list(zip(names, *columns.values()))


def _add_once(api, table, name, value):
    if name in table:
        raise _core.InvalidArgument(f"{api}: an entry for '{name}' has already been added")
    table[name] = value


def _file_bytes(name, buffer, length):
    """The first `length` bytes of `buffer` as a uint8 array over its memory (no copy)."""
    what = f"add_external_initializers_from_files_in_memory: file '{name}'"
    try:
        view = memoryview(buffer)
    except TypeError:
        raise TypeError(f"{what}: the buffer must be bytes-like (bytes, bytearray, memoryview, mmap, numpy array), "
                        f"got {type(buffer).__name__}") from None
    if not view.c_contiguous:
        raise ValueError(f"{what}: the buffer is not contiguous")
    length = _as_int(f"{what}: length", length)
    if not 0 <= length <= view.nbytes:
        raise _core.InvalidArgument(f"{what}: length {length} is outside its buffer of {view.nbytes} bytes")
    return np.frombuffer(view, np.uint8, count=length)


class RunOptions(_ConfigEntries):
    """Per-run settings, as onnxruntime.RunOptions."""

    __slots__ = ("_native", "_adapters")

    log_severity_level = _Attribute(_as_int, -1)
    log_verbosity_level = _Attribute(_as_int, 0)
    logid = _Attribute(_as_str, "")
    only_execute_path_to_fetches = _Attribute(_as_bool, False)

    def __init__(self):
        super().__init__()
        self._native = _core.RunOptions()
        self._adapters = []

    def add_active_adapter(self, adapter):
        """Feeds the LoraAdapter's parameters to the runs given these options, as inputs of those names."""
        from ._adapters import LoraAdapter

        if not isinstance(adapter, LoraAdapter):
            raise TypeError(f"add_active_adapter takes a lockstep.LoraAdapter, got {type(adapter).__name__}")
        self._adapters.append(adapter)

    @property
    def terminate(self):
        """Set it, from any thread, to stop the runs using these options before their next node or Loop/Scan
        iteration (a Loop without bound runs until then); they raise Fail."""
        return self._native.terminate

    @terminate.setter
    def terminate(self, value):
        self._native.terminate = _as_bool("terminate", value)

    def add_run_config_entry(self, key, value):
        self._add_entry(key, value)

    def get_run_config_entry(self, key):
        return self._get_entry(key)
