"""The ai.onnx.ml ops (what scikit-learn, LightGBM and XGBoost converters write) against onnxruntime on seeded random
models: labels and integer outputs exact, scores within float32 rounding of a different summation order; 1 and 2
threads byte for byte; a CUDA session (CUDA kernels, string and map ops on the CPU) byte for byte with the CPU when a
GPU is present."""

import itertools

import numpy as np
import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper

import lockstep
from bits import same_bits

HAS_CUDA = lockstep.CUDA in lockstep.get_available_providers()
ML = "ai.onnx.ml"
FEATURES = 5


def ml_model(node, inputs, outputs, ml_opset=3, default_opset=None):
    imports = [h.make_opsetid(ML, ml_opset)] + ([h.make_opsetid("", default_opset)] if default_opset else [])
    model = h.make_model(h.make_graph([node], "ml", inputs, outputs), opset_imports=imports)
    model.ir_version = 9  # what onnxruntime 1.30 reads
    return model.SerializeToString()


def random_trees(rng, trees=4, depth=3, targets=2):
    """Complete binary trees over FEATURES features, in the ml 1-4 attribute form; every leaf names 1-2 targets."""
    nodes = {k: [] for k in ("treeids", "nodeids", "featureids", "values", "modes", "truenodeids", "falsenodeids",
                             "missing_value_tracks_true")}
    leaves = {k: [] for k in ("treeids", "nodeids", "ids", "weights")}
    modes = ["BRANCH_LEQ", "BRANCH_LT", "BRANCH_GTE", "BRANCH_GT", "BRANCH_EQ", "BRANCH_NEQ"]
    for t in range(trees):
        for i in range(2 ** (depth + 1) - 1):
            leaf = i >= 2 ** depth - 1
            for key, value in [("treeids", t), ("nodeids", i), ("featureids", int(rng.integers(FEATURES))),
                               ("values", float(np.float32(rng.normal()))),
                               ("modes", "LEAF" if leaf else modes[int(rng.integers(len(modes)))]),
                               ("truenodeids", 0 if leaf else 2 * i + 1), ("falsenodeids", 0 if leaf else 2 * i + 2),
                               ("missing_value_tracks_true", int(rng.integers(2)))]:
                nodes[key].append(value)
            if leaf:
                for target in sorted(set(int(v) for v in rng.integers(targets, size=2))):
                    for key, value in [("treeids", t), ("nodeids", i), ("ids", target),
                                       ("weights", float(np.float32(rng.normal())))]:
                        leaves[key].append(value)
    return nodes, leaves


def features(rng, rows=64):
    x = rng.normal(size=(rows, FEATURES)).astype(np.float32)
    x[rng.random(x.shape) < 0.05] = np.nan
    x[:, 0] = np.round(x[:, 0])  # equal to some thresholds' neighbourhood often enough for EQ/NEQ to matter
    return x


def regressor(rng, aggregate, post="NONE", base=True, probabilities=False):
    nodes, leaves = random_trees(rng)
    if probabilities:  # leaf values in (0.05, 0.95), so that their average is a probability (PROBIT's domain)
        leaves["weights"] = [float(np.float32(0.05 + 0.9 * (abs(w) % 1))) for w in leaves["weights"]]
    attrs = {f"nodes_{k}": v for k, v in nodes.items()} | {f"target_{k}": v for k, v in leaves.items()}
    attrs |= {"n_targets": 2, "aggregate_function": aggregate, "post_transform": post}
    if base:
        attrs["base_values"] = [0.5, -1.25]
    node = h.make_node("TreeEnsembleRegressor", ["X"], ["Y"], domain=ML, **attrs)
    return ml_model(node, [h.make_tensor_value_info("X", T.FLOAT, [None, FEATURES])],
                    [h.make_tensor_value_info("Y", T.FLOAT, [None, 2])])


def classifier(rng, labels, post="NONE", binary=False):
    nodes, leaves = random_trees(rng, targets=1 if binary else len(labels))
    attrs = {f"nodes_{k}": v for k, v in nodes.items()} | {f"class_{k}": v for k, v in leaves.items()}
    attrs["post_transform"] = post
    string_labels = isinstance(labels[0], str)
    attrs["classlabels_strings" if string_labels else "classlabels_int64s"] = labels
    node = h.make_node("TreeEnsembleClassifier", ["X"], ["label", "scores"], domain=ML, **attrs)
    return ml_model(node, [h.make_tensor_value_info("X", T.FLOAT, [None, FEATURES])],
                    [h.make_tensor_value_info("label", T.STRING if string_labels else T.INT64, [None]),
                     h.make_tensor_value_info("scores", T.FLOAT, [None, len(labels)])])


def binary_classifier(rng, class_ids, positive, bases, post, labels):
    """A two-class TreeEnsembleClassifier: leaf weights naming class 0, class 1 or both (class_ids 0, 1, "both"),
    all positive or mixed in sign, with 0, 1 or 2 base values: the cases onnxruntime's binary form tells apart."""
    nodes, leaves = random_trees(rng, targets=2)
    if class_ids != "both":
        leaves["ids"] = [class_ids] * len(leaves["ids"])
    if positive:
        leaves["weights"] = [abs(w) for w in leaves["weights"]]
    attrs = {f"nodes_{k}": v for k, v in nodes.items()} | {f"class_{k}": v for k, v in leaves.items()}
    attrs["post_transform"] = post
    if bases:
        attrs["base_values"] = [0.25, -0.75][:bases]
    string_labels = isinstance(labels[0], str)
    attrs["classlabels_strings" if string_labels else "classlabels_int64s"] = labels
    node = h.make_node("TreeEnsembleClassifier", ["X"], ["label", "scores"], domain=ML, **attrs)
    return ml_model(node, [h.make_tensor_value_info("X", T.FLOAT, [None, FEATURES])],
                    [h.make_tensor_value_info("label", T.STRING if string_labels else T.INT64, [None]),
                     h.make_tensor_value_info("scores", T.FLOAT, [None, 2])])


