"""A small LSTM model in the form torch exports (batch-first input transposed to time-major, two bidirectional LSTM
layers joined by Transpose and Reshape, a MatMul + Add head), built with onnx.helper since torch is not on CI
(scripts/export_fixtures.py exports the real torch model, lstm_tagger, where torch is installed): lockstep CPU
against onnxruntime CPU, 1 vs 3 threads and batch 3 vs batch 1 byte for byte, and CUDA against CPU when a GPU is
present."""

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import lockstep
from bits import max_ulp, same_bits

HAS_CUDA = lockstep.CUDA in lockstep.get_available_providers()
FEATURES, HIDDEN, CLASSES, STEPS = 32, 48, 10, 20


def lstm_model():
    rng = np.random.default_rng(7)
    weights = lambda *shape: numpy_helper.from_array((rng.standard_normal(shape) * 0.15).astype(np.float32))
    inits, nodes, x = [], [], "x_time_major"
    nodes.append(helper.make_node("Transpose", ["input"], [x], perm=[1, 0, 2]))
    inits.append(numpy_helper.from_array(np.array([0, 0, -1], np.int64), "join_shape"))
    for layer, width in enumerate([FEATURES, 2 * HIDDEN]):
        for name, shape in [("W", (2, 4 * HIDDEN, width)), ("R", (2, 4 * HIDDEN, HIDDEN)), ("B", (2, 8 * HIDDEN))]:
            t = weights(*shape)
            t.name = f"{name}{layer}"
            inits.append(t)
        nodes += [
            helper.make_node("LSTM", [x, f"W{layer}", f"R{layer}", f"B{layer}"], [f"y{layer}"], hidden_size=HIDDEN,
                             direction="bidirectional"),
            helper.make_node("Transpose", [f"y{layer}"], [f"yt{layer}"], perm=[0, 2, 1, 3]),
            helper.make_node("Reshape", [f"yt{layer}", "join_shape"], [f"joined{layer}"]),
        ]
        x = f"joined{layer}"
    head_w, head_b = weights(2 * HIDDEN, CLASSES), weights(CLASSES)
    head_w.name, head_b.name = "head_w", "head_b"
    inits += [head_w, head_b]
    nodes += [helper.make_node("Transpose", [x], ["batch_major"], perm=[1, 0, 2]),
              helper.make_node("MatMul", ["batch_major", "head_w"], ["logits"]),
              helper.make_node("Add", ["logits", "head_b"], ["output"])]
    graph = helper.make_graph(nodes, "lstm_tagger", [helper.make_tensor_value_info("input", TensorProto.FLOAT,
                                                                                   ["batch", STEPS, FEATURES])],
                              [helper.make_tensor_value_info("output", TensorProto.FLOAT, ["batch", STEPS, CLASSES])],
                              inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8).SerializeToString()


MODEL = lstm_model()


def feeds(batch):
    return {"input": np.random.default_rng(1234).standard_normal((batch, STEPS, FEATURES)).astype(np.float32)}


def run(provider=lockstep.CPU, threads=0, batch=2):
    options = lockstep.SessionOptions()
    options.intra_op_num_threads = threads
    return lockstep.InferenceSession(MODEL, options, providers=[provider]).run(None, feeds(batch))[0]


def test_matches_onnxruntime():
    import onnxruntime

    theirs = onnxruntime.InferenceSession(MODEL, providers=["CPUExecutionProvider"]).run(None, feeds(2))[0]
    ours = run()
    rel = np.linalg.norm(ours.astype(np.float64) - theirs) / np.linalg.norm(theirs.astype(np.float64))
    assert rel <= 1e-5, f"rel-L2 {rel:.2e} against onnxruntime"


def test_thread_count_invariance():
    a, b = run(threads=1), run(threads=3)
    assert same_bits(a, b), f"1 vs 3 threads differ by {max_ulp(a, b)} ulp"


def test_batch_invariance():
    batch = run(batch=3)
    x = feeds(3)["input"]
    for i in range(3):
        alone = lockstep.InferenceSession(MODEL).run(None, {"input": x[i:i + 1]})[0]
        assert same_bits(batch[i:i + 1], alone), f"sample {i} differs between batch 3 and batch 1"


@pytest.mark.skipif(not HAS_CUDA, reason="no GPU on this machine")
def test_cuda_bit_identical():
    a, b = run(), run(provider=lockstep.CUDA)
    assert same_bits(a, b), f"CPU vs CUDA differ by {max_ulp(a, b)} ulp"
