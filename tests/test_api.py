"""The onnxruntime-compatible Python API: metadata, providers, errors on bad models and bad feeds."""

import json
import os
import re
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


class NotAnArray:
    """An object numpy can only wrap, not convert."""


def string_identity_model():
    graph = helper.make_graph([helper.make_node("Identity", ["s"], ["t"])], "g",
                              [helper.make_tensor_value_info("s", TensorProto.STRING, [None])],
                              [helper.make_tensor_value_info("t", TensorProto.STRING, [None])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


BAD_FEEDS = [
    ([[1, 2, 3], [4, 5]], "list \\[\\[1, 2, 3\\], \\[4, 5\\]\\]: its rows differ in length"),
    ([[[1, 2, 3]], [[4, 5, 6], [7, 8, 9]]], "list .*: its rows differ in length"),
    ({"x": [1, 2, 3]}, "a dict"),
    (None, "None"),
    (NotAnArray(), "NotAnArray <.*>"),
    (np.array([[1, 2], [3]], dtype=object), "an object array of sequences"),
]


@pytest.mark.parametrize("value, pattern", BAD_FEEDS)
def test_a_feed_that_is_no_tensor_is_a_clear_error_naming_the_input(value, pattern):
    s = session_of(add_model())
    declared = "input 'x' \\(declared tensor\\(float\\)\\) cannot be fed "
    with pytest.raises(lockstep.InvalidArgument, match=declared + pattern):
        s.run(None, {"x": value})
    # Beside an OrtValue, the feed takes the OrtValue path (_values._feed_tensors), with the same error.
    graph = helper.make_graph([helper.make_node("Add", ["x", "b"], ["y"])], "g",
                              [helper.make_tensor_value_info(n, TensorProto.FLOAT, [3]) for n in ("x", "b")],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3])])
    two = session_of(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]))
    with pytest.raises(lockstep.InvalidArgument, match=declared + pattern):
        two.run(None, {"b": lockstep.OrtValue.ortvalue_from_numpy(np.zeros(3, np.float32)), "x": value})


@pytest.mark.parametrize("value, pattern", BAD_FEEDS[:5])
def test_binding_a_feed_that_is_no_tensor_is_the_same_clear_error(value, pattern):
    s = session_of(add_model())
    binding = s.io_binding()
    declared = "input 'x' \\(declared tensor\\(float\\)\\) cannot be fed "
    with pytest.raises(lockstep.InvalidArgument, match=declared + pattern):
        binding.bind_cpu_input("x", value)
    with pytest.raises(lockstep.NotImplemented, match="bind_cpu_input\\('x'\\): .*no string or object tensors"):
        binding.bind_cpu_input("x", np.array([[1, 2], [3]], dtype=object))
    binding.bind_cpu_input("x", [[1, 2, 3]])  # a list takes the declared type, as in run()
    binding.bind_output("y")
    s.run_with_iobinding(binding)
    assert binding.copy_outputs_to_cpu()[0].tobytes() == s.run(None, {"x": [[1, 2, 3]]})[0].tobytes()


@pytest.mark.parametrize("value, pattern", BAD_FEEDS[:4] + [(NotAnArray(), "NotAnArray <.*>, which is not array-like")])
def test_a_string_input_refuses_the_same_feeds(value, pattern):
    s = session_of(string_identity_model())
    declared = "input 's' \\(declared tensor\\(string\\)\\) cannot be fed "
    with pytest.raises(lockstep.InvalidArgument, match=declared + pattern):
        s.run(None, {"s": value})
    assert s.run(None, {"s": ["a", "b"]})[0].tolist() == ["a", "b"]


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


