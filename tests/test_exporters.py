"""Models written the way older or other exporters write them, run on lockstep CPU and on onnxruntime CPU.

Each model is built with onnx.helper in the form a given exporter / opset produces (old PyTorch at opset 9-11,
tf2onnx, paddle2onnx), then lockstep CPU must agree with onnxruntime CPU within rtol 1e-5 / atol 1e-5, with the
same output dtypes and shapes.
"""

import numpy as np
import onnx
import onnxruntime
import pytest
from onnx import TensorProto, helper, numpy_helper

import lockstep
from bits import same_bits

RTOL = 1e-5
ATOL = 1e-5

# The IR version each exporter wrote for an opset (IR 3 = initializers must also be graph inputs).
IR_OF_OPSET = {7: 3, 8: 3, 9: 4, 10: 5, 11: 6, 12: 7, 13: 7, 17: 8}


def rng(seed=0):
    return np.random.default_rng(seed)


def f32(*shape, seed=0, scale=1.0):
    return (rng(seed).standard_normal(shape) * scale).astype(np.float32)


def vi(name, shape, elem=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, elem, shape)


def build(nodes, inputs, outputs, inits=(), opset=11, extra_opsets=(), ir=None, name="g"):
    graph = helper.make_graph(list(nodes), name, list(inputs), list(outputs), initializer=list(inits))
    imports = [helper.make_opsetid("", opset)] + [helper.make_opsetid(d, v) for d, v in extra_opsets]
    model = helper.make_model(graph, opset_imports=imports, producer_name="exporter-tests")
    model.ir_version = ir if ir is not None else IR_OF_OPSET.get(opset, 8)
    return model


def run_lockstep(model, feeds, level=None, threads=None):
    options = lockstep.SessionOptions()
    if level is not None:
        options.graph_optimization_level = level
    if threads is not None:
        options.intra_op_num_threads = threads
    s = lockstep.InferenceSession(model.SerializeToString(), sess_options=options,
                                  providers=["CPUExecutionProvider"])
    return s.run(None, feeds)


def run_ort(model, feeds):
    options = onnxruntime.SessionOptions()
    options.log_severity_level = 3
    s = onnxruntime.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    return s.run(None, feeds)


def check(model, feeds, rtol=RTOL, atol=ATOL, validate=True):
    """lockstep CPU vs onnxruntime CPU: same count, dtype and shape of outputs, values within rtol/atol.
    validate=False skips onnx.checker, which insists on a declared shape for every graph output."""
    if validate:
        onnx.checker.check_model(model)
    got = run_lockstep(model, feeds)
    want = run_ort(model, feeds)
    assert len(got) == len(want)
    for i, (g, w) in enumerate(zip(got, want)):
        assert g.dtype == w.dtype, f"output {i}: dtype {g.dtype} vs {w.dtype}"
        assert g.shape == w.shape, f"output {i}: shape {g.shape} vs {w.shape}"
        np.testing.assert_allclose(g, w, rtol=rtol, atol=atol, err_msg=f"output {i}")
    return got


# ---------------------------------------------------------------------------------------------------------------
# A small CNN as PyTorch's exporter wrote it at opset 9, 10 and 11.
#
#   x[N,3,10,10] -Pad(1, reflect)-> Conv(3->4, k3) -> BatchNormalization -> Clip(0,6) -> MaxPool(k2,s2)
#   -> Upsample/Resize(x2, nearest) -> Slice(crop 1..9) -> Conv(4->4, k3, pads 1) -> Relu -> Flatten
#   -> Gemm(transB) -> Softmax (rank 2)          ... output "prob"
#   the last Relu's feature map -> Softmax(axis 1) on rank 4 (opset<13: over C*H*W)  ... output "fmap_softmax"
# ---------------------------------------------------------------------------------------------------------------

N_IN, H_IN = 3, 10
C1 = 4
CLASSES = 5


def cnn_weights():
    return {
        "w1": f32(C1, N_IN, 3, 3, seed=1, scale=0.3),
        "b1": f32(C1, seed=2, scale=0.1),
        "bn_scale": (1.0 + f32(C1, seed=3, scale=0.1)),
        "bn_bias": f32(C1, seed=4, scale=0.1),
        "bn_mean": f32(C1, seed=5, scale=0.1),
        "bn_var": (0.5 + np.abs(f32(C1, seed=6))).astype(np.float32),
        "w2": f32(C1, C1, 3, 3, seed=7, scale=0.3),
        "b2": f32(C1, seed=8, scale=0.1),
        "fc_w": f32(CLASSES, C1 * 8 * 8, seed=9, scale=0.05),
        "fc_b": f32(CLASSES, seed=10, scale=0.1),
    }


