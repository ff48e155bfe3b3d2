"""onnxruntime.capi.onnxruntime_inference_collection over lockstep: the helpers its tests import from there."""

from lockstep import check_and_normalize_provider_args  # noqa: F401
