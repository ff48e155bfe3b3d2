"""Exp, Log, Mod, ReduceLogSumExp, Softmax and LogSoftmax on double (docs/arithmetic.md#binary64-exp-and-log,
#double-reductions, #softmax--logsoftmax).

  * Exp and Log: within 1 ulp of numpy's longdouble functions (x87 expl/logl, ~2^-63 relative) rounded to double,
    counted in ulps, over a million inputs spanning the ranges (denormal results and arguments included);
  * Mod: the same bytes as numpy's fmod (fmod = 1) and floor remainder (fmod = 0, opset 28), signed zeros included,
    on edge cases and random operands of every magnitude (quotients up to 2^2100);
  * ReduceLogSumExp: the same bytes as the contract's sequence written as separate nodes (ReduceMax, Sub, Exp,
    ReduceSum, Log, Add) for finite data, contiguous and strided; Softmax and LogSoftmax likewise (ReduceMax, Sub,
    Exp, ReduceSum, Div or Log and Sub), and their special rows;
  * every output the same bytes at 1 and 3 threads, and on CUDA as on the CPU (when a GPU is present).
"""

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

import lockstep
from bits import same_bits

HAS_CUDA = lockstep.CUDA in lockstep.get_available_providers()
DOUBLE = TensorProto.DOUBLE


def model_of(nodes, inputs, outputs, opset, inits=()):
    graph = helper.make_graph(nodes, "f64", [helper.make_tensor_value_info(n, DOUBLE, None) for n in inputs],
                              [helper.make_tensor_value_info(n, DOUBLE, None) for n in outputs],
                              initializer=list(inits))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = min(model.ir_version, 10)
    return model.SerializeToString()


def run(model, feeds, provider=lockstep.CPU, threads=1):
    options = lockstep.SessionOptions()
    options.intra_op_num_threads = threads
    options.log_severity_level = 3
    return lockstep.InferenceSession(model, options, providers=[provider]).run(None, feeds)


def check_devices_and_threads(model, feeds, results):
    """Results at 3 threads and on CUDA must have the bytes of the 1-thread CPU run."""
    for got, want in zip(run(model, feeds, threads=3), results):
        assert same_bits(got, want), "1 vs 3 threads differ"
    if HAS_CUDA:
        for got, want in zip(run(model, feeds, provider=lockstep.CUDA), results):
            assert same_bits(got, want), "CPU vs CUDA differ"


def ordered(x):
    i = np.asarray(x, np.float64).view(np.int64)
    return np.where(i < 0, -(i & 0x7FFFFFFFFFFFFFFF), i)


def ulp_distance(got, ref):
    """Doubles between got and ref (NaN against NaN: 0; NaN against a number: huge)."""
    nan_g, nan_r = np.isnan(got), np.isnan(ref)
    d = np.abs(ordered(np.where(nan_g, 0.0, got)) - ordered(np.where(nan_r, 0.0, ref)))
    return np.where(nan_g & nan_r, 0, np.where(nan_g | nan_r, 1 << 62, d))


def bits_of(v):
    return np.asarray(v, np.float64).view(np.uint64)


rng = np.random.default_rng(20261206)
N = 200_000


def exp_inputs():
    return np.concatenate([
        rng.uniform(-745.2, 709.8, N),                                       # the whole range
        rng.uniform(-1, 1, N) * np.exp2(-rng.integers(0, 60, N).astype(np.float64)),  # near 0
        rng.uniform(-745.2, -708.0, N),                                      # denormal results
        rng.uniform(700.0, 709.78, N),                                       # near overflow
        rng.integers(0, 2**64, N, dtype=np.uint64).view(np.float64),                 # any pattern
    ])


def log_inputs():
    return np.concatenate([
        (rng.integers(0, 0x7FEFFFFFFFFFFFFF, N, dtype=np.uint64)).view(np.float64),   # every binade
        1 + rng.uniform(-1, 1, N) * np.exp2(-rng.integers(1, 53, N).astype(np.float64)),  # near 1
        rng.uniform(0.5, 2.0, N),
        (rng.integers(1, 2**52, N, dtype=np.uint64)).view(np.float64),              # denormals
        rng.integers(0, 2**64, N, dtype=np.uint64).view(np.float64),                 # any pattern
    ])


