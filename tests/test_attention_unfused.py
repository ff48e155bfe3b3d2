"""Attention, RotaryEmbedding, LinearAttention and RMSNormalization compute exactly what their unfused graphs compute.

Each case of tests/cases/attention.py and the RMSNormalization cases of tests/cases/normalization.py is run twice in
lockstep: as the single op, and as the op's ONNX function body (the MatMul, Softmax, Where, ... graph onnx's own
`_expanded` node tests use; LinearAttention's Scan is unrolled over the case's steps, since lockstep has no Scan).
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

INT64 = onnx.TensorProto.INT64
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
    steps = c.inputs["query"].shape[1] if c.op_type == "LinearAttention" else 0
    nodes = [m for n in nodes for m in (unrolled_scan(n, steps) if n.op_type == "Scan" else [n])]
    del graph.node[:]
    graph.node.extend(nodes)
    versions = {o.domain: o.version for o in model.opset_import}
    for o in opsets:
        versions.setdefault(o.domain, o.version)
    del model.opset_import[:]
    model.opset_import.extend(helper.make_opsetid(d, v) for d, v in versions.items())
    return model.SerializeToString()


def unrolled_scan(scan, steps):
    """A Scan over axis 0 with one state, as one copy of its body per step: Gather step t of each scan input, chain
    the state, stack the per-step outputs."""
    body = next(a.g for a in scan.attribute if a.name == "body")
    state, scanned = scan.input[0], list(scan.input[1:])
    nodes, outs = [], []
    local = {o for n in body.node for o in n.output} | {i.name for i in body.input}
    for t in range(steps):
        index = f"{scan.output[0]}__index{t}"
        nodes.append(helper.make_node("Constant", [], [index], value=helper.make_tensor("", INT64, [], [t])))
        rename = {body.input[0].name: state}
        for inp, src in zip(body.input[1:], scanned):
            rename[inp.name] = f"{inp.name}__t{t}"
            nodes.append(helper.make_node("Gather", [src, index], [rename[inp.name]], axis=0))
        for n in body.node:
            m = onnx.NodeProto()
            m.CopyFrom(n)
            m.input[:] = [rename.get(i, f"{i}__t{t}" if i in local else i) for i in n.input]
            m.output[:] = [f"{o}__t{t}" for o in n.output]
            for o in n.output:
                rename[o] = f"{o}__t{t}"
            nodes.append(m)
        state = rename[body.output[0].name]
        outs.append(f"{body.output[1].name}__t{t}__stacked")
        axes = f"{outs[-1]}__axes"
        nodes.append(helper.make_node("Constant", [], [axes], value=helper.make_tensor("", INT64, [1], [0])))
        nodes.append(helper.make_node("Unsqueeze", [rename[body.output[1].name], axes], [outs[-1]]))
    nodes.append(helper.make_node("Identity", [state], [scan.output[0]]))
    nodes.append(helper.make_node("Concat", outs, [scan.output[1]], axis=0))
    return nodes


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
