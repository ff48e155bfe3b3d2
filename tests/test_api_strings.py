"""String tensors: str/bytes/object feeds, string outputs, and the ops that move strings (Constant, Identity,
Reshape, Squeeze/Unsqueeze, Concat, Gather, Equal), checked against onnxruntime. String tensors live on the host: a
CUDA session runs the nodes that read or make them on the CPU and the rest on the GPU, with the CPU's bytes."""

import numpy as np
import onnx
import onnxruntime
import pytest
from onnx import TensorProto, helper, numpy_helper

import lockstep
from bits import same_bits

PROVIDERS = [lockstep.CPU] + ([lockstep.CUDA] if lockstep.CUDA in lockstep.get_available_providers() else [])
HAS_CUDA = lockstep.CUDA in lockstep.get_available_providers()
LEVELS = [lockstep.GraphOptimizationLevel.ORT_DISABLE_ALL, lockstep.GraphOptimizationLevel.ORT_ENABLE_ALL]
F, S, B, I64 = TensorProto.FLOAT, TensorProto.STRING, TensorProto.BOOL, TensorProto.INT64


def make_model(nodes, inputs, outputs, initializers=(), opset=19):
    graph = helper.make_graph(nodes, "strings", inputs, outputs, initializer=list(initializers))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 9
    return model.SerializeToString()


def value(name, elem, shape=None):
    return helper.make_tensor_value_info(name, elem, shape)


def ints(name, values):
    return numpy_helper.from_array(np.array(values, np.int64), name)


def string_ops_model():
    """Every string op of the brief on one path, with a string initializer and string Constants."""
    words = numpy_helper.from_array(np.array(["zero", "one", "", "thr\u00e9e"], dtype=object), "words")
    nodes = [
        helper.make_node("Identity", ["x"], ["i"]),
        helper.make_node("Concat", ["i", "words"], ["c"], axis=0),
        helper.make_node("Gather", ["c", "idx"], ["g"], axis=0),
        helper.make_node("Unsqueeze", ["g", "axes"], ["u"]),
        helper.make_node("Squeeze", ["u", "axes"], ["q"]),
        helper.make_node("Reshape", ["q", "shape"], ["r"]),
        helper.make_node("Constant", [], ["k"], value_strings=["one", "x"]),
        helper.make_node("Constant", [], ["k1"], value_string="one"),
        helper.make_node("Constant", [], ["kt"], value=numpy_helper.from_array(np.array([["a", "b"]], dtype=object))),
        helper.make_node("Equal", ["c", "k1"], ["e"]),
        helper.make_node("Concat", ["kt", "r"], ["kr"], axis=1),
    ]
    return make_model(nodes, [value("x", S, ["N"])],
                      [value("r", S, [1, 4]), value("k", S, [2]), value("e", B, ["M"]), value("c", S, ["M"]),
                       value("kr", S, [1, 6])],
                      [words, ints("idx", [4, 0, 5, 1]), ints("axes", [0]), ints("shape", [1, 4])])


def mixed_model():
    """Float work on the provider around string nodes: ArgMax picks a word, Equal compares it, Cast and Add go on."""
    words = numpy_helper.from_array(np.array(["cat", "dog", "cow"], dtype=object), "words")
    nodes = [
        helper.make_node("Relu", ["x"], ["rx"]),
        helper.make_node("ArgMax", ["rx"], ["am"], axis=1, keepdims=0),
        helper.make_node("Gather", ["words", "am"], ["picked"], axis=0),
        helper.make_node("Equal", ["picked", "want"], ["hit"]),
        helper.make_node("Cast", ["hit"], ["hitf"], to=F),
        helper.make_node("Add", ["hitf", "bias"], ["score"]),
    ]
    bias = numpy_helper.from_array(np.array([0.5, -1.25, 3.0, 0.0], np.float32), "bias")
    return make_model(nodes, [value("x", F, [4, 3]), value("want", S, [1])],
                      [value("picked", S), value("score", F)], [words, bias])


