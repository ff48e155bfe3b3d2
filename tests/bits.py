"""Exact comparison helpers: bytes equal, NaN equal to NaN; ulp distances for reports."""

import numpy as np


def _is_float(dtype):
    """numpy's floats, and ml_dtypes' (bfloat16, float8, float4: kind "V" to numpy)."""
    return dtype.kind == "f" or dtype.name.startswith(("bfloat16", "float8", "float4"))


def same_bits(a, b):
    """True when the arrays have equal dtype, shape and bytes, counting any NaN equal to any NaN."""
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    if _is_float(a.dtype):
        # numpy's own floats are tested as they are; ml_dtypes' through float32, which holds all their values.
        wide = (lambda x: x) if a.dtype.kind == "f" else (lambda x: x.astype(np.float32))
        both_nan = np.isnan(wide(a)) & np.isnan(wide(b))
        ia = a.view(f"u{a.itemsize}")
        ib = b.view(f"u{b.itemsize}")
        return bool(np.all((ia == ib) | both_nan))
    return a.tobytes() == b.tobytes()


def _ordered(x):
    """Maps float32 bits to integers that are monotonic in the float value (so ulp = difference)."""
    i = x.astype(np.float32).view(np.int32).astype(np.int64)
    return np.where(i < 0, -(i & 0x7FFFFFFF), i)


def max_ulp(a, b):
    """Worst ulp distance between two float arrays of equal shape (NaN pairs count 0, NaN vs number counts inf)."""
    a = np.asarray(a, dtype=np.float32)
    b = np.asarray(b, dtype=np.float32)
    if a.size == 0:
        return 0
    nan_a, nan_b = np.isnan(a), np.isnan(b)
    if np.any(nan_a != nan_b):
        return float("inf")
    d = np.abs(_ordered(a) - _ordered(b))
    d[nan_a] = 0
    return int(d.max())
