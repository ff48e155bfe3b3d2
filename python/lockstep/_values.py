"""onnxruntime's value and binding API: OrtValue, OrtDevice, OrtMemoryInfo, IOBinding, run_with_ort_values, run_async.

Values may live on the host or on a CUDA device; a CUDA session reads device-resident inputs in place and can leave
its outputs on the device, so a pipeline that stays on the GPU pays no host copies. The bits are the same wherever a
value lives: placement only decides where the bytes are, never how they are computed.
"""

import threading
from enum import IntEnum

import numpy as np

from . import _core
from ._core import InvalidArgument, NotImplemented as _NotImplemented
from ._feeds import NUMPY_TYPES, as_array, feed_tensor
from ._sparse import SparseTensor

CUDA_PROVIDER = "CUDAExecutionProvider"


class OrtDeviceVendorId(IntEnum):
    """PCI vendor ids, as onnxruntime names them; lockstep's devices are the CPU (NONE) and NVIDIA GPUs."""
    NONE = 0
    AMD = 0x1002
    NVIDIA = 0x10DE
    ARM = 0x13B5
    MICROSOFT = 0x1414
    HUAWEI = 0x19E5
    QUALCOMM = 0x5143
    INTEL = 0x8086


NVIDIA_VENDOR_ID = OrtDeviceVendorId.NVIDIA

# ONNX element type code: (numpy dtype, onnxruntime's name); the low-precision types' numpy dtypes come from
# ml_dtypes (when installed); strings are not supported.
_ELEMENT_TYPES = {
    1: (np.float32, "float"), 2: (np.uint8, "uint8"), 3: (np.int8, "int8"), 4: (np.uint16, "uint16"),
    5: (np.int16, "int16"), 6: (np.int32, "int32"), 7: (np.int64, "int64"), 9: (np.bool_, "bool"),
    10: (np.float16, "float16"), 11: (np.float64, "double"), 12: (np.uint32, "uint32"), 13: (np.uint64, "uint64"),
}
_LOW_PRECISION_CODES = {"bfloat16": 16, "float8e4m3fn": 17, "float8e4m3fnuz": 18, "float8e5m2": 19,
                        "float8e5m2fnuz": 20, "uint4": 21, "int4": 22, "float4e2m1": 23, "float8e8m0": 24,
                        "uint2": 25, "int2": 26}
_ELEMENT_TYPES.update({code: (NUMPY_TYPES[f"tensor({name})"], name) for name, code in _LOW_PRECISION_CODES.items()
                       if f"tensor({name})" in NUMPY_TYPES})
_CODE_OF_NUMPY = {np.dtype(t): code for code, (t, _) in _ELEMENT_TYPES.items()}
_DEVICE_TYPES = {"cpu": 0, "cuda": 1}  # OrtDevice's codes


def _element_code(element_type, what):
    """The ONNX code of a numpy type (np.float32, 'float32', np.dtype) or of an ONNX code given as an int."""
    if isinstance(element_type, (int, np.integer)) and not isinstance(element_type, bool):
        if int(element_type) in _ELEMENT_TYPES:
            return int(element_type)
        raise _NotImplemented(f"{what}: ONNX element type {int(element_type)} is not one lockstep supports "
                              f"(supported: {', '.join(n for _, n in _ELEMENT_TYPES.values())})")
    try:
        dtype = np.dtype(element_type)
    except TypeError:
        raise TypeError(f"{what}: element_type must be a numpy type or an ONNX type code, got {element_type!r}") from None
    if dtype not in _CODE_OF_NUMPY:
        raise _NotImplemented(f"{what}: element type {dtype} is not one lockstep supports "
                              f"(supported: {', '.join(n for _, n in _ELEMENT_TYPES.values())})")
    return _CODE_OF_NUMPY[dtype]


def _device_name(device_type, what):
    name = str(device_type).lower()
    if name not in _DEVICE_TYPES:
        raise ValueError(f"{what}: unsupported device type '{device_type}' (lockstep has 'cpu' and 'cuda')")
    return name


