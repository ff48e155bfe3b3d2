"""TfIdfVectorizer (opset 9; docs/arithmetic.md#tfidfvectorizer): exact n-gram counts checked against onnxruntime
byte for byte (TF and IDF), TFIDF as float32(count) * weight (onnxruntime adds the weight once per hit, so it is
compared at a float32 tolerance), random pools and rows, string and integer inputs, errors naming the node, thread
counts, and CUDA against the CPU byte for byte when a GPU is present."""

import numpy as np
import onnxruntime
import pytest
from onnx import TensorProto, helper

import lockstep
from bits import same_bits

S, I32, I64, F = TensorProto.STRING, TensorProto.INT32, TensorProto.INT64, TensorProto.FLOAT
PROVIDERS = [lockstep.CPU] + ([lockstep.CUDA] if lockstep.CUDA in lockstep.get_available_providers() else [])


def model(x_type, **attrs):
    node = helper.make_node("TfIdfVectorizer", ["X"], ["Y"], name="tfidf0", **attrs)
    graph = helper.make_graph([node], "tfidf", [helper.make_tensor_value_info("X", x_type, None)],
                              [helper.make_tensor_value_info("Y", F, None)])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 9)])
    m.ir_version = 8
    return m.SerializeToString()


def x_type_of(x):
    return S if x.dtype == object else I32 if x.dtype == np.int32 else I64


def ours(x, threads=0, provider=lockstep.CPU, **attrs):
    options = lockstep.SessionOptions()
    options.intra_op_num_threads = threads
    options.log_severity_level = 3
    return lockstep.InferenceSession(model(x_type_of(x), **attrs), options, providers=[provider]).run(None, {"X": x})[0]


def theirs(x, **attrs):
    session = onnxruntime.InferenceSession(model(x_type_of(x), **attrs), providers=["CPUExecutionProvider"])
    return session.run(None, {"X": x})[0]


BASE = dict(mode="TF", min_gram_length=1, max_gram_length=2, max_skip_count=0, ngram_counts=[0, 4],
            ngram_indexes=[0, 1, 2, 3, 4, 5, 6], pool_int64s=[2, 3, 5, 4, 5, 6, 7, 8, 6, 7])
ROW = np.array([1, 1, 3, 3, 3, 7, 8, 6, 7, 5, 6, 8, 4, 2, 3, 5, 6, 7], np.int64)
STRING_POOL = dict(BASE, pool_strings=["two", "three", "five", "four", "five", "six", "seven", "eight", "six",
                                       "seven"])
del STRING_POOL["pool_int64s"]
WORDS = {1: "one", 2: "two", 3: "three", 4: "four", 5: "five", 6: "six", 7: "seven", 8: "eight"}


def words(a):
    return np.vectorize(lambda v: WORDS[int(v)], otypes=[object])(a)


EXACT = [
    ("tf_1d", ROW, {}),
    ("tf_2d", ROW.reshape(3, 6), {}),
    ("tf_int32", ROW.reshape(2, 9).astype(np.int32), {}),
    ("skip3", ROW, {"max_skip_count": 3}),
    ("only_bigrams_skip5", ROW.reshape(2, 9), {"min_gram_length": 2, "max_skip_count": 5}),
    ("only_unigrams_skip4", ROW, {"max_gram_length": 1, "max_skip_count": 4}),
    ("idf", ROW.reshape(3, 6), {"mode": "IDF"}),
    ("idf_weights", ROW, {"mode": "IDF", "weights": [0.5, -2.0, 3.25, 0.1, 7.0, 1e-3, -0.0]}),
    ("tfidf_no_weights", ROW, {"mode": "TFIDF", "max_skip_count": 2}),
    ("tfidf_weights_exact", ROW, {"mode": "TFIDF", "weights": [0.5, -2.0, 3.25, 0.125, 7.0, 1024.0, 3.0]}),
    ("permuted_indexes_weights", ROW, {"mode": "TFIDF", "ngram_indexes": [6, 0, 5, 1, 4, 2, 3],
                                       "weights": [1.0, 2.0, 4.0, 8.0, 16.0, 32.0, 64.0]}),
    ("gaps_in_columns", ROW, {"ngram_indexes": [9, 0, 4, 1, 2, 7, 3]}),
    ("more_indexes_than_grams", ROW, {"ngram_indexes": [0, 1, 2, 3, 4, 5, 6, 10]}),
    ("shared_column", ROW, {"ngram_indexes": [0, 0, 1, 1, 2, 2, 2], "max_skip_count": 1}),
    ("shared_column_tf_ignores_weights", ROW, {"ngram_indexes": [0, 0, 1, 1, 2, 2, 2],
                                               "weights": [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0]}),
    ("shared_column_same_weight", ROW, {"ngram_indexes": [0, 0, 1, 1, 2, 2, 2], "mode": "IDF",
                                        "weights": [1.5, 1.5, 2.5, 2.5, 0.5, 0.5, 0.5]}),
    ("rank0", np.array(5, np.int64), {}),
    ("empty_1d", np.zeros((0,), np.int64), {}),
    ("empty_rows", np.zeros((3, 0), np.int64), {}),
    ("short_rows", ROW[:3].reshape(3, 1), {"min_gram_length": 2, "max_skip_count": 2}),
    ("level_empty", ROW, {"ngram_counts": [0, 0], "ngram_indexes": [0, 1, 2], "pool_int64s": [5, 6, 7, 8, 6, 7],
                          "min_gram_length": 2}),
    ("strings", words(ROW), {**STRING_POOL, "max_skip_count": 2}),
    ("strings_2d_unknown_words", np.array([["six", "seven", "zero"], ["", "two", "three"]], dtype=object),
     STRING_POOL),
    ("strings_on_int_pool", words(ROW), {}),
    ("ints_on_string_pool", ROW, STRING_POOL),
]


