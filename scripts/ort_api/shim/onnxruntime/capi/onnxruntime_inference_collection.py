"""onnxruntime.capi.onnxruntime_inference_collection over lockstep: the helpers its tests import from there.

The WebGPU-context and graph-annotation helpers are onnxruntime's private CUDA-graph and WebGPU machinery, which
lockstep does not have: they are here so that the test file can be collected, and each raises lockstep.NotImplemented
when called, so the tests that use them fail and are counted as failures.
"""

from lockstep import NotImplemented as _NotImplemented
from lockstep import check_and_normalize_provider_args  # noqa: F401

_GRAPH_ANNOTATION_SKIP = -1


def _graph_annotation_id(run_options):
    raise _NotImplemented("graph capture (gpu_graph_id) is not built in lockstep")


def _has_foreign_webgpu_context(providers, context_id_getter):
    raise _NotImplemented("lockstep has no WebGPU provider")
