"""LoRA adapters (onnxruntime's AdapterFormat, LoraAdapter and RunOptions.add_active_adapter): files in
onnxruntime's format both ways, parameters fed to a run by name, and clear errors for bad files and overlaps."""

import numpy as np
import pytest
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper

import lockstep
from bits import same_bits

HAS_CUDA = lockstep.CUDA in lockstep.get_available_providers()
A = np.array([[3], [4], [5], [6]], np.float32)
B = np.array([[7, 8, 9, 10]], np.float32)
W = np.arange(1, 17, dtype=np.float32).reshape(4, 4)


def lora_model():
    """output = x W + (x A) B, A [4, dim] and B [dim, 4] inputs with empty (dim 0) initializers."""
    nodes = [h.make_node("MatMul", ["x", "W"], ["base"]), h.make_node("MatMul", ["x", "A"], ["down"]),
             h.make_node("MatMul", ["down", "B"], ["up"]), h.make_node("Add", ["base", "up"], ["output"])]
    inputs = [h.make_tensor_value_info("x", T.FLOAT, [4, 4]), h.make_tensor_value_info("A", T.FLOAT, [4, "dim"]),
              h.make_tensor_value_info("B", T.FLOAT, ["dim", 4])]
    inits = [numpy_helper.from_array(W, "W"), numpy_helper.from_array(np.zeros((4, 0), np.float32), "A"),
             numpy_helper.from_array(np.zeros((0, 4), np.float32), "B")]
    graph = h.make_graph(nodes, "lora", inputs, [h.make_tensor_value_info("output", T.FLOAT, [4, 4])], inits)
    return h.make_model(graph, opset_imports=[h.make_opsetid("", 21)]).SerializeToString()


def write_adapter(lib, path, params, adapter_version=3, model_version=2):
    f = lib.AdapterFormat()
    f.set_adapter_version(adapter_version)
    f.set_model_version(model_version)
    f.set_parameters({name: lib.OrtValue.ortvalue_from_numpy(a) for name, a in params.items()})
    f.export_adapter(str(path))


def loaded(path):
    adapter = lockstep.LoraAdapter()
    adapter.Load(str(path))
    return adapter


PARAMS = {"A": A, "B": B, "steps": np.arange(-2, 3, dtype=np.int64), "half": np.array([1.5, -0.0], np.float16),
          "flags": np.array([[True, False]]), "scalar": np.array(2.5, np.float64)}


def check_read(adapter, params, adapter_version=3, model_version=2):
    assert (adapter.get_format_version(), adapter.get_adapter_version(), adapter.get_model_version()) == \
        (1, adapter_version, model_version)
    got = adapter.get_parameters()
    assert sorted(got) == sorted(params)
    for name, expected in params.items():
        value = got[name].numpy()
        assert value.dtype == expected.dtype and value.shape == expected.shape and same_bits(value, expected), name


def test_adapter_file_round_trip(tmp_path):
    path = tmp_path / "a.onnx_adapter"
    write_adapter(lockstep, path, PARAMS)
    check_read(lockstep.AdapterFormat.read_adapter(str(path)), PARAMS)


@pytest.mark.parametrize("writer, reader", [("lockstep", "onnxruntime"), ("onnxruntime", "lockstep")])
def test_adapter_files_are_onnxruntimes(tmp_path, writer, reader):
    ort = pytest.importorskip("onnxruntime")
    libs = {"lockstep": lockstep, "onnxruntime": ort}
    # onnxruntime's reader refuses bool parameters ("not a supported LoRA parameter type") and scalars ("dims is
    # missing or empty"), which lockstep reads and writes.
    params = {k: v for k, v in PARAMS.items() if k not in ("flags", "scalar")}
    path = tmp_path / "a.onnx_adapter"
    write_adapter(libs[writer], path, params)
    check_read(libs[reader].AdapterFormat.read_adapter(str(path)), params)


@pytest.mark.parametrize("provider", [lockstep.CPU] + ([lockstep.CUDA] if HAS_CUDA else []))
def test_active_adapter_feeds_its_parameters(tmp_path, provider):
    path = tmp_path / "lora.onnx_adapter"
    write_adapter(lockstep, path, {"A": A, "B": B})
    session = lockstep.InferenceSession(lora_model(), providers=[provider])
    x = np.ones((4, 4), np.float32)
    base, = session.run(None, {"x": x})
    assert same_bits(base, x @ W)
    options = lockstep.RunOptions()
    options.add_active_adapter(loaded(path))
    adapted, = session.run(None, {"x": x}, options)
    explicit, = session.run(None, {"x": x, "A": A, "B": B})
    assert same_bits(adapted, explicit) and np.all(adapted == x @ W + (x @ A) @ B)
    from_values, = session.run_with_ort_values(["output"], {"x": lockstep.OrtValue.ortvalue_from_numpy(x)}, options)
    assert same_bits(from_values.numpy(), adapted)


def test_overlapping_parameters_are_refused(tmp_path):
    path = tmp_path / "lora.onnx_adapter"
    write_adapter(lockstep, path, {"A": A, "B": B})
    session = lockstep.InferenceSession(lora_model())
    options = lockstep.RunOptions()
    options.add_active_adapter(loaded(path))
    with pytest.raises(lockstep.InvalidArgument, match="adapter parameter 'A' is also given"):
        session.run(None, {"x": np.ones((4, 4), np.float32), "A": A}, options)
    options.add_active_adapter(loaded(path))
    with pytest.raises(lockstep.InvalidArgument, match="is also given"):
        session.run(None, {"x": np.ones((4, 4), np.float32)}, options)
    with pytest.raises(TypeError, match="LoraAdapter"):
        options.add_active_adapter("lora.onnx_adapter")


def test_bad_adapter_files_are_clear_errors(tmp_path):
    good = tmp_path / "good.onnx_adapter"
    write_adapter(lockstep, good, {"A": A})
    data = good.read_bytes()
    cases = {"no_identifier.onnx_adapter": b"\0" * 4 + b"NOPE" + data[8:],
             "truncated.onnx_adapter": data[:len(data) // 2],
             "tiny.onnx_adapter": b"TO"}
    for name, content in cases.items():
        (tmp_path / name).write_bytes(content)
        with pytest.raises(lockstep.InvalidArgument, match=f"'{tmp_path / name}' is not an onnxruntime adapter file"):
            loaded(tmp_path / name)
    with pytest.raises(lockstep.Fail, match="cannot read adapter file"):
        loaded(tmp_path / "missing.onnx_adapter")
