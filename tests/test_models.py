"""Real architectures exported by torch (tests/models/fixtures, weights regenerated from seeds): lockstep CPU
against onnxruntime CPU (rel-L2 <= 1e-5), 1 vs 2 threads byte for byte, and CUDA against CPU byte for byte
when a GPU is present."""

import os
import sys

import numpy as np
import onnx
import pytest

import lockstep
from bits import max_ulp, same_bits

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "models"))
from fixture_format import restore_weights  # noqa: E402

FIXTURES = os.path.join(os.path.dirname(__file__), "models", "fixtures")
MODELS = ["resnet50", "mobilenet_v3_large", "efficientnet_b0", "vit_b_16_features", "bert_base_encoder",
          "gpt2_small", "lstm_tagger", "lstm_speech"]
# The batch axis of each model's outputs, where it is not 0 (the speech model's LSTM runs time-major).
BATCH_AXIS = {"lstm_speech": 1}
REL_L2 = 1e-5
HAS_CUDA = lockstep.CUDA in lockstep.get_available_providers()


def inputs_for(name, batch=1):
    rng = np.random.default_rng(1234)
    if name.startswith("bert") or name.startswith("gpt2"):
        vocabulary = 30522 if name.startswith("bert") else 50257
        ids = rng.integers(0, vocabulary, size=(batch, 128)).astype(np.int64)
        mask = np.ones((batch, 128), np.int64)
        mask[:, 100:] = 0
        return {"input_ids": ids, "attention_mask": mask}
    if name == "lstm_speech":
        return {"features": rng.standard_normal((batch, 100, 80)).astype(np.float32)}
    if name.startswith("lstm"):
        return {"input": rng.standard_normal((batch, 20, 32)).astype(np.float32)}
    return {"input": rng.standard_normal((batch, 3, 224, 224)).astype(np.float32)}


@pytest.fixture(scope="module", params=MODELS)
def model(request):
    path = os.path.join(FIXTURES, request.param + ".onnx")
    assert os.path.exists(path), f"fixture {path} is missing (scripts/export_fixtures.py makes it)"
    return request.param, restore_weights(onnx.load(path)).SerializeToString()


def run(model_bytes, feeds, provider=lockstep.CPU, threads=0):
    options = lockstep.SessionOptions()
    options.intra_op_num_threads = threads
    return lockstep.InferenceSession(model_bytes, options, providers=[provider]).run(None, feeds)


def test_matches_onnxruntime(model):
    import onnxruntime

    name, data = model
    feeds = inputs_for(name)
    ours = run(data, feeds)
    theirs = onnxruntime.InferenceSession(data, providers=["CPUExecutionProvider"]).run(None, feeds)
    for a, b in zip(ours, theirs):
        rel = np.linalg.norm(a.astype(np.float64) - b) / np.linalg.norm(b.astype(np.float64))
        assert rel <= REL_L2, f"{name}: rel-L2 {rel:.2e} against onnxruntime"


def test_thread_count_invariance(model):
    name, data = model
    feeds = inputs_for(name)
    for a, b in zip(run(data, feeds, threads=1), run(data, feeds, threads=2)):
        assert same_bits(a, b), f"{name}: 1 vs 2 threads differ by {max_ulp(a, b)} ulp"


@pytest.mark.skipif(not HAS_CUDA, reason="no GPU on this machine")
def test_cuda_bit_identical(model):
    name, data = model
    feeds = inputs_for(name, batch=2)
    for a, b in zip(run(data, feeds), run(data, feeds, provider=lockstep.CUDA)):
        assert same_bits(a, b), f"{name}: CPU vs CUDA differ by {max_ulp(a, b)} ulp"


@pytest.mark.parametrize("provider", [lockstep.CPU] + ([lockstep.CUDA] if HAS_CUDA else []))
def test_batch_invariance(model, provider):
    name, data = model
    feeds = inputs_for(name, batch=3)
    batch = run(data, feeds, provider=provider)
    for i in range(3):
        alone = run(data, {k: v[i:i + 1] for k, v in feeds.items()}, provider=provider)
        axis = BATCH_AXIS.get(name, 0)
        for a, b in zip(batch, alone):
            assert same_bits(np.take(a, [i], axis=axis), b), f"{name}: sample {i} differs between batch 3 and batch 1"
