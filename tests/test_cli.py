"""The command line: info, run (seeded random inputs, given inputs, output files), check, bench, demo."""

import json
import re
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from lockstep import _core
from lockstep.cli import main


@pytest.fixture
def model_path(tmp_path):
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 2])
    w = numpy_helper.from_array(np.arange(8, dtype=np.float32).reshape(4, 2), "w")
    graph = helper.make_graph([helper.make_node("MatMul", ["x", "w"], ["t"]), helper.make_node("Relu", ["t"], ["y"])],
                              "g", [x], [y], initializer=[w])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], producer_name="cli-test")
    model.ir_version = 9  # what onnxruntime 1.30 reads, for `bench --against onnxruntime`
    path = tmp_path / "m.onnx"
    onnx.save(model, str(path))
    return str(path)


def test_info(model_path, capsys):
    assert main(["info", model_path]) == 0
    out = capsys.readouterr().out
    assert "x: float [N, 4]" in out
    assert "ai.onnx 13" in out
    assert "MatMul" in out and "Relu" in out and "cli-test" in out


def test_ops_lists_the_op_table_and_the_readme_table_matches_it(capsys):
    assert main(["ops"]) == 0
    out = capsys.readouterr().out
    assert re.search(r"^conv:$", out, re.M) and re.search(r"^  Conv +opsets 1-28 ", out, re.M)
    assert re.search(r"^  LSTM +opsets", out, re.M) and re.search(r"^  Attention +opsets 23-", out, re.M)
    assert main(["ops", "--markdown"]) == 0
    table = capsys.readouterr().out
    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text()
    rows = [line for line in table.splitlines() if line.startswith("| ")]
    # The README is written from a CUDA build; a CPU-only build prints the same rows without device marks.
    if not _core.built_with_cuda():
        readme = readme.replace(" (CPU kernel only)", "")
    for row in rows:
        assert row in readme, f"README table row out of date: {row}"


def test_run_seeded_random_inputs_are_reproducible(model_path, tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    assert main(["run", model_path, "--seed", "3", "--output-dir", str(a)]) == 0
    assert main(["run", model_path, "--seed", "3", "--threads", "2", "--output-dir", str(b)]) == 0
    assert np.load(a / "y.npy").tobytes() == np.load(b / "y.npy").tobytes()


def test_run_with_given_input(model_path, tmp_path):
    x = np.ones((3, 4), np.float32)
    np.save(tmp_path / "x.npy", x)
    assert main(["run", model_path, "--input", f"x={tmp_path / 'x.npy'}", "--output-dir", str(tmp_path)]) == 0
    np.testing.assert_array_equal(np.load(tmp_path / "y.npy"), x @ np.arange(8, dtype=np.float32).reshape(4, 2))


def test_run_bad_input_name(model_path, tmp_path):
    np.save(tmp_path / "z.npy", np.ones(1, np.float32))
    with pytest.raises(SystemExit, match="unknown input names: z"):
        main(["run", model_path, "--input", f"z={tmp_path / 'z.npy'}"])


def test_check_and_demo(model_path):
    assert main(["check", model_path]) == 0
    assert main(["demo"]) == 0


def test_missing_model_is_an_error_not_a_crash(capsys):
    assert main(["info", "/nonexistent.onnx"]) == 1
    assert "nonexistent.onnx" in capsys.readouterr().err


def latency_rows(out):
    """{runtime: (p50, p90)} from the table `lockstep bench` prints."""
    rows = {}
    for line in out.splitlines():
        words = line.split()
        if words and words[0] in ("lockstep", "onnxruntime") and len(words) == 6:
            rows[words[0]] = (float(words[1]), float(words[2]))
    return rows


def test_bench_prints_percentiles(model_path, capsys):
    assert main(["bench", model_path, "--runs", "3", "--warmup", "1", "--threads", "1"]) == 0
    out = capsys.readouterr().out
    assert "p50 ms" in out and "threads: 1" in out and "runs: 3 after 1 warm-up" in out
    rows = latency_rows(out)
    assert list(rows) == ["lockstep"]
    p50, p90 = rows["lockstep"]
    assert 0 < p50 <= p90
    assert "VmRSS" in out and "onnxruntime" not in out


def test_bench_against_onnxruntime(model_path, capsys):
    pytest.importorskip("onnxruntime")
    assert main(["bench", model_path, "--runs", "2", "--warmup", "0", "--against", "onnxruntime",
                 "--shape", "x=8x4"]) == 0
    out = capsys.readouterr().out
    rows = latency_rows(out)
    assert set(rows) == {"lockstep", "onnxruntime"}
    ratio = float(re.search(r"lockstep/onnxruntime: p50 ([0-9.]+)", out).group(1))
    assert ratio == pytest.approx(rows["lockstep"][0] / rows["onnxruntime"][0], rel=0.05, abs=0.01)
    assert float(re.search(r"paired ([0-9.]+)", out).group(1)) > 0


def test_paired_ratio_is_the_median_of_the_rounds_ratios():
    from lockstep import bench
    # Round 2 ran on a machine twice as slow for both runtimes: its ratio is still 2, and so is the median.
    assert bench.paired_ratio([2.0, 8.0, 3.0], [1.0, 4.0, 1.0]) == 2.0
    assert bench.summarize([3.0, 1.0, 2.0])["min_ms"] == 1.0


def test_bench_without_onnxruntime_is_a_clear_error(model_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "onnxruntime", None)  # makes `import onnxruntime` fail
    with pytest.raises(SystemExit, match="--against onnxruntime needs the onnxruntime package"):
        main(["bench", model_path, "--runs", "1", "--against", "onnxruntime"])


def test_bench_profile_lists_op_types_and_nodes(model_path, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["bench", model_path, "--runs", "2", "--warmup", "1", "--profile", "--shape", "x=16x4"]) == 0
    out = capsys.readouterr().out
    profile = out[out.index("lockstep profile"):]
    op_rows = re.findall(r"^  (MatMul|Relu) +(\d+) +[0-9.]+ +[0-9.]+$", profile, re.M)
    assert sorted(op_rows) == [("MatMul", "1"), ("Relu", "1")]
    assert re.search(r"^  Relu_1 +Relu .* float\[16, 2\]$", profile, re.M)
    (trace,) = tmp_path.glob("onnxruntime_profile__*.json")
    with open(trace) as f:
        assert len([e for e in json.load(f) if e["cat"] == "Node"]) == 2 * 3  # warm-up and timed runs


def test_bench_bad_shape_names_the_option(model_path):
    with pytest.raises(SystemExit, match="--shape names no input of the model: z"):
        main(["bench", model_path, "--runs", "1", "--shape", "z=1x4"])
    with pytest.raises(SystemExit, match="--shape takes NAME=DIMS"):
        main(["bench", model_path, "--runs", "1", "--shape", "x=1by4"])
