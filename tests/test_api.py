"""The onnxruntime-compatible Python API: metadata, providers, errors on bad models and bad feeds."""

import os
import random
import warnings

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import lockstep


def add_model(shape=("N", 3), opset=17):
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, list(shape))
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, list(shape))
    bias = numpy_helper.from_array(np.arange(3, dtype=np.float32), "bias")
    node = helper.make_node("Add", ["x", "bias"], ["y"], name="add0")
    graph = helper.make_graph([node], "g", [x], [y], initializer=[bias])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], producer_name="tests")
    model.ir_version = 9
    return model


def session_of(model, **kw):
    return lockstep.InferenceSession(model.SerializeToString(), **kw)


def test_inputs_outputs_and_metadata():
    s = session_of(add_model())
    (i,) = s.get_inputs()
    assert (i.name, i.type, i.shape) == ("x", "tensor(float)", ["N", 3])
    assert s.get_outputs()[0].name == "y"
    assert s.get_modelmeta().producer_name == "tests"
    assert s.get_providers() == ["CPUExecutionProvider"]
    assert "CPUExecutionProvider" in lockstep.get_available_providers()


def test_run_all_outputs_and_by_name():
    s = session_of(add_model())
    x = np.ones((2, 3), np.float32)
    (y,) = s.run(None, {"x": x})
    np.testing.assert_array_equal(y, x + np.arange(3, dtype=np.float32))
    (y2,) = s.run(["y"], {"x": x})
    assert y2.tobytes() == y.tobytes()


def test_load_from_path(tmp_path):
    path = tmp_path / "m.onnx"
    onnx.save(add_model(), str(path))
    assert lockstep.InferenceSession(str(path)).get_inputs()[0].name == "x"


def test_missing_input_is_value_error():
    s = session_of(add_model())
    with pytest.raises(ValueError, match=r"Required inputs \(\['x'\]\) are missing"):
        s.run(None, {})


@pytest.mark.parametrize("feed, pattern", [
    ({"z": np.ones((2, 3), np.float32)}, "missing"),
    ({"x": np.ones((2, 3), np.float32), "z": np.ones(1, np.float32)}, "Invalid input name: z"),
    ({"x": np.ones((2, 3), np.float64)}, r"input 'x'.*tensor\(double\).*tensor\(float\)"),
    ({"x": np.ones((2, 3, 1), np.float32)}, "Invalid rank for input: x Got: 3 Expected: 2"),
    ({"x": np.ones((2, 4), np.float32)}, "invalid dimensions for input: x .*index: 1 Got: 4 Expected: 3"),
])
def test_bad_feed_names_the_input_and_session_stays_usable(feed, pattern):
    s = session_of(add_model())
    with pytest.raises((ValueError, lockstep.InvalidArgument), match=pattern):
        s.run(None, feed)
    (y,) = s.run(None, {"x": np.zeros((1, 3), np.float32)})
    np.testing.assert_array_equal(y, np.arange(3, dtype=np.float32)[None])


def test_invalid_output_name():
    with pytest.raises(lockstep.InvalidArgument, match="Invalid output name: nope"):
        session_of(add_model()).run(["nope"], {"x": np.ones((1, 3), np.float32)})


def test_unknown_op_names_node_and_op():
    model = add_model()
    model.graph.node[0].op_type = "FrobnicateOp"
    with pytest.raises(lockstep.NotImplemented, match=r"Node 'add0' \(FrobnicateOp\)"):
        session_of(model)


def test_unsupported_opset():
    with pytest.raises(lockstep.NotImplemented, match="opset 5"):
        session_of(add_model(opset=5))


def test_other_domain_import_without_nodes_is_tolerated():
    model = add_model()
    model.opset_import.append(helper.make_opsetid("com.microsoft", 1))
    session_of(model).run(None, {"x": np.ones((1, 3), np.float32)})


@pytest.mark.parametrize("data", [b"", b"\x00", b"\xff" * 64, b"garbage bytes that are not a model"])
def test_bad_bytes(data):
    with pytest.raises(lockstep.Fail):
        lockstep.InferenceSession(data)


