"""Cross-device cases of the reduce family: Reduce*, ArgMax/ArgMin, Softmax/LogSoftmax (docs/arithmetic.md#reduce)."""

import numpy as np

from cases import case, rand, randint

REDUCE_OPS = ["ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2",
              "ReduceSumSquare", "ReduceLogSumExp"]
# Opset from which the op takes axes as an input.
AXES_INPUT = {op: (13 if op == "ReduceSum" else 18) for op in REDUCE_OPS}


def special(*shape, seed):
    """Random values salted with NaN, +-inf, -0 and +0."""
    x = rand(*shape, seed=seed).ravel()
    rng = np.random.default_rng(seed)
    idx = rng.permutation(x.size)
    x[idx[0::11]] = -0.0
    x[idx[1::13]] = 0.0
    x[idx[2::29]] = np.inf
    x[idx[3::31]] = -np.inf
    x[idx[4::37]] = np.nan
    return x.reshape(shape)


def reduce_case(name, op, x, axes, opset, keepdims=None, noop=None, **kw):
    attrs = {}
    if keepdims is not None:
        attrs["keepdims"] = keepdims
    inputs = {"data": x}
    const = ()
    if opset >= AXES_INPUT[op]:
        if noop is not None:
            attrs["noop_with_empty_axes"] = noop
        if axes is not None:
            inputs["axes"] = np.array(axes, dtype=np.int64)
            const = ("axes",)
    elif axes is not None:
        attrs["axes"] = axes
    if op == "ReduceProd":
        kw.setdefault("rtol", 1e-4)
    return case(name, op, inputs, attrs=attrs, opset=opset, const=const, **kw)


CASES = []

# Every op: attribute form (old opset) and input form (new opset); middle, trailing, leading, several, all, negative.
SHAPES_AXES = [
    ((3, 70, 5), [1]),           # strided reduction longer than 64
    ((4, 130), [-1]),            # contiguous, > 64 and > 32, odd remainder
    ((6, 5, 4), [0]),
    ((2, 3, 4, 5), [1, 3]),      # two separated axes
    ((2, 3, 4, 5), [-3, -2]),    # adjacent axes, negative
    ((5, 7), None),              # axes absent: all
    ((33,), [0]),
    ((1, 1, 17), [2]),           # size-1 dims
]
for op in REDUCE_OPS:
    low = 0.5 if op in ("ReduceProd",) else -1.0
    for i, (shape, axes) in enumerate(SHAPES_AXES):
        x = rand(*shape, low=low, high=1.5 if op == "ReduceProd" else 1.0, seed=100 + i)
        for opset in sorted({11, AXES_INPUT[op] - 1, AXES_INPUT[op], 18, 21}):
            CASES.append(reduce_case(f"{op}_s{i}_o{opset}", op, x, axes, opset))
    x = rand(3, 4, 5, seed=7)
    CASES.append(reduce_case(f"{op}_keepdims0", op, x, [0, 2], 11, keepdims=0))
    CASES.append(reduce_case(f"{op}_keepdims0_new", op, x, [1], AXES_INPUT[op], keepdims=0))
    CASES.append(reduce_case(f"{op}_empty_axes_all", op, x, [], AXES_INPUT[op]))
    CASES.append(reduce_case(f"{op}_noop", op, x, None, AXES_INPUT[op], noop=1,
                             note="noop_with_empty_axes: identity ops copy, others apply the term to each element"))
    CASES.append(reduce_case(f"{op}_rank0", op, np.array(0.75, dtype=np.float32), None, 11))
    CASES.append(reduce_case(f"{op}_big_contig", op, rand(2, 5000, low=0.99 if op == "ReduceProd" else -1.0,
                                                              high=1.01 if op == "ReduceProd" else 1.0, seed=9),
                             [1], 11, rtol=1e-4, atol=1e-5))
    CASES.append(reduce_case(f"{op}_global_long", op, rand(3, 1000, 3, seed=10, low=0.999 if op == "ReduceProd"
                                                              else -1.0, high=1.001 if op == "ReduceProd" else 1.0),
                             None, 11, rtol=1e-4, atol=1e-5))
    # Empty reduction: identity values (0, 1, -inf, +inf; NaN for the mean).
    CASES.append(reduce_case(f"{op}_empty_set", op, np.zeros((2, 0, 4), np.float32), [1], 18, reference=None,
                             note="onnxruntime and the spec disagree on some empty-set results; cross-device only"))
    CASES.append(reduce_case(f"{op}_empty_out", op, np.zeros((0, 3), np.float32), [1], 18))
    # NaN, inf and signed zeros: cross-device bit equality is the point (onnxruntime's NaN rules differ).
    CASES.append(reduce_case(f"{op}_special", op, special(5, 77, 3, seed=11), [1], 18, reference=None,
                             note="NaN/inf/-0 per the lockstep contract"))
    CASES.append(reduce_case(f"{op}_special_contig", op, special(4, 97, seed=12), [1], 18, reference=None,
                             note="NaN/inf/-0 per the lockstep contract"))

