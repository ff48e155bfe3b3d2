"""SessionOptions, RunOptions and the module functions, against onnxruntime's own behaviour where it has one."""

import numpy as np
import onnxruntime
import pytest
from onnx import TensorProto, helper, numpy_helper

import lockstep


def add_model(shape=("N", 3), denotation=None):
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, list(shape))
    if denotation:
        x.type.tensor_type.shape.dim[0].denotation = denotation
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
    bias = numpy_helper.from_array(np.arange(3, dtype=np.float32), "bias")
    graph = helper.make_graph([helper.make_node("Add", ["x", "bias"], ["y"])], "g", [x], [y], initializer=[bias])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 9
    return model.SerializeToString()


SHARED_ATTRIBUTES = [
    "intra_op_num_threads", "inter_op_num_threads", "log_severity_level", "log_verbosity_level", "logid",
    "enable_cpu_mem_arena", "enable_mem_pattern", "enable_mem_reuse", "use_deterministic_compute",
    "use_per_session_threads", "optimized_model_filepath", "enable_profiling", "profile_file_prefix",
]


@pytest.mark.parametrize("name", SHARED_ATTRIBUTES)
def test_session_option_defaults_match_onnxruntime(name):
    assert getattr(lockstep.SessionOptions(), name) == getattr(onnxruntime.SessionOptions(), name)


def test_enum_defaults_match_onnxruntime():
    ours, theirs = lockstep.SessionOptions(), onnxruntime.SessionOptions()
    for name in ["graph_optimization_level", "execution_mode", "execution_order"]:
        assert getattr(ours, name).name == getattr(theirs, name).name
        assert int(getattr(ours, name)) == int(getattr(theirs, name))


@pytest.mark.parametrize("cls", [lockstep.SessionOptions, lockstep.RunOptions])
def test_misspelt_attribute_raises_attribute_error(cls):
    options = cls()
    with pytest.raises(AttributeError, match="intra_op_num_thread"):
        options.intra_op_num_thread = 4
    with pytest.raises(AttributeError):
        options.no_such_option


@pytest.mark.parametrize("name, value", [
    ("intra_op_num_threads", "4"), ("intra_op_num_threads", 4.0), ("logid", 3), ("enable_profiling", "yes"),
    ("graph_optimization_level", 5), ("graph_optimization_level", "ORT_ENABLE_ALL"), ("execution_mode", 7),
])
def test_wrong_type_raises_type_error_naming_the_option(name, value):
    with pytest.raises(TypeError, match=name):
        setattr(lockstep.SessionOptions(), name, value)


def test_typed_values_are_converted_and_kept_per_instance():
    a, b = lockstep.SessionOptions(), lockstep.SessionOptions()
    a.intra_op_num_threads = np.int64(3)
    a.enable_profiling = 1
    a.graph_optimization_level = 1
    assert (a.intra_op_num_threads, a.enable_profiling) == (3, True)
    assert a.graph_optimization_level is lockstep.GraphOptimizationLevel.ORT_ENABLE_BASIC
    assert b.intra_op_num_threads == 0 and b.enable_profiling is False


@pytest.mark.parametrize("module", [lockstep, onnxruntime])
def test_config_entries_like_onnxruntime(module):
    so, ro = module.SessionOptions(), module.RunOptions()
    so.add_session_config_entry("session.some_unknown_key", "x")
    ro.add_run_config_entry("run.some_unknown_key", "y")
    assert so.get_session_config_entry("session.some_unknown_key") == "x"
    assert ro.get_run_config_entry("run.some_unknown_key") == "y"
    with pytest.raises(RuntimeError, match="SessionOptions does not have configuration with key: missing"):
        so.get_session_config_entry("missing")
    with pytest.raises(RuntimeError, match="RunOptions does not have configuration with key: missing"):
        ro.get_run_config_entry("missing")


def test_unknown_config_key_is_kept_and_the_session_runs():
    so = lockstep.SessionOptions()
    so.add_session_config_entry("session.intra_op.allow_spinning", "0")
    s = lockstep.InferenceSession(add_model(), so)
    (y,) = s.run(None, {"x": np.zeros((1, 3), np.float32)})
    assert y.tobytes() == np.arange(3, dtype=np.float32)[None].tobytes()
    assert s.get_session_options().get_session_config_entry("session.intra_op.allow_spinning") == "0"


@pytest.mark.parametrize("key, value", [
    ("session.set_denormal_as_zero", "1"), ("session.load_model_format", "ORT"),
    ("session.disable_cpu_ep_fallback", "maybe"), ("session.force_spinning_stop", "yes"),
])
def test_config_value_lockstep_cannot_honour_is_a_clear_error(key, value):
    so = lockstep.SessionOptions()
    so.add_session_config_entry(key, value)
    with pytest.raises(ValueError, match=f"'{key}' = '{value}' is not supported by lockstep"):
        lockstep.InferenceSession(add_model(), so)


def test_config_entry_types():
    with pytest.raises(TypeError):
        lockstep.SessionOptions().add_session_config_entry("k", 1)


def test_disable_cpu_fallback_has_no_effect_on_a_cpu_session():
    so = lockstep.SessionOptions()
    so.add_session_config_entry("session.disable_cpu_ep_fallback", "1")
    lockstep.InferenceSession(add_model(), so, providers=[lockstep.CPU]).run(None, {"x": np.zeros((2, 3), np.float32)})