def test_truncated_and_random_models_raise_cleanly():
    good = add_model().SerializeToString()
    rng = random.Random(7)
    for cut in range(0, len(good) - 1, 3):
        try:
            lockstep.InferenceSession(good[:cut])
        except lockstep.Fail:
            pass
    for _ in range(300):
        blob = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 200)))
        try:
            lockstep.InferenceSession(blob)
        except lockstep.Fail:
            pass


def test_missing_file():
    with pytest.raises(lockstep.NoSuchFile, match="nope.onnx"):
        lockstep.InferenceSession("/nonexistent/nope.onnx")


def test_initializer_dims_disagree_with_data():
    model = add_model()
    model.graph.initializer[0].dims[:] = [4]
    with pytest.raises(lockstep.InvalidGraph, match="bias"):
        session_of(model)


def test_dangling_input_is_invalid_graph():
    model = add_model()
    model.graph.node[0].input[1] = "not_there"
    with pytest.raises(lockstep.InvalidGraph, match="not_there"):
        session_of(model)


def test_external_data_outside_model_folder(tmp_path):
    model = add_model()
    tensor = model.graph.initializer[0]
    tensor.ClearField("raw_data")
    tensor.ClearField("float_data")
    tensor.data_location = TensorProto.EXTERNAL
    entry = tensor.external_data.add()
    entry.key, entry.value = "location", "../outside.bin"
    (tmp_path / "outside.bin").write_bytes(np.arange(3, dtype=np.float32).tobytes())
    folder = tmp_path / "model"
    folder.mkdir()
    onnx.save(model, str(folder / "m.onnx"))
    with pytest.raises(lockstep.InvalidGraph, match="outside.bin"):
        lockstep.InferenceSession(str(folder / "m.onnx"))


def test_external_data_inside_model_folder(tmp_path):
    model = add_model()
    onnx.save(model, str(tmp_path / "m.onnx"), save_as_external_data=True, all_tensors_to_one_file=True,
              location="weights.bin", size_threshold=0)
    s = lockstep.InferenceSession(str(tmp_path / "m.onnx"))
    (y,) = s.run(None, {"x": np.zeros((1, 3), np.float32)})
    np.testing.assert_array_equal(y[0], np.arange(3, dtype=np.float32))


def test_cuda_request_without_gpu_warns_and_falls_back():
    if lockstep.CUDA in lockstep.get_available_providers():
        pytest.skip("this machine has a GPU")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        s = session_of(add_model(), providers=["CUDAExecutionProvider", "CPUExecutionProvider"])
    assert s.get_providers() == ["CPUExecutionProvider"]
    assert any("CUDAExecutionProvider" in str(w.message) for w in caught)


def test_unknown_provider_name_is_value_error():
    with pytest.raises(ValueError, match="Unknown Provider Type"):
        session_of(add_model(), providers=["NoSuchExecutionProvider"])


def test_set_providers_and_session_options():
    options = lockstep.SessionOptions()
    options.intra_op_num_threads = 2
    options.graph_optimization_level = lockstep.GraphOptimizationLevel.ORT_DISABLE_ALL
    s = session_of(add_model(), sess_options=options, providers=["CPUExecutionProvider"])
    s.set_providers(["CPUExecutionProvider"])
    assert s.get_providers() == ["CPUExecutionProvider"]
    assert s.run(None, {"x": np.ones((1, 3), np.float32)})[0].shape == (1, 3)


def test_read_only_and_non_contiguous_feeds():
    s = session_of(add_model())
    x = np.frombuffer(np.arange(6, dtype=np.float32).tobytes(), dtype=np.float32).reshape(2, 3)
    assert not x.flags.writeable
    (y,) = s.run(None, {"x": x})
    np.testing.assert_array_equal(y, x + np.arange(3, dtype=np.float32))
    strided = np.arange(12, dtype=np.float32).reshape(2, 6)[:, ::2]
    (y2,) = s.run(None, {"x": strided})
    np.testing.assert_array_equal(y2, strided + np.arange(3, dtype=np.float32))
