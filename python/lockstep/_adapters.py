"""LoRA adapters as onnxruntime has them: AdapterFormat writes and reads .onnx_adapter files, LoraAdapter loads one,
and RunOptions.add_active_adapter feeds its parameters to a run as inputs of those names (usually inputs whose
initializers hold the base model's empty defaults).

The file is onnxruntime's adapter format, a FlatBuffer with the file identifier "TORT" and the root table
Adapter {format_version:int; adapter_version:int; model_version:int; parameters:[Parameter]}, where
Parameter {name:string; dims:[int64]; data_type:int (ONNX element type); raw_data:[uint8] (8-byte aligned)}.
Files written here load in onnxruntime and the other way round, except that onnxruntime's reader refuses bool and
scalar (rank-0) parameters, which lockstep reads and writes. The FlatBuffer is encoded by hand (no dependency):
tables, vectors and strings are laid out front to back, each offset pointing forward, as the format allows.
"""

import struct

import numpy as np

from ._core import Fail, InvalidArgument
from ._values import _ELEMENT_TYPES, OrtValue, _element_code

FORMAT_VERSION = 1
_IDENTIFIER = b"TORT"


# ------------------------------------------------------------------ encoding


class _Writer:
    def __init__(self):
        self.out = bytearray()

    def align(self, n, ahead=0):
        """Pads so that the position `ahead` bytes on is a multiple of n."""
        while (len(self.out) + ahead) % n:
            self.out.append(0)

    def put(self, fmt, *values):
        at = len(self.out)
        self.out += struct.pack("<" + fmt, *values)
        return at

    def patch_offset(self, at, target):
        """The uoffset at `at` points forward to `target`."""
        struct.pack_into("<I", self.out, at, target - at)

    def table(self, fields):
        """fields: (struct format, value) in schema order, value None for an offset to patch later. Writes the vtable,
        then the table; returns each field's position."""
        sizes = [struct.calcsize("<" + f) for f, _ in fields]
        layout, size = [], 4  # the table starts with its soffset to the vtable
        for s in sizes:
            size += (-size) % s
            layout.append(size)
            size += s
        self.align(2)
        vtable = self.put("HH" + "H" * len(fields), 4 + 2 * len(fields), size, *layout)
        self.align(8)  # the table's 8-byte alignment covers every field
        table = self.put("i", 0)
        struct.pack_into("<i", self.out, table, table - vtable)
        positions = []
        for (fmt, value), offset in zip(fields, layout):
            while len(self.out) < table + offset:
                self.out.append(0)
            positions.append(self.put(fmt, value if value is not None else 0))
        return table, positions

    def vector(self, data, element_size, count):
        """A vector whose elements (already encoded in `data`) start element_size-aligned (8 at least for raw
        bytes, as the schema's force_align asks)."""
        self.align(max(element_size, 4), ahead=4)
        at = self.put("I", count)
        self.out += data
        return at

    def string(self, text):
        self.align(4)
        data = text.encode("utf-8")
        at = self.put("I", len(data))
        self.out += data + b"\0"
        return at


def encode_adapter(adapter_version, model_version, parameters):
    """The bytes of an .onnx_adapter file: parameters maps names to numpy arrays."""
    w = _Writer()
    root = w.put("I", 0)
    w.out += _IDENTIFIER
    adapter, (_, _, _, params_field) = w.table(
        [("i", FORMAT_VERSION), ("i", adapter_version), ("i", model_version), ("I", None)])
    w.patch_offset(root, adapter)
    items = list(parameters.items())
    w.align(4, ahead=4)
    vector = w.put("I", len(items))
    slots = [w.put("I", 0) for _ in items]
    w.patch_offset(params_field, vector)
    for slot, (name, array) in zip(slots, items):
        array = np.asarray(array, order="C")  # (ascontiguousarray would make a scalar 1-D)
        table, (name_field, dims_field, _, raw_field) = w.table(
            [("I", None), ("I", None), ("i", _element_code(array.dtype, f"adapter parameter '{name}'")), ("I", None)])
        w.patch_offset(slot, table)
        w.patch_offset(name_field, w.string(name))
        w.patch_offset(dims_field, w.vector(struct.pack(f"<{array.ndim}q", *array.shape), 8, array.ndim))
        w.patch_offset(raw_field, w.vector(array.tobytes(), 8, array.nbytes))
    return bytes(w.out)


# ------------------------------------------------------------------ decoding


class _Reader:
    def __init__(self, data, what):
        self.data, self.what = memoryview(data), what

    def fail(self, why):
        raise InvalidArgument(f"{self.what} is not an onnxruntime adapter file: {why}")

    def get(self, fmt, at):
        size = struct.calcsize("<" + fmt)
        if at < 0 or at + size > len(self.data):
            self.fail(f"offset {at} is past the end ({len(self.data)} bytes)")
        return struct.unpack_from("<" + fmt, self.data, at)[0]

    def follow(self, at):
        return at + self.get("I", at)

    def fields(self, table, count):
        """Each field's position in the table, None where absent."""
        vtable = table - self.get("i", table)
        vtable_size = self.get("H", vtable)
        out = []
        for k in range(count):
            offset = self.get("H", vtable + 4 + 2 * k) if 4 + 2 * k < vtable_size else 0
            out.append(table + offset if offset else None)
        return out

    def bytes_at(self, field):
        start = self.follow(field)
        length = self.get("I", start)
        if start + 4 + length > len(self.data):
            self.fail(f"a vector of {length} bytes runs past the end")
        return bytes(self.data[start + 4:start + 4 + length])