def cnn_model(opset, weights_as="initializer", ir=None):
    """The CNN in the op forms of `opset`. weights_as: "initializer", "constant" (Constant nodes, as paddle2onnx
    and tf2onnx write weights) or "graph_input" (initializers also listed as graph inputs, as IR 3 required)."""
    w = cnn_weights()
    nodes, inits, consts = [], [], {}

    def const(name, value):
        consts[name] = np.asarray(value)

    # --- Pad: attribute form up to opset 10, input form from 11.
    if opset < 11:
        nodes.append(helper.make_node("Pad", ["x"], ["xp"], mode="reflect", pads=[0, 0, 1, 1, 0, 0, 1, 1]))
    else:
        const("pad_pads", np.array([0, 0, 1, 1, 0, 0, 1, 1], np.int64))
        nodes.append(helper.make_node("Pad", ["x", "pad_pads"], ["xp"], mode="reflect"))
    nodes.append(helper.make_node("Conv", ["xp", "w1", "b1"], ["c1"], kernel_shape=[3, 3], strides=[1, 1]))
    # BatchNormalization with the attributes old exporters always wrote (epsilon and momentum; at opset 9 the
    # 'spatial' attribute of opset 7/8 is gone).
    nodes.append(helper.make_node("BatchNormalization", ["c1", "bn_scale", "bn_bias", "bn_mean", "bn_var"], ["bn"],
                                  epsilon=1e-3, momentum=0.9))
    # --- Clip (ReLU6): attributes up to opset 10, inputs from 11.
    if opset < 11:
        nodes.append(helper.make_node("Clip", ["bn"], ["r1"], min=0.0, max=6.0))
    else:
        const("clip_min", np.array(0.0, np.float32))
        const("clip_max", np.array(6.0, np.float32))
        nodes.append(helper.make_node("Clip", ["bn", "clip_min", "clip_max"], ["r1"]))
    pool_attrs = dict(kernel_shape=[2, 2], strides=[2, 2])
    if opset >= 10:
        pool_attrs["ceil_mode"] = 0
    nodes.append(helper.make_node("MaxPool", ["r1"], ["p1"], **pool_attrs))  # [N,4,5,5]
    # --- Upsample at opset 9, Resize-10 at opset 10, Resize-11 (roi, scales) at 11.
    scales = np.array([1, 1, 2, 2], np.float32)
    const("up_scales", scales)
    if opset == 9:
        nodes.append(helper.make_node("Upsample", ["p1", "up_scales"], ["u1"], mode="nearest"))
    elif opset == 10:
        nodes.append(helper.make_node("Resize", ["p1", "up_scales"], ["u1"], mode="nearest"))
    else:
        const("up_roi", np.array([], np.float32))
        nodes.append(helper.make_node("Resize", ["p1", "up_roi", "up_scales"], ["u1"], mode="nearest",
                                      coordinate_transformation_mode="asymmetric", nearest_mode="floor"))
    # u1: [N,4,10,10]; crop H,W to 1..9 -> [N,4,8,8]. Slice: attributes at opset 9, inputs from 10.
    if opset < 10:
        nodes.append(helper.make_node("Slice", ["u1"], ["s1"], starts=[1, 1], ends=[9, 9], axes=[2, 3]))
    else:
        const("sl_starts", np.array([1, 1], np.int64))
        const("sl_ends", np.array([9, -1], np.int64))
        const("sl_axes", np.array([2, 3], np.int64))
        nodes.append(helper.make_node("Slice", ["u1", "sl_starts", "sl_ends", "sl_axes"], ["s1"]))
    nodes.append(helper.make_node("Conv", ["s1", "w2", "b2"], ["c2"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]))
    nodes.append(helper.make_node("Relu", ["c2"], ["r2"]))
    nodes.append(helper.make_node("Flatten", ["r2"], ["flat"], axis=1))
    # Gemm's C is required before opset 11.
    nodes.append(helper.make_node("Gemm", ["flat", "fc_w", "fc_b"], ["logits"], alpha=1.0, beta=1.0, transB=1))
    nodes.append(helper.make_node("Softmax", ["logits"], ["prob"], axis=1))
    # Opset<13 Softmax on a rank-4 tensor with axis 1 normalizes over the flattened C*H*W.
    nodes.append(helper.make_node("Softmax", ["r2"], ["fmap_softmax"]))

    for k, v in w.items():
        const(k, v)
    inputs = [vi("x", ["N", N_IN, H_IN, H_IN])]
    if weights_as == "constant":
        nodes = [helper.make_node("Constant", [], [k], value=numpy_helper.from_array(v, k + "_value"))
                 for k, v in consts.items()] + nodes
    else:
        inits = [numpy_helper.from_array(v, k) for k, v in consts.items()]
        if weights_as == "graph_input":
            elem = {np.dtype(np.float32): TensorProto.FLOAT, np.dtype(np.int64): TensorProto.INT64}
            inputs += [vi(k, list(v.shape), elem[v.dtype]) for k, v in consts.items()]
    outputs = [vi("prob", ["N", CLASSES]), vi("fmap_softmax", ["N", C1, 8, 8])]
    return build(nodes, inputs, outputs, inits, opset=opset, ir=ir)


