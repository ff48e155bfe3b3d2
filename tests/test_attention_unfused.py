"""Attention, RotaryEmbedding, LinearAttention and RMSNormalization compute exactly what their unfused graphs compute.

Each case of tests/cases/attention.py and the RMSNormalization cases of tests/cases/normalization.py is run twice in
lockstep: as the single op, and as the op's ONNX function body (the MatMul, Softmax, Where, ... graph onnx's own
`_expanded` node tests use; LinearAttention's is a Scan over the sequence).
docs/arithmetic.md#attention states each op's sequence as that graph's, so the two must give the same bytes (NaN
equals NaN), on the CPU and, with a GPU, on CUDA.
"""

import numpy as np
import onnx
import pytest
from onnx import helper
from onnx.backend.test.case.node import function_testcase_helper

import lockstep
from bits import max_ulp, same_bits
from cases import attention, normalization
from onnx_models import feeds_of, single_node_model

OPS = ("Attention", "RotaryEmbedding", "LinearAttention", "RMSNormalization")
CASES = [c for c in attention.CASES + normalization.CASES if c.op_type in OPS]
PROVIDERS = [lockstep.CPU] + ([lockstep.CUDA] if lockstep.CUDA in lockstep.get_available_providers() else [])


def unfused_model(c):
    """The case's model with its node replaced by the ONNX function body of the op at the case's opset."""
    model = onnx.load_from_string(single_node_model(c))
    graph = model.graph
    node = graph.node[0]
    types = {v.name: v.type for v in list(graph.input)}
    for init in graph.initializer:
        types[init.name] = helper.make_tensor_type_proto(init.data_type, list(init.dims))
    input_types = [types.get(name, onnx.TypeProto()) for name in node.input]
    expanded, _ = function_testcase_helper(node, input_types, c.name, model.opset_import)
    nodes, opsets = expanded[0]
    del graph.node[:]
    graph.node.extend(nodes)
    versions = {o.domain: o.version for o in model.opset_import}
    for o in opsets:
        versions.setdefault(o.domain, o.version)
    del model.opset_import[:]
    model.opset_import.extend(helper.make_opsetid(d, v) for d, v in versions.items())
    return model.SerializeToString()


def run(model, feeds, provider, optimize):
    options = lockstep.SessionOptions()
    options.log_severity_level = 3
    if not optimize:
        options.graph_optimization_level = lockstep.GraphOptimizationLevel.ORT_DISABLE_ALL
    return lockstep.InferenceSession(model, options, providers=[provider]).run(None, feeds)


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("c", CASES, ids=[c.name for c in CASES])
def test_op_equals_unfused_graph(c, provider):
    feeds = feeds_of(c)
    fused = run(single_node_model(c), feeds, provider, optimize=True)
    unfused = run(unfused_model(c), feeds, provider, optimize=False)
    assert len(fused) == len(unfused)
    for i, (a, b) in enumerate(zip(fused, unfused)):
        assert a.shape == b.shape, f"output {i}: shape {a.shape} != {b.shape}"
        assert same_bits(a, b), f"output {i}: op vs unfused graph differ by {max_ulp(a, b)} ulp"


def test_cases_cover_each_op():
    assert {c.op_type for c in CASES} == set(OPS)
    assert np.mean([c.op_type == "Attention" for c in CASES]) > 0.4
