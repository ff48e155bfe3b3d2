"""onnxruntime.capi over lockstep (see onnxruntime/__init__.py of this shim)."""