@pytest.mark.parametrize("opset", [9, 10, 11])
def test_cnn_old_opsets(opset):
    x = f32(2, N_IN, H_IN, H_IN, seed=11)
    prob, fmap = check(cnn_model(opset), {"x": x})
    np.testing.assert_allclose(prob.sum(axis=1), 1.0, rtol=1e-5)
    # Opset<13 semantics: the rank-4 Softmax sums to 1 over C*H*W, not over C.
    np.testing.assert_allclose(fmap.reshape(2, -1).sum(axis=1), 1.0, rtol=1e-5)


@pytest.mark.parametrize("opset", [9, 10, 11])
def test_cnn_opsets_agree_with_each_other(opset):
    """The version-specific forms (Pad/Clip/Slice attributes vs inputs, Upsample vs Resize) compute the same
    function, so every opset's output is bit-identical to opset 11's on lockstep."""
    x = f32(3, N_IN, H_IN, H_IN, seed=12)
    base = run_lockstep(cnn_model(11), {"x": x})
    got = run_lockstep(cnn_model(opset), {"x": x})
    for g, b in zip(got, base):
        assert same_bits(g, b)


@pytest.mark.parametrize("opset", [9, 11])
def test_weights_as_constant_nodes(opset):
    x = f32(2, N_IN, H_IN, H_IN, seed=13)
    got = check(cnn_model(opset, weights_as="constant"), {"x": x})
    # Weights in Constant nodes or in initializers: the same bits.
    ref = run_lockstep(cnn_model(opset), {"x": x})
    for g, r in zip(got, ref):
        assert same_bits(g, r)


def test_initializers_listed_as_graph_inputs_ir3():
    """PyTorch before 1.3 / IR 3: every initializer is also a graph input. Feeding only x uses the defaults."""
    model = cnn_model(9, weights_as="graph_input", ir=3)
    x = f32(2, N_IN, H_IN, H_IN, seed=14)
    got = check(model, {"x": x})
    ref = run_lockstep(cnn_model(9), {"x": x})
    for g, r in zip(got, ref):
        assert same_bits(g, r)
    # As onnxruntime does, get_inputs() leaves out the inputs that have an initializer.
    ort_inputs = onnxruntime.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    names = [i.name for i in lockstep.InferenceSession(model.SerializeToString()).get_inputs()]
    assert names == [i.name for i in ort_inputs.get_inputs()] == ["x"]


def test_constant_value_attribute_kinds():
    """Constant's value_float / value_floats / value_int / value_ints (opset 12+, tf2onnx writes these)."""
    nodes = [
        helper.make_node("Constant", [], ["shape"], value_ints=[2, -1]),
        helper.make_node("Constant", [], ["scale"], value_float=0.5),
        helper.make_node("Constant", [], ["bias"], value_floats=[1.0, -2.0, 3.0, 0.25, 0.0, 7.5]),
        helper.make_node("Constant", [], ["k"], value_int=3),
        helper.make_node("Reshape", ["x", "shape"], ["xr"]),
        helper.make_node("Mul", ["xr", "scale"], ["xs"]),
        helper.make_node("Add", ["xs", "bias"], ["y"]),
        helper.make_node("Cast", ["k"], ["kf"], to=TensorProto.FLOAT),
        helper.make_node("Mul", ["y", "kf"], ["z"]),
    ]
    model = build(nodes, [vi("x", [3, 4])], [vi("z", [2, 6])], opset=13)
    (z,) = check(model, {"x": f32(3, 4, seed=15)})
    assert z.shape == (2, 6)