def linear(rng, op, targets, post="NONE", labels=None):
    attrs = {"coefficients": [float(v) for v in rng.normal(size=targets * FEATURES).astype(np.float32)],
             "intercepts": [float(v) for v in rng.normal(size=targets).astype(np.float32)], "post_transform": post}
    if op == "LinearRegressor":
        attrs["targets"] = targets
        node = h.make_node(op, ["X"], ["Y"], domain=ML, **attrs)
        return ml_model(node, [h.make_tensor_value_info("X", T.FLOAT, [None, FEATURES])],
                        [h.make_tensor_value_info("Y", T.FLOAT, [None, targets])], ml_opset=1)
    string_labels = isinstance(labels[0], str)
    attrs["classlabels_strings" if string_labels else "classlabels_ints"] = labels
    node = h.make_node(op, ["X"], ["label", "scores"], domain=ML, **attrs)
    return ml_model(node, [h.make_tensor_value_info("X", T.FLOAT, [None, FEATURES])],
                    [h.make_tensor_value_info("label", T.STRING if string_labels else T.INT64, [None]),
                     h.make_tensor_value_info("scores", T.FLOAT, [None, None])], ml_opset=1)


def simple(op, **attrs):
    node = h.make_node(op, ["X"], ["Y"], domain=ML, **attrs)
    return ml_model(node, [h.make_tensor_value_info("X", T.FLOAT, [None, FEATURES])],
                    [h.make_tensor_value_info("Y", T.FLOAT, [None, FEATURES])], ml_opset=1)


def label_encoder(keys, values, key_type, value_type, **defaults):
    kinds = {T.STRING: "strings", T.INT64: "int64s", T.FLOAT: "floats"}
    node = h.make_node("LabelEncoder", ["X"], ["Y"], domain=ML, **{f"keys_{kinds[key_type]}": keys,
                                                                    f"values_{kinds[value_type]}": values}, **defaults)
    return ml_model(node, [h.make_tensor_value_info("X", key_type, [None])],
                    [h.make_tensor_value_info("Y", value_type, [None])], ml_opset=2)


def one_input(op, x_type, x_shape, y_type, **attrs):
    node = h.make_node(op, ["X"], ["Y"], domain=ML, name="prep", **attrs)
    return ml_model(node, [h.make_tensor_value_info("X", x_type, x_shape)], [h.make_tensor_value_info("Y", y_type, None)],
                    ml_opset=1)


def preprocessing_cases(x):
    nan = float("nan")
    imputer_floats = {"imputed_value_floats": [1.5, -2.0, 0.25, 4.0, -0.0], "replaced_value_float": nan}
    cats = {"cats_int64s": [3, 1, 7, -2]}
    return [
        ("imputer_nan", one_input("Imputer", T.FLOAT, [None, FEATURES], T.FLOAT, **imputer_floats), {"X": x}),
        ("imputer_one_value_zero", one_input("Imputer", T.FLOAT, [None, FEATURES], T.FLOAT, imputed_value_floats=[9.0],
                                             replaced_value_float=0.0),
         {"X": np.array([[0, -0.0, np.nan, 1, 2]], np.float32)}),
        ("imputer_1d", one_input("Imputer", T.FLOAT, [FEATURES], T.FLOAT, **imputer_floats), {"X": x[0]}),
        ("imputer_int64", one_input("Imputer", T.INT64, [None, 2], T.INT64, imputed_value_int64s=[7, 8],
                                    replaced_value_int64=-1), {"X": np.array([[-1, 1], [3, -1]], np.int64)}),
        ("one_hot_int64", one_input("OneHotEncoder", T.INT64, [None, 2], T.FLOAT, **cats),
         {"X": np.array([[1, 7], [5, 3], [-2, -2]], np.int64)}),
        ("one_hot_float", one_input("OneHotEncoder", T.FLOAT, [None], T.FLOAT, **cats),
         {"X": np.array([1.7, 7.2, -3, np.nan, -2.5, 3e30], np.float32)}),
        ("one_hot_double", one_input("OneHotEncoder", T.DOUBLE, [2], T.FLOAT, **cats), {"X": np.array([3.0, 1.0])}),
        ("one_hot_strings", one_input("OneHotEncoder", T.STRING, [None, 1], T.FLOAT, cats_strings=["a", "b", "a2"]),
         {"X": np.array([["b"], ["z"], ["a2"]], object)}),
        ("category_mapper_to_int", one_input("CategoryMapper", T.STRING, [None, 2], T.INT64, cats_int64s=[1, 2, 2],
                                             cats_strings=["a", "b", "c"]),
         {"X": np.array([["a", "c"], ["z", "b"]], object)}),
        ("category_mapper_to_string", one_input("CategoryMapper", T.INT64, [3], T.STRING, cats_int64s=[1, 2, 2],
                                                cats_strings=["a", "b", "c"]), {"X": np.array([2, 1, 9], np.int64)}),
        ("category_mapper_defaults", one_input("CategoryMapper", T.STRING, [2], T.INT64, cats_int64s=[1, 2],
                                               cats_strings=["a", "a"], default_int64=-7),
         {"X": np.array(["a", "q"], object)}),
        ("one_hot_numbers_without_int_categories", one_input("OneHotEncoder", T.INT64, [2], T.FLOAT,
                                                             cats_strings=["a", "b"]),
         {"X": np.array([0, 1], np.int64)}),
    ]