def test_force_spinning_stop_keeps_results():
    """With the threads sent to sleep after every run, the next runs wake them and give the same bits."""
    outputs = []
    for stop in ("0", "1"):
        so = lockstep.SessionOptions()
        so.intra_op_num_threads = 2
        so.add_session_config_entry("session.force_spinning_stop", stop)
        s = lockstep.InferenceSession(add_model(), so)
        outputs.append([s.run(None, {"x": np.full((4, 3), i, np.float32)})[0].tobytes() for i in range(20)])
    assert outputs[0] == outputs[1]


@pytest.mark.parametrize("by", ["name", "denotation"])
def test_free_dimension_override_fixes_the_dim(by):
    so = lockstep.SessionOptions()
    if by == "name":
        so.add_free_dimension_override_by_name("N", 2)
    else:
        so.add_free_dimension_override_by_denotation("DATA_BATCH", 2)
    s = lockstep.InferenceSession(add_model(denotation="DATA_BATCH"), so)
    assert s.get_inputs()[0].shape == [2, 3]
    s.run(None, {"x": np.zeros((2, 3), np.float32)})
    with pytest.raises(lockstep.InvalidArgument, match="invalid dimensions for input: x .*index: 0 Got: 4 Expected: 2"):
        s.run(None, {"x": np.zeros((4, 3), np.float32)})


def test_free_dimension_override_of_an_unknown_name_changes_nothing():
    so = lockstep.SessionOptions()
    so.add_free_dimension_override_by_name("batch", 2)
    assert lockstep.InferenceSession(add_model(), so).get_inputs()[0].shape == ["N", 3]


def test_negative_free_dimension_override_is_refused():
    so = lockstep.SessionOptions()
    so.add_free_dimension_override_by_name("N", -1)
    with pytest.raises(lockstep.InvalidArgument, match="free dimension override 'N' must be >= 0"):
        lockstep.InferenceSession(add_model(), so)


def test_run_with_terminate_set_fails_and_the_session_stays_usable():
    s = lockstep.InferenceSession(add_model())
    ro = lockstep.RunOptions()
    ro.terminate = True
    with pytest.raises(lockstep.Fail, match="terminate"):
        s.run(None, {"x": np.zeros((1, 3), np.float32)}, ro)
    ro.terminate = False
    s.run(None, {"x": np.zeros((1, 3), np.float32)}, ro)


def test_list_and_scalar_feeds_take_the_declared_type_as_in_onnxruntime():
    model = add_model()
    feed = {"x": [[1, 2, 3], [4, 5, 6]]}
    (ours,) = lockstep.InferenceSession(model).run(None, feed)
    (theirs,) = onnxruntime.InferenceSession(model, providers=["CPUExecutionProvider"]).run(None, feed)
    assert ours.dtype == theirs.dtype == np.float32
    assert ours.tobytes() == theirs.tobytes()


@pytest.mark.parametrize("value", [np.array([["a", "b", "c"]]), np.array([[b"a", b"b", b"c"]]),
                                   np.array([[1, "b", None]], dtype=object)])
def test_string_bytes_and_object_feeds_into_a_float_input_name_it(value):
    with pytest.raises(lockstep.InvalidArgument, match="input 'x'.*Actual: \\(tensor\\(string\\)\\) , expected: "
                                                       "\\(tensor\\(float\\)\\)"):
        lockstep.InferenceSession(add_model()).run(None, {"x": value})


def test_unsupported_numpy_dtype_feed_is_a_clear_error():
    x = np.zeros((1, 3), dtype=[("a", np.float32)])  # a structured dtype, as ml_dtypes' bfloat16 or float8
    with pytest.raises(lockstep.NotImplemented, match="input 'x' has numpy dtype .* which lockstep does not support"):
        lockstep.InferenceSession(add_model()).run(None, {"x": x})


def test_register_custom_ops_library_is_refused_clearly():
    with pytest.raises(lockstep.NotImplemented, match="custom op libraries are not supported"):
        lockstep.SessionOptions().register_custom_ops_library("libcustom.so")


def test_module_functions():
    assert lockstep.get_version_string() == lockstep.__version__
    assert "lockstep" in lockstep.get_build_info()
    assert lockstep.get_all_providers()[-1] == lockstep.CPU
    lockstep.set_seed(3)
    lockstep.set_default_logger_verbosity(0)
    with pytest.raises(ValueError):
        lockstep.set_default_logger_severity(7)


def test_get_device_says_gpu_exactly_when_the_cuda_provider_is_usable(monkeypatch):
    device = lockstep.get_device()
    assert device == ("GPU" if lockstep.CUDA in lockstep.get_available_providers() else "CPU")
    if device == "CPU":
        assert onnxruntime.get_device() == "CPU"  # a CPU-only machine: both say so
    monkeypatch.setattr(lockstep, "get_available_providers", lambda: [lockstep.CUDA, lockstep.CPU])
    assert lockstep.get_device() == "GPU"
    monkeypatch.setattr(lockstep, "get_available_providers", lambda: [lockstep.CPU])
    assert lockstep.get_device() == "CPU"


def test_default_logger_severity_applies_to_sessions_left_at_minus_one(capfd):
    # Session creation logs one line at severity info (1), hidden at the default warning (2).
    capfd.readouterr()
    lockstep.InferenceSession(add_model())
    assert "session created" not in capfd.readouterr().err
    try:
        lockstep.set_default_logger_severity(1)
        assert lockstep.SessionOptions().log_severity_level == -1
        lockstep.InferenceSession(add_model())
        assert "[lockstep I] session created on CPUExecutionProvider" in capfd.readouterr().err
        so = lockstep.SessionOptions()
        so.log_severity_level = 3  # an explicit level wins over the default
        lockstep.InferenceSession(add_model(), so)
        assert "session created" not in capfd.readouterr().err
    finally:
        lockstep.set_default_logger_severity(2)