@pytest.mark.parametrize("opset", [7, 8])
def test_batchnorm_spatial_attribute(opset):
    """BatchNormalization-7 with spatial=1 and momentum, as exporters of that era wrote it."""
    w = cnn_weights()
    names = ["bn_scale", "bn_bias", "bn_mean", "bn_var"]
    node = helper.make_node("BatchNormalization", ["x"] + names, ["y"], epsilon=1e-5, momentum=0.9, spatial=1)
    inits = [numpy_helper.from_array(w[k], k) for k in names]
    model = build([node], [vi("x", [2, C1, 3, 3])] + [vi(k, [C1]) for k in names], [vi("y", [2, C1, 3, 3])],
                  inits, opset=opset, ir=3)
    check(model, {"x": f32(2, C1, 3, 3, seed=16)})


# ---------------------------------------------------------------------------------------------------------------
# Axes as attributes (opset 11) vs inputs (opset 13 / 18).
# ---------------------------------------------------------------------------------------------------------------

def axes_model(opset):
    """x[2,3,4] -> Unsqueeze(0) -> [1,2,3,4] -> ReduceMean(axes [-1], keepdims) -> [1,2,3,1]
    -> Squeeze([0, 3]) -> [2,3] -> ReduceSum(axes [1], keepdims 0) -> [2];  also ReduceSum over all (no axes)."""
    nodes, inits = [], []

    def axes(name, values):
        inits.append(numpy_helper.from_array(np.array(values, np.int64), name))
        return name

    if opset < 13:
        nodes.append(helper.make_node("Unsqueeze", ["x"], ["u"], axes=[0]))
        nodes.append(helper.make_node("ReduceMean", ["u"], ["m"], axes=[-1], keepdims=1))
        nodes.append(helper.make_node("Squeeze", ["m"], ["sq"], axes=[0, 3]))
        nodes.append(helper.make_node("ReduceSum", ["sq"], ["s"], axes=[1], keepdims=0))
        nodes.append(helper.make_node("ReduceSum", ["x"], ["total"], keepdims=0))
    else:
        nodes.append(helper.make_node("Unsqueeze", ["x", axes("ax_u", [0])], ["u"]))
        if opset < 18:
            nodes.append(helper.make_node("ReduceMean", ["u"], ["m"], axes=[-1], keepdims=1))
        else:
            nodes.append(helper.make_node("ReduceMean", ["u", axes("ax_m", [-1])], ["m"], keepdims=1))
        nodes.append(helper.make_node("Squeeze", ["m", axes("ax_sq", [0, 3])], ["sq"]))
        nodes.append(helper.make_node("ReduceSum", ["sq", axes("ax_s", [1])], ["s"], keepdims=0))
        nodes.append(helper.make_node("ReduceSum", ["x"], ["total"], keepdims=0))
    outputs = [vi("sq", [2, 3]), vi("s", [2]), vi("total", [])]
    return build(nodes, [vi("x", [2, 3, 4])], outputs, inits, opset=opset)


@pytest.mark.parametrize("opset", [11, 13, 18])
def test_axes_attribute_and_input_forms(opset):
    x = f32(2, 3, 4, seed=20)
    sq, s, total = check(axes_model(opset), {"x": x})
    assert sq.shape == (2, 3) and s.shape == (2,) and total.shape == ()
    base = run_lockstep(axes_model(11), {"x": x})
    for g, b in zip((sq, s, total), base):
        assert same_bits(g, b)


def test_squeeze_without_axes_opset11():
    """Squeeze with no axes attribute removes every size-1 dim."""
    node = helper.make_node("Squeeze", ["x"], ["y"])
    model = build([node], [vi("x", [1, 3, 1, 2])], [vi("y", [3, 2])], opset=11)
    (y,) = check(model, {"x": f32(1, 3, 1, 2, seed=21)})
    assert y.shape == (3, 2)