def floats(rng, *shape):
    return [float(v) for v in rng.normal(size=shape).astype(np.float32).ravel()]


SVM_KERNELS = {"LINEAR": [0.3, 0.5, 3.0], "POLY": [0.3, 0.5, 3.0], "POLY_POW": [0.3, 0.5, 2.5],
               "RBF": [0.3, 0.5, 3.0], "SIGMOID": [0.3, 0.5, 3.0]}


def svm_node(op, kernel, x_type=T.FLOAT, x_shape=(None, FEATURES), labels=None, **attrs):
    attrs |= {"kernel_type": kernel.replace("_POW", ""), "kernel_params": SVM_KERNELS[kernel]}
    if labels is not None:
        attrs["classlabels_strings" if isinstance(labels[0], str) else "classlabels_ints"] = labels
    outputs = ([h.make_tensor_value_info("Y", T.FLOAT, [None, 1])] if op == "SVMRegressor" else
               [h.make_tensor_value_info("label", T.STRING if isinstance(labels[0], str) else T.INT64, [None]),
                h.make_tensor_value_info("scores", T.FLOAT, [None, None])])
    node = h.make_node(op, ["X"], [o.name for o in outputs], domain=ML, name="svm", **attrs)
    return ml_model(node, [h.make_tensor_value_info("X", x_type, list(x_shape))], outputs, ml_opset=1)


def svm_regressor(rng, kernel, supports=6, **attrs):
    """support_vectors (supports x FEATURES) and one coefficient each; supports = 0: one weight per feature."""
    model = {"n_supports": supports, "coefficients": floats(rng, supports or FEATURES), "rho": floats(rng, 1)}
    if supports:
        model["support_vectors"] = floats(rng, supports, FEATURES)
    return svm_node("SVMRegressor", kernel, **(model | attrs))


def svm_classifier(rng, kernel, labels, post="NONE", probabilities=False, **kw):
    """libsvm's one-vs-one layout: 1-3 support vectors per class, (classes - 1) coefficient rows, one rho (and
    prob_a, prob_b) per pair of classes."""
    k = len(labels)
    per_class = [int(v) for v in rng.integers(1, 4, size=k)]
    pairs = k * (k - 1) // 2
    attrs = {"vectors_per_class": per_class, "support_vectors": floats(rng, sum(per_class), FEATURES),
             "coefficients": floats(rng, (k - 1) * sum(per_class)), "rho": floats(rng, pairs), "post_transform": post}
    if probabilities:
        attrs |= {"prob_a": floats(rng, pairs), "prob_b": floats(rng, pairs)}
    return svm_node("SVMClassifier", kernel, labels=labels, **attrs, **kw)


def linear_svm_classifier(rng, labels, post, positive, probabilities):
    """No support vectors: one weight row per class, all offset by rho[0] (kernel_type is ignored)."""
    k = len(labels)
    weights = floats(rng, k * FEATURES)
    attrs = {"coefficients": [abs(w) for w in weights] if positive else weights, "rho": floats(rng, k),
             "post_transform": post}
    if probabilities:
        attrs |= {"prob_a": floats(rng, k), "prob_b": floats(rng, k)}
    return svm_node("SVMClassifier", "RBF", labels=labels, **attrs)


def svm_cases(rng, x):
    finite = np.nan_to_num(x)
    out = []
    for kernel in SVM_KERNELS:
        out.append((f"svm_regressor_{kernel.lower()}", svm_regressor(rng, kernel), {"X": finite}))
    out.append(("svm_regressor_one_class", svm_regressor(rng, "RBF", one_class=1), {"X": finite}))
    out.append(("svm_regressor_no_supports", svm_regressor(rng, "RBF", supports=0), {"X": finite}))
    # onnxruntime's SVMRegressor reads post_transform and applies none.
    out.append(("svm_regressor_post_transform_ignored", svm_regressor(rng, "POLY", post_transform="LOGISTIC"),
                {"X": finite}))
    out.append(("svm_regressor_1d", svm_regressor(rng, "RBF", x_shape=[FEATURES]), {"X": finite[0]}))
    for kernel, classes, post, probabilities in itertools.product(
            SVM_KERNELS, (2, 3, 4), ("NONE", "LOGISTIC", "SOFTMAX", "SOFTMAX_ZERO"), (False, True)):
        name = f"svm_{kernel.lower()}_{classes}classes_{post.lower()}{'_probabilities' if probabilities else ''}"
        labels = list(range(10, 10 + classes))
        out.append((name, svm_classifier(rng, kernel, labels, post, probabilities), {"X": finite}))
    # PROBIT's slope magnifies the last bits where onnxruntime's exp and tanh differ from lockstep's; the LINEAR
    # kernel's fma chains are the same, so its scores are compared.
    for classes, probabilities in ((2, True), (3, False), (3, True), (4, True)):
        out.append((f"svm_linear_{classes}classes_probit{'_probabilities' if probabilities else ''}",
                    svm_classifier(rng, "LINEAR", list(range(classes)), "PROBIT", probabilities), {"X": finite}))
    for labels, probabilities in ((["no", "yes"], False), (["a", "b", "c"], False), (["a", "b", "c"], True)):
        out.append((f"svm_strings_{len(labels)}classes{'_probabilities' if probabilities else ''}",
                    svm_classifier(rng, "RBF", labels, "SOFTMAX", probabilities), {"X": finite}))
    small = finite * 0.3  # largest scores near 0.5, where the two-class label rule of a linear SVM turns
    for classes, post, positive, probabilities in itertools.product(
            (2, 3), ("NONE", "LOGISTIC", "SOFTMAX", "SOFTMAX_ZERO", "PROBIT"), (False, True), (False, True)):
        name = (f"svm_no_supports_{classes}classes_{post.lower()}_{'positive' if positive else 'mixed'}"
                f"{'_probabilities' if probabilities else ''}")
        labels = [7, 3, 5][:classes] if classes == 3 or positive else ["no", "yes"]
        out.append((name, linear_svm_classifier(rng, labels, post, positive, probabilities), {"X": small}))
    # One class without support vectors: its label, and its one score untransformed except by PROBIT (onnxruntime's).
    for post in ("LOGISTIC", "PROBIT"):
        out.append((f"svm_no_supports_1class_{post.lower()}", linear_svm_classifier(rng, [4], post, True, False),
                    {"X": small}))
    for x_type, dtype in ((T.DOUBLE, np.float64), (T.INT64, np.int64), (T.INT32, np.int32)):
        out.append((f"svm_x_{np.dtype(dtype).name}", svm_classifier(rng, "POLY", [1, 2, 3], x_type=x_type),
                    {"X": (finite * 3).astype(dtype)}))
    out.append(("svm_x_1d", svm_classifier(rng, "RBF", [1, 2, 3], x_shape=[FEATURES]), {"X": finite[0]}))
    return out


