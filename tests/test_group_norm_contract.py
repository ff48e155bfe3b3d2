"""GroupNormalization shares the row statistics and the per-element rule of InstanceNormalization and
LayerNormalization (docs/arithmetic.md#groupnormalization-opsets-18-and-2128): the degenerate group counts give
those ops' bytes."""

import numpy as np

import lockstep
from bits import same_bits
from cases import case, rand
from onnx_models import feeds_of, single_node_model


def run(c):
    return lockstep.InferenceSession(single_node_model(c)).run(None, feeds_of(c))[0]


def test_one_group_per_channel_is_instance_normalization():
    x, scale, bias = rand(2, 5, 3, 7, seed=1), rand(5, seed=2), rand(5, seed=3)
    group = run(case("g", "GroupNormalization", {"X": x, "scale": scale, "bias": bias}, attrs={"num_groups": 5},
                     opset=21))
    instance = run(case("i", "InstanceNormalization", {"input": x, "scale": scale, "B": bias}, opset=17))
    assert same_bits(group, instance)


def test_one_group_is_layer_normalization_over_the_channels():
    x, scale, bias = rand(3, 4, 6, low=-50, high=50, seed=4), rand(1, seed=5), rand(1, seed=6)
    group = run(case("g", "GroupNormalization", {"X": x, "scale": scale, "bias": bias}, attrs={"num_groups": 1},
                     opset=18))
    layer = run(case("l", "LayerNormalization", {"X": x, "Scale": scale, "B": bias}, attrs={"axis": 1}, opset=17))
    assert same_bits(group, layer)


def test_opset_18_and_21_agree_when_the_channel_parameters_repeat_the_group_ones():
    x, scale, bias = rand(2, 6, 5, seed=7), rand(3, seed=8), rand(3, seed=9)
    per_group = run(case("g18", "GroupNormalization", {"X": x, "scale": scale, "bias": bias},
                         attrs={"num_groups": 3}, opset=18))
    per_channel = run(case("g21", "GroupNormalization", {"X": x, "scale": np.repeat(scale, 2), "bias": np.repeat(bias, 2)},
                           attrs={"num_groups": 3}, opset=21))
    assert same_bits(per_group, per_channel)
