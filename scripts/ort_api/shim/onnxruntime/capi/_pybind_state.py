"""onnxruntime.capi._pybind_state over lockstep: its native module, lockstep._core, stands in for onnxruntime's (the
native value class is lockstep._core.Tensor), with the Python-level option classes."""

from lockstep import Fail, RunOptions, SessionOptions  # noqa: F401
from lockstep._core import OrtValueVector, is_dlpack_uint8_tensor  # noqa: F401
from lockstep._core import Tensor as OrtValue  # noqa: F401