def cases():
    rng = np.random.default_rng(7)
    x = features(rng)
    out = [(f"regressor_{a.lower()}", regressor(rng, a), {"X": x}) for a in ("SUM", "AVERAGE", "MIN", "MAX")]
    out.append(("regressor_no_base", regressor(rng, "SUM", base=False), {"X": x}))
    out.append(("regressor_probit", regressor(rng, "AVERAGE", "PROBIT", base=False, probabilities=True), {"X": x}))
    out += [(f"classifier_{post.lower()}", classifier(rng, [3, 5, 9], post), {"X": x})
            for post in ("NONE", "LOGISTIC", "SOFTMAX", "SOFTMAX_ZERO", "PROBIT")]
    out.append(("classifier_strings", classifier(rng, ["cat", "dog", "eel"], "SOFTMAX"), {"X": x}))
    label_sets = ([0, 1], [3, 7], ["no", "yes"])
    for i, (ids, positive, bases, post) in enumerate(itertools.product(
            (0, 1, "both"), (True, False), (0, 1, 2), ("NONE", "LOGISTIC", "SOFTMAX"))):
        name = f"binary_classifier_{ids}_{'positive' if positive else 'mixed'}_{bases}base_{post.lower()}"
        out.append((name, binary_classifier(rng, ids, positive, bases, post, label_sets[i % 3]), {"X": x}))
    finite = np.nan_to_num(x)
    out.append(("linear_regressor", linear(rng, "LinearRegressor", 3), {"X": finite}))
    out += [(f"linear_classifier_{post.lower()}", linear(rng, "LinearClassifier", 3, post, [0, 1, 2]), {"X": finite})
            for post in ("NONE", "LOGISTIC", "SOFTMAX", "PROBIT")]
    out += [(f"linear_binary_{post.lower()}_{i}", linear(rng, "LinearClassifier", 1, post, labels), {"X": finite})
            for post in ("NONE", "LOGISTIC", "SOFTMAX", "SOFTMAX_ZERO") for i, labels in enumerate(label_sets)]
    out.append(("linear_two_scores", linear(rng, "LinearClassifier", 2, "SOFTMAX", [3, 7]), {"X": finite}))
    out.append(("scaler", simple("Scaler", offset=[0.5, -1, 2, 0, 3], scale=[2, 0.5, -1, 4, 0.25]), {"X": x}))
    out.append(("scaler_broadcast", simple("Scaler", offset=[0.75], scale=[1.5]), {"X": x}))
    out += [(f"normalizer_{n.lower()}", simple("Normalizer", norm=n), {"X": finite}) for n in ("MAX", "L1", "L2")]
    out.append(("binarizer", simple("Binarizer", threshold=0.25), {"X": finite}))
    afe = h.make_node("ArrayFeatureExtractor", ["X", "i"], ["Y"], domain=ML)
    out.append(("array_feature_extractor", ml_model(afe, [h.make_tensor_value_info("X", T.FLOAT, [None, FEATURES]),
                                                         h.make_tensor_value_info("i", T.INT64, [None])],
                                                    [h.make_tensor_value_info("Y", T.FLOAT, [None, None])], ml_opset=1),
                {"X": x, "i": np.array([4, 0, 4], np.int64)}))
    words = np.array(["b", "zz", "a", "c", "a"], object)
    out.append(("label_encoder_string_int", label_encoder(["a", "b", "c"], [7, 8, 9], T.STRING, T.INT64,
                                                          default_int64=-5), {"X": words}))
    out.append(("label_encoder_int_string", label_encoder([1, 2], ["one", "two"], T.INT64, T.STRING),
                {"X": np.array([2, 3, 1], np.int64)}))
    out.append(("label_encoder_float_int", label_encoder([0.5, -0.0, np.nan], [1, 2, 3], T.FLOAT, T.INT64),
                {"X": np.array([0.5, 0.0, np.nan, 1.5], np.float32)}))
    # onnxruntime's SOFTMAX_ZERO leaves out scores within 1e-7 of 0 (scaled by exp(-max), not exponentiated) and
    # gives NaN for a row with no other score.
    for name, intercepts in (("tiny", [0.0, 5e-8, 1.0]), ("tiny_negative", [-1e-8, 2.0, 3.0]), ("zeros", [0.0] * 3)):
        node = h.make_node("LinearClassifier", ["X"], ["label", "scores"], domain=ML, coefficients=[0.0] * 3 * FEATURES,
                           intercepts=intercepts, classlabels_ints=[0, 1, 2], post_transform="SOFTMAX_ZERO")
        out.append((f"linear_softmax_zero_{name}", ml_model(node, [h.make_tensor_value_info("X", T.FLOAT, [None, FEATURES])],
                                                            [h.make_tensor_value_info("label", T.INT64, [None]),
                                                             h.make_tensor_value_info("scores", T.FLOAT, [None, 3])],
                                                            ml_opset=1), {"X": finite[:4]}))
    return out + preprocessing_cases(x) + svm_cases(rng, x)


