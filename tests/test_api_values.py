"""onnxruntime's value and binding API: OrtValue, OrtDevice, OrtMemoryInfo, IOBinding, run_with_ort_values,
run_async, DLPack and the session's memory infos; on the CPU, and with a GPU on CUDA, where every output bound on
the device must hold the CPU provider's bytes."""

import threading

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import lockstep
from bits import same_bits
from cases import all_cases
from onnx_models import feeds_of, single_node_model

HAS_CUDA = lockstep.CUDA in lockstep.get_available_providers()
needs_cuda = pytest.mark.skipif(not HAS_CUDA, reason="no GPU on this machine")
ELEMENT_TYPES = [(np.float32, 1, "float"), (np.uint8, 2, "uint8"), (np.int8, 3, "int8"), (np.int16, 5, "int16"),
                 (np.int32, 6, "int32"), (np.int64, 7, "int64"), (np.bool_, 9, "bool"), (np.float16, 10, "float16"),
                 (np.float64, 11, "double"), (np.uint32, 12, "uint32"), (np.uint64, 13, "uint64")]


def serialized(graph, opset=17):
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 9
    return model.SerializeToString()


def add_model():
    """y = x + [0, 1, 2], x: float [N, 3]."""
    bias = numpy_helper.from_array(np.arange(3, dtype=np.float32), "bias")
    return serialized(helper.make_graph(
        [helper.make_node("Add", ["x", "bias"], ["y"])], "add",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 3])], initializer=[bias]))


def alias_model():
    """a = Identity(x), c = Identity(constant): outputs that share memory with a feed or a constant inside a run."""
    const = numpy_helper.from_array(np.array([1.5, -2.0, 4.0], np.float32), "k")
    return serialized(helper.make_graph(
        [helper.make_node("Identity", ["x"], ["a"]), helper.make_node("Identity", ["k"], ["c"])], "alias",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("a", TensorProto.FLOAT, [2, 3]),
         helper.make_tensor_value_info("c", TensorProto.FLOAT, [3])], initializer=[const]))


def conv_model():
    """Conv -> Relu -> Flatten -> MatMul -> Softmax on x: float [N, 3, 9, 9], seeded weights, two outputs."""
    rng = np.random.default_rng(9)
    w = numpy_helper.from_array(rng.standard_normal((4, 3, 3, 3)).astype(np.float32), "w")
    b = numpy_helper.from_array(rng.standard_normal(4).astype(np.float32), "b")
    m = numpy_helper.from_array(rng.standard_normal((4 * 7 * 7, 10)).astype(np.float32) * 0.1, "m")
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"]), helper.make_node("Relu", ["c"], ["r"]),
             helper.make_node("Flatten", ["r"], ["f"]), helper.make_node("MatMul", ["f", "m"], ["logits"]),
             helper.make_node("Softmax", ["logits"], ["p"], axis=-1)]
    return serialized(helper.make_graph(
        nodes, "conv", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3, 9, 9])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["N", 10]),
         helper.make_tensor_value_info("p", TensorProto.FLOAT, ["N", 10])], initializer=[w, b, m]))


def session(model, provider=lockstep.CPU):
    return lockstep.InferenceSession(model, providers=[provider])


X = np.arange(6, dtype=np.float32).reshape(2, 3) - 2.5
Y = X + np.arange(3, dtype=np.float32)


def conv_input(batch=2):
    return np.random.default_rng(1).standard_normal((batch, 3, 9, 9)).astype(np.float32)


# ---- OrtValue ----

@pytest.mark.parametrize("dtype, code, name", ELEMENT_TYPES)
def test_ortvalue_from_numpy_shares_the_array(dtype, code, name):
    a = (np.arange(12).reshape(3, 4) % 3).astype(dtype)
    v = lockstep.OrtValue.ortvalue_from_numpy(a)
    assert (v.shape(), v.data_type(), v.element_type(), v.device_name()) == ([3, 4], f"tensor({name})", code, "cpu")
    assert v.is_tensor() and v.has_value() and not v.is_sparse_tensor() and not v.is_tensor_sequence()
    assert v.tensor_size_in_bytes() == a.nbytes
    assert v.data_ptr() == a.ctypes.data
    assert np.shares_memory(v.numpy(), a)
    assert v.numpy().dtype == a.dtype and v.numpy().tobytes() == a.tobytes()
    assert np.asarray(v).tobytes() == a.tobytes()
    assert np.array(v, dtype=np.float64).dtype == np.float64
    assert "tensor(" in repr(v)