def _host_array(value, what):
    array = np.asarray(value)
    if array.dtype.kind in "OUSV" and array.dtype not in _CODE_OF_NUMPY:
        raise _NotImplemented(f"{what}: lockstep has no string or object tensors; got a numpy array of dtype "
                              f"{array.dtype}")
    return array


def _with_context(error, what):
    """The same exception class with `what` in front of the message, so that it names the input or output."""
    return type(error)(f"{what}: {error}")


class OrtDevice:
    """A device as onnxruntime describes it: a type code (0 cpu, 1 cuda), a memory type (0) and an ordinal."""

    def __init__(self, device_type=0, memory_type=0, device_id=0):
        self._type, self._memory, self._id = int(device_type), int(memory_type), int(device_id)

    def _get_c_device(self):
        """The device as run_with_ortvaluevector takes it (onnxruntime's native OrtDevice; here the same object)."""
        return self

    @staticmethod
    def make(ort_device_name, device_id, vendor_id=-1):
        return OrtDevice(_DEVICE_TYPES[_device_name(ort_device_name, "OrtDevice.make")], 0, device_id)

    @staticmethod
    def cpu():
        return _DEVICE_TYPES["cpu"]

    @staticmethod
    def cuda():
        return _DEVICE_TYPES["cuda"]

    @staticmethod
    def default_memory():
        return 0

    def device_id(self):
        return self._id

    def device_type(self):
        return self._type

    def device_vendor_id(self):
        return NVIDIA_VENDOR_ID if self._type == _DEVICE_TYPES["cuda"] else 0

    def device_mem_type(self):
        return self._memory

    def __eq__(self, other):
        return isinstance(other, OrtDevice) and (self._type, self._memory, self._id) == (other._type, other._memory,
                                                                                          other._id)

    def __hash__(self):
        return hash((self._type, self._memory, self._id))

    def __repr__(self):
        return f"OrtDevice({'cuda' if self._type else 'cpu'}, {self._id})"


class OrtAllocatorType(IntEnum):
    INVALID = -1
    ORT_DEVICE_ALLOCATOR = 0
    ORT_ARENA_ALLOCATOR = 1


class OrtMemType(IntEnum):
    CPU_INPUT = -2
    CPU_OUTPUT = -1
    CPU = -1
    DEFAULT = 0


class OrtDeviceMemoryType(IntEnum):
    DEFAULT = 0
    HOST_ACCESSIBLE = 5


class OrtMemoryInfoDeviceType(IntEnum):
    CPU = 0
    GPU = 1
    FPGA = 2
    NPU = 3


class OrtMemoryInfo:
    """Where a session wants a value: name "Cpu" or "Cuda", allocator type, device ordinal and memory type."""

    @classmethod
    def create_v2(cls, name, device_type, vendor_id, device_id, device_mem_type, alignment, allocator_type):
        """onnxruntime's second constructor: a device type and vendor instead of a name's meaning. Only CPU and
        NVIDIA GPU memory exist in lockstep; `alignment` is kept (lockstep's own buffers are 64-byte aligned)."""
        kind = OrtMemoryInfoDeviceType(device_type)
        if kind not in (OrtMemoryInfoDeviceType.CPU, OrtMemoryInfoDeviceType.GPU):
            raise ValueError(f"OrtMemoryInfo.create_v2: lockstep has no {kind.name} memory")
        info = cls(name, allocator_type, device_id, OrtMemType.DEFAULT)
        info.device_mem_type = OrtDeviceMemoryType(device_mem_type)
        info.device_vendor_id = int(vendor_id)
        info.alignment = int(alignment)
        return info

    def __init__(self, name, allocator_type=OrtAllocatorType.ORT_ARENA_ALLOCATOR, device_id=0,
                 mem_type=OrtMemType.DEFAULT):
        self.name = str(name)
        self.allocator_type = OrtAllocatorType(allocator_type)
        self.device_id = int(device_id)
        self.mem_type = OrtMemType(mem_type)
        self.device_mem_type = OrtDeviceMemoryType.DEFAULT
        self.device_vendor_id = NVIDIA_VENDOR_ID if self.name.lower() == "cuda" else 0

    def _key(self):
        return (self.name, self.allocator_type, self.device_id, self.mem_type)

    def __eq__(self, other):
        return isinstance(other, OrtMemoryInfo) and self._key() == other._key()

    def __hash__(self):
        return hash(self._key())

    def __repr__(self):
        return f"OrtMemoryInfo('{self.name}', {self.allocator_type.name}, {self.device_id}, {self.mem_type.name})"