CASES = cases()


def run(data, feeds, provider=lockstep.CPU, threads=0):
    options = lockstep.SessionOptions()
    options.intra_op_num_threads = threads
    return lockstep.InferenceSession(data, options, providers=[provider]).run(None, feeds)


@pytest.mark.parametrize("name, data, feeds", CASES, ids=[c[0] for c in CASES])
def test_matches_onnxruntime(name, data, feeds):
    ort = pytest.importorskip("onnxruntime")
    ours = run(data, feeds)
    theirs = ort.InferenceSession(data, providers=["CPUExecutionProvider"]).run(None, feeds)
    for i, (a, b) in enumerate(zip(ours, theirs)):
        b = np.asarray(b)
        assert a.shape == b.shape, f"{name} output {i}: shape {a.shape}, onnxruntime {b.shape}"
        if b.dtype.kind in "fc":
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6, err_msg=f"{name} output {i}")
        else:
            assert a.tolist() == b.tolist(), f"{name} output {i}: {a.tolist()} vs {b.tolist()}"


@pytest.mark.parametrize("name, data, feeds", CASES, ids=[c[0] for c in CASES])
def test_thread_count_invariance(name, data, feeds):
    for a, b in zip(run(data, feeds, threads=1), run(data, feeds, threads=2)):
        assert same_bits(a, b) if a.dtype != object else a.tolist() == b.tolist(), name


# Strings and maps live on the host: these ops run on the CPU inside a CUDA session; the other ml ops have CUDA kernels.
CPU_ONLY_IN_CUDA = {"LabelEncoder", "OneHotEncoder", "CategoryMapper", "ZipMap", "DictVectorizer"}


def retyped(data, elem_type):
    """The model with its input X declared as elem_type (the ml 1-4 trees and SVMClassifier read any number type)."""
    model = onnx.load_from_string(data)
    model.graph.input[0].type.tensor_type.elem_type = elem_type
    return model.SerializeToString()


def tree_ensemble_v5(rng, x_type, dtype, aggregate=1, trees=3, depth=3, targets=2):
    """TreeEnsemble (ml 5): complete trees, interior nodes numbered across trees, every mode (6: set membership)."""
    a = {k: [] for k in ("featureids", "splits", "modes", "truenodeids", "trueleafs", "falsenodeids", "falseleafs",
                         "missing_value_tracks_true")}
    leaf_targets, leaf_weights, members, roots = [], [], [], []
    interior = 2 ** depth - 1
    for t in range(trees):
        roots.append(t * interior)
        for i in range(interior):
            mode = int(rng.integers(7))
            for key, value in (("featureids", int(rng.integers(FEATURES))), ("splits", float(np.round(rng.normal()))),
                               ("modes", mode), ("missing_value_tracks_true", int(rng.integers(2)))):
                a[key].append(value)
            if mode == 6:
                members += [float(np.round(rng.normal())), float(np.round(rng.normal())), float("nan")]
            for child, side in ((2 * i + 1, "true"), (2 * i + 2, "false")):
                leaf = child >= interior
                a[f"{side}nodeids"].append(len(leaf_targets) if leaf else t * interior + child)
                a[f"{side}leafs"].append(int(leaf))
                if leaf:
                    leaf_targets.append(int(rng.integers(targets)))
                    leaf_weights.append(float(rng.normal()))
    tensors = {"nodes_splits": np.array(a.pop("splits"), dtype), "nodes_modes": np.array(a.pop("modes"), np.uint8),
               "leaf_weights": np.array(leaf_weights, dtype), "membership_values": np.array(members, dtype)}
    attrs = {f"nodes_{k}": v for k, v in a.items()} | {k: numpy_helper.from_array(v, k) for k, v in tensors.items()}
    attrs |= {"tree_roots": roots, "leaf_targetids": leaf_targets, "n_targets": targets,
              "aggregate_function": aggregate, "post_transform": 0}
    node = h.make_node("TreeEnsemble", ["X"], ["Y"], domain=ML, **attrs)
    return ml_model(node, [h.make_tensor_value_info("X", x_type, [None, FEATURES])],
                    [h.make_tensor_value_info("Y", x_type, [None, targets])], ml_opset=5)