def test_ortvalue_from_numpy_copies_what_it_cannot_share():
    strided = np.arange(12, dtype=np.float32).reshape(3, 4).T
    v = lockstep.OrtValue.ortvalue_from_numpy(strided)
    assert v.shape() == [4, 3] and v.numpy().tobytes() == np.ascontiguousarray(strided).tobytes()
    frozen = np.arange(4, dtype=np.float32)
    frozen.flags.writeable = False
    v = lockstep.OrtValue.ortvalue_from_numpy(frozen)
    assert v.data_ptr() != frozen.ctypes.data and v.numpy().tobytes() == frozen.tobytes()
    scalar = lockstep.OrtValue.ortvalue_from_numpy(np.array(3.5, np.float32))
    assert scalar.shape() == [] and scalar.numpy() == 3.5


def test_ortvalue_refuses_strings_and_unknown_devices():
    with pytest.raises(lockstep.NotImplemented, match="no string or object tensors"):
        lockstep.OrtValue.ortvalue_from_numpy(np.array(["a", "b"]))
    with pytest.raises(ValueError, match="unsupported device type 'dml'"):
        lockstep.OrtValue.ortvalue_from_numpy(X, "dml")
    with pytest.raises(ValueError, match="OrtValue wraps a lockstep tensor"):
        lockstep.OrtValue(X)


def test_ortvalue_from_shape_and_type():
    for element_type in (np.float32, 1, "float32"):
        v = lockstep.OrtValue.ortvalue_from_shape_and_type([2, 5], element_type)
        assert (v.shape(), v.data_type(), v.device_name()) == ([2, 5], "tensor(float)", "cpu")
    assert lockstep.OrtValue.ortvalue_from_shape_and_type((4,), np.int64).data_type() == "tensor(int64)"
    info = lockstep.OrtMemoryInfo("Cpu", lockstep.OrtAllocatorType.ORT_ARENA_ALLOCATOR, 0, lockstep.OrtMemType.DEFAULT)
    assert lockstep.OrtValue.ortvalue_from_shape_and_type([3], np.int32, memory_info=info).device_name() == "cpu"
    with pytest.raises(ValueError, match="are to be provided"):
        lockstep.OrtValue.ortvalue_from_shape_and_type(None, np.float32)
    with pytest.raises(lockstep.NotImplemented, match="complex64"):
        lockstep.OrtValue.ortvalue_from_shape_and_type([2], np.complex64)
    with pytest.raises(lockstep.NotImplemented, match="ONNX element type 8"):
        lockstep.OrtValue.ortvalue_from_shape_and_type([2], TensorProto.STRING)
    with pytest.raises(lockstep.InvalidArgument, match="negative dimension"):
        lockstep.OrtValue.ortvalue_from_shape_and_type([2, -1], np.float32)


def test_ortvalue_from_numpy_with_onnx_type_reinterprets_without_copy():
    a = np.array([1.0, -2.0], np.float32)
    v = lockstep.OrtValue.ortvalue_from_numpy_with_onnx_type(a, TensorProto.INT32)
    assert v.data_type() == "tensor(int32)" and v.data_ptr() == a.ctypes.data
    assert v.numpy().tobytes() == a.tobytes()
    with pytest.raises(ValueError, match="4 bytes"):
        lockstep.OrtValue.ortvalue_from_numpy_with_onnx_type(a, TensorProto.INT64)


def test_update_inplace():
    a = np.zeros((2, 3), np.float32)
    v = lockstep.OrtValue.ortvalue_from_numpy(a)
    v.update_inplace(X)
    assert a.tobytes() == X.tobytes()  # the value shares the array's memory
    v.update_inplace(lockstep.OrtValue.ortvalue_from_numpy(Y))
    assert v.numpy().tobytes() == Y.tobytes()
    v.update_inplace(np.arange(6, dtype=np.float32))  # the same element count in another shape, as onnxruntime
    assert v.shape() == [2, 3] and a.ravel().tolist() == list(range(6))
    with pytest.raises(ValueError, match="7 elements"):
        v.update_inplace(np.zeros(7, np.float32))
    with pytest.raises(ValueError, match=r"tensor\(double\) data into a tensor\(float\)"):
        v.update_inplace(np.zeros((2, 3), np.float64))
    with pytest.raises(lockstep.InvalidArgument, match=r"\[3,2\]"):
        v.update_inplace(lockstep.OrtValue.ortvalue_from_numpy(np.zeros((3, 2), np.float32)))
    with pytest.raises(TypeError, match="numpy.ndarray or an OrtValue"):
        v.update_inplace([1.0] * 6)