def decode_adapter(data, what):
    """(format_version, adapter_version, model_version, {name: numpy array}) from an adapter file's bytes."""
    r = _Reader(data, what)
    if len(data) < 8 or bytes(data[4:8]) != _IDENTIFIER:
        r.fail("no 'TORT' file identifier")
    fmt_field, adapter_field, model_field, params_field = r.fields(r.follow(0), 4)
    format_version = r.get("i", fmt_field) if fmt_field else 0
    if format_version != FORMAT_VERSION:
        r.fail(f"format version {format_version} (lockstep reads version {FORMAT_VERSION})")
    parameters = {}
    if params_field:
        vector = r.follow(params_field)
        for k in range(r.get("I", vector)):
            name_field, dims_field, type_field, raw_field = r.fields(r.follow(vector + 4 + 4 * k), 4)
            name = r.bytes_at(name_field).decode("utf-8") if name_field else r.fail(f"parameter {k} has no name")
            dims_start = r.follow(dims_field) if dims_field else None
            dims = [r.get("q", dims_start + 4 + 8 * d) for d in range(r.get("I", dims_start))] if dims_field else []
            code = r.get("i", type_field) if type_field else 0
            dtype = _ELEMENT_TYPES[_element_code(code, f"adapter parameter '{name}'")][0]
            raw = r.bytes_at(raw_field) if raw_field else b""
            count = int(np.prod(dims, dtype=np.int64)) if dims else 1
            if len(raw) != count * np.dtype(dtype).itemsize:
                r.fail(f"parameter '{name}' has {len(raw)} bytes for dims {dims} of {np.dtype(dtype).name}")
            parameters[name] = np.frombuffer(raw, dtype).reshape(dims).copy()
    version = (lambda f: r.get("i", f) if f else 0)
    return format_version, version(adapter_field), version(model_field), parameters


def _read_file(path):
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError as e:
        raise Fail(f"cannot read adapter file '{path}': {e.strerror}") from None


# ------------------------------------------------------------------ the API


class AdapterFormat:
    """Writes and reads onnxruntime adapter files (.onnx_adapter), as onnxruntime.AdapterFormat."""

    def __init__(self):
        self._format_version, self._adapter_version, self._model_version = FORMAT_VERSION, 0, 0
        self._parameters = {}

    def set_adapter_version(self, adapter_version):
        self._adapter_version = int(adapter_version)

    def set_model_version(self, model_version):
        self._model_version = int(model_version)

    def set_parameters(self, params):
        """params: name -> OrtValue (host tensors)."""
        self._parameters = dict(params)

    def get_format_version(self):
        return self._format_version

    def get_adapter_version(self):
        return self._adapter_version

    def get_model_version(self):
        return self._model_version

    def get_parameters(self):
        return dict(self._parameters)

    def export_adapter(self, file_path):
        arrays = {name: value.numpy() for name, value in self._parameters.items()}
        data = encode_adapter(self._adapter_version, self._model_version, arrays)
        try:
            with open(file_path, "wb") as f:
                f.write(data)
        except OSError as e:
            raise Fail(f"cannot write adapter file '{file_path}': {e.strerror}") from None

    @staticmethod
    def read_adapter(file_path):
        adapter = AdapterFormat()
        adapter._format_version, adapter._adapter_version, adapter._model_version, arrays = decode_adapter(
            _read_file(file_path), f"'{file_path}'")
        adapter._parameters = {name: OrtValue.ortvalue_from_numpy(a) for name, a in arrays.items()}
        return adapter


class LoraAdapter:
    """A set of parameters loaded from an adapter file; RunOptions.add_active_adapter feeds them to a run."""

    def __init__(self):
        self._parameters = {}

    def Load(self, adapter_file_path):  # noqa: N802 (onnxruntime's spelling)
        self._parameters = decode_adapter(_read_file(adapter_file_path), f"'{adapter_file_path}'")[3]

    def parameters(self):
        """name -> numpy array (a lockstep extension)."""
        return dict(self._parameters)


def with_adapter_feeds(input_feed, adapters, convert=lambda array: array):
    """The feeds of a run with active adapters: the caller's, plus every adapter parameter under its name (as
    convert(array): run_with_ort_values takes OrtValues). A name
    given twice (by the caller and an adapter, or by two adapters) is InvalidArgument, as parameters of adapters that
    are active together must not overlap in onnxruntime."""
    if not adapters:
        return input_feed
    feeds = dict(input_feed)
    for adapter in adapters:
        for name, value in adapter.parameters().items():
            if name in feeds:
                raise InvalidArgument(f"adapter parameter '{name}' is also given by the feeds or by another active "
                                      "adapter")
            feeds[name] = convert(value)
    return feeds