class OrtValue:
    """A tensor on the host or on a CUDA device, as onnxruntime's OrtValue. Host values made from numpy arrays share
    the array's memory (as in onnxruntime); CUDA values own device memory. A value made by a session
    (InferenceSession.create_ortvalue_from_shape_and_type) belongs to it: `_session` is that session's native object,
    and only that session may read it, write it or copy between it and another session's value."""

    _is_webgpu_buffer = False  # onnxruntime's flag; lockstep has no WebGPU provider
    _session = None

    def __init__(self, tensor, numpy_obj=None):
        if not isinstance(tensor, _core.Tensor):
            raise ValueError("OrtValue wraps a lockstep tensor: make one with OrtValue.ortvalue_from_numpy, "
                             "ortvalue_from_shape_and_type or from_dlpack")
        self._tensor = tensor
        self._numpy_obj = numpy_obj
        self._sparse = None  # the SparseTensor a sparse value was made from; _tensor is then its dense form

    def _get_c_value(self):
        return self._tensor

    @property
    def _ortvalue(self):
        """The native value (a lockstep._core.Tensor), under onnxruntime's name for it."""
        return self._tensor

    @classmethod
    def ortvalue_from_numpy(cls, numpy_obj, device_type="cpu", device_id=0, vendor_id=-1):
        """A value holding `numpy_obj`: on the CPU over the array's own memory (writable, aligned, C-contiguous
        arrays; others are copied), on CUDA as a copy in device memory."""
        array = _host_array(numpy_obj, "ortvalue_from_numpy")
        if _device_name(device_type, "ortvalue_from_numpy") == "cuda":
            return cls(_core.Tensor.from_numpy(array, True).to_cuda(int(device_id)))
        share = array.flags.c_contiguous and array.flags.aligned and array.flags.writeable
        return cls(_core.Tensor.from_numpy(array, share), array if share else None)

    @classmethod
    def ortvalue_from_numpy_with_onnx_type(cls, data, onnx_element_type):
        """`data`'s memory read as another element type of the same size (no copy)."""
        dtype = np.dtype(_ELEMENT_TYPES[_element_code(onnx_element_type, "ortvalue_from_numpy_with_onnx_type")][0])
        if dtype.itemsize != data.dtype.itemsize:
            raise ValueError(f"ortvalue_from_numpy_with_onnx_type: {data.dtype} elements are {data.dtype.itemsize} "
                             f"bytes, {dtype} elements {dtype.itemsize}")
        return cls.ortvalue_from_numpy(data.view(dtype))

    @classmethod
    def ortvalue_from_shape_and_type(cls, shape=None, element_type=None, device_type="cpu", device_id=0,
                                     vendor_id=-1, memory_info=None):
        """An uninitialised value of `shape` and `element_type` (a numpy type or an ONNX type code)."""
        if shape is None or element_type is None:
            raise ValueError("`element_type` and `shape` are to be provided if pre-allocated memory is provided")
        code = _element_code(element_type, "ortvalue_from_shape_and_type")
        if memory_info is not None:
            device_type, device_id = memory_info.name, memory_info.device_id
        device = _device_name(device_type, "ortvalue_from_shape_and_type")
        return cls(_core.Tensor.empty([int(d) for d in shape], code, device, int(device_id)))

    @classmethod
    def ort_value_from_sparse_tensor(cls, sparse_tensor):
        """A sparse value; fed to a session it is the dense tensor it describes (lockstep's kernels are dense)."""
        if not isinstance(sparse_tensor, SparseTensor):
            raise TypeError(f"ort_value_from_sparse_tensor takes a SparseTensor, got {type(sparse_tensor).__name__}")
        dense = sparse_tensor.to_dense("ort_value_from_sparse_tensor")
        if dense.dtype == np.object_:
            raise _NotImplemented("ort_value_from_sparse_tensor: lockstep has no string OrtValues; feed the "
                                  "SparseTensor itself")
        value = cls(_core.Tensor.from_numpy(dense, False))
        value._sparse = sparse_tensor
        return value

    def as_sparse_tensor(self):
        if self._sparse is None:
            raise InvalidArgument("This OrtValue does not hold a sparse tensor")
        return self._sparse

    @classmethod
    def from_dlpack(cls, data):
        """A value over the memory of a DLPack tensor (torch, cupy, jax, numpy...) or capsule, on the CPU or CUDA;
        no copy. The tensor must be C-contiguous."""
        if isinstance(data, OrtValue):
            return cls(data._tensor)
        return cls(_core.Tensor.from_dlpack(data))

    def data_ptr(self):
        return self._tensor.data_ptr()

    def device_name(self):
        return self._tensor.device

    def shape(self):
        return list(self._tensor.shape())

    def data_type(self):
        kind = "sparse_tensor" if self._sparse is not None else "tensor"
        return f"{kind}({_ELEMENT_TYPES[self._tensor.dtype][1]})"

    def element_type(self):
        return self._tensor.dtype

    def tensor_size_in_bytes(self):
        return self._tensor.nbytes

    def has_value(self):
        return True

    def is_tensor(self):
        return self._sparse is None

    def is_sparse_tensor(self):
        return self._sparse is not None

    def is_tensor_sequence(self):
        return False

    def numpy(self):
        """The values as a numpy array: over the value's memory on the CPU, a host copy of a CUDA value."""
        if self._sparse is not None:
            raise InvalidArgument("numpy() is for dense tensors: this OrtValue holds a sparse tensor "
                                  "(as_sparse_tensor())")
        tensor = self._tensor if self._tensor.device == "cpu" else self._tensor.to_host()
        return tensor.numpy()

    def __array__(self, dtype=None, copy=None):
        array = self.numpy()
        if copy is not None:
            return np.array(array, dtype=dtype, copy=copy)
        return array if dtype is None else np.asarray(array, dtype=dtype)

    def __dlpack__(self, *, stream=None, **kwargs):
        """A DLPack capsule over this value's memory (no copy). Its contents are complete: lockstep finishes every
        write to a value before handing it out, so `stream` needs no synchronisation."""
        return self._tensor.__dlpack__(stream=stream, **kwargs)

    def __dlpack_device__(self):
        return self._tensor.__dlpack_device__()

    def update_inplace(self, data):
        """Copies `data` (a numpy array or an OrtValue, same element type and count) into this value's memory."""
        if isinstance(data, OrtValue):
            if self._session is not None and data._session is not None and data._session is not self._session:
                raise ValueError("update_inplace: the source OrtValue must originate from the same session as this "
                                 "one")
            source = data._tensor
        else:
            if not isinstance(data, np.ndarray):
                raise TypeError("update_inplace: data must be a numpy.ndarray or an OrtValue")
            array = _host_array(data, "update_inplace")
            if array.size != int(np.prod(self.shape(), dtype=np.int64)):
                raise ValueError(f"update_inplace: the array has {array.size} elements, the value {self.shape()}")
            source = _core.Tensor.from_numpy(np.ascontiguousarray(array).reshape(self.shape()), True)
        if source.dtype != self._tensor.dtype:
            raise ValueError(f"update_inplace: cannot copy {OrtValue(source).data_type()} data into a "
                             f"{self.data_type()} value")
        self._tensor.copy_from(source)

    def __repr__(self):
        return f"OrtValue({self.data_type()}, shape={self.shape()}, device='{self.device_name()}')"