def profiled_model():
    """Add (named), Reshape to a flat vector, Relu (unnamed: onnxruntime calls it Relu_2)."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [None])
    bias = numpy_helper.from_array(np.arange(3, dtype=np.float32), "bias")
    flat = numpy_helper.from_array(np.array([-1], np.int64), "flat")
    nodes = [helper.make_node("Add", ["x", "bias"], ["t"], name="add0"),
             helper.make_node("Reshape", ["t", "flat"], ["r"], name="flatten"),
             helper.make_node("Relu", ["r"], ["y"])]
    graph = helper.make_graph(nodes, "g", [x], [y], initializer=[bias, flat])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 9
    return model


def profiled_session(**option_values):
    options = lockstep.SessionOptions()
    options.enable_profiling = True
    for name, value in option_values.items():
        setattr(options, name, value)
    return lockstep.InferenceSession(profiled_model().SerializeToString(), options)


def node_events(trace):
    return [e for e in trace if e["cat"] == "Node"]


def test_profile_has_one_event_per_executed_node(tmp_path):
    s = profiled_session(profile_file_prefix=str(tmp_path / "prof"))
    for _ in range(2):
        s.run(None, {"x": np.ones((2, 3), np.float32)})
    path = s.end_profiling()
    assert re.fullmatch(re.escape(str(tmp_path / "prof")) + r"_\d{4}-\d\d-\d\d_\d\d-\d\d-\d\d_\d{3}\.json", path)
    with open(path) as f:
        trace = json.load(f)
    assert all(e["ph"] == "X" and e["dur"] >= 0 and e["ts"] >= 0 for e in trace)
    nodes = node_events(trace)
    assert [e["name"] for e in nodes] == ["add0_kernel_time", "flatten_kernel_time", "Relu_2_kernel_time"] * 2
    assert [e["args"]["op_name"] for e in nodes[:3]] == ["Add", "Reshape", "Relu"]
    assert {e["args"]["provider"] for e in nodes} == {"CPUExecutionProvider"}
    add, reshape, relu = nodes[:3]
    assert add["args"]["input_type_shape"] == [{"float": [2, 3]}, {"float": [3]}]
    assert add["args"]["output_type_shape"] == [{"float": [2, 3]}]
    assert reshape["args"]["input_type_shape"] == [{"float": [2, 3]}, {"int64": [1]}]
    assert relu["args"]["output_type_shape"] == [{"float": [6]}]
    sessions = [e["name"] for e in trace if e["cat"] == "Session"]
    assert sessions == ["session_initialization", "model_run", "model_run"]
    runs = [e for e in trace if e["name"] == "model_run"]
    assert all(run["ts"] <= n["ts"] and n["ts"] + n["dur"] <= run["ts"] + run["dur"] + 1
               for run, three in zip(runs, (nodes[:3], nodes[3:])) for n in three)


def test_profile_node_names_match_onnxruntime(tmp_path, monkeypatch):
    onnxruntime = pytest.importorskip("onnxruntime")
    monkeypatch.chdir(tmp_path)
    feed = {"x": np.ones((4, 3), np.float32)}
    ours = profiled_session()
    ours.run(None, feed)
    theirs_options = onnxruntime.SessionOptions()
    theirs_options.enable_profiling = True
    theirs_options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_DISABLE_ALL
    theirs = onnxruntime.InferenceSession(profiled_model().SerializeToString(), theirs_options,
                                          providers=["CPUExecutionProvider"])
    theirs.run(None, feed)
    traces = []
    for path in (ours.end_profiling(), theirs.end_profiling()):
        assert os.path.dirname(os.path.abspath(path)) == str(tmp_path)
        assert os.path.basename(path).startswith("onnxruntime_profile__")
        with open(path) as f:
            traces.append([(e["name"], e["args"]["op_name"], e["args"]["output_type_shape"]) for e in node_events(json.load(f))])
    assert traces[0] == traces[1]


def test_profile_records_the_if_branch_that_ran(tmp_path):
    cond = helper.make_tensor_value_info("cond", TensorProto.BOOL, [])
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])
    then_out = helper.make_tensor_value_info("then_y", TensorProto.FLOAT, [2])
    else_out = helper.make_tensor_value_info("else_y", TensorProto.FLOAT, [2])
    then_branch = helper.make_graph([helper.make_node("Neg", ["x"], ["then_y"], name="negate")], "then", [], [then_out])
    else_branch = helper.make_graph([helper.make_node("Abs", ["x"], ["else_y"], name="absolute")], "else", [], [else_out])
    node = helper.make_node("If", ["cond"], ["y"], name="choose", then_branch=then_branch, else_branch=else_branch)
    model = helper.make_model(helper.make_graph([node], "g", [cond, x], [y]), opset_imports=[helper.make_opsetid("", 17)])
    options = lockstep.SessionOptions()
    options.enable_profiling = True
    options.profile_file_prefix = str(tmp_path / "if")
    s = lockstep.InferenceSession(model.SerializeToString(), options)
    s.run(None, {"cond": np.array(True), "x": np.ones(2, np.float32)})
    s.run(None, {"cond": np.array(False), "x": np.ones(2, np.float32)})
    with open(s.end_profiling()) as f:
        assert [e["name"] for e in node_events(json.load(f))] == ["negate_kernel_time", "absolute_kernel_time"]


def test_end_profiling_without_profiling_returns_empty_and_profiling_stops(tmp_path):
    s = session_of(add_model())
    s.run(None, {"x": np.ones((1, 3), np.float32)})
    assert s.end_profiling() == ""
    assert s.get_profiling_start_time_ns() == 0
    profiled = profiled_session(profile_file_prefix=str(tmp_path / "p"))
    assert profiled.get_profiling_start_time_ns() > 0
    assert profiled.end_profiling() != ""
    profiled.run(None, {"x": np.ones((1, 3), np.float32)})
    assert profiled.end_profiling() == ""
    assert profiled.profile_events() == []
    assert len(os.listdir(tmp_path)) == 1


@pytest.mark.skipif(lockstep.CUDA not in lockstep.get_available_providers(), reason="no GPU on this machine")
def test_profile_on_cuda_names_the_provider_of_each_node(tmp_path):
    s = profiled_session(profile_file_prefix=str(tmp_path / "cuda"))
    s.set_providers([lockstep.CUDA])
    s.run(None, {"x": np.ones((2, 3), np.float32)})
    nodes = [e for e in s.profile_events() if e["category"] == "Node"]
    assert [(e["name"], e["provider"]) for e in nodes] == [(n, lockstep.CUDA) for n in ("add0", "flatten", "Relu_2")]
    assert nodes[2]["outputs"] == [("float", [6])]


def test_numpy_feeds_are_read_in_place_and_never_written_or_returned():
    """run() reads a C-contiguous numpy feed in place (no copy), as onnxruntime does; a feed is never written, not even
    by an op that may reuse its input's buffer (Relu), and no output shares a feed's memory (Identity)."""
    f = TensorProto.FLOAT
    nodes = [helper.make_node("Identity", ["x"], ["same"]), helper.make_node("Relu", ["x"], ["r"]),
             helper.make_node("Neg", ["r"], ["n"])]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", f, [4, 300])],
                              [helper.make_tensor_value_info(n, f, [4, 300]) for n in ("same", "n")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    session = lockstep.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    x = np.random.default_rng(0).standard_normal((4, 300)).astype(np.float32)
    before = x.copy()
    read_only = x.copy()
    read_only.setflags(write=False)
    for feed in (x, read_only):
        same, n = session.run(None, {"x": feed})
        assert same.tobytes() == before.tobytes() and n.tobytes() == (-np.maximum(before, 0)).tobytes()
        assert not np.shares_memory(same, feed) and not np.shares_memory(n, feed)
        assert feed.tobytes() == before.tobytes()
