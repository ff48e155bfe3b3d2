"""The string ops StringConcat, StringSplit, StringNormalizer and RegexFullMatch (host only): checked against
onnxruntime where both follow the spec, and against the spec's examples where onnxruntime cannot run them here
(StringNormalizer needs an en_US.UTF-8 locale in onnxruntime) or splits differently (whitespace)."""

import time

import numpy as np
import onnxruntime
import pytest
from onnx import TensorProto, helper

import lockstep
from bits import same_bits

S, B, I64, F = TensorProto.STRING, TensorProto.BOOL, TensorProto.INT64, TensorProto.FLOAT
OPSETS = {"StringNormalizer": 10}


def model(op, inputs, outputs, input_types=None, **attrs):
    node = helper.make_node(op, [n for n, _ in inputs], [n for n, _ in outputs], name="n0", **attrs)
    graph = helper.make_graph([node], "strings", [helper.make_tensor_value_info(n, t, None) for n, t in inputs],
                              [helper.make_tensor_value_info(n, t, None) for n, t in outputs])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSETS.get(op, 20))])
    m.ir_version = 9
    return m.SerializeToString()


def strings(*values, shape=None):
    a = np.array(values, dtype=object)
    return a.reshape(shape) if shape is not None else a


def same_values(ours, theirs):
    """Equal dtype, shape and elements: strings compared as Python strings, the rest byte for byte."""
    ours, theirs = np.asarray(ours), np.asarray(theirs)
    if ours.dtype == object or theirs.dtype == object:
        return ours.dtype == theirs.dtype and ours.shape == theirs.shape and ours.tolist() == theirs.tolist()
    return same_bits(ours, theirs)


def run_both(m, feeds):
    ours = lockstep.InferenceSession(m).run(None, feeds)
    theirs = onnxruntime.InferenceSession(m, providers=["CPUExecutionProvider"]).run(None, feeds)
    return ours, theirs


def run(m, feeds):
    return lockstep.InferenceSession(m).run(None, feeds)


CONCAT = model("StringConcat", [("x", S), ("y", S)], [("z", S)])


@pytest.mark.parametrize("x, y", [
    (strings("a", "", "\u00e9t\u00e9"), strings("b", "", "\U0001F600")),
    (strings("ab", "cd", shape=(2, 1)), strings("x", "", "z")),
    (np.array("solo", dtype=object), strings("", "1")),
    (strings(shape=(0,)), strings("x")),
])
def test_string_concat_matches_onnxruntime(x, y):
    ours, theirs = run_both(CONCAT, {"x": x, "y": y})
    assert same_values(ours[0], theirs[0])


def test_string_concat_refuses_a_numeric_input_naming_it():
    m = model("StringConcat", [("x", S), ("y", F)], [("z", S)])
    with pytest.raises(lockstep.InvalidArgument, match=r"Node 'n0' \(StringConcat\).*input Y must be a string"):
        run(m, {"x": strings("a"), "y": np.ones(1, np.float32)})


def test_string_concat_refuses_shapes_that_do_not_broadcast():
    with pytest.raises(lockstep.InvalidArgument, match=r"Node 'n0' \(StringConcat\)"):
        run(CONCAT, {"x": strings("a", "b"), "y": strings("a", "b", "c")})


def split(**attrs):
    return model("StringSplit", [("x", S)], [("y", S), ("z", I64)], **attrs)


@pytest.mark.parametrize("attrs, x", [
    ({"delimiter": "-"}, strings("o-n-n--x-", "o-n----nx", ",")),
    ({"delimiter": "::", "maxsplit": 1}, strings("a::b::c", "::", "none", shape=(3, 1))),
    ({"delimiter": ",", "maxsplit": 0}, strings("a,b")),
    ({"delimiter": ",", "maxsplit": -1}, strings("a,b,c")),
    ({"delimiter": "\u00e9"}, strings("d\u00e9j\u00e0 vu\u00e9", "\u00e9")),
    ({"delimiter": ","}, strings(shape=(0, 2))),
    ({"maxsplit": 1}, strings("  lead and trail  ", "one")),
    ({}, strings("a b  c", "word")),
])
def test_string_split_matches_onnxruntime(attrs, x):
    ours, theirs = run_both(split(**attrs), {"x": x})
    assert same_values(ours[0], theirs[0]) and same_values(ours[1], theirs[1])