def test_dlpack_on_the_cpu_shares_memory():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    v = lockstep.OrtValue.ortvalue_from_numpy(a)
    assert v.__dlpack_device__() == (1, 0)
    exported = np.from_dlpack(v)
    assert np.shares_memory(exported, a) and exported.tobytes() == a.tobytes()
    imported = lockstep.OrtValue.from_dlpack(a)
    assert imported.data_ptr() == a.ctypes.data and imported.data_type() == "tensor(float)"
    assert lockstep.OrtValue.from_dlpack(v).data_ptr() == a.ctypes.data
    flags = np.array([True, False, True])
    assert lockstep.OrtValue.from_dlpack(flags).data_type() == "tensor(bool)"
    assert np.from_dlpack(lockstep.OrtValue.ortvalue_from_numpy(flags)).tolist() == [True, False, True]
    with pytest.raises(lockstep.InvalidArgument, match="not C-contiguous"):
        lockstep.OrtValue.from_dlpack(a.T)


def test_dlpack_keeps_the_source_alive():
    v = lockstep.OrtValue.from_dlpack(np.arange(1000, dtype=np.int64))
    exported = np.from_dlpack(lockstep.OrtValue.ortvalue_from_numpy(np.full(1000, 7, np.int32)))
    assert v.numpy().sum() == 999 * 1000 // 2 and exported.sum() == 7000


# onnxruntime's native value API (its scripts reach for OrtValue._ortvalue): lockstep._core.Tensor stands in for it.

def test_native_value_dlpack_shares_memory_and_says_whether_it_is_uint8():
    a = np.arange(6, dtype=np.float32).reshape(3, 2)
    native = lockstep.OrtValue.ortvalue_from_numpy(a)._ortvalue
    assert native.data_ptr() == a.ctypes.data and native.shape() == [3, 2] and native.__dlpack_device__() == (1, 0)
    for capsule in (native.to_dlpack(), native.__dlpack__()):
        assert not lockstep._core.is_dlpack_uint8_tensor(capsule)
        imported = lockstep._core.Tensor.from_dlpack(capsule, False)  # the capsule was only looked at, not used
        assert imported.data_ptr() == a.ctypes.data and imported.numpy().tobytes() == a.tobytes()
    assert lockstep._core.is_dlpack_uint8_tensor(np.array([1, 2], np.uint8).__dlpack__())
    with pytest.raises(TypeError, match="DLPack capsule"):
        lockstep._core.is_dlpack_uint8_tensor(a)


def test_native_from_dlpack_reads_uint8_as_bool_when_asked():
    flags = np.array([0, 1, 1, 0], np.uint8)
    as_bool = lockstep._core.Tensor.from_dlpack(flags.__dlpack__(), True)
    assert as_bool.dtype == 9 and as_bool.numpy().tolist() == [False, True, True, False]
    assert lockstep._core.Tensor.from_dlpack(flags, False).dtype == 2
    with pytest.raises(lockstep.InvalidArgument, match="is_bool_tensor needs uint8 or bool elements, the tensor has float"):
        lockstep._core.Tensor.from_dlpack(np.zeros(2, np.float32), True)


@pytest.mark.parametrize("shape", [(1, 8, 0, 128), (0,), (0, 4), (4, 0)])
def test_dlpack_takes_tensors_without_elements(shape):
    a = np.zeros(shape, np.float32)
    assert lockstep._core.Tensor.from_dlpack(a.__dlpack__(), False).shape() == list(shape)
    v = lockstep.OrtValue.ortvalue_from_numpy(a)
    assert lockstep._core.Tensor.from_dlpack(v._ortvalue.to_dlpack(), False).shape() == list(shape)
    assert lockstep.OrtValue.from_dlpack(v).shape() == list(shape)


def test_native_run_with_ort_values_returns_an_ort_value_vector():
    s = session(add_model())
    feeds = {"x": lockstep.OrtValue.ortvalue_from_numpy(X)._get_c_value()}
    for options in (lockstep.RunOptions(), lockstep._core.RunOptions(), None):
        values = s._sess.run_with_ort_values(feeds, ["y"], options)
        assert isinstance(values, lockstep._core.OrtValueVector) and len(values) == 1
        assert [same_bits(v.numpy(), Y) for v in values] == [True]
    with pytest.raises(IndexError):
        values[1]
    with pytest.raises(TypeError, match="run_options must be a lockstep.RunOptions"):
        s._sess.run_with_ort_values(feeds, ["y"], "fast")


