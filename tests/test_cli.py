"""The command line: info, run (seeded random inputs, given inputs, output files), check, demo."""

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from lockstep.cli import main


@pytest.fixture
def model_path(tmp_path):
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 2])
    w = numpy_helper.from_array(np.arange(8, dtype=np.float32).reshape(4, 2), "w")
    graph = helper.make_graph([helper.make_node("MatMul", ["x", "w"], ["t"]), helper.make_node("Relu", ["t"], ["y"])],
                              "g", [x], [y], initializer=[w])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], producer_name="cli-test")
    path = tmp_path / "m.onnx"
    onnx.save(model, str(path))
    return str(path)


def test_info(model_path, capsys):
    assert main(["info", model_path]) == 0
    out = capsys.readouterr().out
    assert "x: float [N, 4]" in out
    assert "ai.onnx 13" in out
    assert "MatMul" in out and "Relu" in out and "cli-test" in out


def test_run_seeded_random_inputs_are_reproducible(model_path, tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    assert main(["run", model_path, "--seed", "3", "--output-dir", str(a)]) == 0
    assert main(["run", model_path, "--seed", "3", "--threads", "2", "--output-dir", str(b)]) == 0
    assert np.load(a / "y.npy").tobytes() == np.load(b / "y.npy").tobytes()


def test_run_with_given_input(model_path, tmp_path):
    x = np.ones((3, 4), np.float32)
    np.save(tmp_path / "x.npy", x)
    assert main(["run", model_path, "--input", f"x={tmp_path / 'x.npy'}", "--output-dir", str(tmp_path)]) == 0
    np.testing.assert_array_equal(np.load(tmp_path / "y.npy"), x @ np.arange(8, dtype=np.float32).reshape(4, 2))


def test_run_bad_input_name(model_path, tmp_path):
    np.save(tmp_path / "z.npy", np.ones(1, np.float32))
    with pytest.raises(SystemExit, match="unknown input names: z"):
        main(["run", model_path, "--input", f"z={tmp_path / 'z.npy'}"])


def test_check_and_demo(model_path):
    assert main(["check", model_path]) == 0
    assert main(["demo"]) == 0


def test_missing_model_is_an_error_not_a_crash(capsys):
    assert main(["info", "/nonexistent.onnx"]) == 1
    assert "nonexistent.onnx" in capsys.readouterr().err