@pytest.mark.parametrize("name, x, attrs", EXACT, ids=[c[0] for c in EXACT])
def test_matches_onnxruntime_bytes(name, x, attrs):
    attrs = {**BASE, **attrs}
    if "pool_strings" in attrs:
        attrs.pop("pool_int64s", None)
    got, want = ours(x, **attrs), theirs(x, **attrs)
    assert got.dtype == np.float32 and got.shape == want.shape
    assert same_bits(got, want), (got, want)


def test_tfidf_is_count_times_weight():
    """TFIDF = float32(count) * weight, one rounding: counts from onnxruntime's TF, compared byte for byte; and within
    float32 rounding of onnxruntime's TFIDF, which adds the weight once per hit."""
    rng = np.random.default_rng(7)
    x = rng.integers(2, 9, size=(4, 300)).astype(np.int64)
    weights = [0.1, 1.7, 0.3, 2.9, 0.7, 1.1, 0.013]
    attrs = {**BASE, "max_skip_count": 3, "mode": "TFIDF", "weights": weights}
    counts = theirs(x, **{**attrs, "mode": "TF"})
    expected = counts.astype(np.float32) * np.array(weights, np.float32)
    got = ours(x, **attrs)
    assert same_bits(got, expected)
    np.testing.assert_allclose(got, theirs(x, **attrs), rtol=2e-6, atol=0)
    assert not same_bits(got, theirs(x, **attrs))  # the per-hit additions do round differently here
    # A weight of -0 gives -0 where the column has hits (count * -0); onnxruntime's +0 + -0 gives +0.
    zero = ours(ROW, **{**BASE, "mode": "TFIDF", "weights": [1, 1, 1, 1, 1, 1, -0.0]})
    assert np.signbit(zero[6]) and zero[6] == 0 and theirs(ROW, **{**BASE, "mode": "TF"})[6] > 0


@pytest.mark.parametrize("seed", range(12))
def test_random_pools_match_onnxruntime(seed):
    rng = np.random.default_rng(100 + seed)
    alphabet = int(rng.integers(3, 7))
    max_len = int(rng.integers(1, 4))
    min_len = int(rng.integers(1, max_len + 1))
    pool, counts = [], []
    for n in range(1, max_len + 1):
        counts.append(len(pool))
        grams = list({tuple(rng.integers(0, alphabet, size=n).tolist()) for _ in range(int(rng.integers(0, 10)))})
        rng.shuffle(grams)
        for g in grams:
            pool.extend(g)
    if not pool:
        pool, counts = [0], [0] + [1] * (max_len - 1)
    n_grams = sum(((counts[i + 1] if i + 1 < len(counts) else len(pool)) - counts[i]) // (i + 1)
                  for i in range(len(counts)))
    indexes = rng.permutation(n_grams + int(rng.integers(0, 3)))[:n_grams].tolist()
    attrs = dict(mode=str(rng.choice(["TF", "IDF", "TFIDF"])), min_gram_length=min_len, max_gram_length=max_len,
                 max_skip_count=int(rng.integers(0, 4)), ngram_counts=counts, ngram_indexes=indexes,
                 pool_int64s=pool)
    x = rng.integers(0, alphabet, size=(int(rng.integers(1, 5)), int(rng.integers(0, 40)))).astype(np.int64)
    assert same_bits(ours(x, **attrs), theirs(x, **attrs))
    sx = np.vectorize(lambda v: f"w{v}", otypes=[object])(x)
    sattrs = {**attrs, "pool_strings": [f"w{v}" for v in pool]}
    del sattrs["pool_int64s"]
    assert same_bits(ours(sx, **sattrs), theirs(sx, **sattrs))


