"""The low-precision element types (float8 x4, float4e2m1, int4/uint4, int2/uint2, bfloat16; float8e8m0 at the end,
against onnx's own conversion): Cast to and from
them, QuantizeLinear and DequantizeLinear, checked bit for bit (bytes, not allclose) against onnx's reference
(onnx.reference.ReferenceEvaluator, whose conversions are ml_dtypes'). Every byte pattern of each 8-bit type is
decoded; a dense float32 (and float64, float16) sample is encoded: every float16 value, the midpoints between
neighbouring values of each type and their float32 neighbours (the halfway cases), subnormals, +-0, +-inf, NaNs
and random bit patterns."""

import ml_dtypes
import numpy as np
import pytest
import onnx
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

import lockstep

FLOAT8 = {
    TensorProto.FLOAT8E4M3FN: ml_dtypes.float8_e4m3fn, TensorProto.FLOAT8E4M3FNUZ: ml_dtypes.float8_e4m3fnuz,
    TensorProto.FLOAT8E5M2: ml_dtypes.float8_e5m2, TensorProto.FLOAT8E5M2FNUZ: ml_dtypes.float8_e5m2fnuz,
}
# The sub-byte types: numpy type and bit width.
SMALL = {
    TensorProto.FLOAT4E2M1: (ml_dtypes.float4_e2m1fn, 4), TensorProto.INT4: (ml_dtypes.int4, 4),
    TensorProto.UINT4: (ml_dtypes.uint4, 4), TensorProto.INT2: (ml_dtypes.int2, 2), TensorProto.UINT2: (ml_dtypes.uint2, 2),
}
LOW = {**FLOAT8, **{code: t for code, (t, _) in SMALL.items()}, TensorProto.BFLOAT16: ml_dtypes.bfloat16}
NUMPY_OF = {TensorProto.FLOAT: np.float32, TensorProto.FLOAT16: np.float16, TensorProto.DOUBLE: np.float64,
            TensorProto.INT8: np.int8, TensorProto.UINT8: np.uint8, TensorProto.INT32: np.int32,
            TensorProto.INT64: np.int64, **LOW}
CODE_OF = {np.dtype(t): code for code, t in NUMPY_OF.items()}


def cast_model(src, dst, saturate=None):
    attrs = {"to": dst} if saturate is None else {"to": dst, "saturate": int(saturate)}
    node = helper.make_node("Cast", ["x"], ["y"], **attrs)
    graph = helper.make_graph([node], "cast", [helper.make_tensor_value_info("x", src, None)],
                              [helper.make_tensor_value_info("y", dst, None)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 25)])


# Element types with NaNs, whose NaNs compare equal whatever their sign and payload (docs/arithmetic.md: a device's
# arithmetic decides those bits; x86 passes an operand's NaN on, a GPU returns its one default NaN).
WITH_NAN = {np.dtype(t) for t in (np.float16, np.float32, np.float64, ml_dtypes.bfloat16, *FLOAT8.values())}


def same_bytes(got, want, what):
    """Byte for byte, NaN equal to NaN."""
    assert got.dtype == want.dtype and got.shape == want.shape, (what, got.dtype, want.dtype, got.shape, want.shape)
    g, w = got.reshape(-1), want.reshape(-1)
    if got.dtype in WITH_NAN:
        with np.errstate(all="ignore"):
            g_nan, w_nan = np.isnan(g.astype(np.float64)), np.isnan(w.astype(np.float64))
        bad = np.flatnonzero(g_nan != w_nan)
        assert bad.size == 0, f"{what}: {bad.size} of {g.size} elements NaN in one only, first at {bad[0]}"
        g, w = g[~g_nan], w[~w_nan]
    g, w = g.view(np.uint8), w.view(np.uint8)
    bad = np.flatnonzero(g != w)
    assert bad.size == 0, f"{what}: {bad.size} of {g.size} bytes differ, first at byte {bad[0]}: {g[bad[0]]} != {w[bad[0]]}"


# With a GPU, the CUDA kernels (which call the same src/arith functions) must give the same bytes.
PROVIDERS = [p for p in ("CPUExecutionProvider", "CUDAExecutionProvider") if p in lockstep.get_available_providers()]


