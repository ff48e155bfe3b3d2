"""SparseTensor (COO, CSR) as onnxruntime's Python API has it, densified at the edge when fed; sparse initializers
and Constant's sparse_value densified when the model is read, with onnxruntime's results."""

import numpy as np
import onnxruntime
import pytest
from onnx import TensorProto, helper, numpy_helper

import lockstep
from bits import same_bits

PROVIDERS = [lockstep.CPU] + ([lockstep.CUDA] if lockstep.CUDA in lockstep.get_available_providers() else [])
CPU_DEVICE = lockstep.OrtDevice.make("cpu", 0)


def add_model(elem=TensorProto.FLOAT, shape=(3, 4)):
    graph = helper.make_graph([helper.make_node("Identity", ["x"], ["y"])], "g",
                              [helper.make_tensor_value_info("x", elem, list(shape))],
                              [helper.make_tensor_value_info("y", elem, list(shape))])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 9
    return model.SerializeToString()


def expected_dense():
    dense = np.zeros((3, 4), np.float32)
    dense[0, 1], dense[1, 3], dense[2, 0], dense[2, 2] = 1.5, -0.0, np.nan, 7.0
    return dense


VALUES = np.array([1.5, -0.0, np.nan, 7.0], np.float32)


def coo_linear():
    return lockstep.SparseTensor.sparse_coo_from_numpy([3, 4], VALUES, np.array([1, 7, 8, 10], np.int64), CPU_DEVICE)


def coo_coords():
    coords = np.array([[0, 1], [1, 3], [2, 0], [2, 2]], np.int64)
    return lockstep.SparseTensor.sparse_coo_from_numpy(np.array([3, 4], np.int64), VALUES, coords, CPU_DEVICE)


def csr():
    return lockstep.SparseTensor.sparse_csr_from_numpy([3, 4], VALUES, np.array([1, 3, 0, 2], np.int64),
                                                       np.array([0, 1, 2, 4], np.int64), CPU_DEVICE)


def test_the_accessors_match_onnxruntime():
    ort_device = onnxruntime.OrtDevice.make("cpu", 0)
    theirs = onnxruntime.SparseTensor.sparse_coo_from_numpy([3, 4], VALUES, np.array([1, 7, 8, 10], np.int64),
                                                            ort_device)
    ours = coo_linear()
    assert ours.dense_shape() == theirs.dense_shape() and ours.data_type() == theirs.data_type()
    assert ours.device_name() == theirs.device_name() and int(ours.format()) == int(theirs.format())
    assert same_bits(ours.values(), theirs.values())
    assert ours.as_coo_view().indices().tolist() == theirs.as_coo_view().indices().tolist()
    theirs_csr = onnxruntime.SparseTensor.sparse_csr_from_numpy([3, 4], VALUES, np.array([1, 3, 0, 2], np.int64),
                                                                np.array([0, 1, 2, 4], np.int64), ort_device)
    view, their_view = csr().as_csrc_view(), theirs_csr.as_csrc_view()
    assert view.inner().tolist() == their_view.inner().tolist() and view.outer().tolist() == their_view.outer().tolist()
    assert int(csr().format()) == int(theirs_csr.format()) == int(lockstep.OrtSparseFormat.ORT_SPARSE_CSRC)
    with pytest.raises(RuntimeError, match="does not contain CSR"):
        ours.as_csrc_view()


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("make", [coo_linear, coo_coords, csr])
def test_sparse_feeds_are_densified_at_the_edge(provider, make):
    s = lockstep.InferenceSession(add_model(), providers=[provider])
    assert same_bits(s.run(None, {"x": make()})[0], expected_dense())
    value = lockstep.OrtValue.ort_value_from_sparse_tensor(make())
    assert value.is_sparse_tensor() and not value.is_tensor() and value.data_type() == "sparse_tensor(float)"
    assert value.as_sparse_tensor().dense_shape() == [3, 4]
    assert same_bits(s.run(None, {"x": value})[0], expected_dense())
    assert same_bits(s.run_with_ort_values(None, {"x": value})[0].numpy(), expected_dense())


def test_sparse_string_feeds_fill_with_empty_strings():
    s = lockstep.InferenceSession(add_model(TensorProto.STRING, (2, 2)))
    words = lockstep.SparseTensor.sparse_coo_from_numpy([2, 2], np.array(["a", "b"], dtype=object),
                                                        np.array([0, 3], np.int64), CPU_DEVICE)
    assert s.run(None, {"x": words})[0].tolist() == [["a", ""], ["", "b"]]


