"""onnxruntime.capi._pybind_state over lockstep: the Python-level classes stand in for the native ones."""

from lockstep import Fail, OrtValue, RunOptions, SessionOptions  # noqa: F401