# ---- OrtDevice, OrtMemoryInfo, memory infos ----

def test_ort_device_and_memory_info():
    cpu, cuda = lockstep.OrtDevice.make("cpu", 0), lockstep.OrtDevice.make("cuda", 1)
    assert (cpu.device_type(), cpu.device_id(), cpu.device_vendor_id(), cpu.device_mem_type()) == (0, 0, 0, 0)
    assert (cuda.device_type(), cuda.device_id(), cuda.device_vendor_id()) == (1, 1, 0x10DE)
    assert cuda == lockstep.OrtDevice(lockstep.OrtDevice.cuda(), lockstep.OrtDevice.default_memory(), 1) != cpu
    with pytest.raises(ValueError, match="'npu'"):
        lockstep.OrtDevice.make("npu", 0)
    info = lockstep.OrtMemoryInfo("Cuda", lockstep.OrtAllocatorType.ORT_ARENA_ALLOCATOR, 0, lockstep.OrtMemType.DEFAULT)
    assert (info.name, info.device_id, info.mem_type, info.allocator_type) == (
        "Cuda", 0, lockstep.OrtMemType.DEFAULT, lockstep.OrtAllocatorType.ORT_ARENA_ALLOCATOR)
    assert info.device_vendor_id == 0x10DE and info.device_mem_type == lockstep.OrtDeviceMemoryType.DEFAULT
    s = session(conv_model())
    cpu_info = lockstep.OrtMemoryInfo("Cpu", lockstep.OrtAllocatorType.ORT_ARENA_ALLOCATOR, 0,
                                      lockstep.OrtMemType.DEFAULT)
    assert s.get_input_memory_infos() == [cpu_info]
    assert s.get_output_memory_infos() == [cpu_info, cpu_info]


# ---- run_with_ort_values and run() with OrtValue feeds ----

def test_run_with_ort_values_matches_run():
    s = session(conv_model())
    x = conv_input()
    want = s.run(None, {"x": x})
    got = s.run_with_ort_values(None, {"x": lockstep.OrtValue.ortvalue_from_numpy(x)})
    assert [v.device_name() for v in got] == ["cpu", "cpu"]
    assert [v.numpy().tobytes() for v in got] == [w.tobytes() for w in want]
    (p,) = s.run_with_ort_values(["p"], {"x": lockstep.OrtValue.ortvalue_from_numpy(x)})
    assert p.numpy().tobytes() == want[1].tobytes()
    mixed = s.run(["logits"], {"x": lockstep.OrtValue.ortvalue_from_numpy(x)})
    assert isinstance(mixed[0], np.ndarray) and mixed[0].tobytes() == want[0].tobytes()


def test_run_with_ort_values_errors_name_the_input_or_output():
    s = session(add_model())
    x = lockstep.OrtValue.ortvalue_from_numpy(X)
    with pytest.raises(ValueError, match=r"Required inputs \(\['x'\]\) are missing"):
        s.run_with_ort_values(None, {"q": x})
    with pytest.raises(TypeError, match="input 'x' must be an OrtValue, got ndarray"):
        s.run_with_ort_values(None, {"x": X})
    with pytest.raises(lockstep.InvalidArgument, match=r"input 'x'.*tensor\(double\).*tensor\(float\)"):
        s.run_with_ort_values(None, {"x": lockstep.OrtValue.ortvalue_from_numpy(X.astype(np.float64))})
    with pytest.raises(lockstep.InvalidArgument, match="Invalid output name: z"):
        s.run_with_ort_values(["z"], {"x": x})
    assert s.run_with_ort_values(None, {"x": x})[0].numpy().tobytes() == Y.tobytes()


def test_outputs_never_share_memory_with_feeds_or_constants():
    s = session(alias_model())
    x = X.copy()
    a, c = s.run_with_ort_values(None, {"x": lockstep.OrtValue.ortvalue_from_numpy(x)})
    assert a.data_ptr() != x.ctypes.data and a.numpy().tobytes() == X.tobytes()
    a.numpy()[...] = 9.0
    c.numpy()[...] = 9.0
    assert x.tobytes() == X.tobytes()
    assert s.run(["c"], {"x": x})[0].tolist() == [1.5, -2.0, 4.0]
    out = s.run(None, {"x": x})
    out[1][...] = 7.0
    assert s.run(["c"], {"x": x})[0].tolist() == [1.5, -2.0, 4.0]


