"""onnxruntime's provider helpers: check_and_normalize_provider_args (which InferenceSession uses) and
get_provider_graph_assignment_info (which provider runs each node)."""

import warnings

import numpy as np
import pytest
from onnx import TensorProto, helper

import lockstep
from bits import same_bits

HAS_CUDA = lockstep.CUDA in lockstep.get_available_providers()
needs_cuda = pytest.mark.skipif(not HAS_CUDA, reason="no GPU on this machine")
NAMES = ["A", "B", "C"]


def normalize(providers, options=None):
    return lockstep.check_and_normalize_provider_args(providers, options, NAMES)


def test_names_pairs_and_parallel_options_normalize_to_string_dicts():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert normalize(None) == ([], [])
        assert normalize(["A", "B"]) == (["A", "B"], [{}, {}])
        assert normalize([("A", {1: 2.5}), "C"]) == (["A", "C"], [{"1": "2.5"}, {}])
        assert normalize(("B", "A"), [{"device_id": 0}, {}]) == (["B", "A"], [{"device_id": "0"}, {}])


def test_a_repeated_name_keeps_its_first_options_and_warns():
    with pytest.warns(UserWarning, match="Duplicate provider 'A'"):
        assert normalize(["A", "B", "A"], [{"x": 1}, {}, {"y": 2}]) == (["A", "B"], [{"x": "1"}, {}])


def test_a_name_that_is_not_available_is_kept_and_warns():
    with pytest.warns(UserWarning, match="Specified provider 'D' is not in available provider names"):
        assert normalize(["D", "A"]) == (["D", "A"], [{}, {}])


@pytest.mark.parametrize("providers, options", [
    (3, None), ("A", None), ([3], None), ([("A",)], None), ([("A", "x")], None), (["A"], 3), (["A"], ["x"]),
    (["A", "B"], [{}]), ([("A", {1: 2})], [{3: 4}]),
], ids=["not-a-sequence", "a-string", "not-a-name", "short-pair", "options-not-dict", "options-not-a-sequence",
        "option-not-dict", "lengths-differ", "pair-and-options"])
def test_malformed_provider_arguments_raise_value_error(providers, options):
    with pytest.raises(ValueError):
        normalize(providers, options)


def test_sessions_take_options_from_pairs_or_the_parallel_list():
    model = add_mul_add_model()
    for session in (lockstep.InferenceSession(model, providers=[("CPUExecutionProvider", {"x": 1})]),
                    lockstep.InferenceSession(model, providers=["CPUExecutionProvider"], provider_options=[{}])):
        assert session.get_providers() == ["CPUExecutionProvider"]
    with pytest.raises(ValueError, match="only when 'provider_options' is not given"):
        lockstep.InferenceSession(model, providers=[("CPUExecutionProvider", {})], provider_options=[{}])


def add_mul_add_model(opset=17):
    f = TensorProto.FLOAT
    nodes = [helper.make_node("Add", ["a", "b"], ["t0"], name="add_0"),
             helper.make_node("Mul", ["t0", "b"], ["t1"], name="mul_0"),
             helper.make_node("Add", ["t1", "a"], ["c"], name="add_1")]
    graph = helper.make_graph(nodes, "add_mul_add", [helper.make_tensor_value_info("a", f, [3]),
                                                     helper.make_tensor_value_info("b", f, [3])],
                              [helper.make_tensor_value_info("c", f, [3])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 9
    return model.SerializeToString()


def silu_model():
    """y = x * Sigmoid(x), which lockstep fuses into one node of its own domain unless optimizations are off."""
    f = TensorProto.FLOAT
    nodes = [helper.make_node("Sigmoid", ["x"], ["s"], name="sig"), helper.make_node("Mul", ["x", "s"], ["y"], name="mul")]
    graph = helper.make_graph(nodes, "silu", [helper.make_tensor_value_info("x", f, [4])],
                              [helper.make_tensor_value_info("y", f, [4])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 9
    return model.SerializeToString()


def recording_options(level=None):
    options = lockstep.SessionOptions()
    options.add_session_config_entry("session.record_ep_graph_assignment_info", "1")
    if level is not None:
        options.graph_optimization_level = level
    return options


def assignment(session):
    return [(s.ep_name, [(n.domain, n.op_type, n.name) for n in s.get_nodes()])
            for s in session.get_provider_graph_assignment_info()]


def test_assignment_info_lists_each_cpu_node_as_its_own_subgraph_in_execution_order():
    session = lockstep.InferenceSession(add_mul_add_model(), recording_options())
    assert assignment(session) == [("CPUExecutionProvider", [("", "Add", "add_0")]),
                                   ("CPUExecutionProvider", [("", "Mul", "mul_0")]),
                                   ("CPUExecutionProvider", [("", "Add", "add_1")])]


def test_assignment_info_shows_the_graph_lockstep_runs():
    fused = lockstep.InferenceSession(silu_model(), recording_options())
    unfused = lockstep.InferenceSession(silu_model(), recording_options(lockstep.GraphOptimizationLevel.ORT_DISABLE_ALL))
    assert [nodes[0][:2] for _, nodes in assignment(fused)] == [("lockstep", "Silu")]
    assert [nodes[0] for _, nodes in assignment(unfused)] == [("", "Sigmoid", "sig"), ("", "Mul", "mul")]
    x = {"x": np.array([-3.0, -0.5, 0.25, 7.0], np.float32)}
    assert same_bits(fused.run(None, x)[0], unfused.run(None, x)[0])


def test_assignment_info_needs_the_config_entry_when_the_session_is_made():
    options = lockstep.SessionOptions()
    session = lockstep.InferenceSession(add_mul_add_model(), options)
    options.add_session_config_entry("session.record_ep_graph_assignment_info", "1")
    with pytest.raises(lockstep.Fail, match="'session.record_ep_graph_assignment_info' must be set to \"1\""):
        session.get_provider_graph_assignment_info()


@needs_cuda
def test_cuda_assignment_info_shows_string_nodes_on_the_cpu_once_run():
    s = TensorProto.STRING
    graph = helper.make_graph([helper.make_node("Identity", ["t"], ["u"], name="strings"),
                               helper.make_node("Add", ["a", "a"], ["b"], name="add")], "mixed",
                              [helper.make_tensor_value_info("t", s, [2]),
                               helper.make_tensor_value_info("a", TensorProto.FLOAT, [2])],
                              [helper.make_tensor_value_info("u", s, [2]),
                               helper.make_tensor_value_info("b", TensorProto.FLOAT, [2])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    session = lockstep.InferenceSession(model.SerializeToString(), recording_options(),
                                        providers=["CUDAExecutionProvider"])
    session.run(None, {"t": np.array(["x", "y"]), "a": np.ones(2, np.float32)})
    providers = {nodes[0][2]: ep for ep, nodes in assignment(session)}
    assert providers == {"strings": "CPUExecutionProvider", "add": "CUDAExecutionProvider"}