def string_feed():
    return {"x": np.array(["h\u00e9llo", "w"])}


def mixed_feed():
    x = np.array([[1, 5, 2], [9, 0, 1], [0, 0, 4], [-1, -2, -3]], np.float32)
    return {"x": x, "want": np.array(["dog"], dtype=object)}


def assert_same_strings(a, b):
    assert a.dtype == np.object_ and b.dtype == np.object_
    assert a.shape == b.shape and a.tolist() == b.tolist()
    assert all(type(s) is str for s in a.reshape(-1))


def session(model, provider=lockstep.CPU, level=LEVELS[1], **config):
    options = lockstep.SessionOptions()
    options.graph_optimization_level = level
    for key, v in config.items():
        options.add_session_config_entry(key, v)
    return lockstep.InferenceSession(model, options, providers=[provider])


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("level", LEVELS)
def test_string_ops_match_onnxruntime(provider, level):
    model = string_ops_model()
    theirs = onnxruntime.InferenceSession(model, providers=["CPUExecutionProvider"]).run(None, string_feed())
    ours = session(model, provider, level).run(None, string_feed())
    assert [o.dtype for o in ours] == [np.object_, np.object_, np.bool_, np.object_, np.object_]
    for a, b in zip(ours, theirs):
        if a.dtype == np.object_:
            assert_same_strings(a, b)
        else:
            assert same_bits(a, b)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_graph_mixing_strings_and_floats_gives_the_cpu_bytes(provider):
    ours = session(mixed_model(), provider).run(None, mixed_feed())
    cpu = session(mixed_model()).run(None, mixed_feed())
    theirs = onnxruntime.InferenceSession(mixed_model(), providers=["CPUExecutionProvider"]).run(None, mixed_feed())
    assert ours[0].tolist() == cpu[0].tolist() == theirs[0].tolist() == ["dog", "cat", "cow", "cat"]
    assert same_bits(ours[1], cpu[1]) and same_bits(ours[1], theirs[1])


