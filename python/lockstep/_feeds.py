"""Feeds as the session takes them: numpy arrays of a supported dtype, or native string tensors. Lists and scalars take
the input's declared type, as in onnxruntime; what cannot be a tensor is refused with an error naming the input."""

import numpy as np

try:  # numpy has the low-precision types only through ml_dtypes (an onnx dependency)
    import ml_dtypes
except ImportError:  # pragma: no cover - then those tensors cannot be fed or returned
    ml_dtypes = None

from . import _core
from ._core import InvalidArgument, NotImplemented
from ._sparse import SparseTensor

NUMPY_TYPES = {
    "tensor(float)": np.float32, "tensor(double)": np.float64, "tensor(float16)": np.float16,
    "tensor(int8)": np.int8, "tensor(int16)": np.int16, "tensor(int32)": np.int32, "tensor(int64)": np.int64,
    "tensor(uint8)": np.uint8, "tensor(uint16)": np.uint16, "tensor(uint32)": np.uint32,
    "tensor(uint64)": np.uint64, "tensor(bool)": np.bool_,
}
# ONNX type name: ml_dtypes name (one byte per element, two for bfloat16, as lockstep holds them).
ML_DTYPES = {
    "bfloat16": "bfloat16", "float8e4m3fn": "float8_e4m3fn", "float8e4m3fnuz": "float8_e4m3fnuz",
    "float8e5m2": "float8_e5m2", "float8e5m2fnuz": "float8_e5m2fnuz", "uint4": "uint4", "int4": "int4",
    "float4e2m1": "float4_e2m1fn", "uint2": "uint2", "int2": "int2", "float8e8m0": "float8_e8m0fnu",
}
if ml_dtypes is not None:
    NUMPY_TYPES.update({f"tensor({onnx_name})": getattr(ml_dtypes, name) for onnx_name, name in ML_DTYPES.items()})
# The element types whose arrays cross as they are (every feed of a common run takes this path first).
_NUMERIC_TYPES = frozenset(NUMPY_TYPES.values())


def _string_element(value):
    """The bytes of one element of a string feed: str as UTF-8, bytes as they are, anything else as str(value)
    (onnxruntime's conversion of an object array)."""
    if isinstance(value, (bytes, np.void)):
        return bytes(value)
    return str(value).encode("utf-8")


def _refuse(name, declared_type, why):
    return InvalidArgument(f"input '{name}' (declared {declared_type}) cannot be fed {why}; give a numpy array, "
                           "a (nested) list of equal-length rows or a scalar")


def _is_ragged(array):
    # An object array of lists is what numpy makes of rows of unequal lengths when asked for dtype=object.
    return array.dtype == object and any(isinstance(v, (list, tuple)) for v in array.reshape(-1).tolist())


def _short(value):
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _why_not(value, error):
    """What is wrong with a value np.asarray refused: ragged rows, or numpy's own reason."""
    try:
        ragged = _is_ragged(np.asarray(value, dtype=object))
    except (ValueError, TypeError):
        ragged = False
    what = f"{type(value).__name__} {_short(value)}"
    return f"{what}: its rows differ in length" if ragged else f"{what} ({error})"


_SCALARS = (str, bytes, int, float, complex, np.generic)


def as_array(name, value, declared_type):
    """np.asarray of a list, scalar or other array-like, in the declared type; numpy's errors name the input."""
    if value is None or isinstance(value, (dict, set, frozenset)):
        raise _refuse(name, declared_type, "None" if value is None else f"a {type(value).__name__}")
    dtype = object if declared_type == "tensor(string)" else NUMPY_TYPES.get(declared_type)
    try:
        array = np.asarray(value, dtype=dtype)
    except (ValueError, TypeError) as e:
        raise _refuse(name, declared_type, _why_not(value, e)) from None
    if _is_ragged(array):
        raise _refuse(name, declared_type, f"{type(value).__name__} {_short(value)}: its rows differ in length")
    # np.asarray wraps any object in a rank-0 object array; only scalars are rank-0 feeds.
    if array.dtype == object and array.ndim == 0 and not isinstance(value, _SCALARS):
        raise _refuse(name, declared_type, f"{type(value).__name__} {_short(value)}, which is not array-like")
    return array


def element_type(declared_type):
    """The tensor type inside optional(...) and seq(...): "tensor(float)" for "optional(seq(tensor(float)))"."""
    for wrapper in ("optional(", "seq("):
        if declared_type and declared_type.startswith(wrapper):
            declared_type = declared_type[len(wrapper):-1]
    return declared_type


def _map_parts(declared_type):
    """The key and value types of "map(K,tensor(V))": ("string", "tensor(float)")."""
    key, _, value = declared_type[len("map("):-1].partition(",")
    return key, value


