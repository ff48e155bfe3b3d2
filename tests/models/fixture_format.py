"""Model fixtures without weights: graphs exported by torch whose large float initializers are replaced by a
seeded generator spec, so the repository holds kilobytes instead of hundreds of megabytes.

A stripped initializer keeps its name, dims and type, has no data, and carries in doc_string
    lockstep-fixture normal MEAN STD SEED
Its values are regenerated with numpy's PCG64 (stable across numpy versions) from SEED.
"""

import zlib

import numpy as np
import onnx
from onnx import numpy_helper

TAG = "lockstep-fixture"
KEEP_BELOW = 64  # initializers with fewer elements (shapes, scalars) are kept verbatim


def strip_weights(model):
    """Replaces every large float initializer by its generator spec (mean and std of the original)."""
    for t in model.graph.initializer:
        if t.data_type != onnx.TensorProto.FLOAT or int(np.prod(t.dims)) < KEEP_BELOW:
            continue
        values = numpy_helper.to_array(t).astype(np.float64)
        seed = zlib.crc32(t.name.encode())
        t.ClearField("raw_data")
        t.ClearField("float_data")
        t.doc_string = f"{TAG} normal {values.mean():.9g} {values.std():.9g} {seed}"
    return model


def _spec_of(t):
    if not t.doc_string.startswith(TAG):
        return None
    _, kind, mean, std, seed = t.doc_string.split()
    return kind, float(mean), float(std), int(seed)


def restore_weights(model):
    """Fills every stripped initializer from its spec; returns the model (modified in place)."""
    for t in model.graph.initializer:
        spec = _spec_of(t)
        if spec is None:
            continue
        _, mean, std, seed = spec
        rng = np.random.default_rng(seed)
        values = (mean + std * rng.standard_normal(size=tuple(t.dims))).astype(np.float32)
        t.raw_data = values.tobytes()
    return model