def test_concurrent_runs_on_one_session_give_the_same_bytes():
    s = session(conv_model())
    x = lockstep.OrtValue.ortvalue_from_numpy(conv_input())
    want = [v.numpy().tobytes() for v in s.run_with_ort_values(None, {"x": x})]
    results = []

    def work():
        for _ in range(10):
            results.append([v.numpy().tobytes() for v in s.run_with_ort_values(None, {"x": x})])

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(results) == 40 and all(r == want for r in results)


# ---- IOBinding on the CPU ----

def test_iobinding_cpu_input_and_output():
    s = session(conv_model())
    x = conv_input()
    want = s.run(None, {"x": x})
    b = s.io_binding()
    b.bind_cpu_input("x", x)
    b.bind_output("p")
    b.bind_output("logits", "cpu")
    s.run_with_iobinding(b)
    outs = b.get_outputs()
    assert [o.device_name() for o in outs] == ["cpu", "cpu"]
    assert outs[0].numpy().tobytes() == want[1].tobytes() and outs[1].numpy().tobytes() == want[0].tobytes()
    copies = b.copy_outputs_to_cpu()
    assert [c.tobytes() for c in copies] == [want[1].tobytes(), want[0].tobytes()]
    assert not np.shares_memory(copies[0], outs[0].numpy())
    b.synchronize_inputs()
    b.synchronize_outputs()
    # The bound array is read at each run, as in onnxruntime: changing it changes the next run.
    x2 = conv_input()
    x[...] = x2 * 2
    s.run_with_iobinding(b)
    assert b.get_outputs()[1].numpy().tobytes() == s.run(["logits"], {"x": x2 * 2})[0].tobytes()


def test_iobinding_pointers_and_preallocated_outputs():
    s = session(add_model())
    x = X.copy()
    y = np.full((2, 3), -1.0, np.float32)
    b = s.io_binding()
    b.bind_input("x", "cpu", 0, np.float32, [2, 3], x.ctypes.data)
    b.bind_output("y", "cpu", 0, np.float32, [2, 3], y.ctypes.data)
    s.run_with_iobinding(b)
    assert y.tobytes() == Y.tobytes()
    assert b.get_outputs()[0].data_ptr() == y.ctypes.data
    target = lockstep.OrtValue.ortvalue_from_shape_and_type([2, 3], np.float32)
    b.clear_binding_outputs()
    assert b.get_outputs() == []
    b.bind_ortvalue_output("y", target)
    b.clear_binding_inputs()
    b.bind_ortvalue_input("x", lockstep.OrtValue.ortvalue_from_numpy(Y))
    s.run_with_iobinding(b)
    assert b.get_outputs()[0] is target and target.numpy().tobytes() == (Y + np.arange(3, dtype=np.float32)).tobytes()
    with pytest.raises(ValueError, match="are to be provided"):
        b.bind_output("y", "cpu", 0, None, None, y.ctypes.data)


def test_iobinding_wrong_preallocated_output_writes_nothing():
    s = session(conv_model())
    logits = np.full((2, 10), 5.0, np.float32)
    p = np.full((2, 11), 5.0, np.float32)
    b = s.io_binding()
    b.bind_cpu_input("x", conv_input())
    b.bind_ortvalue_output("logits", lockstep.OrtValue.ortvalue_from_numpy(logits))
    b.bind_ortvalue_output("p", lockstep.OrtValue.ortvalue_from_numpy(p))
    with pytest.raises(lockstep.InvalidArgument, match=r"output 'p' is bound to a tensor\(float\)\[2, 11\].*\[2, 10\]"):
        s.run_with_iobinding(b)
    assert (logits == 5.0).all() and (p == 5.0).all()
    b.bind_output("p")
    s.run_with_iobinding(b)
    assert b.get_outputs()[0].numpy().tobytes() == logits.tobytes() != np.full((2, 10), 5.0, np.float32).tobytes()