@pytest.mark.skipif(not HAS_CUDA, reason="no GPU on this machine")
def test_a_cuda_session_runs_the_string_nodes_on_the_cpu_and_the_rest_on_the_gpu(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    options = lockstep.SessionOptions()
    options.enable_profiling = True
    s = lockstep.InferenceSession(mixed_model(), options, providers=[lockstep.CUDA])
    s.run(None, mixed_feed())
    placed = {e["op_type"]: e["provider"] for e in s.profile_events() if e["category"] == "Node"}
    assert placed["Gather"] == placed["Equal"] == lockstep.CPU
    assert placed["Relu"] == placed["ArgMax"] == placed["Add"] == lockstep.CUDA
    s.end_profiling()


@pytest.mark.skipif(not HAS_CUDA, reason="no GPU on this machine")
def test_disabled_cpu_fallback_refuses_string_nodes_on_cuda():
    with pytest.raises(lockstep.NotImplemented, match="Gather.*string input 'words'.*CPU fallback is disabled"):
        session(mixed_model(), lockstep.CUDA, **{"session.disable_cpu_ep_fallback": "1"})
    only_constant = make_model([helper.make_node("Constant", [], ["k"], value_string="a", name="k0")], [],
                               [value("k", S)])
    # Unfolded, the Constant node itself would run on the CPU; folded (the default level), no node is left to run.
    with pytest.raises(lockstep.NotImplemented, match="Node 'k0' \\(Constant\\).*making a string tensor"):
        session(only_constant, lockstep.CUDA, LEVELS[0], **{"session.disable_cpu_ep_fallback": "1"})
    folded = session(only_constant, lockstep.CUDA, LEVELS[1], **{"session.disable_cpu_ep_fallback": "1"})
    assert folded.run(None, {})[0].tolist() == "a"


def identity_session():
    return session(make_model([helper.make_node("Identity", ["x"], ["y"])], [value("x", S, ["N"])],
                              [value("y", S, ["N"])]))


@pytest.mark.parametrize("feed", [
    np.array(["a", "b\u00e9"]), np.array(["a", "b\u00e9"], dtype=object), ["a", "b\u00e9"],
    np.array([1, 2.5], dtype=object), np.array([], dtype=object), np.array([["a"], ["b"]], dtype=object)[:, 0],
])
def test_string_feeds_convert_as_onnxruntime_converts_them(feed):
    theirs = onnxruntime.InferenceSession(identity_session()._model_bytes).run(None, {"x": feed})[0]
    assert_same_strings(identity_session().run(None, {"x": feed})[0], theirs)


def test_bytes_feeds_keep_their_bytes_and_embedded_nuls_are_kept():
    s = identity_session()
    assert s.run(None, {"x": np.array([b"ab", b"c"])})[0].tolist() == ["ab", "c"]
    assert s.run(None, {"x": np.array([b"ab", "c"], dtype=object)})[0].tolist() == ["ab", "c"]
    # onnxruntime cuts a numpy str element at its first NUL; lockstep keeps the whole string.
    assert s.run(None, {"x": np.array(["a\x00b"])})[0].tolist() == ["a\x00b"]
    assert s.get_inputs()[0].type == "tensor(string)" and s.get_outputs()[0].type == "tensor(string)"


def test_string_and_numeric_feeds_in_the_wrong_input_name_the_input():
    with pytest.raises(lockstep.InvalidArgument, match="input 'x'.*Actual: \\(tensor\\(float\\)\\) , expected: "
                                                       "\\(tensor\\(string\\)\\)"):
        identity_session().run(None, {"x": np.array([1.0], np.float32)})
    floats = session(make_model([helper.make_node("Identity", ["x"], ["y"])], [value("x", F, ["N"])],
                                [value("y", F, ["N"])]))
    with pytest.raises(lockstep.InvalidArgument, match="input 'x'.*Actual: \\(tensor\\(string\\)\\)"):
        floats.run(None, {"x": np.array(["a"])})


def test_bytes_that_are_not_utf8_are_a_clear_error_on_output():
    with pytest.raises(lockstep.Fail, match="string element 1 is not valid UTF-8"):
        identity_session().run(None, {"x": np.array([b"ok", b"\xff\xfe"], dtype=object)})


def test_string_ops_lockstep_does_not_have_are_clear_errors():
    pad = make_model([helper.make_node("Pad", ["x", "pads"], ["y"], name="pad0")], [value("x", S, [2])],
                     [value("y", S)], [ints("pads", [1, 1])])
    with pytest.raises(lockstep.NotImplemented, match="Node 'pad0' \\(Pad\\): type string is not supported"):
        session(pad).run(None, {"x": np.array(["a", "b"])})
    old_equal = make_model([helper.make_node("Equal", ["x", "x"], ["y"], name="eq")], [value("x", S, [2])],
                           [value("y", B)], opset=17)
    with pytest.raises(lockstep.NotImplemented, match="Node 'eq' \\(Equal\\).*string"):
        session(old_equal).run(None, {"x": np.array(["a", "b"])})
    with pytest.raises(lockstep.NotImplemented, match="string or object"):
        lockstep.OrtValue.ortvalue_from_numpy(np.array(["a"]))  # onnxruntime refuses these too


def test_string_initializers_survive_the_optimized_model(tmp_path):
    path = tmp_path / "strings.onnx"
    options = lockstep.SessionOptions()
    options.optimized_model_filepath = str(path)
    original = lockstep.InferenceSession(string_ops_model(), options)
    onnx.checker.check_model(onnx.load(str(path)))
    reloaded = lockstep.InferenceSession(str(path))
    for a, b in zip(original.run(None, string_feed()), reloaded.run(None, string_feed())):
        assert a.tolist() == b.tolist() and a.dtype == b.dtype