def test_string_split_on_whitespace_follows_the_spec():
    # The spec's "whitespace characters" (onnxruntime splits on spaces only): tabs, newlines, U+3000 and U+00A0.
    y, z = run(split(delimiter=""), {"x": strings("\tone\ntwo\u3000three\u00a0", "", "   ")})
    assert y.tolist() == [["one", "two", "three"], ["", "", ""], ["", "", ""]]
    assert same_bits(z, np.array([3, 0, 0], np.int64))


def test_string_split_of_an_empty_element_on_a_delimiter_is_one_empty_piece():
    # Python's and the onnx reference's "".split(","), where onnxruntime counts 0.
    y, z = run(split(delimiter=","), {"x": strings("", "a")})
    assert y.tolist() == [[""], ["a"]] and same_bits(z, np.array([1, 1], np.int64))


def test_string_split_refuses_invalid_utf8_naming_the_element():
    with pytest.raises(lockstep.InvalidArgument, match=r"Node 'n0' \(StringSplit\).*element 1 is not valid UTF-8"):
        run(split(), {"x": np.array([b"ok", b"bad \xff"], dtype=object)})


def normalizer(**attrs):
    return model("StringNormalizer", [("x", S)], [("y", S)], **attrs)


MONDAY = strings("monday", "tuesday", "wednesday", "thursday")


@pytest.mark.parametrize("attrs, x, expected", [
    ({}, strings("monday", "tuesday"), strings("monday", "tuesday")),
    ({"stopwords": ["monday"], "is_case_sensitive": 1}, MONDAY, strings("tuesday", "wednesday", "thursday")),
    ({"stopwords": ["monday"], "case_change_action": "LOWER", "is_case_sensitive": 1}, MONDAY,
     strings("tuesday", "wednesday", "thursday")),
    ({"stopwords": ["monday"], "case_change_action": "UPPER", "is_case_sensitive": 1}, MONDAY,
     strings("TUESDAY", "WEDNESDAY", "THURSDAY")),
    ({"stopwords": ["monday"], "case_change_action": "LOWER"}, strings("monday", "monday"), strings("")),
    ({"stopwords": ["monday"], "case_change_action": "UPPER"},
     strings("Monday", "tuesday", "wednesday", "Monday", "tuesday", "wednesday", shape=(1, 6)),
     strings("TUESDAY", "WEDNESDAY", "TUESDAY", "WEDNESDAY", shape=(1, 4))),
    ({"stopwords": ["a"]}, strings("a", "A", shape=(1, 2)), strings("", shape=(1, 1))),
    ({}, strings(shape=(0,)), strings("")),
])
def test_string_normalizer_follows_the_spec_examples(attrs, x, expected):
    assert same_values(run(normalizer(**attrs), {"x": x})[0], expected)


def test_string_normalizer_case_sensitive_without_case_change_matches_onnxruntime():
    ours, theirs = run_both(normalizer(stopwords=["monday"], is_case_sensitive=1),
                            {"x": strings("monday", "Monday", "", "\u00e9t\u00e9")})
    assert same_values(ours[0], theirs[0])


def test_string_normalizer_maps_case_per_code_point():
    y = run(normalizer(case_change_action="UPPER", locale="en_US"), {"x": strings("\u00e9t\u00e9", "stra\u00dfe", "\u0436")})[0]
    assert y.tolist() == ["\u00c9T\u00c9", "STRA\u00dfE", "\u0416"]
    y = run(normalizer(case_change_action="LOWER", stopwords=["\u00c9T\u00c9"]), {"x": strings("\u00e9t\u00c9", "\u0416X")})[0]
    assert y.tolist() == ["\u0436x"]


@pytest.mark.parametrize("attrs, x, error, message", [
    ({"locale": "fr_FR"}, strings("a"), lockstep.NotImplemented, "locale 'fr_FR' is not supported"),
    ({"case_change_action": "TITLE"}, strings("a"), lockstep.InvalidArgument, "case_change_action must be"),
    ({"is_case_sensitive": 2}, strings("a"), lockstep.InvalidArgument, "is_case_sensitive must be 0 or 1"),
    ({}, strings("a", "b", "c", "d", shape=(2, 2)), lockstep.InvalidArgument, r"must be \[C\] or \[1, C\]"),
    ({"case_change_action": "UPPER"}, np.array([b"\xc3"], dtype=object), lockstep.InvalidArgument,
     "element 0 is not valid UTF-8"),
])
def test_string_normalizer_errors_name_the_node(attrs, x, error, message):
    with pytest.raises(error, match=r"Node 'n0' \(StringNormalizer\).*" + message):
        run(normalizer(**attrs), {"x": x})


def regex(pattern):
    return model("RegexFullMatch", [("x", S)], [("y", B)], pattern=pattern)