# ---------------------------------------------------------------------------------------------------------------
# tf2onnx: NHWC graph with Transpose around each Conv.
# ---------------------------------------------------------------------------------------------------------------

def test_tf2onnx_nhwc_transpose_around_conv():
    nodes = [
        helper.make_node("Transpose", ["x"], ["x_nchw"], perm=[0, 3, 1, 2], name="conv1__6"),
        helper.make_node("Conv", ["x_nchw", "w1", "b1"], ["c1"], kernel_shape=[3, 3], strides=[2, 2],
                         pads=[0, 0, 1, 1], dilations=[1, 1], group=1, name="conv1"),  # tf "SAME", stride 2
        helper.make_node("Transpose", ["c1"], ["c1_nhwc"], perm=[0, 2, 3, 1], name="conv1__7"),
        helper.make_node("Relu", ["c1_nhwc"], ["r1"]),
        helper.make_node("Transpose", ["r1"], ["r1_nchw"], perm=[0, 3, 1, 2]),
        helper.make_node("Conv", ["r1_nchw", "wd"], ["c2"], kernel_shape=[3, 3], pads=[1, 1, 1, 1], group=6,
                         name="depthwise"),
        helper.make_node("Transpose", ["c2"], ["c2_nhwc"], perm=[0, 2, 3, 1]),
        helper.make_node("Add", ["c2_nhwc", "bias_nhwc"], ["y"]),  # per-channel bias on the last axis
        helper.make_node("ReduceMean", ["y"], ["gap"], axes=[1, 2], keepdims=0),  # tf's GlobalAveragePool
        helper.make_node("Reshape", ["gap", "flat_shape"], ["flat"]),
        helper.make_node("MatMul", ["flat", "dense_w"], ["logits"]),
    ]
    inits = [
        numpy_helper.from_array(f32(6, 3, 3, 3, seed=30, scale=0.3), "w1"),
        numpy_helper.from_array(f32(6, seed=31, scale=0.1), "b1"),
        numpy_helper.from_array(f32(6, 1, 3, 3, seed=32, scale=0.3), "wd"),
        numpy_helper.from_array(f32(6, seed=33, scale=0.1), "bias_nhwc"),
        numpy_helper.from_array(np.array([-1, 6], np.int64), "flat_shape"),
        numpy_helper.from_array(f32(6, 4, seed=34, scale=0.5), "dense_w"),
    ]
    model = build(nodes, [vi("x", ["unk__0", 10, 10, 3])], [vi("y", ["unk__0", 5, 5, 6]), vi("logits", ["unk__0", 4])],
                  inits, opset=13)
    y, logits = check(model, {"x": f32(2, 10, 10, 3, seed=35)})
    assert y.shape == (2, 5, 5, 6) and logits.shape == (2, 4)


def test_unused_opset_imports_of_other_domains():
    """Exporters add imports of domains no node uses (ai.onnx.ml, com.microsoft, a private domain)."""
    base = cnn_model(11)
    model = cnn_model(11)
    model.opset_import.extend([helper.make_opsetid("ai.onnx.ml", 3), helper.make_opsetid("com.microsoft", 1),
                               helper.make_opsetid("org.example.private", 2)])
    x = f32(2, N_IN, H_IN, H_IN, seed=40)
    got = check(model, {"x": x})
    for g, r in zip(got, run_lockstep(base, {"x": x})):
        assert same_bits(g, r)


# ---------------------------------------------------------------------------------------------------------------
# If with branches that read outer-scope values, nested.
# ---------------------------------------------------------------------------------------------------------------

