"""A small Llama-shaped decoder in opset-23 ops, built with onnx.helper (no weights stored: a seed makes them).

Token embedding (Gather); per layer: RMSNormalization, Q/K/V projections, RotaryEmbedding on Q and K, Attention
with grouped-query heads (4 query heads over 2 key/value heads), causal, after a KV cache of `past` tokens
(past_key/past_value in, present_key/present_value out), the output projection and a residual Add; then
RMSNormalization, a SiLU-gated MLP (Sigmoid, Mul) and a residual Add. A final RMSNormalization and the LM head."""

import numpy as np
from onnx import TensorProto, helper, numpy_helper

HIDDEN, Q_HEADS, KV_HEADS, HEAD, FFN, VOCAB, LAYERS, MAX_POS = 64, 4, 2, 16, 128, 100, 2, 64


def build(seed=0):
    rng = np.random.default_rng(seed)
    inits, nodes = [], []

    def weight(name, *shape, scale=None):
        scale = scale if scale is not None else 1.0 / np.sqrt(shape[0])
        inits.append(numpy_helper.from_array(rng.uniform(-scale, scale, shape).astype(np.float32), name))
        return name

    def const(name, value):
        inits.append(numpy_helper.from_array(np.asarray(value), name))
        return name

    def node(op, inputs, outputs, **attrs):
        nodes.append(helper.make_node(op, inputs, outputs, **attrs))
        return outputs[0]

    def rms(x, name):
        return node("RMSNormalization", [x, weight(name + ".w", HIDDEN, scale=1.0)], [name], axis=-1, epsilon=1e-5)

    def heads(x, count, name):  # [1, S, count*HEAD] -> [1, count, S, HEAD]
        r = node("Reshape", [x, const(name + ".shape", np.array([1, -1, count, HEAD], np.int64))], [name + ".r"])
        return node("Transpose", [r], [name + ".t"], perm=[0, 2, 1, 3])

    inv = 1.0 / (10000 ** (np.arange(0, HEAD, 2) / HEAD))
    angles = np.outer(np.arange(MAX_POS), inv)
    const("cos_cache", np.cos(angles).astype(np.float32))
    const("sin_cache", np.sin(angles).astype(np.float32))
    x = node("Gather", [weight("embed", VOCAB, HIDDEN, scale=1.0), "input_ids"], ["embedded"])
    inputs = [helper.make_tensor_value_info("input_ids", TensorProto.INT64, [1, "seq"]),
              helper.make_tensor_value_info("position_ids", TensorProto.INT64, [1, "seq"])]
    outputs = []
    for layer in range(LAYERS):
        p = f"layer{layer}"
        h = rms(x, p + ".attn_norm")
        q = heads(node("MatMul", [h, weight(p + ".wq", HIDDEN, Q_HEADS * HEAD)], [p + ".q"]), Q_HEADS, p + ".qh")
        k = heads(node("MatMul", [h, weight(p + ".wk", HIDDEN, KV_HEADS * HEAD)], [p + ".k"]), KV_HEADS, p + ".kh")
        v = heads(node("MatMul", [h, weight(p + ".wv", HIDDEN, KV_HEADS * HEAD)], [p + ".v"]), KV_HEADS, p + ".vh")
        q = node("RotaryEmbedding", [q, "cos_cache", "sin_cache", "position_ids"], [p + ".q_rot"])
        k = node("RotaryEmbedding", [k, "cos_cache", "sin_cache", "position_ids"], [p + ".k_rot"])
        past_k, past_v = f"past_key.{layer}", f"past_value.{layer}"
        inputs += [helper.make_tensor_value_info(n, TensorProto.FLOAT, [1, KV_HEADS, "past", HEAD])
                   for n in (past_k, past_v)]
        y = node("Attention", [q, k, v, "", past_k, past_v], [p + ".attn", f"present_key.{layer}",
                                                             f"present_value.{layer}"], is_causal=1)
        outputs += [helper.make_tensor_value_info(f"present_{kind}.{layer}", TensorProto.FLOAT,
                                                  [1, KV_HEADS, "total", HEAD])
                    for kind in ("key", "value")]
        y = node("Transpose", [y], [p + ".attn_t"], perm=[0, 2, 1, 3])
        y = node("Reshape", [y, const(p + ".merge", np.array([1, -1, Q_HEADS * HEAD], np.int64))], [p + ".attn_r"])
        y = node("MatMul", [y, weight(p + ".wo", Q_HEADS * HEAD, HIDDEN)], [p + ".o"])
        x = node("Add", [x, y], [p + ".res1"])
        h = rms(x, p + ".mlp_norm")
        gate = node("MatMul", [h, weight(p + ".wg", HIDDEN, FFN)], [p + ".gate"])
        up = node("MatMul", [h, weight(p + ".wu", HIDDEN, FFN)], [p + ".up"])
        silu = node("Mul", [gate, node("Sigmoid", [gate], [p + ".sig"])], [p + ".silu"])
        down = node("MatMul", [node("Mul", [silu, up], [p + ".act"]), weight(p + ".wd", FFN, HIDDEN)], [p + ".down"])
        x = node("Add", [x, down], [p + ".res2"])
    logits = node("MatMul", [rms(x, "final_norm"), weight("lm_head", HIDDEN, VOCAB)], ["logits"])
    outputs.insert(0, helper.make_tensor_value_info(logits, TensorProto.FLOAT, [1, "seq", VOCAB]))
    graph = helper.make_graph(nodes, "llama_decoder", inputs, outputs, initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 23)])
    model.ir_version = 10
    return model


def feeds(seq=8, past=4, seed=1):
    """A prefill of `seq` tokens after a cache of `past` tokens (random keys and values)."""
    rng = np.random.default_rng(seed)
    out = {"input_ids": rng.integers(0, VOCAB, (1, seq)).astype(np.int64),
           "position_ids": np.arange(past, past + seq, dtype=np.int64)[None]}
    for layer in range(LAYERS):
        for kind in ("key", "value"):
            out[f"past_{kind}.{layer}"] = rng.standard_normal((1, KV_HEADS, past, HEAD)).astype(np.float32)
    return out
