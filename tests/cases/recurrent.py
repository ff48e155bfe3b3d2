"""Cross-device cases for the recurrent family (RNN, GRU, LSTM): every direction, sequence_lens, initial states,
peepholes, clip, non-default activations, linear_before_reset and both layouts. Inputs use per-case seeds so that
the other families' random inputs do not shift."""

import numpy as np

from cases import case, rand

GATES = {"RNN": 1, "GRU": 3, "LSTM": 4}


def weights(op, dirs, hidden, input_size, seed, bias=True, peepholes=False):
    g = GATES[op] * hidden
    w = {"W": rand(dirs, g, input_size, seed=seed), "R": rand(dirs, g, hidden, seed=seed + 1)}
    if bias:
        w["B"] = rand(dirs, 2 * g, seed=seed + 2)
    if peepholes:
        w["P"] = rand(dirs, 3 * hidden, seed=seed + 3)
    return w


def sigmoid(x):
    return 1 / (1 + np.exp(-x))


def cell_reference(op, batch_first=False):
    """A float64 numpy model of the ONNX definition (default activations, forward or bidirectional, no seq lens)."""

    def run(X, W, R, B=None, sequence_lens=None, initial_h=None, initial_c=None, P=None):
        x = X.astype(np.float64)
        if batch_first:
            x = x.transpose(1, 0, 2)
        seq, batch, _ = x.shape
        dirs, g, hidden = R.shape
        ys, hs, cs = [], [], []
        for d in range(dirs):
            w, r = W[d].astype(np.float64), R[d].astype(np.float64)
            b = np.zeros(2 * g) if B is None else B[d].astype(np.float64)
            wb, rb = b[:g], b[g:]
            h = np.zeros((batch, hidden))
            c = np.zeros((batch, hidden))
            out = np.zeros((seq, batch, hidden))
            for t in (range(seq) if d == 0 else range(seq - 1, -1, -1)):
                xw, hr = x[t] @ w.T + wb, h @ r.T + rb
                if op == "RNN":
                    h = np.tanh(xw + hr)
                elif op == "GRU":
                    z = sigmoid(xw[:, :hidden] + hr[:, :hidden])
                    rr = sigmoid(xw[:, hidden:2 * hidden] + hr[:, hidden:2 * hidden])
                    hh = np.tanh(xw[:, 2 * hidden:] + (rr * h) @ r[2 * hidden:].T + rb[2 * hidden:])
                    h = (1 - z) * hh + z * h
                else:
                    a = xw + hr
                    i, o, f = (sigmoid(a[:, k * hidden:(k + 1) * hidden]) for k in range(3))
                    c = f * c + i * np.tanh(a[:, 3 * hidden:])
                    h = o * np.tanh(c)
                out[t] = h
            ys.append(out)
            hs.append(h)
            cs.append(c)
        y, y_h, y_c = np.stack(ys, 1), np.stack(hs), np.stack(cs)
        if batch_first:
            y, y_h, y_c = y.transpose(2, 0, 1, 3), y_h.transpose(1, 0, 2), y_c.transpose(1, 0, 2)
        result = [y, y_h] + ([y_c] if op == "LSTM" else [])
        return [v.astype(np.float32) for v in result]

    return run


def lens(*values):
    return np.array(values, dtype=np.int32)


LOOSE = dict(rtol=1e-5, atol=1e-5)