def cuda_cases():
    """What CASES leave out on the CUDA side: X of every type a kernel reads, TreeEnsemble (ml 5), no rows, several
    thread blocks of rows, and ranks other than 2."""
    rng = np.random.default_rng(11)
    x, big = features(rng), features(rng, rows=1000)
    finite, big_finite = np.nan_to_num(x), np.nan_to_num(big)
    out = []
    for x_type, dtype in ((T.DOUBLE, np.float64), (T.INT64, np.int64), (T.INT32, np.int32)):
        kind, feeds = np.dtype(dtype).name, {"X": (finite * 3).astype(dtype)}
        out.append((f"cuda_regressor_x_{kind}", retyped(regressor(rng, "SUM"), x_type), feeds))
        out.append((f"cuda_classifier_x_{kind}", retyped(classifier(rng, [3, 5, 9], "SOFTMAX"), x_type), feeds))
        binary = binary_classifier(rng, "both", False, 2, "LOGISTIC", [3, 7])
        out.append((f"cuda_binary_classifier_x_{kind}", retyped(binary, x_type), feeds))
    for aggregate in range(4):
        out.append((f"cuda_tree_ensemble_v5_float_{aggregate}", tree_ensemble_v5(rng, T.FLOAT, np.float32, aggregate),
                    {"X": x}))
        out.append((f"cuda_tree_ensemble_v5_double_{aggregate}", tree_ensemble_v5(rng, T.DOUBLE, np.float64, aggregate),
                    {"X": x.astype(np.float64)}))
    many = [("regressor", regressor(rng, "AVERAGE", "LOGISTIC"), big),
            ("classifier_strings", classifier(rng, ["cat", "dog", "eel"], "SOFTMAX"), big),
            ("binary_classifier", binary_classifier(rng, 1, True, 1, "NONE", ["no", "yes"]), big),
            ("linear_classifier", linear(rng, "LinearClassifier", 3, "SOFTMAX", ["a", "b", "c"]), big_finite),
            ("linear_binary", linear(rng, "LinearClassifier", 1, "LOGISTIC", [0, 1]), big_finite),
            ("svm_regressor", svm_regressor(rng, "RBF"), big_finite),
            ("svm_classifier", svm_classifier(rng, "POLY", [1, 2, 3, 4], "SOFTMAX", True), big_finite),
            ("svm_classifier_strings", svm_classifier(rng, "RBF", ["no", "yes"], "LOGISTIC"), big_finite),
            ("normalizer", simple("Normalizer", norm="L2"), big_finite),
            ("scaler", simple("Scaler", offset=[0.5, -1, 2, 0, 3], scale=[2, 0.5, -1, 4, 0.25]), big)]
    for name, data, rows in many:
        out.append((f"cuda_{name}_1000_rows", data, {"X": rows}))
        out.append((f"cuda_{name}_no_rows", data, {"X": rows[:0]}))
    imputer = {"imputed_value_floats": [1.5, -2.0, 0.25, 4.0, -0.0], "replaced_value_float": float("nan")}
    out.append(("cuda_imputer_double", one_input("Imputer", T.DOUBLE, [None, FEATURES], T.DOUBLE, **imputer),
                {"X": x.astype(np.float64)}))
    out.append(("cuda_imputer_int32", one_input("Imputer", T.INT32, [None, 2], T.INT32, imputed_value_int64s=[7],
                                                replaced_value_int64=-1),
                {"X": np.array([[-1, 1], [3, -1]], np.int32)}))
    cube = big.ravel()[:24].reshape(2, 3, 4)
    out.append(("cuda_imputer_3d", one_input("Imputer", T.FLOAT, [2, 3, 4], T.FLOAT,
                                             imputed_value_floats=[1.0, 2.0, 3.0], replaced_value_float=float("nan")),
                {"X": cube}))
    afe = h.make_node("ArrayFeatureExtractor", ["X", "i"], ["Y"], domain=ML)
    for kind, elem, array in (("int64", T.INT64, (finite * 9).astype(np.int64)),
                              ("double", T.DOUBLE, finite.astype(np.float64)), ("1d", T.FLOAT, x[0]),
                              ("3d", T.FLOAT, cube)):
        inputs = [h.make_tensor_value_info("X", elem, None), h.make_tensor_value_info("i", T.INT64, [None])]
        model = ml_model(afe, inputs, [h.make_tensor_value_info("Y", elem, None)], ml_opset=1)
        out.append((f"cuda_array_feature_extractor_{kind}", model, {"X": array, "i": np.array([3, 0, 3, 1], np.int64)}))
    for op, attrs in (("Binarizer", {"threshold": 0.25}), ("Scaler", {"offset": [0.5], "scale": [2.0]}),
                      ("Normalizer", {"norm": "MAX"})):
        out.append((f"cuda_{op.lower()}_1d", one_input(op, T.FLOAT, [FEATURES], T.FLOAT, **attrs), {"X": finite[1]}))
    return out


CUDA_CASES = cuda_cases()