def check(model, feeds, what):
    with np.errstate(all="ignore"):  # the reference's numpy casts warn about overflow and NaN
        want = ReferenceEvaluator(model).run(None, feeds)
    for provider in PROVIDERS:
        session = lockstep.InferenceSession(model.SerializeToString(), providers=[provider])
        got = session.run(None, feeds)
        for g, w in zip(got, want):
            same_bytes(g, np.asarray(w), f"{what} ({provider})")


def all_patterns(t):
    """Every element value of type t: all 256 bytes of an 8-bit type, all 2^bits of a sub-byte one, all 65536 of
    bfloat16."""
    if t is ml_dtypes.bfloat16:
        return np.arange(65536, dtype=np.uint32).astype(np.uint16).view(t)
    bits = next((b for n, b in SMALL.values() if n is t), 8)
    return np.arange(1 << bits, dtype=np.uint8).view(t)


@np.errstate(all="ignore")
def float32_sample(t):
    """Dense float32 inputs for encoding to t."""
    rng = np.random.default_rng(0)
    values = np.sort(np.unique(all_patterns(t).astype(np.float64)))
    values = values[np.isfinite(values)]
    mid = ((values[1:] + values[:-1]) / 2).astype(np.float32)
    pieces = [
        np.arange(65536, dtype=np.uint32).astype(np.uint16).view(np.float16).astype(np.float32),
        mid, np.nextafter(mid, np.float32(np.inf)), np.nextafter(mid, np.float32(-np.inf)),
        values.astype(np.float32) * np.float32(1.5), np.float32(2.0) ** np.arange(-30, 30, dtype=np.float32),
        np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-45, -1e-45, 1.1754942e-38, 3.4e38, -3.4e38], np.float32),
        rng.integers(0, 2**32, 200000, dtype=np.uint64).astype(np.uint32).view(np.float32),
        np.array([0x7FC00000, 0xFFC00000, 0x7F800001, 0xFFFFFFFF, 0x7FBFFFFF], np.uint32).view(np.float32),
    ]
    x = np.concatenate(pieces).astype(np.float32)
    return np.concatenate([x, -x])


@pytest.mark.parametrize("dst", list(LOW), ids=lambda c: TensorProto.DataType.Name(c))
def test_decode_every_pattern(dst):
    x = all_patterns(LOW[dst])
    for to in (TensorProto.FLOAT, TensorProto.FLOAT16, TensorProto.DOUBLE):
        check(cast_model(dst, to), {"x": x}, f"{TensorProto.DataType.Name(dst)} -> {TensorProto.DataType.Name(to)}")


def name(code):
    return TensorProto.DataType.Name(code)


# saturate=False only matters for float8.
ENCODINGS = [(code, True) for code in LOW] + [(code, False) for code in FLOAT8]
QUANTIZED = [(code, True) for code in list(FLOAT8) + list(SMALL)] + [(code, False) for code in FLOAT8]


@pytest.mark.parametrize("dst,saturate", ENCODINGS, ids=[f"{name(c)}-saturate{int(s)}" for c, s in ENCODINGS])
def test_encode_float32(dst, saturate):
    check(cast_model(TensorProto.FLOAT, dst, saturate), {"x": float32_sample(LOW[dst])},
          f"float -> {TensorProto.DataType.Name(dst)} saturate={saturate}")


@pytest.mark.parametrize("dst", list(FLOAT8) + [TensorProto.FLOAT4E2M1], ids=lambda c: TensorProto.DataType.Name(c))
@pytest.mark.parametrize("src", [TensorProto.FLOAT16, TensorProto.DOUBLE], ids=["float16", "double"])
@np.errstate(all="ignore")
def test_encode_other_floats(dst, src):
    x = float32_sample(LOW[dst]).astype(NUMPY_OF[src])
    if src == TensorProto.DOUBLE:  # between float32 neighbours too: one rounding from double, not two
        x = np.concatenate([x, x * (1 + 2.0**-30), x * (1 - 2.0**-30)])
    check(cast_model(src, dst), {"x": x}, f"{TensorProto.DataType.Name(src)} -> {TensorProto.DataType.Name(dst)}")


@pytest.mark.parametrize("dst", [TensorProto.INT4, TensorProto.UINT4, TensorProto.INT2, TensorProto.UINT2],
                         ids=lambda c: TensorProto.DataType.Name(c))
