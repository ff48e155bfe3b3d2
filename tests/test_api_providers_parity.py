"""API paths run on each provider give the CPU provider's plain run() bytes: run_async, free-dimension overrides,
list feeds converted to the declared type, the model-embedded config and lockstep.backend. The CUDA cases run
only with a GPU; on the CPU each path is checked against a plain run."""

import json
import threading

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

import lockstep
import lockstep.backend as backend

HAS_CUDA = lockstep.CUDA in lockstep.get_available_providers()
PROVIDERS = [lockstep.CPU, pytest.param(lockstep.CUDA, marks=pytest.mark.skipif(not HAS_CUDA,
                                                                                reason="no GPU on this machine"))]
DEVICES = {lockstep.CPU: "CPU", lockstep.CUDA: "CUDA"}


def softmax_model(config=None):
    """y = Softmax(x @ W + B): rounding-sensitive, so a provider that differs shows in the bytes."""
    rng = np.random.default_rng(11)
    w = numpy_helper.from_array(rng.standard_normal((8, 5)).astype(np.float32), "W")
    b = numpy_helper.from_array(rng.standard_normal(5).astype(np.float32), "B")
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 8])
    x.type.tensor_type.shape.dim[0].denotation = "DATA_BATCH"
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "W"], ["xw"]), helper.make_node("Add", ["xw", "B"], ["z"]),
         helper.make_node("Softmax", ["z"], ["y"], axis=-1)], "g", [x],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 5])], initializer=[w, b])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 9
    if config is not None:
        helper.set_model_props(model, {"ort_config": json.dumps(config)})
    return model.SerializeToString()


X = np.random.default_rng(12).standard_normal((3, 8)).astype(np.float32) * 4


def cpu_bytes(feed=X):
    return lockstep.InferenceSession(softmax_model(), providers=[lockstep.CPU]).run(None, {"x": feed})[0].tobytes()


@pytest.mark.parametrize("provider", PROVIDERS)
def test_run_async_gives_the_cpu_bytes(provider):
    s = lockstep.InferenceSession(softmax_model(), providers=[provider])
    done, got = threading.Event(), {}

    def callback(results, user_data, err):
        got.update(results=results, err=err, user_data=user_data)
        done.set()

    s.run_async(None, {"x": X}, callback, 7)
    assert done.wait(60)
    assert got["err"] == "" and got["user_data"] == 7
    assert got["results"][0].tobytes() == cpu_bytes()


@pytest.mark.parametrize("by", ["name", "denotation"])
@pytest.mark.parametrize("provider", PROVIDERS)
def test_free_dimension_overrides_fix_the_dim_and_give_the_cpu_bytes(provider, by):
    options = lockstep.SessionOptions()
    if by == "name":
        options.add_free_dimension_override_by_name("batch", 3)
    else:
        options.add_free_dimension_override_by_denotation("DATA_BATCH", 3)
    s = lockstep.InferenceSession(softmax_model(), options, providers=[provider])
    assert s.get_inputs()[0].shape == [3, 8] and s.get_providers()[0] == provider
    assert s.run(None, {"x": X})[0].tobytes() == cpu_bytes()
    with pytest.raises(lockstep.InvalidArgument, match="invalid dimensions for input: x .*Got: 2 Expected: 3"):
        s.run(None, {"x": X[:2]})


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_list_feed_takes_the_declared_type_and_gives_the_cpu_bytes(provider):
    s = lockstep.InferenceSession(softmax_model(), providers=[provider])
    (y,) = s.run(None, {"x": X.tolist()})  # Python floats: float64 values that are exactly X's float32 ones
    assert y.dtype == np.float32 and y.tobytes() == cpu_bytes()


@pytest.mark.parametrize("provider", PROVIDERS)
def test_the_model_embedded_config_applies_on_the_provider_and_gives_the_cpu_bytes(provider, monkeypatch):
    monkeypatch.setenv("ORT_LOAD_CONFIG_FROM_MODEL", "1")
    config = {"session_options": {"intra_op_num_threads": 1, "graph_optimization_level": 0}}
    s = lockstep.InferenceSession(softmax_model(config), providers=[provider])
    o = s.get_session_options()
    assert (o.intra_op_num_threads, o.graph_optimization_level) == (1, lockstep.GraphOptimizationLevel.ORT_DISABLE_ALL)
    assert s.get_providers()[0] == provider
    assert s.run(None, {"x": X})[0].tobytes() == cpu_bytes()


@pytest.mark.parametrize("provider", PROVIDERS)
def test_backend_on_the_device_gives_the_cpu_bytes(provider):
    device = DEVICES[provider]
    assert backend.supports_device(device)
    rep = backend.prepare(softmax_model(), device)
    assert rep.session.get_providers()[0] == provider
    assert rep.run([X])[0].tobytes() == cpu_bytes()
    assert backend.run_model(softmax_model(), {"x": X}, device)[0].tobytes() == cpu_bytes()
