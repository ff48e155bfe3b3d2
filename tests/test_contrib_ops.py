"""onnxruntime's com.microsoft ops that lockstep runs (Gelu, QuickGelu, BiasGelu, FastGelu): against onnxruntime's
own kernels, 1 and 2 threads byte for byte, CUDA byte for byte against the CPU where a GPU is present; an op of that
domain lockstep lacks is refused naming the node."""

import numpy as np
import pytest
from onnx import TensorProto, helper

import lockstep
from bits import same_bits

MS = "com.microsoft"
PROVIDERS = [lockstep.CPU] + ([lockstep.CUDA] if lockstep.CUDA in lockstep.get_available_providers() else [])


def contrib_model(op, inputs, **attrs):
    node = helper.make_node(op, list(inputs), ["Y"], domain=MS, name="contrib", **attrs)
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info(n, TensorProto.FLOAT, list(v.shape))
                                            for n, v in inputs.items()],
                              [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid(MS, 1)],
                             ir_version=9).SerializeToString()


def feeds_of(op, seed):
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal((2, 5, 24)) * 3).astype(np.float32)
    x[0, 0, :6] = [np.nan, np.inf, -np.inf, -0.0, 12.0, -12.0]
    bias = rng.standard_normal(24).astype(np.float32)
    return {"FastGelu": {"X": x}, "FastGelu+bias": {"X": x, "bias": bias}, "BiasGelu": {"A": x, "B": bias},
            "Gelu": {"X": x}, "QuickGelu": {"X": x}, "QuickGelu+alpha": {"X": x}}[op]


CASES = ["Gelu", "QuickGelu", "QuickGelu+alpha", "BiasGelu", "FastGelu", "FastGelu+bias"]


def model_of(case, feeds):
    return contrib_model(case.split("+")[0], feeds, **({"alpha": 1.25} if case == "QuickGelu+alpha" else {}))


def session(model, provider=lockstep.CPU, threads=1):
    options = lockstep.SessionOptions()
    options.intra_op_num_threads = threads
    return lockstep.InferenceSession(model, options, providers=[provider])


@pytest.mark.parametrize("case", CASES)
def test_matches_onnxruntime(case):
    ort = pytest.importorskip("onnxruntime")
    feeds = feeds_of(case, 1)
    model = model_of(case, feeds)
    (ours,) = session(model).run(None, feeds)
    (theirs,) = ort.InferenceSession(model, providers=["CPUExecutionProvider"]).run(None, feeds)
    np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-6)
    assert np.isnan(ours).any() and np.isfinite(ours).any()


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("case", CASES)
def test_same_bytes_on_every_provider_and_thread_count(case, provider):
    feeds = feeds_of(case, 2)
    model = model_of(case, feeds)
    (one,) = session(model).run(None, feeds)
    (other,) = session(model, provider, threads=2).run(None, feeds)
    assert same_bits(one, other)


def test_an_op_of_the_domain_lockstep_lacks_is_refused_naming_it():
    model = contrib_model("NGramRepeatBlock", {"input": np.zeros((1, 2, 4), np.float32)})
    with pytest.raises(lockstep.NotImplemented, match=r"Node 'contrib' \(NGramRepeatBlock\): .*com.microsoft"):
        lockstep.InferenceSession(model)
