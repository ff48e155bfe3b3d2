"""Map values and the two ai.onnx.ml ops that make and read them, against onnxruntime 1.30: ZipMap (the end of
skl2onnx's default classifiers: a sequence of maps, returned as a list of dicts in ascending key order, as
onnxruntime's maps are) and DictVectorizer (a dict feed as a map input). Labels exact, dict keys exact and in the
same order, ZipMap's values the bytes of the scores it reads."""

import os

import numpy as np
import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper as h

import lockstep

ort = pytest.importorskip("onnxruntime")

HAS_CUDA = lockstep.CUDA in lockstep.get_available_providers()
ML = "ai.onnx.ml"
FEATURES = 4
FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures", "ml")


def model_bytes(nodes, inputs, outputs, default_opset=None):
    imports = [h.make_opsetid(ML, 1)] + ([h.make_opsetid("", default_opset)] if default_opset else [])
    model = h.make_model(h.make_graph(nodes, "maps", inputs, outputs), opset_imports=imports)
    model.ir_version = 9  # what onnxruntime 1.30 reads
    return model.SerializeToString()


def map_type(key, value=T.FLOAT):
    return h.make_map_type_proto(key, h.make_tensor_type_proto(value, None))


def seq_of_maps(name, key):
    return h.make_value_info(name, h.make_sequence_type_proto(map_type(key)))


def both(data, feeds, output_names=None):
    ours = lockstep.InferenceSession(data, providers=[lockstep.CPU]).run(output_names, feeds)
    theirs = ort.InferenceSession(data, providers=["CPUExecutionProvider"]).run(output_names, feeds)
    return ours, theirs


def f32_bits(values):
    return np.asarray(values, dtype=np.float32).view(np.uint32).tolist()


def assert_same_dicts(ours, theirs, exact=True):
    """Lists of dicts: same keys in the same order; values the same float32 bytes, or where onnxruntime computes the
    scores another way (its MLAS exp and logistic) within the float32 rounding tests/test_ml_ops.py allows them."""
    assert isinstance(ours, list) and len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        assert type(a) is dict
        assert list(a) == list(b)
        assert [type(k) for k in a] == [type(k) for k in b]
        if exact:
            assert f32_bits(list(a.values())) == f32_bits(list(b.values()))
        else:
            np.testing.assert_allclose(list(a.values()), list(b.values()), rtol=1e-5, atol=1e-6)


# ---- a skl2onnx-shaped classifier: LinearClassifier -> Normalizer -> ZipMap ----

def linear_classifier(labels, rng):
    """What skl2onnx writes for a LogisticRegression: scores normalized to probabilities, the label cast to its output
    type, and ZipMap of the probabilities as output_probability. The probabilities are an output too, so that the
    dicts can be checked against the very bytes ZipMap read."""
    strings = isinstance(labels[0], str)
    classes = len(labels)
    rows = 1 if classes == 2 else classes
    attrs = {"coefficients": rng.normal(size=rows * FEATURES).astype(np.float32).tolist(),
             "intercepts": rng.normal(size=rows).astype(np.float32).tolist(), "post_transform": "LOGISTIC",
             ("classlabels_strings" if strings else "classlabels_ints"): labels}
    label_type = T.STRING if strings else T.INT64
    nodes = [h.make_node("LinearClassifier", ["X"], ["label", "scores"], domain=ML, name="linear", **attrs),
             h.make_node("Normalizer", ["scores"], ["probabilities"], domain=ML, norm="L1", name="normalizer"),
             h.make_node("Identity" if strings else "Cast", ["label"], ["output_label"],
                         **({} if strings else {"to": T.INT64})),
             h.make_node("ZipMap", ["probabilities"], ["output_probability"], domain=ML, name="zipmap",
                         **{("classlabels_strings" if strings else "classlabels_int64s"): labels})]
    return model_bytes(nodes, [h.make_tensor_value_info("X", T.FLOAT, [None, FEATURES])],
                       [h.make_tensor_value_info("output_label", label_type, [None]),
                        seq_of_maps("output_probability", label_type),
                        h.make_tensor_value_info("probabilities", T.FLOAT, [None, classes])], default_opset=9)


@pytest.mark.parametrize("labels", [[0, 1, 2], [7, -3, 2, 0], [5, 1], ["setosa", "versicolor", "virginica"],
                                    ["b", "a", "c", "é", "Z"], ["yes", "no"]], ids=str)
