"""Cross-device cases of the attention family (docs/arithmetic.md#attention): Attention, RotaryEmbedding.

The references are float64 numpy versions of the ONNX definitions, written here (onnxruntime 1.30 lacks the
opset 24/25 additions). tests/test_attention_unfused.py also runs each case against the op's ONNX function body
(the unfused graph) in lockstep and requires the same bytes.
"""

import numpy as np

from cases import case, rand, randint

CASES = []


def heads_4d(x, heads):
    """(batch, seq, heads * head) -> (batch, heads, seq, head)."""
    b, s, hidden = x.shape
    return x.reshape(b, s, heads, hidden // heads).transpose(0, 2, 1, 3)


def attention_reference(q_num_heads=0, kv_num_heads=0, is_causal=0, scale=None, softcap=0.0,
                        qk_matmul_output_mode=0, left_window_size=-1, right_window_size=-1, softmax_precision=1,
                        outputs=("Y",)):
    """The Attention definition in float64: returns f(**inputs) giving the outputs named in `outputs`
    (softmax_precision changes nothing here: every step is float64)."""

    def run(Q, K, V, attn_mask=None, past_key=None, past_value=None, nonpad_kv_seqlen=None):
        three_d = Q.ndim == 3
        q = heads_4d(Q, q_num_heads) if three_d else Q
        k = heads_4d(K, kv_num_heads) if three_d else K
        v = heads_4d(V, kv_num_heads) if three_d else V
        if past_key is not None:
            k, v = np.concatenate([past_key, k], axis=2), np.concatenate([past_value, v], axis=2)
        present_k, present_v = k.astype(np.float32), v.astype(np.float32)
        q, k, v = (t.astype(np.float64) for t in (q, k, v))
        batch, heads, q_len, head = q.shape
        total = k.shape[2]
        k, v = np.repeat(k, heads // k.shape[1], axis=1), np.repeat(v, heads // v.shape[1], axis=1)
        s = 1.0 / np.sqrt(head) if scale is None else scale
        raw = (q @ k.transpose(0, 1, 3, 2)) * s
        capped = softcap * np.tanh(raw / softcap) if softcap else raw
        bias = np.zeros((batch, heads, q_len, total))
        if attn_mask is not None:
            m = np.where(attn_mask, 0.0, -np.inf) if attn_mask.dtype == bool else attn_mask.astype(np.float64)
            m = np.concatenate([m, np.full(m.shape[:-1] + (total - m.shape[-1],), -np.inf)], axis=-1)
            bias = bias + m
        if past_key is not None:
            offset = np.full(batch, past_key.shape[2])
        elif nonpad_kv_seqlen is not None:
            offset = nonpad_kv_seqlen - q_len
        else:
            offset = np.zeros(batch, np.int64)
        pos = np.arange(q_len)[None, :, None] + offset[:, None, None]
        j = np.arange(total)[None, None, :]
        allowed = np.ones((batch, q_len, total), bool)
        if is_causal:
            allowed &= j <= pos
        if left_window_size >= 0:
            allowed &= pos - j <= left_window_size
        if right_window_size >= 0:
            allowed &= j - pos <= right_window_size
        if nonpad_kv_seqlen is not None:
            allowed &= j < nonpad_kv_seqlen[:, None, None]
        bias = bias + np.where(allowed, 0.0, -np.inf)[:, None]
        with np.errstate(invalid="ignore"):
            logits = capped + bias
            e = np.exp(logits - logits.max(axis=-1, keepdims=True))
            probs = e / e.sum(axis=-1, keepdims=True)
        probs = np.where(np.all(bias == -np.inf, axis=-1, keepdims=True), 0.0, probs)
        y = probs @ v
        if three_d:
            y = y.transpose(0, 2, 1, 3).reshape(batch, q_len, -1)
        qk = [raw, capped, capped + bias, probs][qk_matmul_output_mode]
        by_name = {"Y": y, "present_key": present_k, "present_value": present_v, "qk_matmul_output": qk}
        return [by_name[n].astype(np.float32) for n in outputs if n]

    return run


def attention_case(name, inputs, opset=23, outputs=("Y",), atol=1e-5, **attrs):
    names = ("Q", "K", "V", "attn_mask", "past_key", "past_value", "nonpad_kv_seqlen")
    feeds = {n: inputs.get(n) for n in names[:max(names.index(n) for n in inputs) + 1]}
    return case(f"attention_{name}", "Attention", feeds, attrs=attrs, opset=opset, outputs=list(outputs),
                reference=attention_reference(**attrs, outputs=outputs), rtol=1e-4, atol=atol)


def qkv(b, qh, kvh, sq, skv, d, dv=None, seed=0, three_d=False):
    dv = dv or d
    q, k, v = rand(b, qh, sq, d, seed=seed), rand(b, kvh, skv, d, seed=seed + 1), rand(b, kvh, skv, dv, seed=seed + 2)
    if three_d:
        q, k, v = (t.transpose(0, 2, 1, 3).reshape(t.shape[0], t.shape[2], -1) for t in (q, k, v))
    return {"Q": q, "K": k, "V": v}


ALL_OUT = ("Y", "present_key", "present_value", "qk_matmul_output")
CASES += [
    attention_case("4d", qkv(2, 3, 3, 4, 6, 8, seed=1)),
    attention_case("4d_long", qkv(1, 2, 2, 5, 130, 80, 72, seed=4), atol=1e-4),  # chunk boundaries in both products
    attention_case("3d", qkv(2, 4, 4, 3, 5, 8, seed=7, three_d=True), q_num_heads=4, kv_num_heads=4),
    attention_case("3d_gqa", qkv(2, 6, 2, 4, 7, 8, 5, seed=10, three_d=True), q_num_heads=6, kv_num_heads=2),
    attention_case("4d_mqa_causal", qkv(1, 4, 1, 6, 6, 16, seed=13), is_causal=1),
    attention_case("causal_cross", qkv(2, 2, 2, 3, 7, 8, seed=16), is_causal=1),
    attention_case("scale_softcap", qkv(2, 2, 2, 4, 5, 8, seed=19), scale=0.7, softcap=2.5),
    attention_case("mask_float_2d", {**qkv(2, 2, 2, 4, 6, 8, seed=22), "attn_mask": rand(4, 6, seed=25)}),
    attention_case("mask_float_4d", {**qkv(2, 3, 3, 4, 6, 8, seed=26), "attn_mask": rand(2, 1, 4, 6, seed=29)}),
    attention_case("mask_bool_causal", {**qkv(2, 2, 2, 5, 5, 8, seed=30),
                                        "attn_mask": rand(5, 5, seed=33) > -0.5}, is_causal=1),
    attention_case("mask_bool_masked_row", {**qkv(1, 2, 2, 3, 4, 8, seed=34),
                                            "attn_mask": np.array([[1, 0, 1, 1], [0, 0, 0, 0], [1, 1, 0, 1]], bool)},
                   outputs=("Y", "", "", "qk_matmul_output"), qk_matmul_output_mode=3),
    attention_case("past_present", {**qkv(2, 4, 2, 3, 2, 8, seed=37), "attn_mask": None,
                                    "past_key": rand(2, 2, 5, 8, seed=40), "past_value": rand(2, 2, 5, 8, seed=41)},
                   outputs=ALL_OUT, is_causal=1),
]
for mode in range(4):
    CASES.append(attention_case(f"qk_mode{mode}", {**qkv(2, 2, 2, 3, 6, 8, seed=50 + mode),
                                                   "attn_mask": rand(3, 6, seed=60 + mode)},
                                outputs=("Y", "", "", "qk_matmul_output"), qk_matmul_output_mode=mode, softcap=1.5))
CASES += [
    attention_case("nonpad_causal", {**qkv(2, 2, 1, 3, 8, 8, seed=70), "attn_mask": None, "past_key": None,
                                     "past_value": None, "nonpad_kv_seqlen": np.array([5, 8], np.int64)},
                   opset=24, is_causal=1),
    attention_case("nonpad_short_mask", {**qkv(2, 2, 2, 2, 6, 8, seed=73), "attn_mask": rand(2, 4, seed=76),
                                         "past_key": None, "past_value": None,
                                         "nonpad_kv_seqlen": np.array([4, 3], np.int64)}, opset=24),
    attention_case("window", qkv(2, 2, 2, 5, 7, 8, seed=77), opset=25, left_window_size=2, right_window_size=1),
    attention_case("window_nonpad_causal", {**qkv(2, 2, 2, 3, 8, 8, seed=90), "attn_mask": None, "past_key": None,
                                            "past_value": None, "nonpad_kv_seqlen": np.array([5, 8], np.int64)},
                   opset=25, is_causal=1, left_window_size=1),
    attention_case("window_causal_past", {**qkv(1, 2, 2, 3, 3, 8, seed=80), "attn_mask": None,
                                          "past_key": rand(1, 2, 4, 8, seed=83),
                                          "past_value": rand(1, 2, 4, 8, seed=84)},
                   opset=25, outputs=ALL_OUT, is_causal=1, left_window_size=3),
]
# softmax_precision = 11: the softmax computed in double (the scores widened, the probabilities rounded to float).
CASES += [
    attention_case("softmax_f64", qkv(2, 3, 3, 4, 6, 8, seed=100), softmax_precision=11),
    attention_case("softmax_f64_long", qkv(1, 2, 2, 3, 130, 16, seed=103), softmax_precision=11),
    attention_case("softmax_f64_gqa_window_mask", {**qkv(2, 4, 2, 4, 6, 8, seed=106),
                                                   "attn_mask": rand(4, 6, seed=109) > -0.6},
                   opset=25, outputs=("Y", "", "", "qk_matmul_output"), is_causal=1, left_window_size=2, softcap=2.0,
                   qk_matmul_output_mode=3, softmax_precision=11),
    attention_case("softmax_f64_masked_row", {**qkv(1, 2, 2, 3, 4, 8, seed=110),
                                              "attn_mask": np.array([[1, 0, 1, 1], [0, 0, 0, 0], [1, 1, 0, 1]], bool)},
                   outputs=("Y", "", "", "qk_matmul_output"), qk_matmul_output_mode=3, softmax_precision=11),
    attention_case("softmax_f64_3d_past", {**qkv(2, 4, 2, 3, 2, 8, seed=113, three_d=True), "attn_mask": None,
                                           "past_key": rand(2, 2, 5, 8, seed=116),
                                           "past_value": rand(2, 2, 5, 8, seed=117)},
                   outputs=ALL_OUT, q_num_heads=4, kv_num_heads=2, softmax_precision=11),
]
_special = qkv(1, 2, 2, 3, 4, 8, seed=85)
_special["Q"][0, 0, 1, 2] = np.nan
_special["K"][0, 1, 2, 0] = np.inf
CASES.append(case("attention_special", "Attention", _special, opset=23, reference=None,
                  note="NaN in a query row and inf in a key: rows become NaN on both devices alike"))


def rotary_reference(interleaved=0, rotary_embedding_dim=0, num_heads=0):
    def run(X, cos_cache, sin_cache, position_ids=None):
        x = heads_4d(X, num_heads) if X.ndim == 3 else X  # (b, h, s, d)
        x = x.astype(np.float64)
        rot = rotary_embedding_dim or x.shape[-1]
        cos = cos_cache[position_ids] if position_ids is not None else cos_cache
        sin = sin_cache[position_ids] if position_ids is not None else sin_cache
        cos, sin = cos[..., : rot // 2][:, None], sin[..., : rot // 2][:, None]  # (b, 1, s, rot/2)
        part = x[..., :rot]
        x1, x2 = (part[..., 0::2], part[..., 1::2]) if interleaved else (part[..., : rot // 2], part[..., rot // 2:])
        real, imag = cos * x1 - sin * x2, sin * x1 + cos * x2
        rotated = np.stack([real, imag], -1).reshape(part.shape) if interleaved else np.concatenate([real, imag], -1)
        y = np.concatenate([rotated, x[..., rot:]], -1)
        if X.ndim == 3:
            y = y.transpose(0, 2, 1, 3).reshape(X.shape)
        return [y.astype(np.float32)]

    return run


def rotary_case(name, x, cache_rows, half, positions=True, seed=0, **attrs):
    angles = rand(*cache_rows, half, low=0.0, high=6.3, seed=seed)
    inputs = {"X": x, "cos_cache": np.cos(angles), "sin_cache": np.sin(angles)}
    if positions:
        b, s = x.shape[0], x.shape[2] if x.ndim == 4 else x.shape[1]
        inputs["position_ids"] = randint(b, s, high=cache_rows[0], seed=seed + 1)
    return case(f"rotary_{name}", "RotaryEmbedding", inputs, attrs=attrs, opset=23,
                reference=rotary_reference(**attrs), atol=1e-6)


CASES += [
    rotary_case("4d", rand(2, 3, 5, 8, seed=90), (20,), 4, seed=91),
    rotary_case("4d_interleaved", rand(2, 3, 5, 8, seed=92), (20,), 4, seed=93, interleaved=1),
    rotary_case("3d", rand(2, 5, 24, seed=94), (16,), 3, seed=95, num_heads=4),
    rotary_case("partial", rand(1, 2, 4, 16, seed=96), (10,), 5, seed=97, rotary_embedding_dim=10),
    rotary_case("partial_interleaved_wide_cache", rand(1, 2, 4, 16, seed=98), (10,), 8, seed=99,
                rotary_embedding_dim=6, interleaved=1),
    rotary_case("no_positions", rand(2, 2, 3, 8, seed=100), (2, 3), 4, positions=False, seed=101),
]


def linear_attention_reference(q_num_heads, kv_num_heads, update_rule="gated_delta", scale=0.0):
    """The LinearAttention recurrence in float64, one step at a time."""

    def run(query, key, value, past_state=None, decay=None, beta=None):
        b, steps, _ = query.shape
        q = query.reshape(b, steps, q_num_heads, -1).astype(np.float64)
        k = key.reshape(b, steps, kv_num_heads, -1).astype(np.float64)
        v = value.reshape(b, steps, kv_num_heads, -1).astype(np.float64)
        dk, dv = q.shape[-1], v.shape[-1]
        state = np.zeros((b, kv_num_heads, dk, dv)) if past_state is None else past_state.astype(np.float64)
        g = None if decay is None else decay.reshape(b, steps, kv_num_heads, -1).astype(np.float64)
        beta4 = None if beta is None else beta.reshape(b, steps, -1, 1).astype(np.float64)
        s = scale or 1.0 / np.sqrt(dk)
        group = q_num_heads // kv_num_heads
        out = np.zeros((b, steps, q_num_heads, dv))
        for t in range(steps):
            if "gated" in update_rule:
                state = state * np.exp(g[:, t])[..., None]
            w = v[:, t]
            if "delta" in update_rule:
                w = beta4[:, t] * (w - np.einsum("bhad,bha->bhd", state, k[:, t]))
            state = state + k[:, t][..., None] * w[:, :, None, :]
            out[:, t] = s * np.einsum("bha,bhad->bhd", q[:, t], np.repeat(state, group, axis=1))
        return [out.reshape(b, steps, -1).astype(np.float32), state.astype(np.float32)]

    return run


def linear_case(name, b, steps, qh, kvh, dk, dv, seed, past=False, decay_per_head=False, beta_scalar=False, **attrs):
    rule = attrs.setdefault("update_rule", "gated_delta")
    attrs.update(q_num_heads=qh, kv_num_heads=kvh)
    inputs = {"query": rand(b, steps, qh * dk, seed=seed), "key": rand(b, steps, kvh * dk, seed=seed + 1) * 0.5,
              "value": rand(b, steps, kvh * dv, seed=seed + 2),
              "past_state": rand(b, kvh, dk, dv, seed=seed + 3) if past else None}
    if "gated" in rule:
        inputs["decay"] = rand(b, steps, kvh if decay_per_head else kvh * dk, low=-0.5, high=0.0, seed=seed + 4)
    if "delta" in rule:
        inputs["decay"] = inputs.get("decay")
        inputs["beta"] = rand(b, steps, 1 if beta_scalar else kvh, low=0.0, high=1.0, seed=seed + 5)
    return case(f"linear_attention_{name}", "LinearAttention", inputs, attrs=attrs, opset=27,
                outputs=["output", "present_state"], reference=linear_attention_reference(**attrs), rtol=1e-4,
                atol=1e-5)


CASES += [
    linear_case("linear", 2, 5, 2, 2, 8, 6, seed=110, update_rule="linear"),
    linear_case("gated_past", 1, 4, 2, 2, 8, 8, seed=120, past=True, update_rule="gated"),
    linear_case("gated_per_head", 2, 3, 2, 2, 4, 4, seed=130, decay_per_head=True, update_rule="gated"),
    linear_case("delta", 2, 4, 2, 2, 8, 8, seed=140, update_rule="delta"),
    linear_case("gated_delta_gqa", 2, 4, 4, 2, 8, 5, seed=150, past=True),
    linear_case("gated_delta_mqa_beta_scalar", 1, 6, 4, 1, 8, 8, seed=160, beta_scalar=True, scale=0.3),
    linear_case("gated_delta_long_head", 1, 3, 1, 1, 70, 3, seed=170),  # dk > 64: chunked dot products
]
