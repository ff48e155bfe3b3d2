"""`lockstep compare` and the float64 reference provider: the seed Conv against an independent float64 computation,
the node tests on the reference provider, per-node divergence on a perturbed node, the HTML report in a headless
browser, input generation and --shape."""

import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import lockstep
from lockstep import comparison
from lockstep.cli import main
from lockstep.reference import ReferenceSession

HERE = Path(__file__).resolve().parent


@pytest.fixture
def seed_model(tmp_path):
    """conv_model.onnx, written by the seed's own script."""
    subprocess.run([sys.executable, str(HERE / "seed" / "make_conv_model.py")], cwd=tmp_path, check=True)
    return tmp_path / "conv_model.onnx"


def conv2d_float64(x, w, b, pad):
    """An independent float64 Conv (stride 1, no dilation, one group): padded windows contracted with einsum."""
    x = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    kh, kw = w.shape[2:]
    windows = np.lib.stride_tricks.sliding_window_view(x, (kh, kw), axis=(2, 3))  # n, c, h, w, kh, kw
    return np.einsum("nchwij,ocij->nohw", windows, w.astype(np.float64)) + b.astype(np.float64)[None, :, None, None]


def seed_conv_error(model_path, x):
    model = onnx.load(str(model_path))
    weights = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    exact = conv2d_float64(x, weights["weight"], weights["bias"], 1)
    ours = lockstep.InferenceSession(str(model_path)).run(None, {"input": x})[0]
    return float(np.abs(ours.astype(np.float64) - exact).max())


def test_seed_conv_max_abs_error_matches_an_independent_float64_conv(seed_model, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["compare", "conv_model.onnx", "--providers", "cpu,reference", "--json", "r.json"]) == 0
    result = json.loads((tmp_path / "r.json").read_text())
    assert result["inputs"]["input"]["source"] == "standard normal"
    feeds, _ = comparison.make_inputs(onnx.load(str(seed_model)), seed=result["seed"])
    independent = seed_conv_error(seed_model, feeds["input"])
    reported = result["outputs"]["output"]["cpu"]["max_abs_vs_reference"]
    assert independent > 0
    assert abs(reported - independent) <= 0.01 * independent, (reported, independent)
    # The reference row is the float64 result rounded once: within half an ulp everywhere.
    assert result["outputs"]["output"]["reference"]["max_ulp_vs_reference"] <= 0.5


def test_seed_conv_on_the_seeds_all_ones_input(seed_model, tmp_path):
    x = np.ones((1, 256, 14, 14), np.float32)
    np.save(tmp_path / "ones.npy", x)
    result = lockstep.compare(str(seed_model), providers=["cpu"], inputs={"input": x})
    independent = seed_conv_error(seed_model, x)
    reported = result["outputs"]["output"]["cpu"]["max_abs_vs_reference"]
    assert abs(reported - independent) <= 0.01 * independent, (reported, independent)