def if_model():
    """inputs: c (bool), d (bool), x[2,3].  initializer w[2,3] (outer scope of both branches).
    then: t = x + w; then a nested If on d (read from two scopes up): d ? t * x : t - w
    else: e = x * w; out = Relu(e) plus a second output read straight from the outer scope (x)."""
    inner_then = helper.make_graph([helper.make_node("Mul", ["t", "x"], ["it"])], "inner_then", [],
                                   [vi("it", [2, 3])])
    inner_else = helper.make_graph([helper.make_node("Sub", ["t", "w"], ["ie"])], "inner_else", [],
                                   [vi("ie", [2, 3])])
    then_branch = helper.make_graph([
        helper.make_node("Add", ["x", "w"], ["t"]),
        helper.make_node("If", ["d"], ["inner"], then_branch=inner_then, else_branch=inner_else),
        helper.make_node("Identity", ["w"], ["then_w"]),
    ], "then", [], [vi("inner", [2, 3]), vi("then_w", [2, 3])])
    else_branch = helper.make_graph([
        helper.make_node("Mul", ["x", "w"], ["e"]),
        helper.make_node("Relu", ["e"], ["er"]),
        helper.make_node("Neg", ["x"], ["else_x"]),
    ], "else", [], [vi("er", [2, 3]), vi("else_x", [2, 3])])
    nodes = [helper.make_node("If", ["c"], ["y", "z"], then_branch=then_branch, else_branch=else_branch)]
    w = numpy_helper.from_array(np.array([[0.5, -1.0, 2.0], [3.0, -0.25, 1.5]], np.float32), "w")
    inputs = [vi("c", [], TensorProto.BOOL), vi("d", [], TensorProto.BOOL), vi("x", [2, 3])]
    return build(nodes, inputs, [vi("y", [2, 3]), vi("z", [2, 3])], [w], opset=13)


@pytest.mark.parametrize("c, d", [(True, True), (True, False), (False, True), (False, False)])
def test_if_reads_outer_scope_values(c, d):
    x = f32(2, 3, seed=50)
    w = np.array([[0.5, -1.0, 2.0], [3.0, -0.25, 1.5]], np.float32)
    y, z = check(if_model(), {"c": np.array(c), "d": np.array(d), "x": x})
    if c:
        want_y = (x + w) * x if d else (x + w) - w
        want_z = w
    else:
        want_y = np.maximum(x * w, 0)
        want_z = -x
    # Single float ops: exact.
    assert same_bits(y, want_y.astype(np.float32))
    assert same_bits(z, want_z.astype(np.float32))


def test_if_condition_computed_in_graph():
    """The condition comes from the graph (ReduceSum(x) > 0), as exporters of data-dependent branches write it."""
    then_branch = helper.make_graph([helper.make_node("Mul", ["x", "two"], ["a"])], "then", [], [vi("a", [3])])
    else_branch = helper.make_graph([helper.make_node("Sub", ["x", "two"], ["b"])], "else", [], [vi("b", [3])])
    nodes = [
        helper.make_node("ReduceSum", ["x"], ["sum"], keepdims=0),
        helper.make_node("Greater", ["sum", "zero"], ["cond"]),
        helper.make_node("If", ["cond"], ["y"], then_branch=then_branch, else_branch=else_branch),
    ]
    inits = [numpy_helper.from_array(np.array(2.0, np.float32), "two"),
             numpy_helper.from_array(np.array(0.0, np.float32), "zero")]
    model = build(nodes, [vi("x", [3])], [vi("y", [3])], inits, opset=13)
    pos = np.array([1.0, 2.0, -0.5], np.float32)
    (y,) = check(model, {"x": pos})
    assert same_bits(y, pos * 2)
    (y,) = check(model, {"x": -pos})
    assert same_bits(y, -pos - 2)


@pytest.mark.parametrize("c", [True, False])
def test_if_branch_initializer_and_shapes_that_differ(c):
    """A branch with its own initializer; the branches give outputs of different rank (exporters of
    data-dependent code write both)."""
    then_branch = helper.make_graph([
        helper.make_node("Add", ["x", "k"], ["xk"]),
        helper.make_node("ReduceSum", ["xk"], ["s"], keepdims=0),
    ], "then", [], [vi("s", [])], initializer=[numpy_helper.from_array(np.array(3.0, np.float32), "k")])
    else_branch = helper.make_graph([helper.make_node("Transpose", ["x"], ["xt"], perm=[1, 0])], "else", [],
                                    [vi("xt", [3, 2])])
    nodes = [helper.make_node("If", ["c"], ["y"], then_branch=then_branch, else_branch=else_branch)]
    model = build(nodes, [vi("c", [], TensorProto.BOOL), vi("x", [2, 3])], [vi("y", None)], opset=13)
    x = f32(2, 3, seed=51)
    # The output's rank depends on the branch, so it has no declared shape: the checker would refuse it.
    (y,) = check(model, {"c": np.array(c), "x": x}, validate=False)
    assert y.shape == (() if c else (3, 2))


# ---------------------------------------------------------------------------------------------------------------
# Constant folding: a Shape/Gather/Concat/Reshape chain on an initializer.
# ---------------------------------------------------------------------------------------------------------------