def test_linear_classifier_with_zipmap_matches_onnxruntime(labels):
    rng = np.random.default_rng(len(labels))
    data = linear_classifier(labels, rng)
    x = rng.normal(size=(16, FEATURES)).astype(np.float32)
    (label, probs, dense), (their_label, their_probs, their_dense) = both(data, {"X": x})
    assert label.tolist() == their_label.tolist()
    assert list(probs[0]) == sorted(labels, key=lambda k: k.encode() if isinstance(k, str) else k)
    assert_same_dicts(probs, their_probs, exact=False)
    # ZipMap moves values: in either runtime each dict holds the bytes of its row of the probabilities, by label.
    for rows, dicts in ((dense, probs), (their_dense, their_probs)):
        for row, d in zip(rows, dicts):
            assert f32_bits([d[k] for k in labels]) == f32_bits(row)


def test_zipmap_node_arg_types_are_onnxruntime_spelling():
    data = linear_classifier([0, 1, 2], np.random.default_rng(0))
    ours = lockstep.InferenceSession(data, providers=[lockstep.CPU]).get_outputs()
    theirs = ort.InferenceSession(data, providers=["CPUExecutionProvider"]).get_outputs()
    assert [(o.name, o.type, o.shape) for o in ours] == [(o.name, o.type, o.shape) for o in theirs]
    assert ours[1].type == "seq(map(int64,tensor(float)))"


# ---- ZipMap alone ----

def zipmap(labels, x_shape=None, name="zm"):
    strings = isinstance(labels[0], str)
    node = h.make_node("ZipMap", ["X"], ["Z"], domain=ML, name=name,
                       **{("classlabels_strings" if strings else "classlabels_int64s"): labels})
    return model_bytes([node], [h.make_tensor_value_info("X", T.FLOAT, x_shape)],
                       [seq_of_maps("Z", T.STRING if strings else T.INT64)])


@pytest.mark.parametrize("labels, x", [
    ([5, 1, 3], np.array([[0.1, 0.2, 0.7], [1, 2, 3]], np.float32)),
    ([5, 1, 3], np.array([0.1, 0.2, 0.7], np.float32)),            # 1-D: one row, one dict
    (["b", "a", "c"], np.zeros((0, 3), np.float32)),               # no rows: an empty list
    (["b", "a", "c"], np.array([[np.nan, -0.0, np.inf]], np.float32)),
    (["b", "a", "b"], np.array([[1, 2, 3]], np.float32)),          # a repeated label keeps its last column
    ([1, 1], np.array([[1, 2], [3, 4]], np.float32)),
    ([-5, 10, -1, 0], np.arange(8, dtype=np.float32).reshape(2, 4)),
    (["é", "z", "Z", "", "ab", "a"], np.arange(6, dtype=np.float32)),
], ids=str)
def test_zipmap_matches_onnxruntime_bytes(labels, x):
    (ours,), (theirs,) = both(zipmap(labels), {"X": x})
    assert_same_dicts(ours, theirs)


@pytest.mark.parametrize("x, message", [
    (np.zeros((2, 2, 3), np.float32), r"X \[2,2,3\] must be \[N, C\] or \[C\]"),
    (np.zeros((), np.float32), r"X \[\] must be \[N, C\] or \[C\]"),
    (np.zeros((2, 4), np.float32), "X has 4 columns, but there are 3 class labels"),
    (np.zeros((0,), np.float32), "X has 0 columns, but there are 3 class labels"),
])
def test_zipmap_shape_errors_name_the_node(x, message):
    session = lockstep.InferenceSession(zipmap([1, 2, 3]), providers=[lockstep.CPU])
    with pytest.raises(lockstep.InvalidArgument, match=r"Node 'zm' \(ZipMap\).*" + message):
        session.run(None, {"X": x})
    with pytest.raises(ort.capi.onnxruntime_pybind11_state.InvalidArgument):
        ort.InferenceSession(zipmap([1, 2, 3]), providers=["CPUExecutionProvider"]).run(None, {"X": x})


def test_zipmap_needs_one_kind_of_labels():
    for attrs in ({}, {"classlabels_int64s": [1], "classlabels_strings": ["a"]}):
        node = h.make_node("ZipMap", ["X"], ["Z"], domain=ML, name="zm", **attrs)
        data = model_bytes([node], [h.make_tensor_value_info("X", T.FLOAT, None)], [seq_of_maps("Z", T.INT64)])
        with pytest.raises(lockstep.InvalidGraph, match=r"Node 'zm' \(ZipMap\).*classlabels_int64s or classlabels"):
            lockstep.InferenceSession(data, providers=[lockstep.CPU]).run(None, {"X": np.zeros((1, 1), np.float32)})


