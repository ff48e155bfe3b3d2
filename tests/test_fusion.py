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


def run(provider, level):
    options = lockstep.SessionOptions()
    options.graph_optimization_level = level
    options.enable_profiling = True
    s = lockstep.InferenceSession(silu_patterns(), options, providers=[provider])
    outputs = s.run(None, feed())
    op_types = [e["op_type"] for e in s.profile_events() if e["category"] == "Node"]
    s.end_profiling()
    return outputs, op_types


@pytest.mark.parametrize("provider", PROVIDERS)
def test_silu_fusion_keeps_the_bits(provider, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    unfused, unfused_ops = run(provider, lockstep.GraphOptimizationLevel.ORT_DISABLE_ALL)
    fused, fused_ops = run(provider, lockstep.GraphOptimizationLevel.ORT_ENABLE_ALL)
    assert "Silu" not in unfused_ops
    assert fused_ops.count("Silu") == 2  # y1 and y2; the others keep their Sigmoid and Mul
    assert fused_ops.count("Sigmoid") == 3 and unfused_ops.count("Sigmoid") == 5
    for i, (a, b) in enumerate(zip(unfused, fused)):
        assert same_bits(a, b), f"output {i} differs between the fused and the unfused graph"
    assert same_bits(fused[0], fused[1])  # Mul(h, s) and Mul(s, h) agree
    assert np.isnan(fused[0][1]).any()
    if provider != lockstep.CPU:
        for a, b in zip(fused, run(lockstep.CPU, lockstep.GraphOptimizationLevel.ORT_ENABLE_ALL)[0]):
            assert same_bits(a, b)


def test_a_models_own_node_in_locksteps_domain_is_refused():
    graph = helper.make_graph([helper.make_node("Silu", ["x"], ["y"], domain="lockstep", name="mine")], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("lockstep", 1)])
    for level in (lockstep.GraphOptimizationLevel.ORT_DISABLE_ALL, lockstep.GraphOptimizationLevel.ORT_ENABLE_ALL):
        options = lockstep.SessionOptions()
        options.graph_optimization_level = level
        with pytest.raises(lockstep.NotImplemented, match="Node 'mine' \\(Silu\\): ops of domain 'lockstep'"):
            lockstep.InferenceSession(model.SerializeToString(), options)