def load_node_runner():
    spec = importlib.util.spec_from_file_location("lockstep_node_runner", HERE / "node" / "runner.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


# Cases whose expected output depends on float32 rounding of an intermediate, so that computing it in float64
# legitimately lands on the other side of a rounding step (the reference is more accurate, not wrong).
FLOAT32_DEFINED_CASES = {
    "test_dynamicquantizelinear_expanded": "x / scale is rounded to float32 before Round; in double one element "
                                           "of the six rounds to the neighbouring integer",
}


# Cases onnx's ReferenceEvaluator (which the reference provider runs) computes wrongly: its Loop stacks scan outputs
# with np.vstack, so scalar elements give (n, 1) instead of (n,); its Scan has no opset-8 form (it reads the empty
# sequence_lens input as a state); its AffineGrid casts the grid to float32; its Optional of a sequence returns the
# sequence wrapped in one more list; its MeanVarianceNormalization (a function body) keeps float32 constants.
REFERENCE_EVALUATOR_GAPS = {
    **{f"test_affine_grid_{d}{a}": "its AffineGrid returns float32 whatever theta's type"
       for d in ("2d", "3d") for a in ("", "_align_corners")},
    "test_range_float_type_positive_delta_expanded": "Loop scan output of scalars stacked as (n, 1)",
    "test_range_float16_type_positive_delta_expanded": "Loop scan output of scalars stacked as (n, 1)",
    "test_range_int32_type_negative_delta_expanded": "Loop scan output of scalars stacked as (n, 1)",
    "test_range_bfloat16_type_positive_delta_expanded": "Loop scan output of scalars stacked as (n, 1)",
    "test_scan_sum": "no Scan-8",
    "test_if_opt": "Optional of a sequence nested in one more list",
    "test_mvn": "its MeanVarianceNormalization body adds float32 constants to the double values (type mismatch)",
}


def test_reference_passes_the_node_cases_the_cpu_passes():
    runner = load_node_runner()
    data_dir, index = runner.load_index()
    expected = runner.read_expectations(HERE / "node" / "expect_cpu.txt")
    names = sorted(n for n, (status, _) in expected.items()
                   if status == "pass" and n in index and n not in FLOAT32_DEFINED_CASES
                   and n not in REFERENCE_EVALUATOR_GAPS)
    assert len(names) > 900
    results = runner.run_cases(names, "lockstep", "reference", data_dir, index)
    failed = [f"{r.name}: {r.reason}" for r in results.values() if r.status != "pass"]
    assert not failed, f"{len(failed)} of {len(names)} failed on the reference provider:\n" + "\n".join(failed)
    # And no float32 tensor inside: every intermediate value of every case (onnx's ops keep their input type).
    leaks = []
    for name in names:
        case = runner.load_case(data_dir, name, index[name])
        feeds = {vi.name: x for vi, x in zip(case.model.graph.input, case.inputs)}
        values = ReferenceSession(case.model_bytes).run_float64(None, feeds, intermediate=True)
        leaks += [f"{name}: {k}" for k, v in values.items() if getattr(v, "dtype", None) == np.float32]
    assert not leaks, "float32 values inside the reference:\n" + "\n".join(leaks)


def test_reference_computes_in_double():
    """1 + 2^-30 - 1 is 0 in float32 and 2^-30 in double; the output is rounded once, at the end."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])
    one = numpy_helper.from_array(np.ones(1, np.float32), "one")
    graph = helper.make_graph([helper.make_node("Add", ["x", "one"], ["t"]), helper.make_node("Sub", ["t", "one"], ["y"])],
                              "g", [x], [y], initializer=[one])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    feed = {"x": np.array([2.0 ** -30], np.float32)}
    (out,) = ReferenceSession(model.SerializeToString()).run(None, feed)
    assert out.dtype == np.float32 and out[0] == np.float32(2.0 ** -30)
    assert lockstep.InferenceSession(model.SerializeToString()).run(None, feed)[0][0] == 0.0


def chain_model():
    """Conv -> Relu -> Mul (node 'scale') -> Add -> Softmax, with named nodes."""
    rng = np.random.default_rng(1)
    inits = [numpy_helper.from_array(rng.standard_normal((4, 3, 3, 3)).astype(np.float32), "w"),
             numpy_helper.from_array(np.full(1, 0.75, np.float32), "s"),
             numpy_helper.from_array(rng.standard_normal((1, 4, 6, 6)).astype(np.float32), "b")]
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], name="conv", pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c"], ["r"], name="relu"),
             helper.make_node("Mul", ["r", "s"], ["m"], name="scale"),
             helper.make_node("Add", ["m", "b"], ["a"], name="shift"),
             helper.make_node("Softmax", ["a"], ["y"], name="softmax", axis=1)]
    graph = helper.make_graph(nodes, "chain", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 6, 6])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, 6, 6])], initializer=inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def perturbed(model_bytes):
    """The same model with node 'scale' replaced by one that scales by 1% more."""
    model = onnx.load_model_from_string(model_bytes)
    model.graph.initializer.append(numpy_helper.from_array(np.full(1, 0.75 * 1.01, np.float32), "s_perturbed"))
    node = next(n for n in model.graph.node if n.name == "scale")
    node.input[1] = "s_perturbed"
    return model.SerializeToString()


def test_per_node_names_the_perturbed_node():
    runtime = comparison.Runtime("perturbed", lambda b: lockstep.InferenceSession(perturbed(b)))
    result = lockstep.compare(chain_model(), providers=["cpu", runtime], per_node=True)
    found = result["first_divergence"]
    assert found["between"]["cpu vs perturbed"]["node"] == "scale"
    assert found["between"]["cpu vs perturbed"]["op"] == "Mul"
    assert found["error_jump"]["perturbed"]["node"] == "scale"
    assert found["error_jump"]["cpu"] is None
    assert [n["name"] for n in result["nodes"]] == ["conv", "relu", "scale", "shift", "softmax"]
    conv = result["nodes"][0]["outputs"]["c"]
    assert conv["perturbed"]["bit_identical_to_baseline"] is True
    assert result["nodes"][0]["input_shapes"] == [[1, 3, 6, 6], [4, 3, 3, 3]]


def test_per_node_on_the_command_line(tmp_path, capsys):
    path = tmp_path / "chain.onnx"
    onnx.save(chain_model(), str(path))
    assert main(["compare", str(path), "--per-node", "--against", "onnxruntime", "--json", str(tmp_path / "r.json")]) == 0
    out = capsys.readouterr().out
    assert "cpu vs float64: no node's error jumps" in out
    assert "cpu vs onnxruntime-cpu:" in out
    result = json.loads((tmp_path / "r.json").read_text())
    assert len(result["nodes"]) == 5
    assert result["outputs"]["y"]["onnxruntime-cpu"]["rel_l2_vs_reference"] < 1e-6


def find_chromium():
    for name in ("chromium", "chromium-browser"):
        if shutil.which(name):
            return shutil.which(name)
    return None


def ensure_chromium():
    """Debian's chromium, installed as scripts/setup.sh installs it when it is missing."""
    found = find_chromium()
    if found:
        return found
    sudo = [] if os.geteuid() == 0 else ["sudo", "-n"]
    try:
        subprocess.run(sudo + ["apt-get", "install", "-y", "-q", "chromium"], check=True, capture_output=True,
                       timeout=600)
    except (OSError, subprocess.SubprocessError) as e:
        pytest.skip(f"chromium is not installed and could not be installed with apt-get ({e})")
    return find_chromium() or pytest.skip("apt-get installed no chromium binary")


# Loads the report in a frame and writes what rendered: the summary table's rows, and images decoded with a size.
CHECK_PAGE = """<!DOCTYPE html><html><body><pre id="result">pending</pre>
<iframe id="report" src="index.html" width="1200" height="900"></iframe>
<script>
document.getElementById("report").onload = function () {
  var doc = this.contentDocument;
  var rows = doc.querySelectorAll("#summary tr").length - 1;
  var images = Array.prototype.slice.call(doc.images);
  var drawn = images.filter(function (i) { return i.complete && i.naturalWidth > 100 && i.naturalHeight > 100; });
  document.getElementById("result").textContent = "rows=" + rows + " images=" + images.length + " drawn=" + drawn.length;
};
</script></body></html>"""


def test_report_renders_in_headless_chromium(tmp_path):
    chromium = ensure_chromium()
    report = tmp_path / "report"
    runtime = comparison.Runtime("perturbed", lambda b: lockstep.InferenceSession(perturbed(b)))
    result = lockstep.compare(chain_model(), providers=["cpu", "reference", runtime], per_node=True, report=str(report))
    assert result["report"] == str(report / "index.html")
    (report / "check.html").write_text(CHECK_PAGE)
    dom = subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu", "--allow-file-access-from-files",
                          "--virtual-time-budget=10000", "--dump-dom", (report / "check.html").as_uri()],
                         capture_output=True, text=True, timeout=120).stdout
    # Three runtimes of one output; a histogram each, and the error along the graph.
    assert "rows=3 images=4 drawn=4" in dom, dom[-2000:]