@pytest.mark.parametrize("op,inputs,ref", [("Exp", exp_inputs, np.exp), ("Log", log_inputs, np.log)])
def test_within_one_ulp_of_longdouble(op, inputs, ref):
    x = inputs()
    model = model_of([helper.make_node(op, ["x"], ["y"])], ["x"], ["y"], 13)
    (y,) = run(model, {"x": x})
    with np.errstate(all="ignore"):
        want = ref(x.astype(np.longdouble)).astype(np.float64)
    d = ulp_distance(y, want)
    worst = int(np.argmax(d))
    assert d.max() <= 1, f"{op}({x[worst]!r}) = {y[worst]!r}, reference {want[worst]!r}: {d.max()} ulp"
    # Infinities and zeros of the reference are met exactly, zeros with their sign.
    exact = np.isinf(want) | (want == 0)
    assert np.array_equal(bits_of(y[exact]), bits_of(want[exact]))
    check_devices_and_threads(model, {"x": x}, [y])


def test_special_values():
    x = np.array([0.0, -0.0, 1.0, np.inf, -np.inf, np.nan, 710.0, -746.0, -1.0, 2.0**-1074, 2.0**-1022])
    exp_m = model_of([helper.make_node("Exp", ["x"], ["y"])], ["x"], ["y"], 13)
    log_m = model_of([helper.make_node("Log", ["x"], ["y"])], ["x"], ["y"], 13)
    (e,) = run(exp_m, {"x": x})
    (l,) = run(log_m, {"x": x})
    assert np.array_equal(bits_of(e[[0, 1, 2, 3, 4, 6, 7]]), bits_of([1.0, 1.0, np.e, np.inf, 0.0, np.inf, 0.0]))
    assert np.isnan(e[5])
    assert np.array_equal(bits_of(l[[0, 1, 2, 3]]), bits_of([-np.inf, -np.inf, 0.0, np.inf]))
    assert np.isnan(l[4]) and np.isnan(l[5]) and np.isnan(l[8])
    assert bits_of(l[8]) == 0x7FF8000000000000  # an invalid operation: the canonical quiet NaN
    assert l[9] == -744.4400719213812 and l[10] == -708.3964185322641


def mod_operands():
    special = np.array([0.0, -0.0, 1.0, -1.0, 0.5, 3.0, -3.0, 0.1, 2.0**-1074, -(2.0**-1074), 2.0**-1022, 1e308,
                        -1e308, np.finfo(np.float64).max, np.inf, -np.inf, np.nan])
    a_s, b_s = np.meshgrid(special, special)
    n = 100_000
    mag = lambda: rng.uniform(-1, 1, n) * np.exp2(rng.integers(-1074, 1024, n).astype(np.float64))
    bits = lambda: rng.integers(0, 2**64, n, dtype=np.uint64).view(np.float64)
    a = np.concatenate([a_s.ravel(), mag(), bits(), rng.uniform(-1e6, 1e6, n), mag()])
    b = np.concatenate([b_s.ravel(), mag(), bits(), rng.uniform(-10, 10, n), rng.uniform(-1e-300, 1e-300, n)])
    return a, b


@pytest.mark.parametrize("fmod,opset", [(1, 13), (0, 28)])
def test_mod_is_numpys_bytes(fmod, opset):
    a, b = mod_operands()
    model = model_of([helper.make_node("Mod", ["a", "b"], ["y"], fmod=fmod)], ["a", "b"], ["y"], opset)
    (y,) = run(model, {"a": a, "b": b})
    with np.errstate(all="ignore"):
        want = np.fmod(a, b) if fmod else np.mod(a, b)
    assert same_bits(y, want), f"{int(np.sum(~((bits_of(y) == bits_of(want)) | np.isnan(y) & np.isnan(want))))} differ"
    check_devices_and_threads(model, {"a": a, "b": b}, [y])


def test_mod_fmod0_before_opset_28_is_rejected():
    model = model_of([helper.make_node("Mod", ["a", "b"], ["y"])], ["a", "b"], ["y"], 13)
    with pytest.raises(lockstep.Fail, match="fmod must be 1"):
        run(model, {"a": np.ones(2), "b": np.ones(2)})


@pytest.mark.parametrize("shape,axes", [((7, 300), [1]), ((4, 50, 6), [1]), ((3, 4, 5), [0, 2]), ((40,), [0])])
def test_reduce_log_sum_exp_is_the_contract_sequence(shape, axes):
    x = rng.uniform(-300, 300, shape)
    ax = numpy_helper.from_array(np.array(axes, np.int64), "axes")
    fused = model_of([helper.make_node("ReduceLogSumExp", ["x", "axes"], ["y"])], ["x"], ["y"], 18, [ax])
    steps = model_of([helper.make_node("ReduceMax", ["x", "axes"], ["m"]), helper.make_node("Sub", ["x", "m"], ["d"]),
                      helper.make_node("Exp", ["d"], ["e"]), helper.make_node("ReduceSum", ["e", "axes"], ["s"]),
                      helper.make_node("Log", ["s"], ["l"]), helper.make_node("Add", ["l", "m"], ["y"])],
                     ["x"], ["y"], 18, [ax])
    (y,) = run(fused, {"x": x})
    (y_steps,) = run(steps, {"x": x})
    assert same_bits(y, y_steps)
    xl = x.astype(np.longdouble)
    m = xl.max(axis=tuple(axes), keepdims=True)
    want = (np.log(np.exp(xl - m).sum(axis=tuple(axes), keepdims=True)) + m).astype(np.float64)
    np.testing.assert_allclose(y, want, rtol=4e-16, atol=0)
    check_devices_and_threads(fused, {"x": x}, [y])


