"""Ops run as their ONNX function body (src/graph/expand.cpp): the bytes of a model that spells the body out, on every
provider; a malformed node is refused naming it."""

import numpy as np
import pytest
from onnx import TensorProto, helper

import lockstep
from bits import same_bits

PROVIDERS = [lockstep.CPU] + ([lockstep.CUDA] if lockstep.CUDA in lockstep.get_available_providers() else [])


def mvn_model(opset, axes=None):
    """Y = MeanVarianceNormalization(X)."""
    attrs = {} if axes is None else {"axes": axes}
    node = helper.make_node("MeanVarianceNormalization", ["X"], ["Y"], name="mvn", **attrs)
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("X", TensorProto.FLOAT, [2, 3, 4, 5])],
                              [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [2, 3, 4, 5])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def body_model(opset, axes):
    """onnx's function body of MeanVarianceNormalization written out node by node (its text, opset 18 form)."""
    f = TensorProto.FLOAT
    axes_input = [] if opset < 18 else ["axes"]
    axes_attr = {"axes": axes} if opset < 18 else {}
    nodes = [
        helper.make_node("Constant", [], ["Exponent"], value=helper.make_tensor("e", f, [], [2.0])),
        helper.make_node("Constant", [], ["Epsilon"], value=helper.make_tensor("p", f, [], [1e-9])),
        helper.make_node("ReduceMean", ["X"] + axes_input, ["X_RM"], **axes_attr),
        helper.make_node("Pow", ["X_RM", "Exponent"], ["EX_squared"]),
        helper.make_node("Pow", ["X", "Exponent"], ["X_squared"]),
        helper.make_node("ReduceMean", ["X_squared"] + axes_input, ["E_Xsquared"], **axes_attr),
        helper.make_node("Sub", ["E_Xsquared", "EX_squared"], ["Variance"]),
        helper.make_node("Sqrt", ["Variance"], ["STD"]),
        helper.make_node("Sub", ["X", "X_RM"], ["X_variance"]),
        helper.make_node("Add", ["STD", "Epsilon"], ["Processed_STD"]),
        helper.make_node("Div", ["X_variance", "Processed_STD"], ["Y"]),
    ]
    if opset >= 18:
        nodes.insert(0, helper.make_node("Constant", [], ["axes"], value_ints=axes))
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("X", f, [2, 3, 4, 5])],
                              [helper.make_tensor_value_info("Y", f, [2, 3, 4, 5])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("opset, axes", [(13, None), (13, [1, 3]), (18, None), (18, [-1]), (23, [0, 1, 2, 3])])
def test_mean_variance_normalization_gives_the_bytes_of_its_body(provider, opset, axes):
    x = np.random.default_rng(opset).standard_normal((2, 3, 4, 5)).astype(np.float32) * 3 + 1
    x[0, 0, 0, :3] = [np.nan, np.inf, -0.0]
    feeds = {"X": x}
    (op,) = lockstep.InferenceSession(mvn_model(opset, axes).SerializeToString(), providers=[provider]).run(None, feeds)
    body = body_model(opset, [0, 2, 3] if axes is None else axes).SerializeToString()
    (spelled,) = lockstep.InferenceSession(body, providers=[provider]).run(None, feeds)
    assert same_bits(op, spelled)
    assert np.isnan(op).any() and (np.isfinite(op).any() or axes == [0, 1, 2, 3])  # NaN reaches what it is reduced with


def test_a_malformed_mean_variance_normalization_is_refused_naming_it():
    model = mvn_model(13)
    model.graph.node[0].input.append("X")
    with pytest.raises(lockstep.InvalidGraph, match="Node 'mvn' \\(MeanVarianceNormalization\\): .*one input"):
        lockstep.InferenceSession(model.SerializeToString())