# Integer reductions.
for op in ["ReduceSum", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceMean", "ReduceL1", "ReduceSumSquare"]:
    for dt in (np.int32, np.int64):
        x = randint(3, 5, 4, low=-5, high=6, dtype=dt, seed=13)
        CASES.append(reduce_case(f"{op}_{dt.__name__}", op, x, [1], 18))
for op in ["ReduceMax", "ReduceMin"]:
    for dt in (np.int8, np.uint8):
        CASES.append(reduce_case(f"{op}_{dt.__name__}", op, randint(3, 6, low=0, high=100, dtype=dt, seed=14),
                                 [1], 18))
    CASES.append(reduce_case(f"{op}_bool", op, randint(4, 5, low=0, high=2, seed=15).astype(bool), [1], 20))

# ArgMax / ArgMin.
for op in ["ArgMax", "ArgMin"]:
    x = rand(4, 70, 3, seed=20)
    for axis in (0, 1, 2, -1):
        for keepdims in (0, 1):
            CASES.append(case(f"{op}_a{axis}_k{keepdims}", op, {"data": x},
                              attrs={"axis": axis, "keepdims": keepdims}, opset=13))
    ties = np.array([[1, 3, 3, 0, 3], [2, 2, 2, 2, 2], [-0.0, 0.0, -1, 0.0, -0.0]], np.float32)
    for last in (0, 1):
        CASES.append(case(f"{op}_ties_last{last}", op, {"data": ties}, attrs={"axis": 1, "select_last_index": last},
                          opset=12))
        CASES.append(case(f"{op}_special_last{last}", op, {"data": special(6, 40, seed=21)},
                          attrs={"axis": 1, "select_last_index": last}, opset=13, reference=None,
                          note="NaN wins (first NaN, last with select_last_index)"))
    CASES.append(case(f"{op}_default_axis_o7", op, {"data": x}, opset=7))
    for dt in (np.int32, np.int64, np.int8, np.uint8):
        CASES.append(case(f"{op}_{dt.__name__}", op, {"data": randint(5, 9, low=0, high=50, dtype=dt, seed=22)},
                          attrs={"axis": 1}, opset=13))
    CASES.append(case(f"{op}_rank1", op, {"data": rand(37, seed=23)}, attrs={"keepdims": 0}, opset=13))

# Softmax / LogSoftmax: opset < 13 flattens at axis (default 1), opset >= 13 is one axis (default -1).
for op in ["Softmax", "LogSoftmax"]:
    x3 = rand(3, 4, 70, low=-8, high=8, seed=30)
    for opset in (11, 12, 13, 18):
        CASES.append(case(f"{op}_default_o{opset}", op, {"input": x3}, opset=opset))
        for axis in (0, 1, -1, -2):
            CASES.append(case(f"{op}_axis{axis}_o{opset}", op, {"input": x3}, attrs={"axis": axis}, opset=opset))
    CASES.append(case(f"{op}_long_row", op, {"input": rand(2, 3000, low=-20, high=20, seed=31)}, opset=13,
                      atol=1e-6))
    CASES.append(case(f"{op}_short_rows", op, {"input": rand(257, 3, seed=32)}, opset=13))
    CASES.append(case(f"{op}_rank4_axis1", op, {"input": rand(2, 5, 3, 7, seed=33)}, attrs={"axis": 1}, opset=13))
    CASES.append(case(f"{op}_empty", op, {"input": np.zeros((0, 5), np.float32)}, opset=13))
    CASES.append(case(f"{op}_large_values", op, {"input": rand(4, 50, low=-1e4, high=1e4, seed=34)}, opset=13,
                      atol=1e-5))
    CASES.append(case(f"{op}_special", op, {"input": special(6, 45, seed=35)}, opset=13, reference=None,
                      note="rows with NaN give NaN; +inf rows give NaN; -inf entries give 0 / -inf"))
    CASES.append(case(f"{op}_opset7", op, {"input": rand(2, 3, 4, seed=36)}, opset=7))

# Softmax / LogSoftmax on double: the float32 sequence in binary64 (exp_f64, log_f64), one row per task or thread.
for op in ["Softmax", "LogSoftmax"]:
    x3 = rand(3, 4, 70, low=-30, high=30, dtype=np.float64, seed=37)
    for opset, axis in ((11, 1), (12, 0), (13, -1), (13, 0), (13, 1), (18, -2)):
        CASES.append(case(f"{op}_f64_axis{axis}_o{opset}", op, {"input": x3}, attrs={"axis": axis}, opset=opset,
                          rtol=1e-13, atol=1e-15))
    CASES.append(case(f"{op}_f64_long_row", op, {"input": rand(2, 3000, low=-700, high=700, dtype=np.float64,
                                                                seed=38)}, opset=13, rtol=1e-13, atol=1e-15))
    CASES.append(case(f"{op}_f64_short_rows", op, {"input": rand(257, 3, dtype=np.float64, seed=39)}, opset=13,
                      rtol=1e-13, atol=1e-15))
    CASES.append(case(f"{op}_f64_empty", op, {"input": np.zeros((0, 5), np.float64)}, opset=13))
    CASES.append(case(f"{op}_f64_special", op, {"input": special(6, 45, seed=35).astype(np.float64)}, opset=13,
                      reference=None, note="rows with NaN give NaN; +inf rows give NaN; -inf entries give 0 / -inf"))

# Hardmax: opset 11 flattens at axis, 13 takes one axis; ties go to the first maximum.
ties = np.array([[1.0, 3.0, 3.0, -2.0], [0.5, 0.5, 0.5, 0.5], [-1.0, -0.0, 0.0, -3.0]], np.float32)
for opset, axis in ((11, 1), (11, 0), (13, -1), (13, 0), (13, 1)):
    CASES.append(case(f"Hardmax_o{opset}_a{axis}", "Hardmax", {"x": rand(3, 4, 5, seed=30)}, attrs={"axis": axis},
                      opset=opset))
CASES.append(case("Hardmax_ties", "Hardmax", {"x": ties}, opset=13))
CASES.append(case("Hardmax_special", "Hardmax", {"x": special(4, 70, seed=31)}, opset=13, reference=None,
                  note="NaN wins under the contract's max rule; onnxruntime disagrees"))

# LpNormalization: p 1 and 2, several axes, a long line, a zero line (gives 0).
for p in (1, 2):
    for axis in (-1, 0, 1):
        CASES.append(case(f"LpNormalization_p{p}_a{axis}", "LpNormalization", {"x": rand(3, 70, 4, seed=32)},
                          attrs={"p": p, "axis": axis}, opset=22))
CASES.append(case("LpNormalization_zero_line", "LpNormalization",
                  {"x": np.array([[0.0, 0.0], [3.0, 4.0]], np.float32)}, attrs={"axis": 1}, opset=22,
                  reference=lambda x: [np.array([[0.0, 0.0], [0.6, 0.8]], np.float32)], note="spec: 0/0 is 0"))


def scan_reference(product):
    def ref(x, axis, exclusive=0, reverse=0):
        a = int(axis)
        v = np.flip(x, a) if reverse else x
        r = np.cumprod(v, axis=a, dtype=x.dtype) if product else np.cumsum(v, axis=a, dtype=x.dtype)
        if exclusive:
            first = np.ones_like(np.take(r, [0], axis=a)) if product else np.zeros_like(np.take(r, [0], axis=a))
            r = np.concatenate([first, np.take(r, range(r.shape[a] - 1), axis=a)], axis=a)
        return np.flip(r, a) if reverse else r
    return ref


# CumSum / CumProd: every axis, exclusive and reverse, float/double/int32/int64/uint64, a long line.
for op, opset, product in (("CumSum", 14, False), ("CumProd", 26, True)):
    low, high = (0.9, 1.1) if product else (-1.0, 1.0)
    for axis in (0, 1, -1):
        for exclusive in (0, 1):
            for reverse in (0, 1):
                attrs = {"exclusive": exclusive, "reverse": reverse}
                x = rand(3, 40, 5, low=low, high=high, seed=40 + axis)
                ref = scan_reference(product)
                CASES.append(case(f"{op}_a{axis}_e{exclusive}_r{reverse}", op,
                                  {"x": x, "axis": np.array(axis, np.int64)}, attrs=attrs, opset=opset,
                                  const=("axis",), rtol=1e-4,
                                  reference=lambda x, axis, ref=ref, attrs=attrs: [ref(x, axis, **attrs)]))
    for dtype in (np.float64, np.int32, np.int64, np.uint64):
        x = (rand(4, 6, seed=50) * 10).astype(dtype) if dtype == np.float64 else randint(4, 6, low=1, high=5,
                                                                                            dtype=dtype)
        ref = scan_reference(product)
        CASES.append(case(f"{op}_{np.dtype(dtype).name}", op, {"x": x, "axis": np.array([1], np.int32)},
                          opset=opset, const=("axis",), reference=lambda x, axis, ref=ref: [ref(x, axis[0])]))

# ReduceLogSum = log_f32(S(x)): positive terms (a negative sum gives NaN), attribute and input axes, a long row.
for i, (shape, axes) in enumerate(SHAPES_AXES[:5]):
    x = rand(*shape, low=0.1, high=2.0, seed=500 + i)
    for opset in (13, 18):
        CASES.append(case(f"ReduceLogSum_s{i}_o{opset}", "ReduceLogSum",
                          {"data": x, **({"axes": np.array(axes or [], np.int64)} if opset >= 18 and axes else {})},
                          attrs={} if opset >= 18 or not axes else {"axes": axes}, opset=opset,
                          const=("axes",) if opset >= 18 and axes else ()))

# Double: every Reduce* in binary64 (docs/arithmetic.md#double-reductions) against numpy in longdouble; ReduceLogSumExp
# also over special values (cross-device only) and with terms whose exponentials underflow or would overflow.
def _long_reduce(op):
    def fn(v, axis, keepdims):
        with np.errstate(all="ignore"):
            if op == "ReduceLogSumExp":
                m = np.max(v, axis=axis, keepdims=True)
                r = np.log(np.sum(np.exp(v - m), axis=axis, keepdims=True)) + m
                return r if keepdims else np.squeeze(r, axis=axis)
            if op == "ReduceLogSum":
                return np.log(np.sum(v, axis=axis, keepdims=keepdims))
            if op == "ReduceL2":
                return np.sqrt(np.sum(v * v, axis=axis, keepdims=keepdims))
            if op == "ReduceL1":
                return np.sum(np.abs(v), axis=axis, keepdims=keepdims)
            if op == "ReduceSumSquare":
                return np.sum(v * v, axis=axis, keepdims=keepdims)
            f = {"ReduceSum": np.sum, "ReduceMean": np.mean, "ReduceMax": np.max, "ReduceMin": np.min,
                 "ReduceProd": np.prod}[op]
            return f(v, axis=axis, keepdims=keepdims)

    def ref(data, axes=None, keepdims=1, axes_attr=None):
        ax = axes_attr if axes_attr is not None else axes
        axis = None if ax is None or len(ax) == 0 else tuple(int(a) for a in ax)
        return [np.asarray(fn(data.astype(np.longdouble), axis, bool(keepdims))).astype(np.float64)]
    return ref


def _f64_reduce_case(name, op, x, axes, opset, keepdims=None, **kw):
    c = reduce_case(name, op, x, axes, opset, keepdims=keepdims, rtol=1e-13, atol=1e-14, **kw)
    if "reference" not in kw:
        attr_axes = c.attrs.get("axes")
        c.reference = lambda **inp: _long_reduce(op)(inp["data"], inp.get("axes"), 1 if keepdims is None else keepdims,
                                                     attr_axes)
    return c


AXES_INPUT["ReduceLogSum"] = 18
for op in REDUCE_OPS + ["ReduceLogSum"]:
    positive = op in ("ReduceProd", "ReduceLogSum")
    low, high = (0.5, 1.5) if positive else (-1.0, 1.0)
    for i, (shape, axes) in enumerate([((3, 70, 5), [1]), ((4, 130), [-1]), ((5, 7), None), ((2, 3, 4, 5), [1, 3])]):
        x = rand(*shape, low=low, high=high, dtype=np.float64, seed=600 + i)
        for opset in (13, 18):
            CASES.append(_f64_reduce_case(f"{op}_f64_s{i}_o{opset}", op, x, axes, opset))
    CASES.append(_f64_reduce_case(f"{op}_f64_keepdims0", op, rand(3, 4, 5, low=low, high=high, dtype=np.float64,
                                                                  seed=610), [0, 2], 18, keepdims=0))
    CASES.append(reduce_case(f"{op}_f64_empty_set", op, np.zeros((2, 0, 4), np.float64), [1], 18, reference=None,
                             note="identity values; cross-device only"))
    if not positive:
        CASES.append(reduce_case(f"{op}_f64_special", op, special(5, 77, 3, seed=611).astype(np.float64), [1], 18,
                                 reference=None, note="NaN/inf/-0 per the lockstep contract"))
CASES.append(_f64_reduce_case("ReduceLogSumExp_f64_wide", "ReduceLogSumExp",
                              rand(6, 40, low=-800, high=800, dtype=np.float64, seed=612), [1], 18))