def check_ownership(session, values, verb="used with"):
    """ValueError unless every OrtValue that a session made belongs to `session` (its current native session: one
    that set_providers replaced no longer owns its values)."""
    for value in values:
        owner = getattr(value, "_session", None)
        if owner is not None and owner is not session._sess:
            raise ValueError(f"OrtValue must be {verb} the session that created it.")


def create_session_ortvalue(session, shape, element_type, device_type, device_id):
    """InferenceSession.create_ortvalue_from_shape_and_type: an uninitialised value on a device the session runs on,
    owned by the session."""
    device = _device_name(device_type, "create_ortvalue_from_shape_and_type")
    session_device, session_device_id = _session_device(session)
    if device not in ("cpu", session_device) or (device == "cuda" and int(device_id) != session_device_id):
        raise InvalidArgument(f"create_ortvalue_from_shape_and_type: the session runs on {session_device}, not on "
                              f"{device_type}:{device_id}")
    value = OrtValue.ortvalue_from_shape_and_type(shape, element_type, device, device_id)
    value._session = session._sess
    return value


def _session_device(session):
    """("cuda", ordinal) for a session on CUDA, ("cpu", 0) otherwise."""
    if session.get_providers()[0] == CUDA_PROVIDER:
        return "cuda", int(session.get_provider_options()[CUDA_PROVIDER].get("device_id", 0))
    return "cpu", 0


