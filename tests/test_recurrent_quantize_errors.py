"""Bad inputs of the recurrent, quantize, BitShift, BitCast and Unique ops are clear errors naming the node and op;
types lockstep has no tensors or kernels for are refused by name."""

import numpy as np
import pytest

import lockstep
from cases import case
from onnx_models import feeds_of, single_node_model

F32 = np.float32


def lstm_inputs(w_rows=8, r_cols=2, **extra):
    return {"X": np.zeros((3, 1, 4), F32), "W": np.zeros((1, w_rows, 4), F32), "R": np.zeros((1, 8, r_cols), F32),
            **extra}


INVALID = [
    (case("lstm_bad_r", "LSTM", lstm_inputs(r_cols=3), attrs={"hidden_size": 2}, outputs=2, opset=14),
     "R must have shape"),
    (case("lstm_bad_direction", "LSTM", lstm_inputs(), attrs={"hidden_size": 2, "direction": "sideways"},
          outputs=2, opset=14), "direction must be"),
    (case("rnn_unknown_activation", "RNN", {"X": np.zeros((2, 1, 3), F32), "W": np.zeros((1, 2, 3), F32),
                                            "R": np.zeros((1, 2, 2), F32)},
          attrs={"hidden_size": 2, "activations": ["Swish"]}, outputs=2, opset=14), "activation 'Swish'"),
    (case("gru_long_sequence_lens", "GRU", {"X": np.zeros((2, 1, 3), F32), "W": np.zeros((1, 6, 3), F32),
                                            "R": np.zeros((1, 6, 2), F32), "B": None,
                                            "sequence_lens": np.array([5], np.int32)},
          attrs={"hidden_size": 2}, outputs=2, opset=14), "outside \\[0, 2\\]"),
    (case("quantize_bad_axis_scale", "QuantizeLinear", {"x": np.zeros((2, 3), F32),
                                                        "y_scale": np.ones(2, F32)}, opset=13),
     "per-axis scale must have shape"),
    (case("dequantize_bad_block", "DequantizeLinear", {"x": np.zeros((2, 5), np.int8),
                                                       "x_scale": np.ones((2, 2), F32)},
          attrs={"axis": 1, "block_size": 2}, opset=21), "blocked scale"),
]

REFUSED = [
    (case("lstm_double", "LSTM", {"X": np.zeros((3, 1, 4)), "W": np.zeros((1, 8, 4)), "R": np.zeros((1, 8, 2))},
          attrs={"hidden_size": 2}, outputs=2, opset=14), "X of type double: only float32, float16 and bfloat16"),
    (case("quantize_int32_x", "QuantizeLinear", {"x": np.zeros(3, np.int32), "y_scale": np.ones((), F32)},
          opset=21), "float only"),
    (case("quantize_to_float8e8m0", "QuantizeLinear", {"x": np.zeros(3, F32), "y_scale": np.ones((), F32)},
          attrs={"output_dtype": 24}, opset=24), "float8e8m0 is not supported"),
    (case("qlinear_matmul_per_column", "QLinearMatMul",
          {"a": np.zeros((2, 3), np.uint8), "a_scale": np.ones(1, F32), "a_zero_point": np.zeros(1, np.uint8),
           "b": np.zeros((3, 4), np.uint8), "b_scale": np.ones(4, F32), "b_zero_point": np.zeros(4, np.uint8),
           "y_scale": np.ones(1, F32), "y_zero_point": np.zeros(1, np.uint8)}, opset=21),
     "b_scale must hold one element"),
    (case("cast_to_complex64", "Cast", {"x": np.zeros(3, F32)}, attrs={"to": 14}, opset=24),
     "complex64 is not supported"),
]


@pytest.mark.parametrize("c,message", INVALID, ids=[c.name for c, _ in INVALID])
def test_bad_input_is_a_clear_error(c, message):
    sess = lockstep.InferenceSession(single_node_model(c))
    with pytest.raises(lockstep.InvalidArgument, match=rf"\({c.op_type}\).*{message}"):
        sess.run(None, feeds_of(c))


@pytest.mark.parametrize("c,message", REFUSED, ids=[c.name for c, _ in REFUSED])
def test_unsupported_type_is_refused_by_name(c, message):
    with pytest.raises(lockstep.NotImplemented, match=rf"\({c.op_type}\).*{message}"):
        lockstep.InferenceSession(single_node_model(c)).run(None, feeds_of(c))


def test_bitcast_needs_equal_sizes():
    c = case("bitcast_sizes", "BitCast", {"X": np.zeros(3, F32)}, attrs={"to": 7}, opset=26)
    with pytest.raises(lockstep.InvalidGraph, match=r"\(BitCast\).*cannot reinterpret float \(4 bytes\) as int64"):
        lockstep.InferenceSession(single_node_model(c)).run(None, feeds_of(c))


def test_signed_bitshift_needs_opset_28():
    c = case("bitshift_int8_opset11", "BitShift", {"A": np.ones(2, np.int8), "B": np.ones(2, np.int8)},
             attrs={"direction": "LEFT"}, opset=11)
    with pytest.raises(lockstep.InvalidGraph, match=r"\(BitShift\).*unsigned integers before opset 28"):
        lockstep.InferenceSession(single_node_model(c)).run(None, feeds_of(c))