def test_reduce_log_sum_exp_special_rows():
    nan, inf = np.nan, np.inf
    x = np.array([[1.0, nan, inf], [1.0, inf, 2.0], [-inf, -inf, -inf], [-inf, 0.0, -inf], [1e308, 1e308, -1e308]])
    model = model_of([helper.make_node("ReduceLogSumExp", ["x"], ["y"], axes=[1], keepdims=0)], ["x"], ["y"], 13)
    (y,) = run(model, {"x": x})
    assert np.isnan(y[0]) and y[1] == inf and y[2] == -inf and y[3] == 0.0
    assert y[4] == 1e308 + np.log(2.0)
    check_devices_and_threads(model, {"x": x}, [y])


@pytest.mark.parametrize("shape,axis", [((7, 300), 1), ((4, 50, 6), 1), ((3, 4, 5), 0), ((40,), 0)])
@pytest.mark.parametrize("op", ["Softmax", "LogSoftmax"])
def test_softmax_is_the_contract_sequence(op, shape, axis):
    """Softmax and LogSoftmax on double have the bytes of ReduceMax, Sub, Exp, ReduceSum and Div (or Log, Sub) run
    as separate nodes, and are within a few ulps of the longdouble result."""
    x = rng.uniform(-300, 300, shape)
    ax = numpy_helper.from_array(np.array([axis], np.int64), "axes")
    fused = model_of([helper.make_node(op, ["x"], ["y"], axis=axis)], ["x"], ["y"], 18)
    finish = ([helper.make_node("Div", ["e", "s"], ["y"])] if op == "Softmax" else
              [helper.make_node("Log", ["s"], ["l"]), helper.make_node("Sub", ["d", "l"], ["y"])])
    steps = model_of([helper.make_node("ReduceMax", ["x", "axes"], ["m"]), helper.make_node("Sub", ["x", "m"], ["d"]),
                      helper.make_node("Exp", ["d"], ["e"]), helper.make_node("ReduceSum", ["e", "axes"], ["s"])]
                     + finish, ["x"], ["y"], 18, [ax])
    (y,) = run(fused, {"x": x})
    (y_steps,) = run(steps, {"x": x})
    assert same_bits(y, y_steps)
    # x - max rounded to double as the definition's Sub does (its error, up to |x - max| * 2^-53, is the input's
    # to exp), then the rest in longdouble: what remains is exp_f64's, the canonical sum's and the last rounding.
    d = (x - x.max(axis=axis, keepdims=True)).astype(np.longdouble)
    s = np.exp(d).sum(axis=axis, keepdims=True)
    want = (np.exp(d) / s if op == "Softmax" else d - np.log(s)).astype(np.float64)
    # LogSoftmax's d - log(s) cancels where d is near log(s) (s in [1, n]): an absolute bound of a few ulps of log(s).
    np.testing.assert_allclose(y, want, rtol=4e-15, atol=0 if op == "Softmax" else 1e-15)
    check_devices_and_threads(fused, {"x": x}, [y])


def test_softmax_special_rows():
    nan, inf = np.nan, np.inf
    x = np.array([[1.0, nan, 2.0], [1.0, inf, 2.0], [-inf, -inf, -inf], [-inf, 0.0, -inf], [-0.0, 0.0, -0.0]])
    for op in ("Softmax", "LogSoftmax"):
        model = model_of([helper.make_node(op, ["x"], ["y"], axis=1)], ["x"], ["y"], 13)
        (y,) = run(model, {"x": x})
        assert np.isnan(y[:3]).all()
        assert same_bits(y[3], np.array([0.0, 1.0, 0.0]) if op == "Softmax" else np.array([-inf, 0.0, -inf]))
        assert same_bits(y[4], np.full(3, 1 / 3) if op == "Softmax" else np.full(3, -np.log(3.0)))
        check_devices_and_threads(model, {"x": x}, [y])
