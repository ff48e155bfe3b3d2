"""What users bring besides float32 CNN and encoder exports ([breadth] acceptance): ResNet-50 in float16 and
quantized to QDQ by onnxruntime's quantization tool, and a small Llama-shaped decoder in opset-23 ops
(tests/models/llama_decoder.py: grouped-query Attention with a KV cache, RMSNormalization, RotaryEmbedding). lockstep CPU against onnxruntime CPU, within twice onnxruntime's own spread
between its optimized and unoptimized sessions (never looser than needed: at least 1e-5); 1 vs 2 threads byte for
byte; CUDA against CPU byte for byte when a GPU is present."""

import logging
import os
import sys

import numpy as np
import onnx
import pytest

import lockstep
from bits import max_ulp, same_bits

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "models"))
from fixture_format import restore_weights  # noqa: E402
from test_models import FIXTURES, inputs_for, run  # noqa: E402
import llama_decoder  # noqa: E402
from variants import to_float16, to_qdq  # noqa: E402

HAS_CUDA = lockstep.CUDA in lockstep.get_available_providers()


def resnet50_float16():
    model = to_float16(restore_weights(onnx.load(os.path.join(FIXTURES, "resnet50.onnx"))))
    return model, {"input": inputs_for("resnet50")["input"].astype(np.float16)}


def resnet50_qdq():
    feeds = inputs_for("resnet50")
    logging.getLogger().setLevel(logging.ERROR)  # the tool's advice on pre-processing
    return to_qdq(restore_weights(onnx.load(os.path.join(FIXTURES, "resnet50.onnx"))), feeds), feeds


def llama_decoder_opset23():
    return llama_decoder.build(), llama_decoder.feeds()


VARIANTS = {"resnet50_float16": resnet50_float16, "resnet50_qdq": resnet50_qdq,
            "llama_decoder_opset23": llama_decoder_opset23}


@pytest.fixture(scope="module", params=list(VARIANTS))
def variant(request):
    model, feeds = VARIANTS[request.param]()
    return request.param, model.SerializeToString(), feeds


def rel_l2(a, b):
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    return np.linalg.norm(a - b) / np.linalg.norm(b)


def onnxruntime_outputs(data, feeds, optimized):
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.log_severity_level = 3
    if not optimized:
        options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_DISABLE_ALL
    return onnxruntime.InferenceSession(data, options, providers=["CPUExecutionProvider"]).run(None, feeds)


def test_matches_onnxruntime(variant):
    name, data, feeds = variant
    ours = run(data, feeds)
    theirs = onnxruntime_outputs(data, feeds, optimized=True)
    unoptimized = onnxruntime_outputs(data, feeds, optimized=False)
    for i, (a, b, c) in enumerate(zip(ours, theirs, unoptimized)):
        assert a.dtype == b.dtype and a.shape == b.shape, f"{name} output {i}: {a.dtype}{a.shape} vs {b.dtype}{b.shape}"
        bound = max(2 * rel_l2(c, b), 1e-5)
        assert rel_l2(a, b) <= bound, f"{name} output {i}: rel-L2 {rel_l2(a, b):.2e} against onnxruntime, bound {bound:.2e}"


def test_thread_count_invariance(variant):
    name, data, feeds = variant
    for a, b in zip(run(data, feeds, threads=1), run(data, feeds, threads=2)):
        assert same_bits(a, b), f"{name}: 1 vs 2 threads differ by {max_ulp(a, b)} ulp"


@pytest.mark.skipif(not HAS_CUDA, reason="no GPU on this machine")
def test_cuda_bit_identical(variant):
    name, data, feeds = variant
    for a, b in zip(run(data, feeds), run(data, feeds, provider=lockstep.CUDA)):
        assert same_bits(a, b), f"{name}: CPU vs CUDA differ by {max_ulp(a, b)} ulp"
