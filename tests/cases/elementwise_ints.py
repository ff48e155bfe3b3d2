"""Cross-device cases for the elementwise family's small and unsigned integer types (int8, int16, uint8-uint64):
exact two's-complement arithmetic that wraps on overflow, checked against numpy (which wraps the same way)."""

import numpy as np

from cases import case, randint

EXACT = dict(rtol=0, atol=0)
TYPES = [np.int8, np.int16, np.uint8, np.uint16, np.uint32, np.uint64]


def full_range(dtype, *shape, seed):
    info = np.iinfo(dtype)
    return np.random.default_rng(seed).integers(info.min, info.max, size=shape, endpoint=True, dtype=dtype)


def numpy_ref(fn):
    def ref(A, B):
        with np.errstate(over="ignore"):
            return [np.asarray(fn(A, B))]
    return ref


def trunc_div(a, b):
    q = a // b
    return np.where((a % b != 0) & ((a < 0) != (b < 0)), q + 1, q).astype(a.dtype)


BINARY = {
    "Add": np.add, "Sub": np.subtract, "Mul": np.multiply, "Max": np.maximum, "Min": np.minimum,
    "Equal": np.equal, "Greater": np.greater, "Less": np.less, "GreaterOrEqual": np.greater_equal,
    "LessOrEqual": np.less_equal,
}

CASES = [
    case(f"{op.lower()}_{np.dtype(t).name}", op, {"A": full_range(t, 3, 17, seed=i), "B": full_range(t, 17, seed=i + 50)},
         opset=14, reference=numpy_ref(fn), note="numpy wraps like lockstep; onnxruntime lacks some of these types",
         **EXACT)
    for i, (t, (op, fn)) in enumerate((t, item) for t in TYPES for item in BINARY.items())
] + [
    # Div truncates; x / 0 = 0 (no numpy reference for that, so divisors are non-zero here).
    case(f"div_{np.dtype(t).name}", "Div", {"A": full_range(t, 4, 9, seed=3), "B": randint(4, 9, low=1, high=100,
         dtype=t, seed=4)}, opset=14, reference=numpy_ref(trunc_div),
         **EXACT)
    for t in TYPES
] + [
    # Mod (fmod=0) is floored, as Python's %, for the signed types too.
    case(f"mod_{np.dtype(t).name}", "Mod", {"A": full_range(t, 5, 7, seed=5), "B": randint(5, 7, low=1, high=60,
         dtype=t, seed=6)}, opset=13, reference=numpy_ref(np.mod), **EXACT)
    for t in TYPES
]


def bitshift_ref(left):
    """The ONNX rule: an amount outside [0, bits) gives the sign fill (-1 for RIGHT on a negative x), else 0."""
    def ref(A, B):
        bits = 8 * A.dtype.itemsize
        inside = (B.astype(np.int64) >= 0) & (B.astype(np.int64) < bits)
        n = np.where(inside, B, 0).astype(A.dtype)
        with np.errstate(over="ignore"):
            shifted = np.left_shift(A, n) if left else np.right_shift(A, n)
        fill = np.where((A < 0) & (not left), -1, 0).astype(A.dtype) if np.issubdtype(A.dtype, np.signedinteger) \
            else np.zeros_like(A)
        return [np.where(inside, shifted, fill).astype(A.dtype)]
    return ref


SHIFT_TYPES = TYPES + [np.int32, np.int64]
CASES += [
    case(f"bitshift_{direction.lower()}_{np.dtype(t).name}", "BitShift",
         {"A": full_range(t, 4, 33, seed=300 + i),
          "B": np.random.default_rng(400 + i).integers(-3 if np.issubdtype(t, np.signedinteger) else 0,
                                                       8 * np.dtype(t).itemsize + 3, size=33).astype(t)},
         attrs={"direction": direction}, opset=28 if np.issubdtype(t, np.signedinteger) else 11,
         reference=bitshift_ref(direction == "LEFT"), note="amounts cover negative and >= the width", **EXACT)
    for i, (t, direction) in enumerate((t, d) for t in SHIFT_TYPES for d in ("LEFT", "RIGHT"))
]