@pytest.mark.skipif(not HAS_CUDA, reason="no GPU on this machine")
@pytest.mark.parametrize("name, data, feeds", CASES + CUDA_CASES, ids=[c[0] for c in CASES + CUDA_CASES])
def test_cuda_bit_identical(name, data, feeds):
    """Every output, labels and scores, of a CUDA session has the CPU's bytes, in the run that uploads the model and
    in the next (which reuses it); the op ran on its CUDA kernel unless it is one of CPU_ONLY_IN_CUDA."""
    expected = run(data, feeds)
    session = lockstep.InferenceSession(data, providers=[lockstep.CUDA])
    for attempt in ("first run", "second run"):
        got = session.run(None, feeds)
        assert len(got) == len(expected), f"{name} ({attempt}): {len(got)} outputs, the CPU {len(expected)}"
        for i, (a, b) in enumerate(zip(expected, got)):
            if a.dtype == object:
                assert b.dtype == object and a.shape == b.shape and a.tolist() == b.tolist(), f"{name} output {i}"
            else:
                assert same_bits(a, b), f"{name} output {i} ({attempt})"
    op = onnx.load_from_string(data).graph.node[0].op_type
    assert session.fallback_ops() == ([op] if op in CPU_ONLY_IN_CUDA else []), name


def test_ml_model_needs_no_default_domain_but_default_ops_do():
    node = h.make_node("Binarizer", ["X"], ["Y"], domain=ML)
    data = ml_model(node, [h.make_tensor_value_info("X", T.FLOAT, [2])], [h.make_tensor_value_info("Y", T.FLOAT, [2])])
    assert run(data, {"X": np.array([0.5, -1], np.float32)})[0].tolist() == [1.0, 0.0]
    mixed = h.make_model(h.make_graph([node, h.make_node("Relu", ["Y"], ["Z"])], "g",
                                      [h.make_tensor_value_info("X", T.FLOAT, [2])],
                                      [h.make_tensor_value_info("Z", T.FLOAT, [2])]),
                         opset_imports=[h.make_opsetid(ML, 1)]).SerializeToString()
    with pytest.raises(lockstep.InvalidGraph, match="imports no opset of the default ONNX domain"):
        run(mixed, {"X": np.zeros(2, np.float32)})


@pytest.mark.parametrize("change, message", [
    ({"nodes_truenodeids": "cycle"}, "a tree has a cycle"),
    ({"target_nodeids": "interior"}, "names an interior node"),
    ({"nodes_values": "short"}, "attribute 'nodes_values' has"),
    ({"post_transform": "BOGUS"}, "post_transform 'BOGUS' is not NONE, LOGISTIC"),
])
def test_bad_ensembles_are_clear_errors(change, message):
    nodes, leaves = random_trees(np.random.default_rng(3), trees=1, depth=1)
    attrs = {f"nodes_{k}": v for k, v in nodes.items()} | {f"target_{k}": v for k, v in leaves.items()}
    attrs |= {"n_targets": 2}
    if "nodes_truenodeids" in change:
        attrs["nodes_truenodeids"] = [0, 0, 0]  # the root's true branch is the root
    if "target_nodeids" in change:
        attrs["target_nodeids"] = [0] * len(attrs["target_nodeids"])
    if "nodes_values" in change:
        attrs["nodes_values"] = attrs["nodes_values"][:-1]
    if "post_transform" in change:
        attrs["post_transform"] = "BOGUS"
    node = h.make_node("TreeEnsembleRegressor", ["X"], ["Y"], domain=ML, name="forest", **attrs)
    data = ml_model(node, [h.make_tensor_value_info("X", T.FLOAT, [None, FEATURES])],
                    [h.make_tensor_value_info("Y", T.FLOAT, [None, 2])])
    with pytest.raises(lockstep.Fail, match=r"Node 'forest' \(TreeEnsembleRegressor\).*" + message):
        run(data, {"X": np.zeros((1, FEATURES), np.float32)})


def test_classifiers_without_a_binary_form_are_refused_by_name():
    """One score column needs two labels (onnxruntime's binary form); a one-class classifier has no form at all; under
    PROBIT onnxruntime's binary form writes one of its two scores."""
    rng = np.random.default_rng(5)
    x = np.nan_to_num(features(rng, rows=2))
    for data, message in ((linear(rng, "LinearClassifier", 1, "NONE", [0, 1, 2]), "one score column needs two"),
                          (classifier(rng, [4]), "a classifier of one class is not supported"),
                          (binary_classifier(rng, 0, True, 1, "PROBIT", [0, 1]), "PROBIT of a two-class classifier"),
                          (linear(rng, "LinearClassifier", 1, "PROBIT", [0, 1]), "PROBIT of a two-class classifier")):
        with pytest.raises(lockstep.NotImplemented, match=message):
            run(data, {"X": x})


@pytest.mark.parametrize("data, feeds, error, message", [
    (one_input("OneHotEncoder", T.INT64, [2], T.FLOAT, cats_int64s=[3, 1], zeros=0), {"X": np.array([3, 9], np.int64)},
     lockstep.Fail, r"X\[1\] = 9 is no category, and zeros = 0"),
    (one_input("OneHotEncoder", T.INT64, [2], T.FLOAT), {"X": np.array([3, 9], np.int64)},
     lockstep.InvalidGraph, "the encoder has no categories"),
    (one_input("CategoryMapper", T.INT64, [2], T.STRING, cats_int64s=[1, 2], cats_strings=["a"]),
     {"X": np.array([1, 2], np.int64)}, lockstep.InvalidGraph, "cats_int64s has 2 entries, cats_strings 1"),
    (one_input("Imputer", T.FLOAT, [None, 3], T.FLOAT, imputed_value_floats=[1.0, 2.0]),
     {"X": np.zeros((1, 3), np.float32)}, lockstep.InvalidGraph, "imputed_value_floats has 2 entries for 3 features"),
])
def test_preprocessing_errors_name_the_node(data, feeds, error, message):
    with pytest.raises(error, match=r"Node 'prep' \((OneHotEncoder|Imputer|CategoryMapper)\).*" + message):
        run(data, feeds)