def test_iobinding_errors_name_what_is_wrong():
    s = session(add_model())
    b = s.io_binding()
    with pytest.raises(lockstep.InvalidArgument, match="bind_cpu_input: 'z' is not an input of this model"):
        b.bind_cpu_input("z", X)
    with pytest.raises(lockstep.InvalidArgument, match=r"bind_output\('z'\): 'z' is not an output.*outputs: y"):
        b.bind_output("z")
    with pytest.raises(ValueError, match="unsupported device type 'tpu'"):
        b.bind_output("y", "tpu")
    with pytest.raises(TypeError, match="expected an OrtValue, got ndarray"):
        b.bind_ortvalue_input("x", X)
    with pytest.raises(lockstep.InvalidArgument, match="At least one output should be requested"):
        s.run_with_iobinding(b)
    b.bind_output("y")
    with pytest.raises(lockstep.InvalidArgument, match="missing from the feed: x"):
        s.run_with_iobinding(b)
    b.bind_cpu_input("x", X.astype(np.float64))
    with pytest.raises(lockstep.InvalidArgument, match=r"input 'x'.*tensor\(double\)"):
        s.run_with_iobinding(b)
    with pytest.raises(ValueError, match="IOBinding must be used with the session that created it"):
        session(add_model()).run_with_iobinding(b)
    b.bind_cpu_input("x", X)
    s.run_with_iobinding(b)
    assert b.get_outputs()[0].numpy().tobytes() == Y.tobytes()


@pytest.mark.skipif(HAS_CUDA, reason="checks the message on a machine without a GPU")
def test_iobinding_cuda_without_a_gpu_is_a_clear_error():
    b = session(add_model()).io_binding()
    with pytest.raises(lockstep.InvalidArgument, match="needs a GPU"):
        b.bind_output("y", "cuda")
    with pytest.raises(lockstep.InvalidArgument, match="needs a GPU"):
        b.bind_input("x", "cuda", 0, np.float32, [2, 3], X.ctypes.data)
    with pytest.raises(lockstep.Fail):
        lockstep.OrtValue.ortvalue_from_numpy(X, "cuda", 0)


# ---- run_async ----

def run_async_and_wait(s, feeds):
    done = threading.Event()
    got = {}

    def callback(results, user_data, err):
        got.update(results=results, user_data=user_data, err=err, thread=threading.current_thread())
        done.set()

    assert s.run_async(None, feeds, callback, "my data") is None
    assert done.wait(60)
    return got


def test_run_async_calls_back_with_results_or_the_error():
    s = session(add_model())
    got = run_async_and_wait(s, {"x": X})
    assert got["err"] == "" and got["user_data"] == "my data" and got["thread"] is not threading.current_thread()
    assert [r.tobytes() for r in got["results"]] == [Y.tobytes()]
    got = run_async_and_wait(s, {"x": np.ones((2, 4), np.float32)})
    assert got["results"] == [] and "invalid dimensions for input: x" in got["err"]
    with pytest.raises(ValueError, match="missing"):
        s.run_async(None, {}, lambda *a: None, None)


# ---- CUDA: values on the device, outputs byte-equal to the CPU provider's ----

@needs_cuda
def test_cuda_ortvalues():
    v = lockstep.OrtValue.ortvalue_from_numpy(X, "cuda", 0)
    assert (v.device_name(), v.shape(), v.data_type(), v.__dlpack_device__()) == ("cuda", [2, 3], "tensor(float)", (2, 0))
    assert v.data_ptr() != 0 and v.numpy().tobytes() == X.tobytes() and np.asarray(v).tobytes() == X.tobytes()
    e = lockstep.OrtValue.ortvalue_from_shape_and_type([2, 3], np.float32, "cuda", 0)
    e.update_inplace(Y)
    assert e.numpy().tobytes() == Y.tobytes()
    e.update_inplace(v)  # device to device
    assert e.numpy().tobytes() == X.tobytes()
    host = lockstep.OrtValue.ortvalue_from_shape_and_type([2, 3], np.float32)
    host.update_inplace(e)  # device to host
    assert host.numpy().tobytes() == X.tobytes()


