"""Resize's antialias taps and MelWeightMatrix beyond the cross-device cases (tests/cases/resize.py, signal.py):
the properties docs/arithmetic.md states for them, and their errors, which name the node and op."""

import numpy as np
import pytest

import lockstep
from cases import case
from onnx_models import feeds_of, single_node_model

F32 = np.float32
I64 = np.int64


def run(c, threads=1):
    options = lockstep.SessionOptions()
    options.intra_op_num_threads = threads
    return lockstep.InferenceSession(single_node_model(c), options).run(None, feeds_of(c))[0]


def resize(x, scales, **attrs):
    return case("resize", "Resize", {"X": x, "roi": None, "scales": np.array(scales, F32)}, const=("scales",),
                attrs={"antialias": 1, **attrs}, opset=19)


@pytest.mark.parametrize("mode", ["linear", "cubic"])
@pytest.mark.parametrize("scale", [0.5, 0.3, 0.17])
def test_antialias_keeps_a_constant_image_within_rounding(mode, scale):
    # The weights are divided by their sum, so a constant comes back to within a few ulp of itself.
    y = run(resize(np.full((1, 1, 23, 31), 0.75, F32), [1, 1, scale, scale], mode=mode))
    assert y.shape == (1, 1, int(23 * scale), int(31 * scale))
    np.testing.assert_allclose(y, 0.75, rtol=4e-7, atol=0)


@pytest.mark.parametrize("mode", ["linear", "cubic"])
def test_antialias_averages_over_more_than_the_plain_filter(mode):
    # One bright pixel in a line: with antialias a downscaled output several input pixels away still sees it,
    # without antialias (2 or 4 taps) it does not.
    x = np.zeros((1, 1, 1, 40), F32)
    x[..., 20] = 1.0
    wide = run(resize(x, [1, 1, 1, 0.25], mode=mode))
    plain = run(resize(x, [1, 1, 1, 0.25], mode=mode, antialias=0))
    assert np.count_nonzero(wide) > np.count_nonzero(plain)
    # The stretched filter's samples at the output spacing sum to one: the pixel's mass, times the scale, is kept.
    np.testing.assert_allclose(wide.sum(), 0.25, rtol=2e-6)


def test_antialias_is_thread_count_invariant_on_a_large_image():
    rng = np.random.default_rng(7)
    c = resize(rng.uniform(-1, 1, (2, 3, 97, 131)).astype(F32), [1, 1, 0.21, 0.33], mode="cubic", exclude_outside=1)
    assert run(c, 1).tobytes() == run(c, 4).tobytes()


def mel(bins=8, dft=16, rate=8192, lower=0.0, upper=4096.0, **attrs):
    return case("mel", "MelWeightMatrix",
                {"num_mel_bins": np.array(bins, I64), "dft_length": np.array(dft, I64),
                 "sample_rate": np.array(rate, I64), "lower_edge_hertz": np.array(lower, F32),
                 "upper_edge_hertz": np.array(upper, F32)}, attrs=attrs, opset=17)


def test_mel_bands_peak_at_one_and_stay_in_zero_one():
    y = run(mel(bins=24, dft=256, rate=16000, lower=30.0, upper=7800.0))
    assert y.shape == (129, 24) and y.dtype == F32
    assert (y >= 0).all() and (y <= 1).all()
    np.testing.assert_array_equal(y.max(axis=0), np.ones(24, F32))


@pytest.mark.parametrize("kwargs,message", [
    (dict(upper=5000.0), r"upper <= sample_rate / 2"),
    (dict(lower=100.0, upper=100.0), r"0 <= lower < upper"),
    (dict(lower=-1.0), r"0 <= lower < upper"),
    (dict(bins=-1), r"num_mel_bins -1"),
    (dict(dft=0), r"dft_length 0"),
    (dict(output_datatype=9), r"output_datatype 9"),
])
def test_mel_bad_inputs_are_clear_errors(kwargs, message):
    with pytest.raises(lockstep.Fail, match=rf"\(MelWeightMatrix\).*{message}"):
        run(mel(**kwargs))