def _map_key(name, declared_type, key, key_type):
    """A dict key as the map's key type: an int for int64 (numpy integers too), UTF-8 bytes for string."""
    if key_type == "int64" and isinstance(key, (int, np.integer)) and not isinstance(key, bool):
        return int(key)
    if key_type == "string" and isinstance(key, (str, bytes)):
        return _string_element(key)
    want = "int" if key_type == "int64" else "str"
    raise InvalidArgument(f"input '{name}' (declared {declared_type}) cannot be fed a dict with key {_short(key)} "
                          f"({type(key).__name__}): its keys must be {want}")


def feed_map(name, value, declared_type):
    """A dict as a native map: its items in ascending key order (the order lockstep and onnxruntime keep maps in),
    values converted to the declared value type."""
    if not isinstance(value, dict):
        raise InvalidArgument(f"input '{name}' (declared {declared_type}) cannot be fed {type(value).__name__} "
                              f"{_short(value)}; give a dict")
    key_type = _map_parts(declared_type)[0]
    if key_type not in ("int64", "string"):
        raise NotImplemented(f"input '{name}' (declared {declared_type}): maps with {key_type} keys are not "
                             "supported (int64 and string keys are, those DictVectorizer reads)")
    pairs = sorted(((_map_key(name, declared_type, k, key_type), v) for k, v in value.items()), key=lambda p: p[0])
    keys = [k for k, _ in pairs]
    native_keys = (_core.Tensor.from_strings(keys, [len(keys)]) if key_type == "string"
                   else _core.Tensor.from_numpy(np.array(keys, dtype=np.int64).reshape(-1), False))
    return _core.Tensor.map(native_keys, _map_values(name, value, declared_type, [v for _, v in pairs]))


def _map_values(name, value, declared_type, values):
    """A dict's values (in key order) as a native 1-D tensor of the map's value type; numbers beyond float32 become
    inf, as in onnxruntime."""
    value_type = _map_parts(declared_type)[1]
    refused = f"input '{name}' (declared {declared_type}) cannot be fed dict {_short(value)}: its values must be " \
              f"{value_type[len('tensor('):-1]}"
    if value_type == "tensor(string)":
        if not all(isinstance(v, (str, bytes)) for v in values):
            raise InvalidArgument(refused)
        return _core.Tensor.from_strings([_string_element(v) for v in values], [len(values)])
    try:
        with np.errstate(over="ignore"):
            array = np.asarray(values, dtype=NUMPY_TYPES.get(value_type))
    except (ValueError, TypeError) as e:
        raise InvalidArgument(f"{refused} ({e})") from None
    if array.ndim != 1 or array.dtype == object:
        raise InvalidArgument(refused)
    return _core.Tensor.from_numpy(np.ascontiguousarray(array), False)


def feed_array(name, value, declared_type):
    """A C-contiguous array for a feed, or a native string tensor for str, bytes and object arrays. An array keeps its
    own dtype (a mismatch is reported by the session, naming the input). A sequence input takes a list (or tuple)
    of arrays, each converted as a feed of the element type; a map input (map(K,tensor(V))) takes a dict."""
    if declared_type and "seq(" in declared_type:
        if not isinstance(value, (list, tuple)):
            raise _refuse(name, declared_type, f"a {type(value).__name__}, not a list of arrays")
        return [feed_array(name, item, element_type(declared_type)) for item in value]
    declared_type = element_type(declared_type)
    if declared_type and declared_type.startswith("map("):
        return feed_map(name, value, declared_type)
    # np.ascontiguousarray would turn a rank-0 feed into rank 1.
    if type(value) is np.ndarray and value.dtype.type in _NUMERIC_TYPES:
        return np.asarray(value, order="C")
    if isinstance(value, SparseTensor):
        value = value.to_dense(f"input '{name}'")
    if not isinstance(value, np.ndarray):
        value = as_array(name, value, declared_type)
    # Plain void arrays hold bytes; structured dtypes and ml_dtypes' (bfloat16, float8) are kind "V" too.
    if value.dtype.kind in "OSU" or (value.dtype.type is np.void and value.dtype.fields is None):
        if _is_ragged(value):
            raise _refuse(name, declared_type, "an object array of sequences")
        return _core.Tensor.from_strings([_string_element(v) for v in value.reshape(-1).tolist()], list(value.shape))
    if value.dtype.type not in _NUMERIC_TYPES:
        supported = ", ".join(t[len("tensor("):-1] for t in NUMPY_TYPES) + ", string"
        raise NotImplemented(f"input '{name}' has numpy dtype {value.dtype} (declared {declared_type}), which "
                             f"lockstep does not support (supported: {supported})")
    return np.asarray(value, order="C")


def feed_tensor(name, value, declared_type):
    """feed_array as a native Tensor (a copy of the array)."""
    array = feed_array(name, value, declared_type)
    return array if isinstance(array, _core.Tensor) else _core.Tensor.from_numpy(array, False)
