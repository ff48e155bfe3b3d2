"""Self-tests of runner.py's comparisons, expectation lists and isolation."""
import importlib.util
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

HERE = Path(__file__).resolve().parent
spec = importlib.util.spec_from_file_location("lockstep_node_runner_selftest", HERE / "runner.py")
runner = importlib.util.module_from_spec(spec)
sys.modules[spec.name] = runner  # dataclasses look their module up there
spec.loader.exec_module(runner)


def test_bitwise_equal_treats_all_nans_alike():
    a = np.array([1.0, np.nan, 3.0], np.float32)
    b = a.copy()
    b.view(np.uint32)[1] = 0x7FC00001  # another NaN payload
    assert runner.bitwise_diff(a, b) is None


def test_bitwise_counts_ulps():
    a = np.array([1.0, 2.0, 0.0], np.float32)
    b = np.array([np.nextafter(np.float32(1), np.float32(2)), 2.0, -0.0], np.float32)
    assert runner.bitwise_diff(a, b) == ("2/3 differ, worst 1 ulp", 1)
    c = a.copy()
    c[1] = np.nextafter(np.nextafter(np.float32(2), np.float32(0)), np.float32(0))
    assert runner.bitwise_diff(a, c) == ("1/3 differ, worst 2 ulp", 2)


def test_bitwise_nan_against_number_differs():
    a = np.array([np.nan], np.float64)
    assert "1/1 differ" in runner.bitwise_diff(a, np.zeros(1))[0]


def test_bitwise_ints_and_dtype():
    assert runner.bitwise_diff(np.array([1, 5]), np.array([1, 2])) == ("1/2 differ, worst 3 ulp", 3)
    assert runner.bitwise_diff(np.zeros(2, np.int32), np.zeros(2, np.int64))[0].startswith("int32")
    strings = np.array(["a", "b"], dtype=object)
    assert runner.bitwise_diff(strings, np.array(["a", "c"], dtype=object)) == ("1/2 strings differ", -1)


def test_bitwise_ml_dtypes():
    ml_dtypes = pytest.importorskip("ml_dtypes")
    a = np.array([1.0, np.nan], ml_dtypes.bfloat16)
    b = a.copy()
    assert runner.bitwise_diff(a, b) is None
    b[0] = 1.0078125  # next bfloat16 above 1
    assert runner.bitwise_diff(a, b) == ("1/2 differ, worst 1 ulp", 1)


def test_compare_bitwise_reports_the_worst_output():
    import onnx.helper as h
    from onnx import TensorProto
    graph = h.make_graph([], "g", [], [h.make_tensor_value_info(n, TensorProto.FLOAT, [1]) for n in "yz"])
    case = runner.Case("c", h.make_model(graph), b"")
    one = np.ones(1, np.float32)
    near, far = np.nextafter(one, np.float32(2)), np.float32([1.5])
    assert "output 1 (z)" in runner.compare_bitwise(case, [one, one], [near, far])


def test_compare_output_tolerance_and_shape():
    ref = np.array([1.0, 2.0], np.float32)
    assert runner.compare_output(0, "y", ref * (1 + 1e-4), ref, 1e-3, 1e-7) is None
    assert "1/2 mismatched" in runner.compare_output(0, "y", ref + np.float32([0, 1]), ref, 1e-3, 1e-7)
    assert "shape" in runner.compare_output(0, "y", ref[:1], ref, 1e-3, 1e-7)
    assert "dtype" in runner.compare_output(0, "y", ref.astype(np.float64), ref, 1e-3, 1e-7)


def test_compare_output_ml_dtypes():
    ml_dtypes = pytest.importorskip("ml_dtypes")
    ref = np.array([1.0, 3.0], ml_dtypes.bfloat16)
    assert runner.compare_output(0, "y", ref.copy(), ref, 1e-3, 1e-7) is None
    out = np.array([1.0, 2.0], ml_dtypes.bfloat16)
    assert "mismatched" in runner.compare_output(0, "y", out, ref, 1e-3, 1e-7)


def test_strip_source_locations():
    text = ("FAIL : /src/x/model.cc:202 virtual ns::Status ns::A<T>::f(const int&, "
            "std::vector<int>) const [with T = float] bad IR version")
    assert runner.one_line(text) == "FAIL : bad IR version"
    assert runner.one_line("ops/gemm.cc:12: shape mismatch (a) b") == "shape mismatch (a) b"


def test_expectations_round_trip_and_diff(tmp_path):
    path = tmp_path / "expect.txt"
    entries = {"test_b": ("fail", "why not"), "test_a": ("pass", ""), "test_c": ("skip", "nope")}
    runner.write_expectations(path, entries, "rt", "cpu")
    text = path.read_text()
    assert text.startswith("#") and text.index("test_a  pass") < text.index("test_b  fail  why not")
    assert runner.read_expectations(path) == entries
    R = runner.Result
    results = {"test_a": R("test_a", "fail", "x"), "test_b": R("test_b", "pass"),
               "test_d": R("test_d", "pass")}
    diff = runner.compare_expectations(results, entries)
    assert [r.name for r in diff.regressions] == ["test_a"]
    assert [r.name for r in diff.unexpected_passes] == ["test_b"]
    assert [r.name for r in diff.new_cases] == ["test_d"]
    assert diff.stale == ["test_c"]


FAKE_RUNTIME = textwrap.dedent('''
    import os, signal
    import onnx
    import onnxruntime
    SessionOptions = onnxruntime.SessionOptions
    def InferenceSession(model, sess_options=None, providers=None):
        if any(n.op_type == "Abs" for n in onnx.load_model_from_string(model).graph.node):
            os.kill(os.getpid(), signal.SIGSEGV)
        return onnxruntime.InferenceSession(model, sess_options, providers=providers)
''')


def test_isolated_run_survives_a_crash(tmp_path, monkeypatch):
    pytest.importorskip("onnxruntime")
    (tmp_path / "crashy_runtime.py").write_text(FAKE_RUNTIME)
    monkeypatch.syspath_prepend(str(tmp_path))  # workers must inherit this
    data_dir, index = runner.load_index()
    names = ["test_abs", "test_relu", "test_sequence_map_identity_1_sequence"]
    results = runner.run_cases(names, "crashy_runtime", "cpu", data_dir, index, jobs=2)
    assert results["test_abs"].status == "fail"
    assert "SIGSEGV" in results["test_abs"].reason
    assert results["test_relu"].status == "pass"
    assert (results[names[2]].status, results[names[2]].reason) == ("pass", "")  # sequences in and out


def test_map_types_are_skipped():
    import onnx
    from onnx import helper as h

    seq = h.make_tensor_sequence_value_info("s", onnx.TensorProto.FLOAT, None)
    opt = h.make_value_info("o", h.make_optional_type_proto(seq.type))
    table = h.make_value_info("m", h.make_map_type_proto(onnx.TensorProto.INT64, h.make_tensor_type_proto(1, None)))
    graph = lambda *values: h.make_model(h.make_graph([], "g", list(values), []))  # noqa: E731
    assert runner.supported_types(graph(seq, opt))
    assert not runner.supported_types(graph(table))