def _memory_info(session):
    device, device_id = _session_device(session)
    return OrtMemoryInfo("Cuda" if device == "cuda" else "Cpu", OrtAllocatorType.ORT_ARENA_ALLOCATOR, device_id,
                         OrtMemType.DEFAULT)


def input_memory_infos(session):
    return [_memory_info(session) for _ in session.get_inputs()]


def output_memory_infos(session):
    return [_memory_info(session) for _ in session.get_outputs()]


class _OutputSlot:
    """A bound output: the device it is wanted on, and the value to write it into (None: lockstep allocates)."""

    def __init__(self, device, device_id, target=None):
        self.device, self.device_id, self.target = device, device_id, target

    def native_place(self, session_device):
        # Left on the session's device when it is wanted on any CUDA device: a device-to-device copy is cheaper.
        return "cuda" if self.device == "cuda" and session_device == "cuda" else "cpu"

    def check(self, name, tensor):
        if self.target is not None and (self.target._tensor.dtype, self.target._tensor.shape()) != (tensor.dtype,
                                                                                                   tensor.shape()):
            got = OrtValue(tensor)
            raise InvalidArgument(f"output '{name}' is bound to a {self.target.data_type()}{self.target.shape()}, "
                                  f"but the run produced a {got.data_type()}{got.shape()}")

    def receive(self, tensor):
        if self.target is not None:
            self.target._tensor.copy_from(tensor)
            return self.target
        if tensor.device != self.device:
            tensor = tensor.to_host() if self.device == "cpu" else tensor.to_cuda(self.device_id)
        elif self.device == "cuda" and tensor.device_id != self.device_id:
            tensor = tensor.to_cuda(self.device_id)
        return OrtValue(tensor)


