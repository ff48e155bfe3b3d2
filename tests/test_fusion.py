"""Graph rewrites: a fused graph returns the bytes of the unfused one (graph_optimization_level 0 runs it
unfused), on every provider, special values included; the patterns that must not fuse do not."""

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

import lockstep
from bits import same_bits

PROVIDERS = [lockstep.CPU] + ([lockstep.CUDA] if lockstep.CUDA in lockstep.get_available_providers() else [])


def silu_patterns():
    """h = Gemm(x); four Sigmoid+Mul pairs on h: Mul(h, s) and Mul(s, h) fuse; a Sigmoid also read by an Add,
    and one that is a graph output, do not."""
    f = TensorProto.FLOAT
    nodes = [helper.make_node("Gemm", ["x", "w"], ["h"], transB=1),
             helper.make_node("Sigmoid", ["h"], ["s1"]), helper.make_node("Mul", ["h", "s1"], ["y1"], name="silu1"),
             helper.make_node("Sigmoid", ["h"], ["s2"]), helper.make_node("Mul", ["s2", "h"], ["y2"], name="silu2"),
             helper.make_node("Sigmoid", ["h"], ["s3"]), helper.make_node("Mul", ["h", "s3"], ["y3"]),
             helper.make_node("Add", ["s3", "h"], ["z3"]),
             helper.make_node("Sigmoid", ["h"], ["s4"]), helper.make_node("Mul", ["h", "s4"], ["y4"]),
             helper.make_node("Sigmoid", ["x"], ["s5"]), helper.make_node("Mul", ["h", "s5"], ["y5"])]
    w = numpy_helper.from_array(np.random.default_rng(1).standard_normal((37, 37)).astype(np.float32) * 0.5, "w")
    outputs = [helper.make_tensor_value_info(n, f, ["N", 37]) for n in ["y1", "y2", "y3", "z3", "y4", "s4", "y5"]]
    graph = helper.make_graph(nodes, "silu", [helper.make_tensor_value_info("x", f, ["N", 37])], outputs,
                              initializer=[w])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 9
    return model.SerializeToString()


def feed():
    x = np.random.default_rng(2).standard_normal((9, 37)).astype(np.float32) * 8
    x[1, :6] = [np.nan, np.inf, -np.inf, -0.0, 1e-40, -1e-42]
    x[2] *= np.float32(20)
    x[3] *= np.float32(1e-38)
    return {"x": x}


def run_model(model, feeds, provider, level):
    """The outputs and the op types of the nodes that ran, at graph_optimization_level `level`."""
    options = lockstep.SessionOptions()
    options.graph_optimization_level = level
    options.enable_profiling = True
    s = lockstep.InferenceSession(model, options, providers=[provider])
    outputs = s.run(None, feeds)
    op_types = [e["op_type"] for e in s.profile_events() if e["category"] == "Node"]
    s.end_profiling()
    return outputs, op_types


UNFUSED, FUSED = lockstep.GraphOptimizationLevel.ORT_DISABLE_ALL, lockstep.GraphOptimizationLevel.ORT_ENABLE_ALL


def unfused_and_fused(model, feeds, provider, same_as_cpu=True):
    """run_model at both levels, ((outputs, op types) unfused, (outputs, op types) fused), after checking that every
    output has the same shape and bytes either way, and (on another provider, where same_as_cpu) the CPU's fused
    bytes."""
    unfused, fused = run_model(model, feeds, provider, UNFUSED), run_model(model, feeds, provider, FUSED)
    for i, (a, b) in enumerate(zip(unfused[0], fused[0])):
        assert a.shape == b.shape and same_bits(a, b), f"output {i} differs between the fused and the unfused graph"
    if same_as_cpu and provider != lockstep.CPU:
        for i, (a, b) in enumerate(zip(fused[0], run_model(model, feeds, lockstep.CPU, FUSED)[0])):
            assert same_bits(a, b), f"output {i} differs from the CPU's"
    return unfused, fused