def test_small_integers(dst):
    # Integers wrap to the low bits; reals truncate, and out of range (undefined in ONNX) gives 0 as in the reference.
    check(cast_model(TensorProto.INT8, dst), {"x": np.arange(-128, 128, dtype=np.int8)}, "int8 -> small")
    check(cast_model(TensorProto.INT64, dst), {"x": np.array([300, -300, 2**40 + 5, -(2**62)], np.int64)},
          "int64 -> small")
    reals = np.concatenate([np.arange(-20, 20, 0.25, dtype=np.float32), [np.nan, np.inf, -np.inf, -0.0]])
    check(cast_model(TensorProto.FLOAT, dst), {"x": reals.astype(np.float32)}, "float -> small")
    check(cast_model(dst, TensorProto.INT8), {"x": all_patterns(LOW[dst])}, "small -> int8")


def quantize_model(op, x_type, scale_type, zp_type, shape, axis=None, saturate=None, out_type=None):
    attrs = {} if axis is None else {"axis": axis}
    if saturate is not None:
        attrs["saturate"] = int(saturate)
    node = helper.make_node(op, ["x", "s", "z"], ["y"], **attrs)
    graph = helper.make_graph([node], op, [helper.make_tensor_value_info("x", x_type, shape),
                                           helper.make_tensor_value_info("s", scale_type, None),
                                           helper.make_tensor_value_info("z", zp_type, None)],
                              [helper.make_tensor_value_info("y", out_type or zp_type, shape)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 25)])


@pytest.mark.parametrize("q,saturate", QUANTIZED, ids=[f"{name(c)}-saturate{int(s)}" for c, s in QUANTIZED])
@np.errstate(all="ignore")
def test_quantize(q, saturate):
    x = float32_sample(LOW[q]).reshape(-1, 2)
    scale = np.array([0.5, 3.0], np.float32)
    if q not in FLOAT8 and q != TensorProto.FLOAT4E2M1:
        # The reference's np.rint(x).astype(int32) is undefined (INT_MIN on x86) for NaN and |x / scale| >= 2^31,
        # where ONNX saturates (as lockstep does: tested by the int8 node tests); compare where it is defined.
        x = x[np.all(np.abs(x / scale) < 2.0**31, axis=1)]
    zero = np.zeros(2, dtype=LOW[q]) if q in FLOAT8 else np.array([1, 0], np.float32).astype(LOW[q])
    model = quantize_model("QuantizeLinear", TensorProto.FLOAT, TensorProto.FLOAT, q, list(x.shape), 1, saturate)
    check(model, {"x": x, "s": scale, "z": zero}, f"QuantizeLinear to {TensorProto.DataType.Name(q)}")


@pytest.mark.parametrize("q", list(FLOAT8) + list(SMALL), ids=lambda c: TensorProto.DataType.Name(c))
@pytest.mark.parametrize("scale_type", [TensorProto.FLOAT, TensorProto.FLOAT16], ids=["float", "float16"])
def test_dequantize(q, scale_type):
    x = all_patterns(LOW[q])
    scale = np.array(0.75, NUMPY_OF[scale_type])
    # The reference ignores a float8 or float4 zero point here (ONNX: y = (x - zero_point) * scale, lockstep's
    # formula; the zero point is usually 0), so those are compared with 0.
    floats = list(FLOAT8) + [TensorProto.FLOAT4E2M1]
    zero = np.array(0 if q in floats else 1, np.float32).astype(LOW[q])
    model = quantize_model("DequantizeLinear", q, scale_type, q, [x.size], out_type=scale_type)
    check(model, {"x": x, "s": scale, "z": zero}, f"DequantizeLinear of {TensorProto.DataType.Name(q)}")


def test_packed_initializer_round_trip():
    # A model's int4/uint2/float4 initializers are packed; lockstep unpacks them on load (odd counts included).
    for code, (t, bits) in SMALL.items():
        values = all_patterns(t)[: (1 << bits) - 1]  # an odd count: the last byte is partly used
        init = helper.make_tensor("c", code, [values.size], values.astype(np.float32).tolist())
        node = helper.make_node("Cast", ["c"], ["y"], to=TensorProto.FLOAT)
        graph = helper.make_graph([node], "packed", [], [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                                  initializer=[init])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 25)])
        check(model, {}, f"packed {TensorProto.DataType.Name(code)} initializer")


# float8e8m0 is a Cast type only: ops that compute refuse it as they refuse the other float8 types.
@pytest.mark.parametrize("code,numpy_type", [(TensorProto.FLOAT8E4M3FN, ml_dtypes.float8_e4m3fn),
                                             (TensorProto.FLOAT8E8M0, ml_dtypes.float8_e8m0fnu)],
                         ids=["float8e4m3fn", "float8e8m0"])
