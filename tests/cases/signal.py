"""Cross-device cases for the signal family: DFT forward and inverse, real and complex input, one-sided (RFFT,
IRFFT), zero padding and truncation by dft_length, axes of opset 17 (attribute) and 20 (input); STFT with and
without a window, one- and two-sided. numpy's float64 FFT is the reference. MelWeightMatrix against onnx's
reference evaluator, exactly (its elements are quotients of small integers)."""

import ml_dtypes
import numpy as np

from cases import case, rand


def _dft_reference(dim, inverse=False, onesided=False, length=None):
    def run(input, dft_length=None, axis=None):
        x = input.astype(np.float64)
        signal = x[..., 0] + (1j * x[..., 1] if x.shape[-1] == 2 else 0)
        ax = dim % x.ndim  # the same axis of the signal (the last dimension dropped) as of x
        n = length
        if onesided and inverse:
            y = np.fft.irfft(signal, n=n, axis=ax)[..., None]
        elif onesided:
            y = np.fft.rfft(signal, n=n, axis=ax)
        else:
            y = (np.fft.ifft if inverse else np.fft.fft)(signal, n=n, axis=ax)
        if np.iscomplexobj(y):
            y = np.stack([y.real, y.imag], axis=-1)
        return [y.astype(np.float32)]

    return run


def _dft(name, x, axis=1, opset=17, inverse=0, onesided=0, length=None):
    inputs = {"input": x, "dft_length": None if length is None else np.array(length, np.int64)}
    attrs = {"inverse": inverse, "onesided": onesided}
    if opset >= 20:
        inputs["axis"] = np.array(axis, np.int64)
    else:
        attrs["axis"] = axis
    if inputs["dft_length"] is None and opset < 20:
        del inputs["dft_length"]
    const = tuple(k for k in ("dft_length", "axis") if inputs.get(k) is not None)
    return case(name, "DFT", inputs, attrs=attrs, opset=opset, const=const,
                reference=_dft_reference(axis, bool(inverse), bool(onesided), length), rtol=1e-4, atol=1e-4)


CASES = [
    _dft("dft_real_axis1", rand(2, 12, 3, 1, seed=600)),
    _dft("dft_complex_inverse", rand(2, 9, 2, seed=601), inverse=1),
    _dft("dft_rfft_padded", rand(1, 7, 1, seed=602), onesided=1, length=10),
    _dft("dft_irfft", rand(3, 6, 2, seed=603), onesided=1, inverse=1),
    _dft("dft_truncated_opset20_axis_last", rand(2, 3, 16, 2, seed=604), axis=-2, opset=20, length=11),
    _dft("dft_long_opset20", rand(1, 70, 2, seed=605), axis=1, opset=20),
]


def _stft_reference(step, frame, onesided):
    def run(signal, frame_step, window=None, frame_length=None):
        x = signal.astype(np.float64)
        z = x[..., 0] + (1j * x[..., 1] if x.shape[-1] == 2 else 0)
        w = np.ones(frame) if window is None else window.astype(np.float64)
        frames = (z.shape[1] - frame) // step + 1
        spectra = np.stack([np.fft.fft(z[:, f * step:f * step + frame] * w, axis=-1) for f in range(frames)], axis=1)
        if onesided:
            spectra = spectra[..., :frame // 2 + 1]
        return [np.stack([spectra.real, spectra.imag], axis=-1).astype(np.float32)]

    return run


def _stft(name, signal, step, frame, window=None, onesided=1, give_length=True):
    inputs = {"signal": signal, "frame_step": np.array(step, np.int64), "window": window,
              "frame_length": np.array(frame, np.int64) if give_length else None}
    if not give_length:
        del inputs["frame_length"]
    const = tuple(k for k in ("frame_step", "frame_length") if inputs.get(k) is not None)
    return case(name, "STFT", inputs, attrs={"onesided": onesided}, opset=17, const=const,
                reference=_stft_reference(step, frame, onesided), rtol=1e-4, atol=1e-4)


CASES += [
    _stft("stft_rectangular", rand(2, 40, 1, seed=610), 5, 12),
    _stft("stft_window_only", rand(1, 33, 1, seed=611), 4, 10, window=rand(10, low=0, high=1, seed=612),
          give_length=False),
    _stft("stft_complex_two_sided", rand(1, 24, 2, seed=613), 3, 8, window=rand(8, low=0, high=1, seed=614),
          onesided=0),
]


def _onnx_mel(**attrs):
    """onnx's reference on the edges widened to float64 (exact): fed float16 or bfloat16 scalars, it computes the mel
    scale in that type, where lockstep widens them first (docs/arithmetic.md#melweightmatrix-17)."""
    def run(**inputs):
        from onnx import helper
        from onnx.reference import ReferenceEvaluator
        for edge in ("lower_edge_hertz", "upper_edge_hertz"):
            inputs[edge] = inputs[edge].astype(np.float64)
        node = helper.make_node("MelWeightMatrix", list(inputs), ["Y"], **attrs)
        return ReferenceEvaluator(node).run(None, inputs)
    return run


def _mel(name, bins, dft, rate, lower, upper, itype=np.int64, ftype=np.float32, output_datatype=None):
    """The scalars are fed (not initializers), so that the kernel runs rather than constant folding."""
    inputs = {"num_mel_bins": np.array(bins, itype), "dft_length": np.array(dft, itype),
              "sample_rate": np.array(rate, itype), "lower_edge_hertz": np.array(lower, ftype),
              "upper_edge_hertz": np.array(upper, ftype)}
    attrs = {} if output_datatype is None else {"output_datatype": output_datatype}
    return case(name, "MelWeightMatrix", inputs, attrs=attrs, opset=17, reference=_onnx_mel(**attrs), rtol=0, atol=0)


CASES += [
    _mel("melweightmatrix_speech", 10, 64, 16000, 20.0, 8000.0),
    _mel("melweightmatrix_double_wide", 40, 512, 22050, 0.0, 11025.0, output_datatype=11),
    _mel("melweightmatrix_f16_odd_dft", 13, 255, 44100, 125.5, 7600.0, itype=np.int32, ftype=np.float64,
         output_datatype=10),
    _mel("melweightmatrix_uint8", 6, 100, 8000, 300.0, 3999.0, itype=np.int32, output_datatype=2),
    _mel("melweightmatrix_int64_many_bins", 64, 128, 16000, 0.0, 8000.0, output_datatype=7),
    _mel("melweightmatrix_bf16_edges", 12, 400, 16000, 64.0, 7936.0, ftype=ml_dtypes.bfloat16),
    _mel("melweightmatrix_f16_edges_f16_out", 9, 96, 12000, 100.0, 5000.0, ftype=np.float16, output_datatype=10),
    _mel("melweightmatrix_no_bins", 0, 32, 8000, 0.0, 4000.0),
]