def embedding_model():
    table = numpy_helper.from_array(np.random.default_rng(2).standard_normal((50, 8)).astype(np.float32), "table")
    graph = helper.make_graph([helper.make_node("Gather", ["table", "ids"], ["e"]),
                               helper.make_node("Relu", ["e"], ["y"])], "embed",
                              [helper.make_tensor_value_info("ids", TensorProto.INT64, ["batch", "sequence"])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", "sequence", 8])],
                              initializer=[table])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def test_token_ids_stay_inside_the_embedding_and_defaults_are_printed(tmp_path, capsys):
    path = tmp_path / "embed.onnx"
    onnx.save(embedding_model(), str(path))
    assert main(["compare", str(path), "--shape", "ids=2x300", "--seed", "5"]) == 0
    assert "ids: int64 [2, 300] random integers in [0, 50)" in capsys.readouterr().out
    feeds, described = comparison.make_inputs(embedding_model(), seed=5)
    assert described["ids"]["defaulted_dims"] == {"batch": 1, "sequence": 16}
    assert feeds["ids"].min() >= 0 and feeds["ids"].max() < 50 and len(np.unique(feeds["ids"])) > 5
    assert main(["compare", str(path)]) == 0
    assert "symbolic dims set to batch=1, sequence=16" in capsys.readouterr().out


def test_shape_on_run_and_check(tmp_path, capsys):
    path = tmp_path / "embed.onnx"
    onnx.save(embedding_model(), str(path))
    assert main(["run", str(path), "--shape", "ids=3x7", "--output-dir", str(tmp_path)]) == 0
    assert np.load(tmp_path / "y.npy").shape == (3, 7, 8)
    assert main(["check", str(path), "--shape", "ids=3x7"]) == 0
    with pytest.raises(SystemExit, match="--shape takes NAME=DIMS"):
        main(["run", str(path), "--shape", "ids=3by7"])


def test_bad_names_are_clear_errors(seed_model):
    with pytest.raises(SystemExit, match="unknown provider 'tpu'"):
        main(["compare", str(seed_model), "--providers", "cpu,tpu"])
    with pytest.raises(SystemExit, match="no input of the model is named nope"):
        main(["compare", str(seed_model), "--shape", "nope=1x2"])


def test_cpu_and_cuda_are_bit_identical_on_the_seed(seed_model):
    if lockstep.CUDA not in lockstep.get_available_providers():
        pytest.skip("no GPU here: CUDA is not available")
    result = lockstep.compare(str(seed_model), providers=["cpu", "cuda"])
    assert result["outputs"]["output"]["bit_identical"] is True
    assert result["outputs"]["output"]["max_ulp_between"] == 0


@pytest.mark.parametrize("name", ["resnet50", "mobilenet_v3_large", "efficientnet_b0", "vit_b_16_features",
                                  "bert_base_encoder", "gpt2_small"])
def test_cpu_and_cuda_are_bit_identical_on_the_model_fixtures(name):
    if lockstep.CUDA not in lockstep.get_available_providers():
        pytest.skip("no GPU here: CUDA is not available")
    sys.path.insert(0, str(HERE / "models"))
    from fixture_format import restore_weights

    model = restore_weights(onnx.load(str(HERE / "models" / "fixtures" / f"{name}.onnx")))
    result = lockstep.compare(model, providers=["cpu", "cuda"])
    for output, entry in result["outputs"].items():
        assert entry["bit_identical"] is True, (output, entry)
        assert entry["cuda"]["max_abs_vs_reference"] == entry["cpu"]["max_abs_vs_reference"]


class Terminal:
    def __init__(self):
        self.text = ""

    def isatty(self):
        return True

    def write(self, text):
        self.text += text

    def flush(self):
        pass


def test_progress_bar_on_a_terminal(seed_model, monkeypatch):
    terminal = Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    lockstep.compare(str(seed_model), providers=["cpu"], progress=True)
    steps = [line for line in terminal.text.split("\r") if line]
    assert steps[0].startswith("[##########....................] 1/3") and "float64 reference" in steps[0]
    assert steps[-1].startswith("[##############################] 3/3") and steps[-1].endswith("\n")


def test_indices_into_a_constant_node_stay_inside_it():
    table = helper.make_node("Constant", [], ["table"], value=numpy_helper.from_array(np.ones((7, 3), np.float32)))
    graph = helper.make_graph([table, helper.make_node("Gather", ["table", "ids"], ["y"])], "g",
                              [helper.make_tensor_value_info("ids", TensorProto.INT64, [100])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [100, 3])])
    feeds, described = comparison.make_inputs(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]))
    assert described["ids"]["source"] == "random integers in [0, 7) (indices: the size they index)"
    assert feeds["ids"].max() == 6