@needs_cuda
def test_cuda_iobinding_keeps_values_on_the_device_and_matches_the_cpu():
    x = conv_input(3)
    want = session(conv_model()).run(None, {"x": x})
    s = session(conv_model(), lockstep.CUDA)
    assert s.get_input_memory_infos()[0].name == "Cuda"
    b = s.io_binding()
    b.bind_ortvalue_input("x", lockstep.OrtValue.ortvalue_from_numpy(x, "cuda", 0))
    b.bind_output("logits", "cuda", 0)
    b.bind_output("p", "cuda")
    for _ in range(2):
        s.run_with_iobinding(b)
        outs = b.get_outputs()
        assert [o.device_name() for o in outs] == ["cuda", "cuda"]
        assert [o.numpy().tobytes() for o in outs] == [w.tobytes() for w in want]
        assert [c.tobytes() for c in b.copy_outputs_to_cpu()] == [w.tobytes() for w in want]
    b.synchronize_inputs()
    b.synchronize_outputs()
    # Raw device pointers in and a preallocated device output.
    xin = lockstep.OrtValue.ortvalue_from_numpy(x, "cuda", 0)
    target = lockstep.OrtValue.ortvalue_from_shape_and_type([3, 10], np.float32, "cuda", 0)
    b2 = s.io_binding()
    b2.bind_input("x", "cuda", 0, np.float32, x.shape, xin.data_ptr())
    b2.bind_output("p", "cuda", 0, np.float32, [3, 10], target.data_ptr())
    s.run_with_iobinding(b2)
    assert b2.get_outputs()[0].data_ptr() == target.data_ptr() and target.numpy().tobytes() == want[1].tobytes()
    # Host in, host out through the CUDA session; CUDA in to a CPU session; CUDA out of a CPU session.
    b3 = s.io_binding()
    b3.bind_cpu_input("x", x)
    b3.bind_output("p")
    s.run_with_iobinding(b3)
    assert b3.get_outputs()[0].device_name() == "cpu" and b3.get_outputs()[0].numpy().tobytes() == want[1].tobytes()
    cpu = session(conv_model())
    b4 = cpu.io_binding()
    b4.bind_ortvalue_input("x", xin)
    b4.bind_output("p", "cuda")
    cpu.run_with_iobinding(b4)
    assert b4.get_outputs()[0].device_name() == "cuda" and b4.get_outputs()[0].numpy().tobytes() == want[1].tobytes()


@needs_cuda
def test_cuda_run_with_ort_values_leaves_outputs_on_the_device():
    x = conv_input(2)
    want = session(conv_model()).run(None, {"x": x})
    s = session(conv_model(), lockstep.CUDA)
    got = s.run_with_ort_values(None, {"x": lockstep.OrtValue.ortvalue_from_numpy(x, "cuda", 0)})
    assert [v.device_name() for v in got] == ["cuda", "cuda"]
    assert [v.numpy().tobytes() for v in got] == [w.tobytes() for w in want]
    mixed = s.run(None, {"x": lockstep.OrtValue.ortvalue_from_numpy(x, "cuda", 0)})
    assert [m.tobytes() for m in mixed] == [w.tobytes() for w in want]


@needs_cuda
def test_cuda_outputs_never_share_memory_with_feeds_or_constants():
    s = session(alias_model(), lockstep.CUDA)
    xv = lockstep.OrtValue.ortvalue_from_numpy(X, "cuda", 0)
    a, c = s.run_with_ort_values(None, {"x": xv})
    assert a.data_ptr() != xv.data_ptr() and a.numpy().tobytes() == X.tobytes()
    c.update_inplace(np.zeros(3, np.float32))
    assert s.run_with_ort_values(["c"], {"x": xv})[0].numpy().tolist() == [1.5, -2.0, 4.0]


@needs_cuda
def test_cuda_pointer_checks_name_the_input():
    s = session(add_model(), lockstep.CUDA)
    b = s.io_binding()
    with pytest.raises(lockstep.InvalidArgument, match=r"bind_input\('x'\).*host memory, not memory of cuda:0"):
        b.bind_input("x", "cuda", 0, np.float32, [2, 3], X.ctypes.data)
    on_gpu = lockstep.OrtValue.ortvalue_from_numpy(X, "cuda", 0)
    with pytest.raises(lockstep.InvalidArgument, match="memory of cuda:0, not memory of cpu"):
        b.bind_input("x", "cpu", 0, np.float32, [2, 3], on_gpu.data_ptr())


# Every 8th op case of the cross-device suite, fed and fetched on the device: the CPU provider's bytes.
SAMPLED_CASES = all_cases()[::8]


@needs_cuda
@pytest.mark.parametrize("c", SAMPLED_CASES, ids=[c.name for c in SAMPLED_CASES])
def test_cuda_bound_outputs_are_the_cpu_bytes(c):
    model, feeds = single_node_model(c), feeds_of(c)
    try:
        want = session(model).run(None, feeds)
    except lockstep.Fail:
        pytest.skip("the case is an expected failure on the CPU")
    s = session(model, lockstep.CUDA)
    b = s.io_binding()
    for name, value in feeds.items():
        b.bind_ortvalue_input(name, lockstep.OrtValue.ortvalue_from_numpy(value, "cuda", 0))
    for out in s.get_outputs():
        b.bind_output(out.name, "cuda", 0)
    s.run_with_iobinding(b)
    got = b.get_outputs()
    assert all(v.device_name() == "cuda" for v in got) and len(got) == len(want)
    assert all(same_bits(v.numpy(), w) for v, w in zip(got, want))  # bytes equal, any NaN equal to any NaN