class IOBinding:
    """Inputs and outputs bound to values or devices for InferenceSession.run_with_iobinding, as in onnxruntime.
    Inputs bound on the session's CUDA device are read in place; outputs bound to 'cuda' stay there."""

    def __init__(self, session):
        self._session = session
        self._native = session._sess  # a binding belongs to the native session it was made for (set_providers makes another)
        self._inputs = {}   # name: OrtValue
        self._outputs = {}  # name: _OutputSlot, in binding order
        self._results = []

    def _check_name(self, name, nodes, kind, what):
        names = [n.name for n in nodes]
        if name not in names:
            raise InvalidArgument(f"{what}: '{name}' is not an {kind} of this model ({kind}s: {', '.join(names)})")

    def _check_cuda(self, device, what):
        if device == "cuda" and CUDA_PROVIDER not in _core.available_providers():
            raise InvalidArgument(f"{what}: device_type 'cuda' needs a GPU, and {CUDA_PROVIDER} is not available "
                                  "on this machine")

    def _bind_input_value(self, name, value, what):
        self._check_name(name, self._session.get_inputs(), "input", what)
        self._inputs[name] = value

    def bind_cpu_input(self, name, arr_on_cpu):
        """Binds an input to a numpy array, whose memory is read by the run (no copy where it can be shared); a list
        or scalar takes the input's declared type, as run() converts it."""
        if not isinstance(arr_on_cpu, np.ndarray):
            declared = {i.name: i.type for i in self._session.get_inputs()}.get(name)
            arr_on_cpu = as_array(name, arr_on_cpu, declared)
        try:
            value = OrtValue.ortvalue_from_numpy(arr_on_cpu)
        except _core.Fail as e:
            raise _with_context(e, f"bind_cpu_input('{name}')") from None
        self._bind_input_value(name, value, "bind_cpu_input")

    def bind_input(self, name, device_type, device_id, element_type, shape, buffer_ptr):
        """Binds an input to memory at `buffer_ptr` on `device_type` (the caller keeps it alive and unchanged until the
        run returns)."""
        what = f"bind_input('{name}')"
        self._check_name(name, self._session.get_inputs(), "input", what)
        device = _device_name(device_type, what)
        self._check_cuda(device, what)
        try:
            tensor = _core.Tensor.from_pointer(int(buffer_ptr), _element_code(element_type, what),
                                               [int(d) for d in shape], device, int(device_id))
        except _core.Fail as e:
            raise _with_context(e, what) from None
        self._inputs[name] = OrtValue(tensor)

    def bind_ortvalue_input(self, name, ortvalue):
        if not isinstance(ortvalue, OrtValue):
            raise TypeError(f"bind_ortvalue_input('{name}'): expected an OrtValue, got {type(ortvalue).__name__}")
        check_ownership(self._session, [ortvalue], "bound to")
        self._bind_input_value(name, ortvalue, "bind_ortvalue_input")

    def bind_output(self, name, device_type="cpu", device_id=0, element_type=None, shape=None, buffer_ptr=None):
        """Binds an output to a device (lockstep allocates it there) or, with `buffer_ptr`, to memory of the caller
        that the run writes into."""
        what = f"bind_output('{name}')"
        self._check_name(name, self._session.get_outputs(), "output", what)
        device = _device_name(device_type, what)
        self._check_cuda(device, what)
        target = None
        if buffer_ptr is not None:
            if element_type is None or shape is None:
                raise ValueError("`element_type` and `shape` are to be provided if pre-allocated memory is provided")
            try:
                target = OrtValue(_core.Tensor.from_pointer(int(buffer_ptr), _element_code(element_type, what),
                                                            [int(d) for d in shape], device, int(device_id)))
            except _core.Fail as e:
                raise _with_context(e, what) from None
        self._outputs[name] = _OutputSlot(device, int(device_id), target)

    def bind_ortvalue_output(self, name, ortvalue):
        if not isinstance(ortvalue, OrtValue):
            raise TypeError(f"bind_ortvalue_output('{name}'): expected an OrtValue, got {type(ortvalue).__name__}")
        check_ownership(self._session, [ortvalue], "bound to")
        self._check_name(name, self._session.get_outputs(), "output", "bind_ortvalue_output")
        self._outputs[name] = _OutputSlot(ortvalue.device_name(), ortvalue._tensor.device_id, ortvalue)

    def _synchronize(self, values):
        for device_id in {v._tensor.device_id for v in values if v._tensor.device == "cuda"}:
            _core.synchronize_device("cuda", device_id)

    def synchronize_inputs(self):
        """Waits for all work on the CUDA devices of the bound inputs (e.g. a torch stream that wrote them)."""
        self._synchronize(self._inputs.values())

    def synchronize_outputs(self):
        """Waits for all work on the CUDA devices of the outputs (a run's outputs are complete when it returns)."""
        self._synchronize(self._results)

    def get_outputs(self):
        """The outputs of the last run, as OrtValues where they were bound (they may be on the device)."""
        return list(self._results)

    def copy_outputs_to_cpu(self):
        return [np.array(v.numpy(), copy=True) if v.device_name() == "cpu" else v.numpy() for v in self._results]

    def clear_binding_inputs(self):
        self._inputs.clear()

    def clear_binding_outputs(self):
        self._outputs.clear()
        self._results = []


