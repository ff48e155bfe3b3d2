"""Smaller pieces of onnxruntime's Python API that its own test file exercises (scripts/ort_api_tests.sh), checked
here against onnxruntime: add_initializer, the model-embedded config, set_providers' error type, void feeds,
vendor ids, OrtMemoryInfo.create_v2, the telemetry switches, get_input_epdevices and read-only sparse views."""

import json

import numpy as np
import onnxruntime
import pytest
from onnx import TensorProto, helper, numpy_helper

import lockstep
from bits import same_bits


def mul_model(config=None):
    w = numpy_helper.from_array(np.array([[1, 2], [3, 4], [5, 6]], np.float32), "W")
    graph = helper.make_graph([helper.make_node("Mul", ["X", "W"], ["Y"])], "g",
                              [helper.make_tensor_value_info("X", TensorProto.FLOAT, [3, 2])],
                              [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [3, 2])], initializer=[w])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 7
    if config is not None:
        helper.set_model_props(model, {"ort_config": json.dumps(config)})
    return model.SerializeToString()


X = np.array([[1, 2], [3, 4], [5, 6]], np.float32)


def test_add_initializer_replaces_the_models_initializer_as_in_onnxruntime():
    results = []
    for runtime in (lockstep, onnxruntime):
        options = runtime.SessionOptions()
        value = runtime.OrtValue.ortvalue_from_numpy(np.array([[2, 1], [4, 3], [6, 5]], np.float32))
        options.add_initializer("W", value)
        results.append(runtime.InferenceSession(mul_model(), options, providers=["CPUExecutionProvider"])
                       .run(None, {"X": X})[0])
    assert same_bits(results[0], results[1])
    assert results[0].tolist() == [[2, 2], [12, 12], [30, 30]]


@pytest.mark.parametrize("name, value, message", [
    ("V", np.zeros((3, 2), np.float32), "the model has no initializer 'V'"),
    ("W", np.zeros((2, 3), np.float32), "'W' is float\\[2,3\\], the model's initializer float\\[3,2\\]"),
    ("W", np.zeros((3, 2), np.float64), "'W' is double\\[3,2\\]"),
])
def test_an_initializer_that_does_not_fit_is_a_clear_error(name, value, message):
    options = lockstep.SessionOptions()
    options.add_initializer(name, lockstep.OrtValue.ortvalue_from_numpy(value))
    with pytest.raises(lockstep.InvalidArgument, match=message):
        lockstep.InferenceSession(mul_model(), options)