def test_zipmap_reads_float_only():
    data = zipmap([1, 2], x_shape=None)
    with pytest.raises(lockstep.InvalidArgument, match="Unexpected input data type for input 'X'"):
        lockstep.InferenceSession(data, providers=[lockstep.CPU]).run(None, {"X": np.zeros((1, 2))})


def test_zipmap_thread_count_invariance():
    x = np.random.default_rng(1).normal(size=(50, 3)).astype(np.float32)
    runs = []
    for threads in (1, 2):
        options = lockstep.SessionOptions()
        options.intra_op_num_threads = threads
        runs.append(lockstep.InferenceSession(zipmap(["x", "y", "z"]), options).run(None, {"X": x})[0])
    assert runs[0] == runs[1]


def test_sequence_of_maps_is_refused_in_ortvalue_runs():
    session = lockstep.InferenceSession(zipmap([1, 2]), providers=[lockstep.CPU])
    x = lockstep.OrtValue.ortvalue_from_numpy(np.zeros((1, 2), np.float32))
    with pytest.raises(lockstep.NotImplemented, match="use run"):
        session.run_with_ort_values(None, {"X": x})


@pytest.mark.skipif(not HAS_CUDA, reason="no GPU on this machine")
def test_zipmap_in_a_cuda_session_gives_the_cpus_dicts():
    x = np.random.default_rng(8).standard_normal((5, 2)).astype(np.float32)
    x[0, 1] = np.nan
    cpu, cuda = (lockstep.InferenceSession(zipmap([1, 2]), providers=[p]).run(None, {"X": x})[0]
                 for p in (lockstep.CPU, lockstep.CUDA))
    assert [list(d) for d in cuda] == [list(d) for d in cpu] == [[1, 2]] * 5
    as_bytes = lambda dicts: np.array([list(d.values()) for d in dicts], np.float32).tobytes()  # noqa: E731
    assert as_bytes(cuda) == as_bytes(cpu)


# ---- DictVectorizer ----

def dict_vectorizer(key, value, name="dv", **vocabulary):
    node = h.make_node("DictVectorizer", ["M"], ["Y"], domain=ML, name=name, **vocabulary)
    return model_bytes([node], [h.make_value_info("M", map_type(key, value))],
                       [h.make_tensor_value_info("Y", value, None)])


@pytest.mark.parametrize("key, vocabulary, feed", [
    (T.STRING, {"string_vocabulary": ["a", "b", "c"]}, {"c": 3.5, "a": 1.25}),
    (T.STRING, {"string_vocabulary": ["a", "b", "c"]}, {"c": 3.5, "zz": 9.0, "b": np.float32(-0.0)}),
    (T.STRING, {"string_vocabulary": ["a", "b", "a"]}, {"a": 1.0, "b": 2.0}),   # a repeated entry repeats the value
    (T.STRING, {"string_vocabulary": ["a", "b"], "int64_vocabulary": [1]}, {"b": 1e40}),  # to float32: inf
    (T.INT64, {"int64_vocabulary": [3, 1, 2]}, {1: 1.5, 2: 2.5, 7: 1.0}),
    (T.INT64, {"int64_vocabulary": [-1, 10**12]}, {10**12: float("nan"), np.int64(-1): 2}),
], ids=str)
def test_dict_vectorizer_matches_onnxruntime(key, vocabulary, feed):
    data = dict_vectorizer(key, T.FLOAT, **vocabulary)
    (ours,), (theirs,) = both(data, {"M": feed})
    assert ours.dtype == theirs.dtype and ours.shape == theirs.shape
    assert f32_bits(ours) == f32_bits(theirs)


@pytest.mark.parametrize("key, value, vocabulary, feed, expected", [
    (T.STRING, T.INT64, {"string_vocabulary": ["a", "b", "c"]}, {"c": 3, "a": -1}, [[-1, 0, 3]]),
    (T.STRING, T.DOUBLE, {"string_vocabulary": ["a", "b"]}, {"b": 0.1}, [[0.0, 0.1]]),
    (T.INT64, T.DOUBLE, {"int64_vocabulary": [2, 1]}, {1: 1e300}, [[0.0, 1e300]]),
    (T.INT64, T.STRING, {"int64_vocabulary": [3, 1, 2]}, {1: "x", 2: "y"}, [["", "x", "y"]]),
    (T.STRING, T.FLOAT, {"string_vocabulary": ["a", "b"]}, {}, [[0.0, 0.0]]),
], ids=str)
def test_dict_vectorizer_other_value_types(key, value, vocabulary, feed, expected):
    """onnxruntime has kernels for these too, but its Python API feeds float-valued dicts only (and refuses an empty
    dict, whose types it cannot tell); lockstep converts a dict to the declared map type."""
    (y,) = lockstep.InferenceSession(dict_vectorizer(key, value, **vocabulary)).run(None, {"M": feed})
    assert y.tolist() == expected