@pytest.mark.parametrize("pattern, x", [
    (r"www\.[\w.-]+\.\bcom\b", strings("www.google.com", "www.facebook.com", "www.bbc.co.uk", "", "www.a b.com")),
    (r"(\W|^)[\w.\-]{0,25}@(yahoo|gmail)\.com(\W|$)", strings("account@gmail.com", "a@yahoo.com ", "x@aol.com")),
    (r"\d{2,3}-\s?\d+", strings("12-3", "123- 45", "1-2", "12-\v3", "12-\t3", "\u0663\u0663-1")),
    (r"[^a-c]+", strings("xyz", "xaz", "")),
    (r"a.c", strings("abc", "a\rc", "a\nc")),
    (r"a{,2}b{", strings("a{,2}b{", "aab{")),
    (r"(?:ab)*c+?", strings("ababcc", "abc", "abac")),
    (r"[\w\s]+\b", strings("hello w\u00f6rld", "ok go", "end ")),
])
def test_regex_full_match_matches_onnxruntime(pattern, x):
    ours, theirs = run_both(regex(pattern), {"x": x})
    assert same_values(ours[0], theirs[0])


@pytest.mark.parametrize("pattern, x", [
    (r"((a|b)(c|d(e|f)))+", strings("ac", "adeadf", "bdfbc", "bd", "")),
    (r"(?:x(?:y|z(?:w|))|q)*", strings("", "xy", "xzxzwq", "xzw", "xw")),
    (r"a{2,3}", strings("a", "aa", "aaa", "aaaa")),
    (r"(ab){0,2}c{1,}", strings("c", "ababc", "abababc", "ab", "cc")),
    (r"a{1000}", strings("a" * 1000, "a" * 999, "a" * 1001)),
    (r"(a{10}){100}", strings("a" * 1000, "a" * 990)),
    (r"a{0}b{0,0}", strings("", "a", "b")),
    (r"a{01}b{1,099}", strings("a{01}b{1,099}", "ab")),
    (r"\bab\b", strings("ab", "ab ", " ab", "")),
    (r"\Bx\B", strings("x")),
    (r"\b", strings("")),
    (r"\B", strings("")),
    (r"a$b|^c", strings("ab", "c", "a")),
    (r"(^a|b)+(a$)*", strings("ab", "ba", "aab", "a", "aa")),
    (r"", strings("", "a")),
    (r"(|a)+|()", strings("", "aa", "b")),
    (r"[]a]+", strings("]", "a]a", "b", "")),
    (r"[^]a]", strings("]", "b")),
    (r"[-a-]+", strings("-", "a-a", "b")),
    (r"[a-c-e]+", strings("-", "d", "abce-")),
    (r"[\d-z\]]", strings("-", "5", "z", "y", "]")),
    (r"^*a+?", strings("a", "aa")),
])
def test_regex_full_match_matches_onnxruntime_on_edge_cases(pattern, x):
    ours, theirs = run_both(regex(pattern), {"x": x})
    assert same_values(ours[0], theirs[0])


@pytest.mark.parametrize("pattern, expected", [("(a|aa)*b", False), ("(a*)*c", False), ("(a|aa)*", True),
                                               ("(a*)*", True), ("(?:a+a+)+a{2}", True)])
def test_regex_full_match_is_linear_on_a_long_input(pattern, expected):
    x = strings("a" * 200_000)
    start = time.monotonic()
    y = run(regex(pattern), {"x": x})[0]
    assert time.monotonic() - start < 10
    assert y.tolist() == [expected]


@pytest.mark.parametrize("pattern", ["a{1001}", "a{1,1001}", "a{2,1}", "(a{2}){501}", "((a{3}){3}){112}", "*a",
                                     "a|*", "{2}", "a)", "[z-a]", "[b-a]", r"[a-\d]", "x{1000}{1}", "a+*", "a?+"])
def test_regex_full_match_refuses_what_re2_refuses(pattern):
    with pytest.raises(lockstep.InvalidArgument, match=r"Node 'n0' \(RegexFullMatch\).*not a valid RE2 pattern"):
        run(regex(pattern), {"x": strings("a")})
    with pytest.raises(Exception):
        onnxruntime.InferenceSession(regex(pattern), providers=["CPUExecutionProvider"])