def test_unsupported_combination_names_the_node(code, numpy_type):
    node = helper.make_node("Relu", ["x"], ["y"], name="relu8")
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", code, None)],
                              [helper.make_tensor_value_info("y", code, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 25)])
    session = lockstep.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    with pytest.raises(lockstep.NotImplemented, match=f"relu8.*{name(code).lower()}"):
        session.run(None, {"x": np.ones(3, numpy_type)})


def test_optimized_model_packs_them_again(tmp_path):
    # The optimized model (constants folded) stores int4 packed, as onnx reads it back.
    values = np.array([1, -2, 3, -8, 7], dtype=ml_dtypes.int4)
    nodes = [helper.make_node("Cast", ["c"], ["y"], to=TensorProto.FLOAT), helper.make_node("Identity", ["c"], ["z"])]
    graph = helper.make_graph(nodes, "g", [], [helper.make_tensor_value_info("y", TensorProto.FLOAT, [5]),
                                               helper.make_tensor_value_info("z", TensorProto.INT4, [5])],
                              initializer=[numpy_helper.from_array(values, "c")])
    options = lockstep.SessionOptions()
    options.optimized_model_filepath = str(tmp_path / "optimized.onnx")
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 25)])
    lockstep.InferenceSession(model.SerializeToString(), options)
    written = onnx.load(options.optimized_model_filepath)
    onnx.checker.check_model(written)
    for tensor in written.graph.initializer:
        if tensor.data_type == TensorProto.INT4:
            same_bytes(numpy_helper.to_array(tensor), values, f"written {tensor.name}")
    y, z = lockstep.InferenceSession(options.optimized_model_filepath).run(None, {})
    same_bytes(z, values, "reloaded z")


# --- float8e8m0 (Cast only, opset 24+): exponent-only, code c = 2^(c - 127), 0xff NaN. Decoding is ml_dtypes';
# encoding is onnx's reference (onnx.numpy_helper.to_float8e8m0, which works on the float32 encoding), for each
# round_mode and saturate (docs/arithmetic.md#low-precision-conversions).
E8M0 = ml_dtypes.float8_e8m0fnu
ROUND_MODES = ["up", "down", "nearest"]


def e8m0_cast_model(src, round_mode=None, saturate=None, opset=25):
    attrs = {"to": TensorProto.FLOAT8E8M0}
    if round_mode is not None:
        attrs["round_mode"] = round_mode
    if saturate is not None:
        attrs["saturate"] = int(saturate)
    graph = helper.make_graph([helper.make_node("Cast", ["x"], ["y"], name="to_e8m0", **attrs)], "cast",
                              [helper.make_tensor_value_info("x", src, None)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT8E8M0, None)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def e8m0_float32_sample():
    """Every exponent with mantissas that decide each round mode (0, the lowest bit, bit 21 alone, bit 22 alone
    (the tie), bit 22 with a lower bit, all ones), subnormals, +-0, +-inf, NaNs, and random bit patterns; both
    signs."""
    rng = np.random.default_rng(24)
    exponents = np.arange(256, dtype=np.uint32) << 23
    mantissas = np.array([0, 1, 0x1FFFFF, 0x200000, 0x3FFFFF, 0x400000, 0x400001, 0x600000, 0x7FFFFF], np.uint32)
    grid = (exponents[:, None] | mantissas[None, :]).reshape(-1)
    pieces = [grid, rng.integers(0, 2**32, 200000, dtype=np.uint64).astype(np.uint32)]
    x = np.concatenate(pieces)
    return np.concatenate([x, x | np.uint32(0x80000000)]).view(np.float32)


def e8m0_decode_model(to):
    return helper.make_model(helper.make_graph(
        [helper.make_node("Cast", ["x"], ["y"], to=to)], "cast",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT8E8M0, None)],
        [helper.make_tensor_value_info("y", to, None)]), opset_imports=[helper.make_opsetid("", 25)])