def test_map_node_arg_type_is_onnxruntime_spelling():
    data = dict_vectorizer(T.STRING, T.FLOAT, string_vocabulary=["a"])
    ours = lockstep.InferenceSession(data).get_inputs()[0]
    theirs = ort.InferenceSession(data, providers=["CPUExecutionProvider"]).get_inputs()[0]
    assert (ours.name, ours.type, ours.shape) == (theirs.name, theirs.type, theirs.shape)
    assert ours.type == "map(string,tensor(float))"


@pytest.mark.parametrize("feed, message", [
    (np.zeros(3, np.float32), r"input 'M' \(declared map\(string,tensor\(float\)\)\) cannot be fed ndarray"),
    ([{"a": 1.0}], r"input 'M' \(declared map\(string,tensor\(float\)\)\) cannot be fed list"),
    ({1: 2.0}, r"input 'M' \(declared map\(string,tensor\(float\)\)\) cannot be fed a dict with key 1 \(int\)"),
    ({"a": "x"}, r"input 'M' \(declared map\(string,tensor\(float\)\)\) cannot be fed dict"),
])
def test_wrong_map_feeds_name_the_input(feed, message):
    session = lockstep.InferenceSession(dict_vectorizer(T.STRING, T.FLOAT, string_vocabulary=["a"]))
    with pytest.raises(lockstep.InvalidArgument, match=message):
        session.run(None, {"M": feed})


def test_map_of_other_key_type_is_refused_by_name():
    data = model_bytes([], [h.make_value_info("M", map_type(T.INT32))], [h.make_value_info("M", map_type(T.INT32))])
    with pytest.raises(lockstep.NotImplemented, match=r"input 'M' \(declared map\(int32,tensor\(float\)\)\): maps wi"):
        lockstep.InferenceSession(data).run(None, {"M": {1: 1.0}})


def test_dict_fed_to_a_tensor_input_names_the_input():
    data = zipmap([1, 2])
    with pytest.raises(lockstep.InvalidArgument, match=r"input 'X' \(declared tensor\(float\)\) cannot be fed a dict"):
        lockstep.InferenceSession(data).run(None, {"X": {1: 2.0}})


def test_dict_vectorizer_errors_name_the_node():
    wrong_vocabulary = dict_vectorizer(T.STRING, T.FLOAT, int64_vocabulary=[1])
    with pytest.raises(lockstep.InvalidGraph, match=r"Node 'dv' \(DictVectorizer\).*needs the attribute string_voc"):
        lockstep.InferenceSession(wrong_vocabulary).run(None, {"M": {"a": 1.0}})
    wrong_types = dict_vectorizer(T.INT64, T.INT64, int64_vocabulary=[1])
    with pytest.raises(lockstep.InvalidGraph, match=r"Node 'dv' \(DictVectorizer\).*map\(int64,int64\) is not one"):
        lockstep.InferenceSession(wrong_types).run(None, {"M": {1: 1}})
    tensor_in = model_bytes([h.make_node("DictVectorizer", ["X"], ["Y"], domain=ML, name="dv",
                                         string_vocabulary=["a"])],
                            [h.make_tensor_value_info("X", T.FLOAT, None)], [h.make_tensor_value_info("Y", T.FLOAT, None)])
    with pytest.raises(lockstep.InvalidArgument, match=r"Node 'dv' \(DictVectorizer\).*input 'X' must be a map"):
        lockstep.InferenceSession(tensor_in).run(None, {"X": np.zeros(1, np.float32)})


def test_maps_reach_only_dict_vectorizer():
    """As onnxruntime's type check: a map given to another op is an invalid graph (naming the node)."""
    data = model_bytes([h.make_node("Relu", ["M"], ["Y"], name="relu")], [h.make_value_info("M", map_type(T.INT64))],
                       [h.make_tensor_value_info("Y", T.FLOAT, None)], default_opset=17)
    with pytest.raises(lockstep.InvalidGraph, match=r"Node 'relu' \(Relu\).*input 'M' holds maps"):
        lockstep.InferenceSession(data)
    with pytest.raises(ort.capi.onnxruntime_pybind11_state.InvalidGraph):
        ort.InferenceSession(data, providers=["CPUExecutionProvider"])