@pytest.mark.parametrize("pattern, message", [
    ("(?i)abc", r"a flag or named group '\(\?' at offset 0"),
    ("(?P<n>a)", r"a flag or named group"),
    (r"\pL", r"the escape \\p"),
    ("[[:alpha:]]", "a POSIX class"),
    ("caf\u00e9", "a non-ASCII character at offset 3"),
    (r"(a)\1", r"the escape \\1"),
    (r"[\W]", r"\\W inside brackets"),
])
def test_regex_full_match_refuses_unsupported_re2_syntax(pattern, message):
    with pytest.raises(lockstep.NotImplemented, match=r"Node 'n0' \(RegexFullMatch\).*" + message):
        run(regex(pattern), {"x": strings("a")})


@pytest.mark.parametrize("pattern", [r"(\W|^)a", r"a.b", r"[^x]+", r"\S+", r"\D"])
def test_regex_full_match_refuses_non_ascii_input_where_re2_matches_code_points(pattern):
    assert run(regex(pattern), {"x": strings("")})[0].dtype == np.bool_
    with pytest.raises(lockstep.NotImplemented, match=r"Node 'n0' \(RegexFullMatch\).*element 1, which is not ASCII"):
        run(regex(pattern), {"x": strings("ab", "\u00e9a")})


@pytest.mark.parametrize("pattern", ["(a", "a**", "a{2}+", "a*??", "[a", "a\\"])
def test_regex_full_match_refuses_an_invalid_pattern(pattern):
    with pytest.raises(lockstep.InvalidArgument, match=r"Node 'n0' \(RegexFullMatch\).*not a valid"):
        run(regex(pattern), {"x": strings("a")})


def test_regex_full_match_refuses_a_numeric_input():
    m = model("RegexFullMatch", [("x", F)], [("y", B)], pattern="a")
    with pytest.raises(lockstep.InvalidArgument, match=r"Node 'n0' \(RegexFullMatch\).*input X must be a string"):
        run(m, {"x": np.ones(1, np.float32)})


HAS_CUDA = lockstep.CUDA in lockstep.get_available_providers()


def pipeline_model():
    """Split, normalize, concat and match on one path, then a numeric Cast of the counts (which CUDA may run)."""
    nodes = [
        helper.make_node("StringSplit", ["x"], ["parts", "counts"], delimiter=","),
        helper.make_node("Reshape", ["parts", "flat"], ["words"]),
        helper.make_node("StringNormalizer", ["words"], ["upper"], case_change_action="UPPER"),
        helper.make_node("StringConcat", ["upper", "suffix"], ["tagged"]),
        helper.make_node("RegexFullMatch", ["tagged"], ["matched"], pattern=r"[A-Z]+!"),
        helper.make_node("Cast", ["counts"], ["counts_f"], to=F),
    ]
    inits = [helper.make_tensor("flat", I64, [1], [-1]), helper.make_tensor("suffix", S, [], [b"!"])]
    graph = helper.make_graph(nodes, "pipeline", [helper.make_tensor_value_info("x", S, None)],
                              [helper.make_tensor_value_info(n, t, None) for n, t in
                               [("tagged", S), ("matched", B), ("counts_f", F)]], initializer=inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)])
    m.ir_version = 9
    return m.SerializeToString()


def test_the_string_ops_compose_on_the_cpu():
    tagged, matched, counts = run(pipeline_model(), {"x": strings("a,b", "c1")})
    assert tagged.tolist() == ["A!", "B!", "C1!", "!"]
    assert matched.tolist() == [True, True, False, False]
    assert same_bits(counts, np.array([2, 1], np.float32))


@pytest.mark.skipif(not HAS_CUDA, reason="no GPU on this machine")
def test_a_cuda_session_runs_the_string_ops_on_the_cpu_with_the_cpu_results(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    options = lockstep.SessionOptions()
    options.enable_profiling = True
    s = lockstep.InferenceSession(pipeline_model(), options, providers=[lockstep.CUDA])
    feeds = {"x": strings("a,b", "c1")}
    ours, cpu = s.run(None, feeds), run(pipeline_model(), feeds)
    assert all(same_values(a, b) for a, b in zip(ours, cpu))
    placed = {e["op_type"]: e["provider"] for e in s.profile_events() if e["category"] == "Node"}
    for op in ("StringSplit", "StringNormalizer", "StringConcat", "RegexFullMatch"):
        assert placed[op] == lockstep.CPU
    assert placed["Cast"] == lockstep.CUDA
    s.end_profiling()
    with pytest.raises(lockstep.NotImplemented, match="has no kernel for StringSplit and CPU fallback is disabled"):
        options = lockstep.SessionOptions()
        options.add_session_config_entry("session.disable_cpu_ep_fallback", "1")
        lockstep.InferenceSession(pipeline_model(), options, providers=[lockstep.CUDA])