CASES = [
    # RNN
    case("rnn_forward", "RNN", {"X": rand(5, 3, 4, seed=1), **weights("RNN", 1, 6, 4, 10)},
         attrs={"hidden_size": 6}, outputs=2, opset=14, **LOOSE),
    case("rnn_bidirectional_states", "RNN",
         {"X": rand(4, 2, 3, seed=2), **weights("RNN", 2, 5, 3, 20), "sequence_lens": lens(4, 2),
          "initial_h": rand(2, 2, 5, seed=3)},
         attrs={"hidden_size": 5, "direction": "bidirectional"}, outputs=2, opset=14, **LOOSE),
    case("rnn_reverse_relu_clip", "RNN", {"X": rand(6, 2, 3, seed=4), **weights("RNN", 1, 4, 3, 30)},
         attrs={"hidden_size": 4, "direction": "reverse", "activations": ["Relu"], "clip": 0.75}, outputs=2,
         opset=14, **LOOSE),
    case("rnn_batch_first", "RNN", {"X": rand(2, 5, 3, seed=5), **weights("RNN", 1, 4, 3, 40)},
         attrs={"hidden_size": 4, "layout": 1}, outputs=2, opset=14, reference=cell_reference("RNN", True),
         note="onnxruntime's CPU RNN refuses layout 1", **LOOSE),
    case("rnn_bidirectional_per_direction_activations", "RNN",
         {"X": rand(4, 2, 3, seed=20), **weights("RNN", 2, 5, 3, 150)},
         attrs={"hidden_size": 5, "direction": "bidirectional", "activations": ["LeakyRelu", "ScaledTanh"],
                "activation_alpha": [0.2, 0.7], "activation_beta": [1.3]},
         outputs=2, opset=14, note="alpha and beta consumed in order across both directions", **LOOSE),
    # GRU
    case("gru_forward", "GRU", {"X": rand(5, 3, 4, seed=6), **weights("GRU", 1, 6, 4, 50)},
         attrs={"hidden_size": 6}, outputs=2, opset=14, **LOOSE),
    case("gru_linear_before_reset_bidirectional", "GRU",
         {"X": rand(4, 2, 3, seed=7), **weights("GRU", 2, 5, 3, 60), "sequence_lens": lens(3, 4),
          "initial_h": rand(2, 2, 5, seed=8)},
         attrs={"hidden_size": 5, "direction": "bidirectional", "linear_before_reset": 1}, outputs=2, opset=14,
         **LOOSE),
    case("gru_reverse_activations", "GRU", {"X": rand(3, 2, 70, seed=9), **weights("GRU", 1, 66, 70, 70)},
         attrs={"hidden_size": 66, "direction": "reverse", "activations": ["HardSigmoid", "Softsign"],
                "activation_alpha": [0.3], "activation_beta": [0.4]},
         outputs=2, opset=14, note="K = 70 and 66: two 64-chunks in both dots", **LOOSE),
    case("gru_batch_first", "GRU", {"X": rand(2, 4, 3, seed=10), **weights("GRU", 1, 4, 3, 80)},
         attrs={"hidden_size": 4, "layout": 1}, outputs=2, opset=14, reference=cell_reference("GRU", True),
         note="onnxruntime's CPU GRU refuses layout 1", **LOOSE),
    case("gru_linear_before_reset_clip", "GRU", {"X": rand(5, 3, 4, seed=21, low=-4, high=4),
                                                  **weights("GRU", 1, 6, 4, 160)},
         attrs={"hidden_size": 6, "linear_before_reset": 1, "clip": 0.5}, outputs=2, opset=14, **LOOSE),
    # LSTM
    case("lstm_forward", "LSTM", {"X": rand(5, 3, 4, seed=11), **weights("LSTM", 1, 6, 4, 90)},
         attrs={"hidden_size": 6}, outputs=3, opset=14, **LOOSE),
    case("lstm_peepholes_states_lens", "LSTM",
         {"X": rand(4, 3, 3, seed=12), **weights("LSTM", 1, 5, 3, 100), "sequence_lens": lens(4, 1, 3),
          "initial_h": rand(1, 3, 5, seed=13), "initial_c": rand(1, 3, 5, seed=14),
          "P": rand(1, 15, seed=15)},
         attrs={"hidden_size": 5}, outputs=3, opset=14, **LOOSE),
    case("lstm_bidirectional_clip", "LSTM", {"X": rand(3, 2, 70, seed=16, low=-3, high=3),
                                             **weights("LSTM", 2, 65, 70, 110)},
         attrs={"hidden_size": 65, "direction": "bidirectional", "clip": 2.0}, outputs=3, opset=14,
         note="K = 70 and 65: two 64-chunks in both dots", **LOOSE),
    case("lstm_only_y_h", "LSTM", {"X": rand(4, 2, 3, seed=17), **weights("LSTM", 1, 3, 3, 120, bias=False)},
         attrs={"hidden_size": 3}, outputs=["", "y_h"], opset=7, **LOOSE),
    case("lstm_batch_first", "LSTM", {"X": rand(2, 4, 3, seed=18), **weights("LSTM", 2, 4, 3, 130)},
         attrs={"hidden_size": 4, "layout": 1, "direction": "bidirectional"}, outputs=3, opset=14,
         reference=cell_reference("LSTM", True), note="onnxruntime's CPU LSTM refuses layout 1", **LOOSE),
    case("lstm_reverse_default_activations", "LSTM",
         {"X": rand(5, 1, 2, seed=19), **weights("LSTM", 1, 3, 2, 140)},
         attrs={"hidden_size": 3, "direction": "reverse", "activations": ["Sigmoid", "Tanh", "Tanh"]}, outputs=3,
         opset=22, **LOOSE),
    # Wide enough for whole SIMD registers plus a tail in every gate (the AVX2/AVX-512 steps run the dots as one
    # product and the activations eight or sixteen units at a time; the scalar ISA runs cell_unit per unit).
    case("lstm_wide_peepholes_lens_bidirectional", "LSTM",
         {"X": rand(6, 4, 19, seed=22), **weights("LSTM", 2, 37, 19, 170), "sequence_lens": lens(6, 3, 1, 5),
          "initial_h": rand(2, 4, 37, seed=23), "initial_c": rand(2, 4, 37, seed=24), "P": rand(2, 111, seed=173)},
         attrs={"hidden_size": 37, "direction": "bidirectional"}, outputs=3, opset=14, **LOOSE),
    case("lstm_wide_input_forget_activations", "LSTM",
         {"X": rand(5, 3, 11, seed=25, low=-3, high=3), **weights("LSTM", 1, 29, 11, 180)},
         attrs={"hidden_size": 29, "input_forget": 1, "clip": 1.5,
                "activations": ["HardSigmoid", "Softsign", "Elu"], "activation_alpha": [0.3, 0.8],
                "activation_beta": [0.45]},
         outputs=3, opset=14, **LOOSE),
    # The default activations with every other option: the SIMD ISAs run this cell with the units in lanes.
    case("lstm_wide_input_forget_clip_peepholes", "LSTM",
         {"X": rand(4, 2, 9, seed=30, low=-3, high=3), **weights("LSTM", 2, 21, 9, 220),
          "sequence_lens": lens(4, 2), "initial_h": rand(2, 2, 21, seed=31), "initial_c": rand(2, 2, 21, seed=32),
          "P": rand(2, 63, seed=223)},
         attrs={"hidden_size": 21, "direction": "bidirectional", "input_forget": 1, "clip": 0.9}, outputs=3, opset=14,
         **LOOSE),
    case("gru_wide_lens_bidirectional", "GRU",
         {"X": rand(5, 3, 13, seed=26), **weights("GRU", 2, 40, 13, 190), "sequence_lens": lens(5, 2, 4),
          "initial_h": rand(2, 3, 40, seed=27)},
         attrs={"hidden_size": 40, "direction": "bidirectional"}, outputs=2, opset=14, **LOOSE),
    case("gru_wide_linear_before_reset_clip", "GRU",
         {"X": rand(4, 5, 9, seed=28, low=-3, high=3), **weights("GRU", 1, 24, 9, 200)},
         attrs={"hidden_size": 24, "linear_before_reset": 1, "clip": 0.8}, outputs=2, opset=14, **LOOSE),
    case("rnn_wide_reverse_lens", "RNN",
         {"X": rand(5, 2, 7, seed=29), **weights("RNN", 1, 33, 7, 210), "sequence_lens": lens(2, 5)},
         attrs={"hidden_size": 33, "direction": "reverse"}, outputs=2, opset=14, **LOOSE),
]