def test_the_model_embedded_config_is_read_when_asked_for(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    config = {"session_options": {"inter_op_num_threads": 5, "intra_op_num_threads": 2,
                                  "graph_optimization_level": 99, "enable_profiling": 1}}
    assert lockstep.InferenceSession(mul_model(config)).get_session_options().intra_op_num_threads == 0
    monkeypatch.setenv("ORT_LOAD_CONFIG_FROM_MODEL", "1")
    for runtime in (lockstep, onnxruntime):
        s = runtime.InferenceSession(mul_model(config), providers=["CPUExecutionProvider"])
        o = s.get_session_options()
        assert (o.inter_op_num_threads, o.intra_op_num_threads, o.enable_profiling) == (5, 2, True)
        assert o.graph_optimization_level == runtime.GraphOptimizationLevel.ORT_ENABLE_ALL
        assert s.end_profiling()
    with pytest.raises(ValueError, match="session option 'no_such_option'"):
        lockstep.InferenceSession(mul_model({"session_options": {"no_such_option": 1}}))


def test_set_providers_with_an_unknown_name_raises_runtime_error_as_onnxruntime_does():
    for runtime in (lockstep, onnxruntime):
        s = runtime.InferenceSession(mul_model(), providers=["CPUExecutionProvider"])
        with pytest.raises(RuntimeError, match="Unknown Provider Type: Invalid"):
            s.set_providers(["InvalidProvider"])
    with pytest.raises(ValueError, match="Unknown Provider Type"):  # the constructor keeps ValueError
        lockstep.InferenceSession(mul_model(), providers=["InvalidProvider"])


def test_void_arrays_feed_string_inputs_as_onnxruntime_does():
    graph = helper.make_graph([helper.make_node("Identity", ["x"], ["y"])], "g",
                              [helper.make_tensor_value_info("x", TensorProto.STRING, [2, 2])],
                              [helper.make_tensor_value_info("y", TensorProto.STRING, [2, 2])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 9
    model = model.SerializeToString()
    x = np.array([b"must", b"have", b"same", b"size"], dtype=np.void).reshape((2, 2))
    ours = lockstep.InferenceSession(model).run(None, {"x": x})[0]
    theirs = onnxruntime.InferenceSession(model).run(None, {"x": x})[0]
    assert ours.tolist() == theirs.tolist() == [["must", "have"], ["same", "size"]]


def test_small_names_match_onnxruntime():
    for name, member in lockstep.OrtDeviceVendorId.__members__.items():
        assert int(onnxruntime.OrtDeviceVendorId.__members__[name]) == int(member)
    assert lockstep.OrtDevice.make("cuda", 0).device_vendor_id() == lockstep.OrtDeviceVendorId.NVIDIA
    args = ("Test", 0, 0, 0, 0, 128, 1)
    ours = lockstep.OrtMemoryInfo.create_v2(*args[:1], lockstep.OrtMemoryInfoDeviceType.CPU, *args[2:4],
                                            lockstep.OrtDeviceMemoryType.DEFAULT, 128,
                                            lockstep.OrtAllocatorType.ORT_ARENA_ALLOCATOR)
    theirs = onnxruntime.OrtMemoryInfo.create_v2(*args[:1], onnxruntime.OrtMemoryInfoDeviceType.CPU, *args[2:4],
                                                 onnxruntime.OrtDeviceMemoryType.DEFAULT, 128,
                                                 onnxruntime.OrtAllocatorType.ORT_ARENA_ALLOCATOR)
    for field in ["name", "device_id", "device_vendor_id"]:
        assert getattr(ours, field) == getattr(theirs, field)
    for field in ["mem_type", "allocator_type", "device_mem_type"]:
        assert int(getattr(ours, field)) == int(getattr(theirs, field))
    with pytest.raises(ValueError, match="no NPU memory"):
        lockstep.OrtMemoryInfo.create_v2("n", lockstep.OrtMemoryInfoDeviceType.NPU, 0, 0, 0, 0, 1)
    assert lockstep.disable_telemetry_events() is None and lockstep.enable_telemetry_events() is None
    assert "Build Info" in lockstep.get_build_info()
    # One entry per input; lockstep's are None (it has no plugin EP devices), onnxruntime's CPU an OrtEpDevice.
    theirs = onnxruntime.InferenceSession(mul_model()).get_input_epdevices()
    assert lockstep.InferenceSession(mul_model()).get_input_epdevices() == [None] * len(theirs)


def test_sparse_views_are_read_only_as_in_onnxruntime():
    st = lockstep.SparseTensor.sparse_coo_from_numpy([9], np.ones(2, np.float32), np.array([1, 3], np.int64))
    assert not st.values().flags.writeable and not st.as_coo_view().indices().flags.writeable


def test_ml_dtypes_arrays_are_not_taken_for_bytes():
    ml_dtypes = pytest.importorskip("ml_dtypes")
    graph = helper.make_graph([helper.make_node("Identity", ["x"], ["y"])], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]).SerializeToString()
    # bfloat16 is a lockstep type: fed for a float input, it is onnxruntime's type mismatch; float8e4m3b11fnuz is
    # not one.
    with pytest.raises(lockstep.InvalidArgument, match=r"input 'x'.*tensor\(bfloat16\)"):
        lockstep.InferenceSession(model).run(None, {"x": np.zeros(2, ml_dtypes.bfloat16)})
    with pytest.raises(lockstep.NotImplemented, match="input 'x' has numpy dtype float8_e4m3b11fnuz"):
        lockstep.InferenceSession(model).run(None, {"x": np.zeros(2, ml_dtypes.float8_e4m3b11fnuz)})
