"""Gemm with alpha = beta = 1 adds C as the GEMM core stores each tile (docs/arithmetic.md#gemm): its bytes must equal
those of the unfused formula, t = dot from +0 then t + C, which a MatMul followed by an Add of the same C computes
(FusedMatMul, the same contract). Per-column and per-element C, NaN and infinities in C, several tiles and threads."""

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

import lockstep
from bits import same_bits


def _session(nodes, inits, a_shape, threads):
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("A", TensorProto.FLOAT, a_shape)],
                              [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    options = lockstep.SessionOptions()
    options.intra_op_num_threads = threads
    return lockstep.InferenceSession(model.SerializeToString(), options, providers=[lockstep.CPU])


@pytest.mark.parametrize("c_kind", ["per_column", "per_element"])
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("m,k,n", [(5, 7, 9), (40, 30, 3), (1, 64, 20), (128, 200, 333), (70, 1000, 100)])
def test_gemm_with_c_equals_matmul_then_add(c_kind, threads, m, k, n):
    rng = np.random.default_rng(m * n + k)
    a = rng.standard_normal((m, k)).astype(np.float32)
    b = rng.standard_normal((k, n)).astype(np.float32)
    c = rng.standard_normal((n,) if c_kind == "per_column" else (m, n)).astype(np.float32)
    c.flat[: min(c.size, 4)] = [np.nan, np.inf, -np.inf, -0.0][: min(c.size, 4)]
    a[0, 0] = np.inf  # a whole row of C's columns gets an infinite product
    inits = [numpy_helper.from_array(b, "B"), numpy_helper.from_array(c, "C")]
    gemm = _session([helper.make_node("Gemm", ["A", "B", "C"], ["Y"], alpha=1.0, beta=1.0)], inits, [m, k], threads)
    unfused = _session([helper.make_node("MatMul", ["A", "B"], ["T"]), helper.make_node("Add", ["T", "C"], ["Y"])],
                       inits, [m, k], threads)
    (got,) = gemm.run(None, {"A": a})
    (want,) = unfused.run(None, {"A": a})
    assert same_bits(got, want)


def test_gemm_without_c_and_alpha_one_is_the_product():
    rng = np.random.default_rng(3)
    a = rng.standard_normal((33, 70)).astype(np.float32)
    b = rng.standard_normal((70, 50)).astype(np.float32)
    inits = [numpy_helper.from_array(b, "B")]
    (got,) = _session([helper.make_node("Gemm", ["A", "B"], ["Y"])], inits, [33, 70], 1).run(None, {"A": a})
    (want,) = _session([helper.make_node("MatMul", ["A", "B"], ["Y"])], inits, [33, 70], 1).run(None, {"A": a})
    assert same_bits(got, want)