@needs_cuda
def test_cuda_dlpack_with_torch():
    torch = pytest.importorskip("torch")
    x = conv_input(2)
    want = session(conv_model()).run(None, {"x": x})
    s = session(conv_model(), lockstep.CUDA)
    tx = torch.from_numpy(x).cuda() * 1.0  # written by a torch kernel on torch's stream, read by the run
    b = s.io_binding()
    b.bind_ortvalue_input("x", lockstep.OrtValue.from_dlpack(tx))
    b.bind_output("p", "cuda")
    s.run_with_iobinding(b)
    out = torch.from_dlpack(b.get_outputs()[0])
    assert out.device.type == "cuda" and out.cpu().numpy().tobytes() == want[1].tobytes()
    assert lockstep.OrtValue.from_dlpack(tx).data_ptr() == tx.data_ptr()


@pytest.mark.parametrize("device", ["cpu"] + (["cuda"] if HAS_CUDA else []))
def test_session_owned_values(device):
    """create_ortvalue_from_shape_and_type on a session: the value belongs to that session, which alone may read it,
    bind it or copy between it and another of its values; set_providers makes the old values and bindings stale."""
    providers = [lockstep.CUDA if device == "cuda" else lockstep.CPU]
    session = lockstep.InferenceSession(add_model(), providers=providers)
    other = lockstep.InferenceSession(add_model(), providers=providers)
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    owned = session.create_ortvalue_from_shape_and_type([2, 3], np.float32, device)
    foreign = other.create_ortvalue_from_shape_and_type([2, 3], np.float32, device)
    assert owned._session is session._sess and not owned._is_webgpu_buffer
    assert (owned.shape(), owned.device_name()) == ([2, 3], device)
    owned.update_inplace(x)
    session._validate_ortvalue_ownership([owned, lockstep.OrtValue.ortvalue_from_numpy(x)])
    y, = session.run(None, {"x": owned})
    assert same_bits(y, x + np.arange(3, dtype=np.float32))
    with pytest.raises(ValueError, match="must be used with the session that created it"):
        other.run(None, {"x": owned})
    with pytest.raises(ValueError, match="must be used with the session that created it"):
        other.run_with_ort_values(None, {"x": owned})
    with pytest.raises(ValueError, match="must be bound to the session that created it"):
        other.io_binding().bind_ortvalue_input("x", owned)
    with pytest.raises(ValueError, match="must be bound to the session that created it"):
        other.io_binding().bind_ortvalue_output("y", owned)
    with pytest.raises(ValueError, match="same session"):
        owned.update_inplace(foreign)
    with pytest.raises(lockstep.InvalidArgument, match="the session runs on"):
        session.create_ortvalue_from_shape_and_type([2], np.float32, "cuda", 7)
    binding = session.io_binding()
    session.set_providers(providers)
    with pytest.raises(ValueError, match="session that created it"):
        session.run(None, {"x": owned})
    with pytest.raises(ValueError, match="IOBinding must be used with the session that created it"):
        session.run_with_iobinding(binding)
    assert session.create_ortvalue_from_shape_and_type([], np.int64).shape() == []


@pytest.mark.parametrize("device", ["cpu"] + (["cuda"] if HAS_CUDA else []))
def test_run_with_ortvaluevector(device):
    providers = [lockstep.CUDA if device == "cuda" else lockstep.CPU]
    session = lockstep.InferenceSession(add_model(), providers=providers)
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    feeds, fetches = lockstep._core.OrtValueVector(), lockstep._core.OrtValueVector()
    feeds.push_back(lockstep.OrtValue.ortvalue_from_numpy(x)._get_c_value())
    session.run_with_ortvaluevector(lockstep.RunOptions(), ["x"], feeds, ["y"], fetches,
                                    [lockstep.OrtDevice.make(device, 0)._get_c_device()])
    assert len(fetches) == 1 and fetches[0].device == device
    y = fetches[0].to_host().numpy() if device == "cuda" else fetches[0].numpy()
    assert same_bits(y, session.run(None, {"x": x})[0])
    with pytest.raises(lockstep.InvalidArgument, match="1 feed names for 0 feeds"):
        session.run_with_ortvaluevector(None, ["x"], lockstep._core.OrtValueVector(), ["y"], fetches,
                                        [lockstep.OrtDevice.make("cpu", 0)])