def test_e8m0_decode_every_code():
    x = np.arange(256, dtype=np.uint8).view(E8M0)
    for to in (TensorProto.FLOAT, TensorProto.FLOAT16, TensorProto.DOUBLE, TensorProto.BFLOAT16):
        check(e8m0_decode_model(to), {"x": x}, f"FLOAT8E8M0 -> {name(to)}")
    # and the values themselves: 2^(c - 127), 0xff NaN
    want = np.where(np.arange(256) == 255, np.nan, 2.0 ** (np.arange(256) - 127.0)).astype(np.float32)
    for provider in PROVIDERS:
        session = lockstep.InferenceSession(e8m0_decode_model(TensorProto.FLOAT).SerializeToString(),
                                            providers=[provider])
        same_bytes(session.run(None, {"x": x})[0], want, f"FLOAT8E8M0 -> FLOAT vs 2^(c - 127) ({provider})")


E8M0_ENCODINGS = [(m, s) for m in ROUND_MODES for s in (True, False)]


@pytest.mark.parametrize("round_mode,saturate", E8M0_ENCODINGS, ids=[f"{m}-saturate{int(s)}" for m, s in E8M0_ENCODINGS])
def test_e8m0_encode_float32(round_mode, saturate):
    x = e8m0_float32_sample()
    model = e8m0_cast_model(TensorProto.FLOAT, round_mode, saturate)
    check(model, {"x": x}, f"float -> FLOAT8E8M0 {round_mode} saturate={saturate}")
    # The reference's conversion itself, directly (the evaluator calls it; this pins what it is).
    want = numpy_helper.to_float8e8m0(x, saturate, round_mode)
    for provider in PROVIDERS:
        got = lockstep.InferenceSession(model.SerializeToString(), providers=[provider]).run(None, {"x": x})[0]
        same_bytes(got, want, f"float -> FLOAT8E8M0 {round_mode} saturate={saturate} vs to_float8e8m0 ({provider})")


@pytest.mark.parametrize("round_mode", ROUND_MODES)
@pytest.mark.parametrize("src", [TensorProto.FLOAT16, TensorProto.DOUBLE, TensorProto.INT32],
                         ids=["float16", "double", "int32"])
@np.errstate(all="ignore")
def test_e8m0_encode_other_types(src, round_mode):
    if src == TensorProto.FLOAT16:
        x = np.arange(65536, dtype=np.uint32).astype(np.uint16).view(np.float16)
    elif src == TensorProto.DOUBLE:  # first rounded to float32 (as the reference does), then encoded
        f = e8m0_float32_sample().astype(np.float64)
        x = np.concatenate([f, f * (1 + 2.0**-30), f * (1 - 2.0**-30), [1.5 * 2.0**127, 2.0**-140, 1e300]])
    else:
        x = np.random.default_rng(5).integers(-2**31, 2**31 - 1, 10000, dtype=np.int64).astype(np.int32)
    check(e8m0_cast_model(src, round_mode), {"x": x}, f"{name(src)} -> FLOAT8E8M0 {round_mode}")


def test_e8m0_defaults_and_opset24():
    # round_mode defaults to "up", saturate to 1; opset 24 reads the same attributes.
    x = e8m0_float32_sample()
    want = numpy_helper.to_float8e8m0(x, True, "up")
    for model in (e8m0_cast_model(TensorProto.FLOAT), e8m0_cast_model(TensorProto.FLOAT, "up", True, opset=24)):
        for provider in PROVIDERS:
            got = lockstep.InferenceSession(model.SerializeToString(), providers=[provider]).run(None, {"x": x})[0]
            same_bytes(got, want, f"float -> FLOAT8E8M0 defaults ({provider})")


def test_e8m0_bad_round_mode_names_the_node():
    session = lockstep.InferenceSession(e8m0_cast_model(TensorProto.FLOAT, "sideways").SerializeToString())
    with pytest.raises(lockstep.InvalidGraph, match=r"to_e8m0.*round_mode 'sideways'"):
        session.run(None, {"x": np.ones(3, np.float32)})


def test_e8m0_initializer_and_identity():
    # An e8m0 initializer is read (one byte per element) and moves through an op that only moves bytes.
    values = np.array([0, 1, 126, 127, 128, 254, 255], np.uint8).view(E8M0)
    nodes = [helper.make_node("Identity", ["c"], ["z"]), helper.make_node("Cast", ["c"], ["y"], to=TensorProto.FLOAT)]
    graph = helper.make_graph(nodes, "g", [], [helper.make_tensor_value_info("z", TensorProto.FLOAT8E8M0, [7]),
                                               helper.make_tensor_value_info("y", TensorProto.FLOAT, [7])],
                              initializer=[numpy_helper.from_array(values, "c")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 25)])
    check(model, {}, "e8m0 initializer")