@pytest.mark.parametrize("make, message", [
    (lambda: lockstep.SparseTensor.sparse_coo_from_numpy([3, 4], VALUES, np.array([1, 7, 8, 12], np.int64)),
     "index 12 is outside the 12 elements"),
    (lambda: lockstep.SparseTensor.sparse_coo_from_numpy([3, 4], VALUES, np.array([1, 7, 7, 2], np.int64)),
     "position 7 is given more than once"),
    (lambda: lockstep.SparseTensor.sparse_coo_from_numpy([3, 4], VALUES, np.array([[0, 1], [0, 4], [1, 1], [2, 2]])),
     "a coordinate of dim 1 is outside \\[0, 4\\)"),
    (lambda: lockstep.SparseTensor.sparse_coo_from_numpy([3, 4], VALUES, np.array([1, 2], np.int64)),
     "do not fit 4 values"),
    (lambda: lockstep.SparseTensor.sparse_coo_from_numpy([3, 4], VALUES, np.array([1, 2, 3, 4], np.int32)),
     "coo_indices must be an int64 array"),
    (lambda: lockstep.SparseTensor.sparse_csr_from_numpy([3, 4], VALUES, np.array([1, 3, 0, 2], np.int64),
                                                         np.array([0, 3, 2, 4], np.int64)), "non-decreasing"),
    (lambda: lockstep.SparseTensor.sparse_csr_from_numpy([12], VALUES, np.array([1, 3, 0, 2], np.int64),
                                                         np.array([0, 4], np.int64)), "CSR describes 2-D tensors"),
    (lambda: lockstep.SparseTensor.sparse_csr_from_numpy([3, 4], VALUES, np.array([1, 3, 0, 4], np.int64),
                                                         np.array([0, 1, 2, 4], np.int64)), "column index"),
])
def test_tensors_that_cannot_be_densified_are_refused_when_made(make, message):
    with pytest.raises(lockstep.InvalidArgument, match=message):
        make()


def test_sparse_tensors_stay_on_the_host():
    with pytest.raises(lockstep.NotImplemented, match="lockstep keeps sparse tensors on the host"):
        lockstep.SparseTensor.sparse_coo_from_numpy([2], np.ones(1, np.float32), np.zeros(1, np.int64),
                                                    lockstep.OrtDevice.make("cuda", 0))
    with pytest.raises(lockstep.NotImplemented, match="on the host"):
        coo_linear().to_cuda(lockstep.OrtDevice.make("cuda", 0))


def test_a_sparse_feed_of_the_wrong_type_names_the_input():
    s = lockstep.InferenceSession(add_model(TensorProto.DOUBLE))
    with pytest.raises(lockstep.InvalidArgument, match="input 'x'.*Actual: \\(tensor\\(float\\)\\)"):
        s.run(None, {"x": coo_linear()})


def sparse_model():
    """A sparse initializer (coordinates) and a Constant with a sparse_value (linear indices), added to x."""
    values = numpy_helper.from_array(np.array([2.5, -1.0, 3.0], np.float32), "w")
    coords = numpy_helper.from_array(np.array([[0, 0], [1, 2], [2, 3]], np.int64))
    w = helper.make_sparse_tensor(values, coords, [3, 4])
    c_values = numpy_helper.from_array(np.array([10.0, 20.0], np.float32), "c")
    c = helper.make_sparse_tensor(c_values, numpy_helper.from_array(np.array([1, 11], np.int64)), [3, 4])
    nodes = [helper.make_node("Constant", [], ["c"], sparse_value=c), helper.make_node("Add", ["x", "w"], ["a"]),
             helper.make_node("Add", ["a", "c"], ["y"])]
    graph = helper.make_graph(nodes, "sparse", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 4])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3, 4])], sparse_initializer=[w])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 9
    return model.SerializeToString()


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("level", [lockstep.GraphOptimizationLevel.ORT_DISABLE_ALL,
                                   lockstep.GraphOptimizationLevel.ORT_ENABLE_ALL])
def test_sparse_initializers_and_sparse_constants_are_densified_at_load(provider, level):
    x = {"x": np.arange(12, dtype=np.float32).reshape(3, 4) * np.float32(0.1)}
    theirs = onnxruntime.InferenceSession(sparse_model(), providers=["CPUExecutionProvider"]).run(None, x)[0]
    options = lockstep.SessionOptions()
    options.graph_optimization_level = level
    ours = lockstep.InferenceSession(sparse_model(), options, providers=[provider]).run(None, x)[0]
    assert same_bits(ours, theirs)


def test_a_sparse_initializer_that_cannot_be_densified_names_itself():
    values = numpy_helper.from_array(np.array([1.0], np.float32), "bad")
    w = helper.make_sparse_tensor(values, numpy_helper.from_array(np.array([12], np.int64)), [3, 4])
    graph = helper.make_graph([helper.make_node("Identity", ["bad"], ["y"])], "g", [],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3, 4])], sparse_initializer=[w])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    with pytest.raises(lockstep.InvalidGraph, match="sparse tensor 'bad' has index 12 out of range"):
        lockstep.InferenceSession(model.SerializeToString())