def run_with_iobinding(session, binding, run_options=None):
    if not isinstance(binding, IOBinding) or binding._session is not session or binding._native is not session._sess:
        raise ValueError("IOBinding must be used with the session that created it.")
    check_ownership(session, list(binding._inputs.values()) + [s.target for s in binding._outputs.values()])
    if not binding._outputs:
        raise InvalidArgument("At least one output should be requested.")
    names = list(binding._outputs)
    slots = [binding._outputs[n] for n in names]
    device, _ = _session_device(session)
    feeds = {name: value._tensor for name, value in binding._inputs.items()}
    tensors = session._sess.run_tensors(names, feeds, [slot.native_place(device) for slot in slots], run_options)
    # Every bound buffer is checked before any is written, so a mismatch leaves all of them as they were.
    for name, slot, tensor in zip(names, slots, tensors):
        slot.check(name, tensor)
    binding._results = [slot.receive(tensor) for slot, tensor in zip(slots, tensors)]


def _feed_tensors(session, feeds, what):
    required = [i.name for i in session.get_inputs()]
    missing = [n for n in required if n not in feeds]
    if missing:
        raise ValueError(f"Required inputs ({missing}) are missing from input feed ({list(feeds)}).")
    declared = {i.name: i.type for i in session.get_inputs()}
    check_ownership(session, feeds.values())
    tensors = {}
    for name, value in feeds.items():
        if isinstance(value, SparseTensor):
            value = value.to_dense(f"input '{name}'")
        if isinstance(value, OrtValue):
            tensors[name] = value._tensor
        elif what == "run":
            tensors[name] = feed_tensor(name, value, declared.get(name))
        else:
            raise TypeError(f"{what}: input '{name}' must be an OrtValue, got {type(value).__name__}")
    return tensors


def run_with_ort_values(session, output_names, feeds, run_options=None):
    """Outputs as OrtValues, left on the session's device."""
    values = session._sess.run_with_ort_values(_feed_tensors(session, feeds, "run_with_ort_values"),
                                               list(output_names or []), run_options)
    return [OrtValue(t) for t in values]


def run_with_values_in_feed(session, output_names, feeds, run_options=None):
    """InferenceSession.run with some feeds given as OrtValues (read where they are): numpy outputs."""
    names = list(output_names or [o.name for o in session.get_outputs()])
    tensors = session._sess.run_tensors(names, _feed_tensors(session, feeds, "run"), ["cpu"] * len(names), run_options)
    return [t.numpy() for t in tensors]


def run_async(session, output_names, input_feed, callback, user_data, run_options):
    """Runs on a new thread and calls callback(outputs, user_data, error_message), as onnxruntime does: outputs is a
    list of numpy arrays and the message "" on success; [] and the error's message on failure."""
    required = [i.name for i in session.get_inputs() if not i.type.startswith("optional(")]
    missing = [n for n in required if n not in input_feed]
    if missing:
        raise ValueError(f"Required inputs ({missing}) are missing from input feed ({list(input_feed)}).")

    def work():
        try:
            outputs, error = session.run(output_names, input_feed, run_options), ""
        except Exception as e:  # noqa: BLE001 - every failure is reported to the callback, as onnxruntime does
            outputs, error = [], str(e)
        callback(outputs, user_data, error)

    threading.Thread(target=work, daemon=True, name="lockstep-run-async").start()
