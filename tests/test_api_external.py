"""External initializers given from memory: SessionOptions.add_external_initializers (values by initializer name) and
add_external_initializers_from_files_in_memory (file contents by location), checked byte for byte against a
session that reads the same external data from disk, and against onnxruntime where it behaves the same."""

import mmap

import numpy as np
import onnx
import onnxruntime
import pytest
from onnx import TensorProto, helper, numpy_helper

import lockstep

HAS_CUDA = lockstep.CUDA in lockstep.get_available_providers()
W = np.linspace(-3, 3, 12, dtype=np.float32).reshape(4, 3)
B = np.array([0.5, -1.25, 7], np.float32)
X = np.arange(8, dtype=np.float32).reshape(2, 4) / 3


def scale_model():
    """Y = X @ W + B, with both initializers in the external file weights.bin."""
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["X", "W"], ["XW"]), helper.make_node("Add", ["XW", "B"], ["Y"])], "g",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, ["N", 4])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, ["N", 3])],
        initializer=[numpy_helper.from_array(W, "W"), numpy_helper.from_array(B, "B")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 9
    return model


def save_external(tmp_path, model=None, location="weights.bin"):
    """Writes model.onnx with its initializers in `location`; returns (model path, model bytes, file bytes)."""
    path = tmp_path / "model.onnx"
    onnx.save(model or scale_model(), str(path), save_as_external_data=True, all_tensors_to_one_file=True,
              location=location, size_threshold=0)
    return path, path.read_bytes(), (tmp_path / location).read_bytes()


def run(model, options=None, provider=lockstep.CPU):
    return lockstep.InferenceSession(model, options, providers=[provider]).run(None, {"X": X})[0]


def value(a):
    return lockstep.OrtValue.ortvalue_from_numpy(a)


def with_initializers(pairs):
    options = lockstep.SessionOptions()
    options.add_external_initializers(list(pairs), [value(a) for a in pairs.values()])
    return options


def with_files(files):
    options = lockstep.SessionOptions()
    options.add_external_initializers_from_files_in_memory(list(files), list(files.values()),
                                                           [len(memoryview(b).cast("B")) for b in files.values()])
    return options


def test_external_initializers_give_the_bytes_of_the_file_on_disk_without_reading_it(tmp_path):
    path, model_bytes, _ = save_external(tmp_path)
    from_disk = run(str(path))
    (tmp_path / "weights.bin").unlink()  # the session must not need it
    options = with_initializers({"W": W, "B": B})
    assert run(str(path), options).tobytes() == from_disk.tobytes()
    assert run(model_bytes, options).tobytes() == from_disk.tobytes()  # a model from bytes has no folder to read


def test_external_initializers_replace_the_files_values_as_in_onnxruntime(tmp_path):
    path, _, _ = save_external(tmp_path)
    w2, b2 = (W * 2 - 1).astype(np.float32), (B[::-1] + 3).astype(np.float32)
    ours = run(str(path), with_initializers({"W": w2, "B": b2}))
    model = scale_model()
    model.graph.ClearField("initializer")
    model.graph.initializer.extend([numpy_helper.from_array(w2, "W"), numpy_helper.from_array(b2, "B")])
    assert ours.tobytes() == run(model.SerializeToString()).tobytes()
    options = onnxruntime.SessionOptions()
    options.add_external_initializers(["W", "B"], [onnxruntime.OrtValue.ortvalue_from_numpy(a) for a in (w2, b2)])
    theirs = onnxruntime.InferenceSession(str(path), options, providers=["CPUExecutionProvider"]).run(None, {"X": X})
    np.testing.assert_allclose(ours, theirs[0], rtol=1e-6)  # MatMul's rounding is lockstep's own


def test_only_some_initializers_from_memory_the_others_from_disk(tmp_path):
    path, _, _ = save_external(tmp_path)
    assert run(str(path), with_initializers({"B": B})).tobytes() == run(str(path)).tobytes()


@pytest.mark.parametrize("name, array, message", [
    ("V", B, "add_external_initializers: the model has no initializer 'V' in its main graph"),
    ("W", W.T.copy(), "add_external_initializers: 'W' is float\\[3,4\\], the model's initializer float\\[4,3\\]"),
    ("B", B.astype(np.float64), "'B' is double\\[3\\], the model's initializer float\\[3\\]"),
])
def test_an_external_initializer_that_does_not_fit_names_it(tmp_path, name, array, message):
    path, _, _ = save_external(tmp_path)
    with pytest.raises(lockstep.InvalidArgument, match=message):
        run(str(path), with_initializers({name: array}))


def test_an_initializer_with_inline_data_is_not_an_external_one_as_in_onnxruntime():
    with pytest.raises(lockstep.InvalidArgument, match="initializer 'W' has its data inline.*add_initializer"):
        run(scale_model().SerializeToString(), with_initializers({"W": W}))
    options = onnxruntime.SessionOptions()
    options.add_external_initializers(["W"], [onnxruntime.OrtValue.ortvalue_from_numpy(W)])
    with pytest.raises(Exception, match="non-external initializer"):
        onnxruntime.InferenceSession(scale_model().SerializeToString(), options, providers=["CPUExecutionProvider"])


def test_add_external_initializers_checks_its_arguments():
    options = lockstep.SessionOptions()
    with pytest.raises(ValueError, match="2 names and 1 ort_values"):
        options.add_external_initializers(["W", "B"], [value(W)])
    with pytest.raises(TypeError, match="'W' must be an OrtValue, got ndarray"):
        options.add_external_initializers(["W"], [W])
    options.add_external_initializers(["W"], [value(W)])
    with pytest.raises(lockstep.InvalidArgument, match="an entry for 'W' has already been added"):
        options.add_external_initializers(["W"], [value(W)])


@pytest.mark.parametrize("kind", ["bytes", "bytearray", "memoryview", "numpy", "float32 numpy", "mmap"])
def test_files_in_memory_give_the_bytes_of_the_files_on_disk(tmp_path, kind):
    path, model_bytes, weights = save_external(tmp_path)
    from_disk = run(str(path))
    if kind == "mmap":
        with open(tmp_path / "weights.bin", "rb") as f:
            buffer = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    else:
        buffer = {"bytes": weights, "bytearray": bytearray(weights), "memoryview": memoryview(weights),
                  "numpy": np.frombuffer(weights, np.uint8), "float32 numpy": np.frombuffer(weights, np.float32)}[kind]
    options = with_files({"weights.bin": buffer})
    assert run(model_bytes, options).tobytes() == from_disk.tobytes()


def test_files_in_memory_are_read_instead_of_the_folder_and_named_as_the_model_names_them(tmp_path):
    path, _, weights = save_external(tmp_path)
    from_disk = run(str(path))
    (tmp_path / "weights.bin").write_bytes(bytes(len(weights)))  # zeros on disk: memory must win
    assert run(str(path), with_files({"./weights.bin": weights})).tobytes() == from_disk.tobytes()


def test_a_file_in_memory_shorter_than_a_tensor_needs_names_the_tensor(tmp_path):
    _, model_bytes, weights = save_external(tmp_path)
    options = lockstep.SessionOptions()
    options.add_external_initializers_from_files_in_memory(["weights.bin"], [weights], [len(weights) - 4])
    with pytest.raises(lockstep.InvalidGraph, match="tensor 'B' reads 12 bytes at offset 48 of in-memory external file "
                                                    "'weights.bin', which has only 56 bytes"):
        run(model_bytes, options)


def test_a_file_the_model_names_but_memory_lacks_names_the_tensor_and_the_file(tmp_path):
    _, model_bytes, weights = save_external(tmp_path)
    with pytest.raises(lockstep.InvalidGraph, match="tensor 'W' stores its data in external file 'weights.bin'.*"
                                                    "add_external_initializers_from_files_in_memory"):
        run(model_bytes, with_files({"other.bin": weights}))


def test_add_files_in_memory_checks_its_arguments():
    options = lockstep.SessionOptions()
    what = "add_external_initializers_from_files_in_memory"
    with pytest.raises(lockstep.InvalidArgument, match=f"{what}: file 'w.bin': length 9 is outside its buffer of 8"):
        options.add_external_initializers_from_files_in_memory(["w.bin"], [bytes(8)], [9])
    with pytest.raises(TypeError, match="file 'w.bin': the buffer must be bytes-like .* got str"):
        options.add_external_initializers_from_files_in_memory(["w.bin"], ["text"], [4])
    with pytest.raises(ValueError, match="1 names and 2 lengths"):
        options.add_external_initializers_from_files_in_memory(["w.bin"], [bytes(8)], [8, 8])
    options.add_external_initializers_from_files_in_memory(["w.bin"], [bytes(8)], [8])
    with pytest.raises(lockstep.InvalidArgument, match="an entry for 'w.bin' has already been added"):
        options.add_external_initializers_from_files_in_memory(["w.bin"], [bytes(8)], [8])


def test_external_initializers_win_over_files_in_memory_as_in_onnxruntime(tmp_path):
    path, model_bytes, weights = save_external(tmp_path)
    options = with_files({"weights.bin": bytes(len(weights))})
    options.add_external_initializers(["W", "B"], [value(W), value(B)])
    assert run(model_bytes, options).tobytes() == run(str(path)).tobytes()


def test_the_buffer_may_go_once_the_session_is_created(tmp_path):
    path, model_bytes, weights = save_external(tmp_path)
    buffer = bytearray(weights)
    options = with_files({"weights.bin": buffer})
    session = lockstep.InferenceSession(model_bytes, options)
    buffer[:] = bytes(len(buffer))  # the session copied what it read
    assert session.run(None, {"X": X})[0].tobytes() == run(str(path)).tobytes()


@pytest.mark.skipif(not HAS_CUDA, reason="no GPU on this machine")
def test_external_initializers_and_files_in_memory_on_cuda_give_the_cpus_bytes(tmp_path):
    path, model_bytes, weights = save_external(tmp_path)
    from_disk = run(str(path))
    assert run(model_bytes, with_initializers({"W": W, "B": B}), lockstep.CUDA).tobytes() == from_disk.tobytes()
    assert run(model_bytes, with_files({"weights.bin": weights}), lockstep.CUDA).tobytes() == from_disk.tobytes()


def test_an_mmap_may_be_closed_once_the_session_exists_as_in_onnxruntime(tmp_path):
    path, model_bytes, weights = save_external(tmp_path)
    options = lockstep.SessionOptions()
    with open(tmp_path / "weights.bin", "rb") as f:
        buffer = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    options.add_external_initializers_from_files_in_memory(["weights.bin"], [buffer], [len(weights)])
    session = lockstep.InferenceSession(model_bytes, options)
    buffer.close()  # BufferError if the options still held a view of it
    assert session.run(None, {"X": X})[0].tobytes() == run(str(path)).tobytes()