def test_map_input_returned_as_output_is_a_sorted_dict():
    data = model_bytes([h.make_node("DictVectorizer", ["M"], ["Y"], domain=ML, int64_vocabulary=[1])],
                       [h.make_value_info("M", map_type(T.INT64))],
                       [h.make_tensor_value_info("Y", T.FLOAT, None), h.make_value_info("M", map_type(T.INT64))])
    y, m = lockstep.InferenceSession(data).run(None, {"M": {3: 1.0, 1: 2.0, -4: 0.5}})
    assert y.tolist() == [[2.0]]
    assert list(m.items()) == [(-4, 0.5), (1, 2.0), (3, 1.0)]


@pytest.mark.skipif(not HAS_CUDA, reason="no GPU on this machine")
def test_dict_vectorizer_in_a_cuda_session_matches_the_cpu():
    data = dict_vectorizer(T.STRING, T.FLOAT, string_vocabulary=["a", "b", "c"])
    feed = {"M": {"c": 3.5, "a": 1.25}}
    cpu = lockstep.InferenceSession(data, providers=[lockstep.CPU]).run(None, feed)[0]
    cuda = lockstep.InferenceSession(data, providers=[lockstep.CUDA]).run(None, feed)[0]
    assert f32_bits(cpu) == f32_bits(cuda)


# ---- the optimized model keeps the map types ----

def test_optimized_model_keeps_map_types(tmp_path):
    data = model_bytes([h.make_node("DictVectorizer", ["M"], ["V"], domain=ML, string_vocabulary=["a", "b", "c"]),
                        h.make_node("ZipMap", ["V"], ["Z"], domain=ML, classlabels_strings=["a", "b", "c"])],
                       [h.make_value_info("M", map_type(T.STRING))], [seq_of_maps("Z", T.STRING)])
    path = str(tmp_path / "optimized.onnx")
    options = lockstep.SessionOptions()
    options.optimized_model_filepath = path
    feed = {"M": {"c": 3.0, "a": 1.0}}
    first = lockstep.InferenceSession(data, options).run(None, feed)
    written = onnx.load(path)
    onnx.checker.check_model(written)
    map_in = written.graph.input[0].type.map_type
    assert (map_in.key_type, map_in.value_type.tensor_type.elem_type) == (T.STRING, T.FLOAT)
    map_out = written.graph.output[0].type.sequence_type.elem_type.map_type
    assert (map_out.key_type, map_out.value_type.tensor_type.elem_type) == (T.STRING, T.FLOAT)
    again = lockstep.InferenceSession(path)
    assert [(i.type, o.type) for i, o in zip(again.get_inputs(), again.get_outputs())] == \
        [("map(string,tensor(float))", "seq(map(string,tensor(float)))")]
    assert again.run(None, feed) == first == [[{"a": 1.0, "b": 0.0, "c": 3.0}]]
    assert ort.InferenceSession(path, providers=["CPUExecutionProvider"]).run(None, feed) == first


# ---- skl2onnx's own conversions (tests/fixtures/ml: LogisticRegression and a 3-tree RandomForestClassifier on
# iris, default options, made by scikit-learn 1.9.1 and skl2onnx 1.20.0 with onnx 1.23.1) ----

@pytest.mark.parametrize("fixture", ["logistic_regression.onnx", "random_forest.onnx"])
def test_skl2onnx_classifiers_match_onnxruntime(fixture):
    path = os.path.join(FIXTURES, fixture)
    rng = np.random.default_rng(7)
    # Around iris' ranges: sepal length/width, petal length/width (cm).
    x = (rng.normal(size=(40, FEATURES)) * [0.8, 0.4, 1.8, 0.8] + [5.8, 3.0, 3.8, 1.2]).astype(np.float32)
    ours = lockstep.InferenceSession(path).run(None, {"X": x})
    theirs = ort.InferenceSession(path, providers=["CPUExecutionProvider"]).run(None, {"X": x})
    assert ours[0].tolist() == theirs[0].tolist()
    assert_same_dicts(ours[1], theirs[1], exact="forest" in fixture)
    names = [(o.name, o.type) for o in lockstep.InferenceSession(path).get_outputs()]
    assert names == [("output_label", "tensor(int64)"), ("output_probability", "seq(map(int64,tensor(float)))")]
