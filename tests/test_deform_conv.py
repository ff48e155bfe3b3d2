"""DeformConv's contract (docs/arithmetic.md#deformconv) beyond the cross-device cases (tests/cases/conv.py): with
zero offsets every sample is the pixel itself (weight 1 on it, +0 products for the other corners), so the output is
Conv's dot product term for term and must have Conv's bytes; a mask of ones changes no bit; an offset of exactly
one pixel is the conv of the shifted image; a NaN offset gives NaN and an infinite one reads +0."""

import numpy as np
import pytest
from onnx import TensorProto, helper

import lockstep
from bits import same_bits

PROVIDERS = [p for p in (lockstep.CPU, lockstep.CUDA) if p in lockstep.get_available_providers()]


def run(op, inputs, provider=lockstep.CPU, opset=22, **attrs):
    names = [n if v is not None else "" for n, v in inputs.items()]
    while names and names[-1] == "":
        names.pop()
    feeds = {n: v for n, v in inputs.items() if v is not None}
    graph = helper.make_graph([helper.make_node(op, names, ["Y"], **attrs)], "g",
                              [helper.make_tensor_value_info(n, TensorProto.FLOAT, v.shape) for n, v in feeds.items()],
                              [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    return lockstep.InferenceSession(model.SerializeToString(), providers=[provider]).run(None, feeds)[0]


def rand(rng, *shape, low=-1.0, high=1.0):
    return rng.uniform(low, high, size=shape).astype(np.float32)


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("c,m,group,k,pads,strides,dilations", [
    (3, 4, 1, (3, 3), [1, 1, 1, 1], [1, 1], [1, 1]),
    (4, 6, 2, (2, 3), [0, 1, 2, 0], [2, 1], [1, 2]),
    (9, 2, 1, (3, 3), [1, 1, 1, 1], [1, 1], [1, 1]),  # K = 81: two 64-long chunks
])
def test_zero_offsets_give_conv_bytes(provider, c, m, group, k, pads, strides, dilations):
    rng = np.random.default_rng(7)
    x, w, b = rand(rng, 2, c, 6, 7), rand(rng, m, c // group, *k), rand(rng, m)
    attrs = dict(group=group, pads=pads, strides=strides, dilations=dilations)
    conv = run("Conv", {"X": x, "W": w, "B": b}, provider, **attrs)
    offset = np.zeros((2, 2 * k[0] * k[1], *conv.shape[2:]), np.float32)
    deform = run("DeformConv", {"X": x, "W": w, "offset": offset, "B": b}, provider, **attrs)
    assert same_bits(deform, conv)
    ones = np.ones((2, k[0] * k[1], *conv.shape[2:]), np.float32)
    masked = run("DeformConv", {"X": x, "W": w, "offset": offset, "B": b, "mask": ones}, provider, **attrs)
    assert same_bits(masked, conv)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_one_pixel_offset_is_the_shifted_conv(provider):
    rng = np.random.default_rng(8)
    x, w = rand(rng, 1, 2, 6, 6), rand(rng, 3, 2, 3, 3)
    offset = np.zeros((1, 18, 4, 4), np.float32)
    offset[:, 0::2] = 1.0  # every tap one row down
    got = run("DeformConv", {"X": x, "W": w, "offset": offset}, provider)
    # the conv of the image moved one row up, with a row of zeros entering at the bottom (zero padding)
    shifted = np.concatenate([x[:, :, 1:], np.zeros((1, 2, 1, 6), np.float32)], axis=2)
    want = run("Conv", {"X": shifted, "W": w}, provider)
    assert same_bits(got, want)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_nan_and_infinite_offsets(provider):
    rng = np.random.default_rng(9)
    x, w = rand(rng, 1, 1, 4, 4), np.ones((1, 1, 1, 1), np.float32)
    offset = np.zeros((1, 2, 4, 4), np.float32)
    offset[0, 0, 0, 0] = np.nan
    offset[0, 1, 1, 1] = np.inf
    offset[0, 0, 2, 2] = -np.inf
    y = run("DeformConv", {"X": x, "W": w, "offset": offset}, provider)
    assert np.isnan(y[0, 0, 0, 0])
    assert y[0, 0, 1, 1] == 0 and y[0, 0, 2, 2] == 0
    rest = np.ones((4, 4), bool)
    rest[0, 0] = rest[1, 1] = rest[2, 2] = False
    assert same_bits(y[0, 0][rest], x[0, 0][rest])


@pytest.mark.parametrize("provider", PROVIDERS)
def test_float16_is_the_float32_result_rounded(provider):
    # docs/arithmetic.md#half-precision: widened exactly, computed in float32, each output rounded once.
    rng = np.random.default_rng(10)
    inputs = {"X": rand(rng, 1, 2, 5, 5), "W": rand(rng, 3, 2, 3, 3), "offset": rand(rng, 1, 18, 3, 3, low=-2, high=2),
              "B": rand(rng, 3), "mask": rand(rng, 1, 9, 3, 3, low=0, high=1)}
    half = {n: v.astype(np.float16) for n, v in inputs.items()}
    want = run("DeformConv", {n: v.astype(np.float32) for n, v in half.items()}, provider).astype(np.float16)
    graph = helper.make_graph([helper.make_node("DeformConv", list(half), ["Y"])], "g",
                              [helper.make_tensor_value_info(n, TensorProto.FLOAT16, v.shape) for n, v in half.items()],
                              [helper.make_tensor_value_info("Y", TensorProto.FLOAT16, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 22)])
    got = lockstep.InferenceSession(model.SerializeToString(), providers=[provider]).run(None, half)[0]
    assert same_bits(got, want)