def folding_model():
    """ref (initializer [3,4,5]) -> Shape -> Gather(0) -> Unsqueeze -> Concat with [-1] -> Reshape(x) -> [3, 20],
    then a MatMul with a weight so the fold feeds real arithmetic; and Shape -> Slice -> ReduceProd as a side
    output (int64)."""
    nodes = [
        helper.make_node("Shape", ["ref"], ["ref_shape"]),
        helper.make_node("Gather", ["ref_shape", "idx0"], ["d0"], axis=0),
        helper.make_node("Unsqueeze", ["d0", "ax0"], ["d0_1"]),
        helper.make_node("Concat", ["d0_1", "minus1"], ["new_shape"], axis=0),
        helper.make_node("Reshape", ["x", "new_shape"], ["xr"]),
        helper.make_node("MatMul", ["xr", "wm"], ["y"]),
        helper.make_node("Slice", ["ref_shape", "s_start", "s_end"], ["tail"]),
        helper.make_node("ReduceProd", ["tail"], ["tail_prod"], keepdims=0),
    ]
    inits = [
        numpy_helper.from_array(f32(3, 4, 5, seed=60), "ref"),
        numpy_helper.from_array(np.array(0, np.int64), "idx0"),
        numpy_helper.from_array(np.array([0], np.int64), "ax0"),
        numpy_helper.from_array(np.array([-1], np.int64), "minus1"),
        numpy_helper.from_array(f32(20, 7, seed=61, scale=0.2), "wm"),
        numpy_helper.from_array(np.array([1], np.int64), "s_start"),
        numpy_helper.from_array(np.array([3], np.int64), "s_end"),
    ]
    outputs = [vi("y", [3, 7]), vi("new_shape", [2], TensorProto.INT64), vi("tail_prod", [], TensorProto.INT64)]
    return build(nodes, [vi("x", [6, 10])], outputs, inits, opset=13)


def test_constant_folding_same_result_at_every_level():
    model = folding_model()
    x = f32(6, 10, seed=62)
    want = run_ort(model, {"x": x})
    off = run_lockstep(model, {"x": x}, level=lockstep.GraphOptimizationLevel.ORT_DISABLE_ALL)
    on = run_lockstep(model, {"x": x}, level=lockstep.GraphOptimizationLevel.ORT_ENABLE_ALL)
    basic = run_lockstep(model, {"x": x}, level=lockstep.GraphOptimizationLevel.ORT_ENABLE_BASIC)
    assert off[1].tolist() == [3, -1] and off[2].dtype == np.int64 and int(off[2]) == 20
    for a, b, c, w in zip(off, on, basic, want):
        assert same_bits(a, b) and same_bits(a, c)
        assert a.dtype == w.dtype and a.shape == w.shape
        np.testing.assert_allclose(a, w, rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("level", [0, 99])
def test_pytorch_view_chain_on_dynamic_input_opset9(level):
    """x.view(x.size(0), -1) as PyTorch wrote it at opset 9: Shape -> Gather -> Unsqueeze(axes attr) -> Concat with
    a Constant -> Reshape. The input's batch dim is dynamic, so this chain cannot be folded."""
    nodes = [
        helper.make_node("Constant", [], ["i0"], value=numpy_helper.from_array(np.array(0, np.int64), "i0_v")),
        helper.make_node("Constant", [], ["m1"], value=numpy_helper.from_array(np.array([-1], np.int64), "m1_v")),
        helper.make_node("Shape", ["x"], ["sh"]),
        helper.make_node("Gather", ["sh", "i0"], ["b"], axis=0),
        helper.make_node("Unsqueeze", ["b"], ["b1"], axes=[0]),
        helper.make_node("Concat", ["b1", "m1"], ["ns"], axis=0),
        helper.make_node("Reshape", ["x", "ns"], ["y"]),
    ]
    model = build(nodes, [vi("x", ["N", 3, 4, 5])], [vi("y", ["N", 60])], opset=9)
    for n in (1, 3):
        x = f32(n, 3, 4, 5, seed=63 + n)
        (y,) = run_lockstep(model, {"x": x}, level=level)
        assert same_bits(y, x.reshape(n, 60))
        (w,) = run_ort(model, {"x": x})
        assert same_bits(y, w)