def test_thread_counts_give_the_same_bytes():
    rng = np.random.default_rng(3)
    x = rng.integers(0, 9, size=(64, 200)).astype(np.int64)
    attrs = {**BASE, "mode": "TFIDF", "max_skip_count": 4, "weights": [0.3, 1.1, 2.3, 0.7, 0.9, 1.3, 5.1]}
    one = ours(x, threads=1, **attrs)
    assert same_bits(one, ours(x, threads=3, **attrs))
    assert same_bits(one, theirs(x, **{**attrs, "mode": "TF"}).astype(np.float32) * np.float32(attrs["weights"]))


@pytest.mark.skipif(len(PROVIDERS) < 2, reason="needs a GPU")
@pytest.mark.parametrize("name, x, attrs", EXACT, ids=[c[0] for c in EXACT])
def test_cuda_equals_cpu(name, x, attrs):
    attrs = {**BASE, **attrs}
    if "pool_strings" in attrs:
        attrs.pop("pool_int64s", None)
    assert same_bits(ours(x, provider=lockstep.CUDA, **attrs), ours(x, **attrs))


@pytest.mark.skipif(len(PROVIDERS) < 2, reason="needs a GPU")
def test_cuda_equals_cpu_random():
    rng = np.random.default_rng(11)
    x = rng.integers(0, 9, size=(300, 150)).astype(np.int32)
    attrs = {**BASE, "mode": "TFIDF", "max_skip_count": 5, "weights": [0.3, 1.1, 2.3, 0.7, 0.9, 1.3, 5.1]}
    assert same_bits(ours(x, provider=lockstep.CUDA, **attrs), ours(x, **attrs))


BAD = [
    ({"mode": "BM25"}, lockstep.InvalidGraph, "mode must be TF, IDF or TFIDF"),
    ({"min_gram_length": 0}, lockstep.InvalidGraph, "min_gram_length <= max_gram_length"),
    ({"min_gram_length": 3}, lockstep.InvalidGraph, "min_gram_length <= max_gram_length"),
    ({"max_skip_count": -1}, lockstep.InvalidGraph, "max_skip_count must be >= 0"),
    ({"max_gram_length": 3}, lockstep.InvalidGraph, "up to max_gram_length = 3"),
    ({"ngram_indexes": [0, 1, -2, 3, 4, 5, 6]}, lockstep.InvalidGraph, "ngram_indexes must be >= 0"),
    ({"ngram_indexes": [0, 1, 2]}, lockstep.InvalidGraph, "more n-grams than the 3 ngram_indexes"),
    ({"weights": [1.0, 2.0]}, lockstep.InvalidGraph, "2 weights but 7 ngram_indexes"),
    ({"ngram_counts": [0, 11]}, lockstep.InvalidGraph, "outside the pool of 10 items"),
    ({"ngram_counts": [0, 3]}, lockstep.InvalidGraph, "not whole 2-grams"),
    ({"pool_int64s": [2, 3, 5, 2, 5, 6, 7, 8, 6, 7]}, lockstep.InvalidGraph, "appears twice"),
    ({"pool_strings": ["a"] * 10}, lockstep.InvalidGraph, "exactly one of pool_strings and pool_int64s"),
    ({"ngram_indexes": [0, 0, 1, 2, 3, 4, 5], "weights": [1.0, 2.0, 1, 1, 1, 1, 1], "mode": "TFIDF"},
     lockstep.NotImplemented, "different weights to output column 0"),
]


@pytest.mark.parametrize("attrs, error, message", BAD, ids=[b[2][:30] for b in BAD])
def test_bad_attributes_name_the_node(attrs, error, message):
    with pytest.raises(error, match=message) as info:
        ours(ROW, **{**BASE, **attrs})
    assert "tfidf0" in str(info.value) and "TfIdfVectorizer" in str(info.value)


@pytest.mark.parametrize("x", [np.zeros((0, 4), np.int64), np.zeros((1, 2, 3), np.int64),
                               np.zeros(3, np.float32)], ids=["no_rows", "rank3", "float"])
def test_bad_input_names_the_node(x):
    with pytest.raises(lockstep.InvalidArgument, match="tfidf0"):
        ours(x, **BASE) if x.dtype != np.float32 else lockstep.InferenceSession(model(F, **BASE)).run(None, {"X": x})