@pytest.mark.parametrize("provider", PROVIDERS)
def test_silu_fusion_keeps_the_bits(provider, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (_, unfused_ops), (fused, fused_ops) = unfused_and_fused(silu_patterns(), feed(), provider)
    assert "Silu" not in unfused_ops
    assert fused_ops.count("Silu") == 2  # y1 and y2; the others keep their Sigmoid and Mul
    assert fused_ops.count("Sigmoid") == 3 and unfused_ops.count("Sigmoid") == 5
    assert same_bits(fused[0], fused[1])  # Mul(h, s) and Mul(s, h) agree
    assert np.isnan(fused[0][1]).any()


def test_a_models_own_node_in_locksteps_domain_is_refused():
    graph = helper.make_graph([helper.make_node("Silu", ["x"], ["y"], domain="lockstep", name="mine")], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("lockstep", 1)])
    for level in (UNFUSED, FUSED):
        options = lockstep.SessionOptions()
        options.graph_optimization_level = level
        with pytest.raises(lockstep.NotImplemented, match="Node 'mine' \\(Silu\\): ops of domain 'lockstep'"):
            lockstep.InferenceSession(model.SerializeToString(), options)


def product_patterns():
    """Conv and MatMul followed by Add and Relu, every shape of the rewrite and the cases that must not fuse:
    c1 Conv->Relu; c2 Conv(no bias)->Add(p, r)->Relu; c3 Add(r, p) without Relu; c4 an addend that broadcasts the
    output up ([2,4,5,5] onto a batch-1 conv); c5 a conv also read by another node (not fused); m1 MatMul->Add(p, bias)
    ->Relu; m2 Add(bias, p); m3 a bias that is not a constant (not fused)."""
    f = TensorProto.FLOAT
    rng = np.random.default_rng(3)
    init = lambda name, *shape: numpy_helper.from_array(rng.standard_normal(shape).astype(np.float32), name)  # noqa
    nodes = [
        helper.make_node("Conv", ["x", "w", "b"], ["p1"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["p1"], ["c1"]),
        helper.make_node("Conv", ["x", "w"], ["p2"], pads=[1, 1, 1, 1]),
        helper.make_node("Add", ["p2", "r"], ["s2"]), helper.make_node("Relu", ["s2"], ["c2"]),
        helper.make_node("Conv", ["x", "w", "b"], ["p3"], pads=[1, 1, 1, 1]),
        helper.make_node("Add", ["r", "p3"], ["c3"]),
        helper.make_node("Conv", ["x", "w", "b"], ["p4"], pads=[1, 1, 1, 1]),
        helper.make_node("Add", ["p4", "big"], ["s4"]), helper.make_node("Relu", ["s4"], ["c4"]),
        helper.make_node("Conv", ["x", "w", "b"], ["p5"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["p5"], ["c5"]), helper.make_node("Neg", ["p5"], ["n5"]),
        helper.make_node("MatMul", ["a", "k"], ["q1"]),
        helper.make_node("Add", ["q1", "bias"], ["t1"]), helper.make_node("Relu", ["t1"], ["m1"]),
        helper.make_node("MatMul", ["a", "k"], ["q2"]), helper.make_node("Add", ["bias", "q2"], ["m2"]),
        helper.make_node("MatMul", ["a", "k"], ["q3"]), helper.make_node("Add", ["q3", "a_bias"], ["m3"]),
    ]
    inputs = [helper.make_tensor_value_info("x", f, [1, 3, 5, 5]), helper.make_tensor_value_info("r", f, [1, 4, 5, 5]),
              helper.make_tensor_value_info("big", f, [2, 4, 5, 5]), helper.make_tensor_value_info("a", f, [2, 7, 6]),
              helper.make_tensor_value_info("a_bias", f, [9])]
    names = ["c1", "c2", "c3", "c4", "c5", "n5", "m1", "m2", "m3"]
    graph = helper.make_graph(nodes, "products", inputs, [helper.make_tensor_value_info(n, f, None) for n in names],
                              initializer=[init("w", 4, 3, 3, 3), init("b", 4), init("k", 6, 9), init("bias", 9)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 9
    return model.SerializeToString()


def product_feed():
    rng = np.random.default_rng(4)
    x = rng.standard_normal((1, 3, 5, 5)).astype(np.float32)
    x[0, 0, 0, :4] = [np.nan, np.inf, -0.0, 1e-40]
    r = rng.standard_normal((1, 4, 5, 5)).astype(np.float32)
    r[0, 1, 2, :3] = [-np.inf, -0.0, np.nan]
    a = rng.standard_normal((2, 7, 6)).astype(np.float32)
    a[1, 3, 0] = np.inf
    return {"x": x, "r": r, "big": rng.standard_normal((2, 4, 5, 5)).astype(np.float32), "a": a,
            "a_bias": rng.standard_normal(9).astype(np.float32)}


@pytest.mark.parametrize("provider", PROVIDERS)
def test_conv_and_matmul_epilogue_fusion_keeps_the_bits(provider, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (_, unfused_ops), (fused, fused_ops) = unfused_and_fused(product_patterns(), product_feed(), provider)
    assert "FusedConv" not in unfused_ops and "FusedMatMul" not in unfused_ops
    assert fused_ops.count("FusedConv") == 4  # c1..c4; c5's conv has two readers
    assert fused_ops.count("FusedMatMul") == 2  # m1, m2; m3's addend is not a constant
    assert fused_ops.count("Conv") == 1 and fused_ops.count("MatMul") == 1 and fused_ops.count("Relu") == 1
    assert fused[3].shape == (2, 4, 5, 5)  # the addend broadcast the output up
    numbers = fused[0][~np.isnan(fused[0])]
    assert np.isnan(fused[0]).any() and (numbers >= 0).all() and (numbers > 0).any()  # Relu ran, NaN kept


def gelu_chain(order_ok=True):
    """torch's GELU export on h = MatMul(x, k) + bias: Div(h, sqrt 2), Erf, Add(e, 1), Mul(h, s), Mul(m, 0.5); with
    order_ok False the last Mul is Mul(0.5, m), a pattern lockstep does not fuse."""
    f = TensorProto.FLOAT
    rng = np.random.default_rng(5)
    scalar = lambda name, v: numpy_helper.from_array(np.array(v, np.float32), name)  # noqa: E731
    last = helper.make_node("Mul", ["m", "c3"] if order_ok else ["c3", "m"], ["y"])
    nodes = [helper.make_node("MatMul", ["x", "k"], ["p"]), helper.make_node("Add", ["p", "bias"], ["h"]),
             helper.make_node("Div", ["h", "c1"], ["d"]), helper.make_node("Erf", ["d"], ["e"]),
             helper.make_node("Add", ["e", "c2"], ["s"]), helper.make_node("Mul", ["h", "s"], ["m"]), last]
    inits = [numpy_helper.from_array(rng.standard_normal((8, 33)).astype(np.float32) * 3, "k"),
             numpy_helper.from_array(rng.standard_normal(33).astype(np.float32), "bias"),
             scalar("c1", 1.4142135), scalar("c2", 1.0), scalar("c3", 0.5)]
    graph = helper.make_graph(nodes, "gelu", [helper.make_tensor_value_info("x", f, ["N", 8])],
                              [helper.make_tensor_value_info("y", f, None)], initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 9
    return model.SerializeToString()


@pytest.mark.parametrize("provider", PROVIDERS)
def test_gelu_chain_fusion_keeps_the_bits(provider, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    x = np.random.default_rng(6).standard_normal((40, 8)).astype(np.float32) * 4
    x[0, :5] = [np.nan, np.inf, -np.inf, -0.0, 1e-40]
    x[1] *= np.float32(1e30)
    _, ((fused,), fused_ops) = unfused_and_fused(gelu_chain(True), {"x": x}, provider, same_as_cpu=False)
    assert fused_ops == ["FusedMatMul"]  # the chain runs in the product's epilogue
    _, (_, other_ops) = unfused_and_fused(gelu_chain(False), {"x": x}, provider, same_as_cpu=False)
    assert "GeluErfChain" not in other_ops and "Erf" in other_ops
    assert np.isnan(fused).any() and np.isfinite(fused).any()


# (c_in, side, c_out, kernel, stride, group): every path of the CPU conv that applies the epilogue as tiles finish
# (pointwise in place, 3x3 on phase planes, k taken in several blocks, gathered stride-2 taps, lanes on channels
# for small images, grouped) and depthwise: on channel blocks (AVX2: 3x3 and 5x5, strides 1 and 2, a last block of
# 5 channels), whose epilogue runs as each tile is stored, and on phase planes (7x7), whose epilogue runs on each
# output plane as it is copied out.
CONV_PATHS = [(16, 40, 64, 1, 1, 1), (8, 23, 40, 3, 1, 1), (64, 14, 512, 3, 1, 1), (32, 15, 24, 3, 2, 1),
              (256, 7, 64, 3, 1, 1), (8, 9, 12, 3, 1, 2), (24, 13, 24, 3, 1, 24), (21, 17, 21, 5, 2, 21),
              (10, 12, 10, 7, 1, 10)]


def conv_with_epilogues(c_in, side, c_out, kernel, stride, group, tails, bias_scale=1.0):
    """Conv(x, w, b) -> p and Conv(x, w) -> q, then the nodes `tails` (reading p, q and the input r, which has the
    conv's output shape; writing the outputs y and z); x and r hold special values."""
    f = TensorProto.FLOAT
    rng = np.random.default_rng(7)
    w = numpy_helper.from_array(rng.standard_normal((c_out, c_in // group, kernel, kernel)).astype(np.float32), "w")
    b = numpy_helper.from_array(rng.standard_normal(c_out).astype(np.float32) * bias_scale, "b")
    conv = dict(pads=[kernel // 2] * 4, strides=[stride] * 2, group=group)
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["p"], **conv),
             helper.make_node("Conv", ["x", "w"], ["q"], **conv)] + tails
    out = (side + 2 * (kernel // 2) - kernel) // stride + 1
    inputs = [helper.make_tensor_value_info("x", f, [1, c_in, side, side]),
              helper.make_tensor_value_info("r", f, [1, c_out, out, out])]
    graph = helper.make_graph(nodes, "epilogues", inputs, [helper.make_tensor_value_info(n, f, None) for n in "yz"],
                              initializer=[w, b])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 9
    x = rng.standard_normal((1, c_in, side, side)).astype(np.float32)
    x[0, 0, 0, :3] = [np.nan, np.inf, -0.0]
    r = rng.standard_normal((1, c_out, out, out)).astype(np.float32) * 10
    r.flat[:4] = [-np.inf, -0.0, np.nan, 1e-40]
    return model.SerializeToString(), {"x": x, "r": r}


def residual_tails(addend_first):
    """p -> Add(residual) -> Relu, and q -> Relu alone."""
    return [helper.make_node("Add", ["r", "p"] if addend_first else ["p", "r"], ["s"]),
            helper.make_node("Relu", ["s"], ["y"]), helper.make_node("Relu", ["q"], ["z"])]


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("shape", CONV_PATHS, ids=lambda s: "x".join(map(str, s)))
def test_fused_conv_epilogue_on_every_conv_path_keeps_the_bits(provider, shape, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for addend_first in (False, True):
        model = conv_with_epilogues(*shape, residual_tails(addend_first))
        _, (fused, ops) = unfused_and_fused(*model, provider, same_as_cpu=False)
        assert ops == ["FusedConv", "FusedConv"]
        assert np.isnan(fused[0]).any() and (fused[0] == 0).any() and (fused[0] > 0).any()


# p -> HardSwish (MobileNetV3's), which fuses; q -> Add(residual) -> HardSwish, whose HardSwish stays a node of its
# own (the Add fuses into the conv).
HARD_SWISH_TAILS = [helper.make_node("HardSwish", ["p"], ["y"]), helper.make_node("Add", ["q", "r"], ["s"]),
                    helper.make_node("HardSwish", ["s"], ["z"])]


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("shape", CONV_PATHS, ids=lambda s: "x".join(map(str, s)))
def test_fused_conv_hard_swish_on_every_conv_path_keeps_the_bits(provider, shape, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    model = conv_with_epilogues(*shape, HARD_SWISH_TAILS, bias_scale=3.0)
    _, (fused, ops) = unfused_and_fused(*model, provider, same_as_cpu=False)
    assert ops == ["FusedConv", "FusedConv", "HardSwish"]
    y = fused[0]
    # Every branch of HardSwish ran: NaN kept, zeros below -3, the identity above 3, and the curve between.
    assert np.isnan(y).any() and (y == 0).any() and (y > 3).any() and ((y > -0.375) & (y < 0) | (y > 0) & (y < 3)).any()


def softmax_nan_patterns(opset, axis):
    """torch's masked attention tail: y = Where(IsNaN(s), c, s), s = Softmax(x); and the same where s is also read by
    a Neg (z = -s2), which does not fuse."""
    f = TensorProto.FLOAT
    c = numpy_helper.from_array(np.array([0.25], np.float32), "c")
    nodes = [helper.make_node("Softmax", ["x"], ["s"], axis=axis), helper.make_node("IsNaN", ["s"], ["b"]),
             helper.make_node("Where", ["b", "c", "s"], ["y"]),
             helper.make_node("Softmax", ["x"], ["s2"], axis=axis), helper.make_node("IsNaN", ["s2"], ["b2"]),
             helper.make_node("Where", ["b2", "c", "s2"], ["y2"]), helper.make_node("Neg", ["s2"], ["z"])]
    graph = helper.make_graph(nodes, "masked", [helper.make_tensor_value_info("x", f, [3, 5, 37])],
                              [helper.make_tensor_value_info(n, f, None) for n in ("y", "y2", "z")], initializer=[c])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 7
    return model.SerializeToString()


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("opset, axis", [(17, -1), (17, 1), (11, 1)])
def test_softmax_nan_replacement_fusion_keeps_the_bits(provider, opset, axis, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    x = np.random.default_rng(8).standard_normal((3, 5, 37)).astype(np.float32) * 30
    x[0, 1, :] = -np.inf  # a fully masked row: Softmax returns NaN there
    x[1, 2, :3] = [np.nan, np.inf, -0.0]
    (_, unfused_ops), (fused, fused_ops) = unfused_and_fused(softmax_nan_patterns(opset, axis), {"x": x}, provider,
                                                             same_as_cpu=False)
    assert fused_ops.count("SoftmaxReplacingNaN") == 1 and fused_ops.count("IsNaN") == 1
    assert "SoftmaxReplacingNaN" not in unfused_ops
    assert (fused[0] == np.float32(0.25)).any() and np.isnan(fused[2]).any()


def gelu_tanh_chain(swapped=False, exponent=3.0):
    """torch's export of GELU's tanh form (GPT-2's gelu_new) on h = MatMul(x, k) + bias: Mul(h, 0.5), Pow(h, 3),
    Mul(p, 0.044715), Add(h, q), Mul(s, sqrt(2/pi)), Tanh, Add(t, 1), Mul(half, v); swapped puts every Add's and
    Mul's constant first (the same values: they commute exactly); another exponent is not the pattern."""
    f = TensorProto.FLOAT
    rng = np.random.default_rng(7)
    scalar = lambda name, v: numpy_helper.from_array(np.array(v, np.float32), name)  # noqa: E731
    pair = lambda a, b: [b, a] if swapped else [a, b]  # noqa: E731
    nodes = [helper.make_node("MatMul", ["x", "k"], ["p0"]), helper.make_node("Add", ["p0", "bias"], ["h"]),
             helper.make_node("Mul", pair("h", "c_half"), ["half"]),
             helper.make_node("Pow", ["h", "c_three"], ["p"]), helper.make_node("Mul", pair("p", "c_cube"), ["q"]),
             helper.make_node("Add", pair("h", "q"), ["s"]), helper.make_node("Mul", pair("s", "c_scale"), ["u"]),
             helper.make_node("Tanh", ["u"], ["t"]), helper.make_node("Add", pair("t", "c_one"), ["v"]),
             helper.make_node("Mul", pair("half", "v"), ["y"])]
    inits = [numpy_helper.from_array(rng.standard_normal((8, 33)).astype(np.float32) * 3, "k"),
             numpy_helper.from_array(rng.standard_normal(33).astype(np.float32), "bias"),
             scalar("c_half", 0.5), scalar("c_three", exponent), scalar("c_cube", 0.044715),
             scalar("c_scale", 0.7978845608), scalar("c_one", 1.0)]
    graph = helper.make_graph(nodes, "gelu_tanh", [helper.make_tensor_value_info("x", f, ["N", 8])],
                              [helper.make_tensor_value_info("y", f, None)], initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 9
    return model.SerializeToString()


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("swapped", [False, True])
def test_gelu_tanh_chain_fusion_keeps_the_bits(provider, swapped, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    x = np.random.default_rng(8).standard_normal((40, 8)).astype(np.float32) * 4
    x[0, :5] = [np.nan, np.inf, -np.inf, -0.0, 1e-40]
    x[1] *= np.float32(1e12)
    (_, unfused_ops), ((fused,), fused_ops) = unfused_and_fused(gelu_tanh_chain(swapped, 3.0), {"x": x}, provider)
    assert fused_ops == ["FusedMatMul"] and "Tanh" in unfused_ops  # the chain runs in the product's epilogue
    assert np.isnan(fused).any() and np.isfinite(fused[1]).all()  # row 1: x^3 overflows, tanh saturates
    _, (_, other_ops) = unfused_and_fused(gelu_tanh_chain(swapped, 2.5), {"x": x}, provider, same_as_cpu=False)
    assert "GeluTanhChain" not in other_ops and "Pow" in other_ops
