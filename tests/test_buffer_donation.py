"""Elementwise outputs written over a dead input's buffer (KernelContext::output_over_input): the CPU provider hands
a value's buffer to the node that reads it last, and never where anything else can still see the value: a Reshape
alias, a graph output, a feed (the caller's memory through OrtValue), an outer-scope value, or a value read twice
by the node. Every case checks the outputs byte for byte against numpy and that the caller's arrays are unchanged."""
import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

import lockstep as ort

F = TensorProto.FLOAT


def session(nodes, inputs, outputs, initializers=(), threads=1):
    graph = helper.make_graph(nodes, "donation", [helper.make_tensor_value_info(n, F, s) for n, s in inputs],
                              [helper.make_tensor_value_info(n, F, None) for n in outputs], list(initializers))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL  # keep every node as written
    options.intra_op_num_threads = threads
    return ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])


def same_bytes(a, b):
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


X = np.random.default_rng(3).standard_normal((4, 6, 5)).astype(np.float32)


def test_a_reshape_alias_keeps_the_value_it_shares():
    # a is read last by Neg, but r (a Reshape of a) shares its buffer and is read after: Neg must not write over it.
    s = session([helper.make_node("Relu", ["x"], ["a"]),
                 helper.make_node("Reshape", ["a", "shape"], ["r"]),
                 helper.make_node("Neg", ["a"], ["n"]),
                 helper.make_node("Abs", ["r"], ["y"])],
                [("x", [4, 6, 5])], ["n", "y"], [numpy_helper.from_array(np.array([24, 5], np.int64), "shape")])
    n, y = s.run(None, {"x": X})
    a = np.maximum(X, 0)
    assert same_bytes(n, -a) and same_bytes(y, np.abs(a).reshape(24, 5))


def test_a_graph_output_read_by_a_later_node_is_not_overwritten():
    s = session([helper.make_node("Relu", ["x"], ["a"]), helper.make_node("Neg", ["a"], ["n"])],
                [("x", [4, 6, 5])], ["a", "n"])
    a, n = s.run(None, {"x": X})
    assert same_bytes(a, np.maximum(X, 0)) and same_bytes(n, -np.maximum(X, 0))


def test_feeds_given_as_ortvalues_are_never_written():
    x = X.copy()
    s = session([helper.make_node("Neg", ["x"], ["n"]), helper.make_node("Add", ["n", "x2"], ["y"])],
                [("x", [4, 6, 5]), ("x2", [4, 6, 5])], ["y"])
    x2 = X * 2
    value, value2 = ort.OrtValue.ortvalue_from_numpy(x), ort.OrtValue.ortvalue_from_numpy(x2)
    (y,) = s.run_with_ort_values(["y"], {"x": value, "x2": value2})
    assert same_bytes(y.numpy(), -X + X * 2)
    assert same_bytes(x, X) and same_bytes(x2, X * 2)


def test_a_value_read_twice_by_one_node_and_broadcast_operands():
    # Mul(a, a) reads a twice; in Add(b, c) the dead c is broadcast (smaller than the output), so b alone may be
    # written over.
    s = session([helper.make_node("Relu", ["x"], ["a"]), helper.make_node("Mul", ["a", "a"], ["b"]),
                 helper.make_node("ReduceMax", ["b"], ["c"], axes=[0], keepdims=1),
                 helper.make_node("Add", ["b", "c"], ["y"])],
                [("x", [4, 6, 5])], ["y"])
    (y,) = s.run(None, {"x": X})
    a = np.maximum(X, 0)
    b = a * a
    assert same_bytes(y, b + b.max(axis=0, keepdims=True))


def test_a_broadcast_operand_of_the_output_s_byte_size_is_not_written_over():
    # Less(a, b): a is float [4] (16 bytes), the bool output [4, 4] is 16 bytes too, yet a is broadcast: every
    # element of a is read for four outputs, so a must not take the output.
    x = np.array([0.5, -1.0, 2.0, 0.0], np.float32)
    b = np.random.default_rng(5).standard_normal((4, 4)).astype(np.float32)
    inputs = [helper.make_tensor_value_info("x", F, [4]), helper.make_tensor_value_info("b", F, [4, 4])]
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["a"]), helper.make_node("Less", ["a", "b"], ["y"])],
                              "less", inputs, [helper.make_tensor_value_info("y", TensorProto.BOOL, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    s = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    (y,) = s.run(None, {"x": x, "b": b})
    assert same_bytes(y, np.maximum(x, 0) < b)


def test_an_outer_scope_value_survives_a_branch_that_reads_it_last():
    then_graph = helper.make_graph([helper.make_node("Neg", ["a"], ["t"])], "then", [],
                                   [helper.make_tensor_value_info("t", F, None)])
    else_graph = helper.make_graph([helper.make_node("Abs", ["a"], ["e"])], "else", [],
                                   [helper.make_tensor_value_info("e", F, None)])
    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["a"]), helper.make_node("If", ["cond"], ["z"], then_branch=then_graph,
                                                                  else_branch=else_graph),
         helper.make_node("Sub", ["z", "a"], ["y"])],
        "outer", [helper.make_tensor_value_info("x", F, [4, 6, 5]),
                  helper.make_tensor_value_info("cond", TensorProto.BOOL, [])],
        [helper.make_tensor_value_info("y", F, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    s = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    a = np.maximum(X, 0)
    for cond, z in ((True, -a), (False, np.abs(a))):
        (y,) = s.run(None, {"x": X, "cond": np.array(cond)})
        assert same_bytes(y, z - a)


@pytest.mark.parametrize("threads", [1, 2])
def test_a_chain_of_dead_values_gives_the_unchained_bytes(threads):
    # Every value but the feed dies at its one reader, so each op may write over its input; the bytes must be those
    # of numpy's separate arrays, run after run.
    s = session([helper.make_node("Relu", ["x"], ["a"]), helper.make_node("Sigmoid", ["a"], ["b"]),
                 helper.make_node("Mul", ["b", "x2"], ["c"]), helper.make_node("Neg", ["c"], ["y"])],
                [("x", [4, 6, 5]), ("x2", [4, 6, 5])], ["y"], threads=threads)
    expected = s.run(None, {"x": X, "x2": X})[0]
    for _ in range(3):
        assert same_bytes(s.run(None, {"x": X, "x2": X})[0], expected)
    unfused = -(ort.InferenceSession(
        helper.make_model(helper.make_graph([helper.make_node("Sigmoid", ["a"], ["b"])], "s",
                                            [helper.make_tensor_value_info("a", F, [4, 6, 5])],
                                            [helper.make_tensor_value_info("b", F, None)]),
                          opset_imports=[helper.make_opsetid("", 17)]).SerializeToString(),
        providers=["CPUExecutionProvider"]).run(None, {"a": np.maximum(X, 0)})[0] * X)
    assert same_bytes(expected, unfused)
