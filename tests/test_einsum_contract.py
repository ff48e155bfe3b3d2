"""Einsum's Dot steps follow MatMul's contract (docs/arithmetic.md#einsum): the same bytes as MatMul on the same
terms in the same k order, whether the step runs on the gemm core (one contracted label) or element by element
(several contracted labels, k row-major over them)."""

import numpy as np
import onnx
from onnx import TensorProto, helper

import lockstep


def run(op, attrs, *inputs):
    names = [f"x{i}" for i in range(len(inputs))]
    node = helper.make_node(op, names, ["y"], **attrs)
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in names],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    return lockstep.InferenceSession(model.SerializeToString()).run(None, dict(zip(names, inputs)))[0]


RNG = np.random.default_rng(7)


def test_matmul_equation_matches_matmul_bytes():
    a, b = RNG.standard_normal((9, 150), np.float32), RNG.standard_normal((150, 7), np.float32)
    assert run("Einsum", {"equation": "ij,jk->ik"}, a, b).tobytes() == run("MatMul", {}, a, b).tobytes()


def test_attention_equation_matches_matmul_of_transpose():
    q, k = RNG.standard_normal((2, 3, 10, 70), np.float32), RNG.standard_normal((2, 3, 12, 70), np.float32)
    want = run("MatMul", {}, q, np.ascontiguousarray(np.swapaxes(k, -1, -2)))
    assert run("Einsum", {"equation": "bhqd,bhkd->bhqk"}, q, k).tobytes() == want.tobytes()


def test_two_contracted_labels_match_matmul_of_flattened_operands():
    a, b = RNG.standard_normal((5, 9, 11), np.float32), RNG.standard_normal((9, 11, 4), np.float32)
    want = run("MatMul", {}, a.reshape(5, 99), b.reshape(99, 4))
    assert run("Einsum", {"equation": "ijk,jkl->il"}, a, b).tobytes() == want.tobytes()
