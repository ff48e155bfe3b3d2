"""onnxruntime.capi.onnxruntime_pybind11_state over lockstep: its exception classes and RunOptions."""

from lockstep import Fail, InvalidArgument, InvalidGraph, NoSuchFile, NotImplemented, RunOptions  # noqa: F401


class OrtValueVector:
    """lockstep has no OrtValueVector (run_with_ort_values returns a list): defined so that modules importing the
    name load; no lockstep value is an instance of it."""