def svm_attrs(**changes):
    """A valid three-class SVMClassifier's attributes with some changed (None removes one)."""
    rng = np.random.default_rng(11)
    attrs = {"kernel_type": "RBF", "kernel_params": [0.3, 0.5, 3.0], "vectors_per_class": [2, 1, 2],
             "support_vectors": floats(rng, 5, FEATURES), "coefficients": floats(rng, 10), "rho": floats(rng, 3),
             "classlabels_ints": [1, 2, 3]}
    return {k: v for k, v in (attrs | changes).items() if v is not None}


def svm_model(op, attrs, x_type=T.FLOAT):
    outputs = ["Y"] if op == "SVMRegressor" else ["label", "scores"]
    node = h.make_node(op, ["X"], outputs, domain=ML, name="svm", **attrs)
    return ml_model(node, [h.make_tensor_value_info("X", x_type, [None, None])],
                    [h.make_tensor_value_info(o, T.INT64 if o == "label" else T.FLOAT, None) for o in outputs],
                    ml_opset=1)


REGRESSOR = {"kernel_type": "LINEAR", "kernel_params": [0.3, 0.5, 3.0], "n_supports": 3,
             "support_vectors": [0.5] * 3 * FEATURES, "coefficients": [1.0, -1.0, 0.5], "rho": [0.25]}


@pytest.mark.parametrize("op, attrs, error, message", [
    ("SVMClassifier", svm_attrs(kernel_params=None), lockstep.InvalidGraph, r"kernel_params \(gamma, coef0, degree\) is required"),
    ("SVMClassifier", svm_attrs(kernel_params=[1.0, 2.0]), lockstep.InvalidGraph, "kernel_params has 2 entries, not 3"),
    ("SVMClassifier", svm_attrs(kernel_type="BOGUS"), lockstep.InvalidGraph, "kernel_type 'BOGUS' is not LINEAR, POLY"),
    ("SVMClassifier", svm_attrs(post_transform="BOGUS"), lockstep.InvalidGraph, "post_transform 'BOGUS' is not NONE"),
    ("SVMClassifier", svm_attrs(vectors_per_class=[2, 3]), lockstep.InvalidGraph,
     "vectors_per_class has 2 entries for 3 class labels"),
    ("SVMClassifier", svm_attrs(prob_a=[1.0, 2.0, 3.0]), lockstep.InvalidGraph, "prob_a has 3 entries, prob_b 0"),
    ("SVMClassifier", svm_attrs(rho=[1.0]), lockstep.InvalidGraph, "attribute 'rho' has 1 entries, one per pair"),
    ("SVMClassifier", svm_attrs(coefficients=[1.0] * 9), lockstep.InvalidGraph,
     r"attribute 'coefficients' has 9 entries, \(classes - 1\) x vectors needs 10"),
    ("SVMClassifier", svm_attrs(support_vectors=[1.0] * 7), lockstep.InvalidGraph,
     "support_vectors has 7 entries, not a positive multiple of 5 vectors"),
    ("SVMClassifier", svm_attrs(classlabels_ints=None), lockstep.InvalidGraph, "the classifier has no class labels"),
    ("SVMClassifier", svm_attrs(vectors_per_class=None, coefficients=[1.0] * 7), lockstep.InvalidGraph,
     "coefficients has 7 entries, not a multiple of 3 classes"),
    ("SVMClassifier", svm_attrs(vectors_per_class=[2, 1], support_vectors=[0.5] * 3 * FEATURES, coefficients=[1.0] * 3,
                                classlabels_ints=[1, 2], rho=[0.5], post_transform="PROBIT"),
     lockstep.NotImplemented, "PROBIT of a two-class classifier"),
    ("SVMClassifier", svm_attrs(vectors_per_class=[5], classlabels_ints=[1]), lockstep.NotImplemented,
     "an SVMClassifier of one class with support vectors is not supported"),
    ("SVMRegressor", REGRESSOR | {"support_vectors": [1.0] * 7}, lockstep.InvalidGraph,
     "support_vectors has 7 entries, not a positive multiple of 3 vectors"),
    ("SVMRegressor", REGRESSOR | {"coefficients": [1.0, 2.0]}, lockstep.InvalidGraph,
     "attribute 'coefficients' has 2 entries, n_supports needs 3"),
    ("SVMRegressor", REGRESSOR | {"n_supports": -1}, lockstep.InvalidGraph, "n_supports is negative"),
])
def test_bad_svms_are_clear_errors(op, attrs, error, message):
    with pytest.raises(error, match=rf"Node 'svm' \({op}\).*" + message):
        run(svm_model(op, attrs), {"X": np.zeros((2, FEATURES), np.float32)})


def test_svm_inputs_are_checked_by_name():
    """X must have the support vectors' feature count (onnxruntime refuses it too); the regressor takes float only."""
    with pytest.raises(lockstep.InvalidArgument, match=r"Node 'svm' \(SVMClassifier\).*X has 6 features, the model 5"):
        run(svm_model("SVMClassifier", svm_attrs()), {"X": np.zeros((2, FEATURES + 1), np.float32)})
    with pytest.raises(lockstep.NotImplemented, match=r"Node 'svm' \(SVMRegressor\).*X of type double is not supported"):
        run(svm_model("SVMRegressor", REGRESSOR, x_type=T.DOUBLE), {"X": np.zeros((2, FEATURES))})
