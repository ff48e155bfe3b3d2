"""lockstep.backend: the onnx.backend interface, driven by onnx's own backend test suite on a few node tests."""

import unittest

import numpy as np
import onnx.backend.test
import pytest
from onnx import TensorProto, helper

import lockstep
import lockstep.backend as backend


def relu_model():
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 2])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 2])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


@pytest.mark.parametrize("inputs", [
    lambda x: [x], lambda x: (x,), lambda x: {"x": x}, lambda x: x,
])
def test_prepare_and_run_every_input_form(inputs):
    x = np.array([[-1, 2], [3, -4]], np.float32)
    (y,) = backend.prepare(relu_model(), "CPU").run(inputs(x))
    assert y.tobytes() == np.maximum(x, 0).tobytes()


def test_run_model_from_bytes_and_session_options():
    x = np.array([[-1, 2], [3, -4]], np.float32)
    (y,) = backend.run_model(relu_model().SerializeToString(), [x], "CPU", intra_op_num_threads=1)
    assert y.tobytes() == np.maximum(x, 0).tobytes()


def test_devices():
    assert backend.supports_device("CPU")
    assert backend.supports_device("CUDA") == (lockstep.CUDA in lockstep.get_available_providers())
    assert not backend.supports_device("TPU")
    if not backend.supports_device("CUDA"):
        with pytest.raises(RuntimeError, match="no usable provider for device 'CUDA'"):
            backend.prepare(relu_model(), "CUDA")


def test_run_node_is_refused_clearly():
    with pytest.raises(NotImplementedError, match="wrap the node in a model"):
        backend.run_node(relu_model().graph.node[0], [np.zeros((2, 2), np.float32)])


def test_onnx_backend_test_suite_drives_lockstep():
    suite = onnx.backend.test.BackendTest(backend, __name__)
    suite.include(r"^test_(relu|add|matmul_2d|softmax_axis_1|conv_with_strides_padding)_cpu$")
    cases = unittest.TestSuite(unittest.defaultTestLoader.loadTestsFromTestCase(case)
                               for case in suite.test_cases.values())
    result = unittest.TextTestRunner(verbosity=0).run(cases)
    assert result.wasSuccessful(), result.failures + result.errors
    assert result.testsRun - len(result.skipped) == 5  # the five included cases ran (the others are skipped)
