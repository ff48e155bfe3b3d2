"""onnxruntime.capi.onnxruntime_pybind11_state over lockstep: its exception classes, RunOptions and OrtValueVector."""

from lockstep import Fail, InvalidArgument, InvalidGraph, NoSuchFile, NotImplemented, RunOptions  # noqa: F401
from lockstep._core import OrtValueVector  # noqa: F401
