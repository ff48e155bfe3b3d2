"""onnxruntime's com.microsoft attention ops (MultiHeadAttention, GroupQueryAttention, Attention), which lockstep runs
by expansion into standard ONNX nodes (src/graph/expand_microsoft_attention.cpp): against onnxruntime's CPU kernels,
1 and 2 threads byte for byte, CUDA byte for byte against the CPU where a GPU is present; what is not supported or
malformed is refused naming the node."""

import numpy as np
import pytest
from onnx import TensorProto, helper, load_from_string

import lockstep
from bits import same_bits

MS = "com.microsoft"
PROVIDERS = [lockstep.CPU] + ([lockstep.CUDA] if lockstep.CUDA in lockstep.get_available_providers() else [])
F, I32, F16 = TensorProto.FLOAT, TensorProto.INT32, TensorProto.FLOAT16
INT_INPUTS = {"seqlens_k", "total_sequence_length", "key_padding_mask", "mask_index"}


def model_of(op, inputs, feeds, outputs, opset=17, declare_shapes=True, elem=F, **attrs):
    """One com.microsoft `op` node named "attn"; `inputs` lists its input names ("" for absent ones)."""
    node = helper.make_node(op, inputs, outputs, domain=MS, name="attn", **attrs)
    declared = []
    for name in inputs:
        if name:
            shape = feeds[name].shape
            # symbolic: the rank only (the model serves every step of a decode loop)
            shape = list(shape) if declare_shapes is True else [f"{name}_{i}" for i in range(len(shape))] \
                if declare_shapes == "symbolic" else None
            kind = I32 if name in INT_INPUTS else TensorProto.INT64 if name == "position_ids" else elem
            declared.append(helper.make_tensor_value_info(name, kind, shape))
    graph = helper.make_graph([node], "g", declared, [helper.make_tensor_value_info(n, elem, None)
                                                      for n in outputs if n])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset), helper.make_opsetid(MS, 1)],
                             ir_version=10).SerializeToString()


def session(model, provider=lockstep.CPU, threads=1):
    options = lockstep.SessionOptions()
    options.intra_op_num_threads = threads
    return lockstep.InferenceSession(model, options, providers=[provider])


def onnxruntime_outputs(model, feeds):
    ort = pytest.importorskip("onnxruntime")
    return ort.InferenceSession(model, providers=["CPUExecutionProvider"]).run(None, feeds)


def assert_close(ours, theirs, rtol=1e-5, atol=1e-6):
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        assert a.shape == b.shape and a.dtype == b.dtype
        np.testing.assert_allclose(a, b, rtol=rtol, atol=atol)


def normal(rng, shape, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


# ---------------------------------------------------------------------------------------------------------------
# MultiHeadAttention

B, S, L, N, H = 2, 4, 5, 3, 8


def mha_case(name, seed=0):
    """(inputs, feeds, outputs, attrs) of one MultiHeadAttention configuration."""
    rng = np.random.default_rng(seed)
    q, k, v = normal(rng, (B, S, N * H), 2), normal(rng, (B, L, N * H), 2), normal(rng, (B, L, N * H))
    feeds = {"query": q, "key": k, "value": v}
    outputs = ["output"]
    attrs = {"num_heads": N}
    if "selfattn" in name:
        feeds["key"], feeds["value"] = normal(rng, (B, S, N * H), 2), normal(rng, (B, S, N * H))
    if "bias" in name:
        feeds["bias"] = normal(rng, (3 * N * H,))
    total = feeds["key"].shape[1] + (3 if "past" in name else 0)
    if "lengths" in name:
        feeds["key_padding_mask"] = np.array([total - 2, total], np.int32)
    if "mask2d" in name:
        m = np.ones((B, total), np.int32)
        m[0, 1] = m[1, -1] = m[1, 0] = 0
        feeds["key_padding_mask"] = m
    if "mask3d" in name:
        feeds["key_padding_mask"] = (rng.random((B, S, total)) > 0.3).astype(np.int32)
    if "attnbias" in name:
        feeds["attention_bias"] = normal(rng, (1, N, S, total))
    if "past" in name:
        feeds["past_key"], feeds["past_value"] = normal(rng, (B, N, 3, H)), normal(rng, (B, N, 3, H))
        outputs += ["present_key", "present_value"]
    if "unidirectional" in name:
        attrs["unidirectional"] = 1
    if "filter" in name:
        attrs["mask_filter_value"] = -300.0
    if "scale" in name:
        attrs["scale"] = 0.2
    if "packedkv" in name:
        feeds["key"] = normal(rng, (B, L, N, 2, H), 2)
        del feeds["value"]
    if "packedqkv" in name:
        feeds["query"] = normal(rng, (B, S, N, 3, H), 2)
        del feeds["key"], feeds["value"]
    if "bnsh" in name:
        feeds["key"], feeds["value"] = normal(rng, (B, N, L, H), 2), normal(rng, (B, N, L, H))
    return positional(MHA_INPUTS, feeds), feeds, outputs, attrs


def positional(names, feeds):
    """The node's input list: each name where it is fed, "" before it where not, nothing after the last."""
    inputs = [n if n in feeds else "" for n in names]
    while inputs and not inputs[-1]:
        inputs.pop()
    return inputs


MHA_INPUTS = ["query", "key", "value", "bias", "key_padding_mask", "attention_bias", "past_key", "past_value"]


MHA_CASES = ["plain", "bias", "unidirectional", "selfattn-unidirectional", "lengths", "mask2d", "mask3d", "attnbias",
             "bias-mask2d-attnbias-filter-scale", "selfattn-past", "selfattn-past-unidirectional-mask2d-bias",
             "selfattn-past-lengths-attnbias", "bnsh", "bnsh-mask2d-unidirectional"]


@pytest.mark.parametrize("case", MHA_CASES)
def test_multi_head_attention_matches_onnxruntime(case):
    inputs, feeds, outputs, attrs = mha_case(case)
    model = model_of("MultiHeadAttention", inputs, feeds, outputs, **attrs)
    assert_close(session(model).run(None, feeds), onnxruntime_outputs(model, feeds))


@pytest.mark.parametrize("case", ["packedkv", "packedqkv"])
def test_packed_multi_head_attention_matches_onnxruntime_on_the_unpacked_inputs(case):
    """onnxruntime's CPU provider refuses the packed forms ("not implemented for CPU"); the schema says key is
    (B, L, N, 2, H) holding K and V, query (B, S, N, 3, H) holding Q, K and V: compared with the separate inputs."""
    inputs, feeds, outputs, attrs = mha_case(case)
    model = model_of("MultiHeadAttention", inputs, feeds, outputs, **attrs)
    ours = session(model).run(None, feeds)
    packed = feeds["key"] if case == "packedkv" else feeds["query"]
    parts = [packed[:, :, :, i].reshape(packed.shape[0], packed.shape[1], -1) for i in range(packed.shape[3])]
    unpacked = dict(zip(["key", "value"] if case == "packedkv" else ["query", "key", "value"], parts[-2:] if
                        case == "packedkv" else parts))
    unpacked.setdefault("query", feeds["query"])
    plain = model_of("MultiHeadAttention", ["query", "key", "value"], unpacked, outputs, **attrs)
    assert_close(ours, onnxruntime_outputs(plain, unpacked))


def test_a_fully_masked_row_takes_the_filter_value_as_onnxruntime_does():
    """Every key padded: onnxruntime adds mask_filter_value (not -inf), so the row is a softmax of scores shifted by
    the same amount, not zeros."""
    inputs, feeds, outputs, attrs = mha_case("mask2d-filter", 3)
    feeds["key_padding_mask"][1] = 0
    model = model_of("MultiHeadAttention", inputs, feeds, outputs, **attrs)
    (ours,), (theirs,) = session(model).run(None, feeds), onnxruntime_outputs(model, feeds)
    assert np.abs(ours[1]).max() > 0.1
    assert_close([ours], [theirs])


# ---------------------------------------------------------------------------------------------------------------
# GroupQueryAttention

GN, GKV, GH = 4, 2, 32
MAX_POS = 32


def gqa_model(feeds, opset=17, packed=False, with_past=True, rotary=False, bias=False, sink=False, positions=False,
              elem=F, **attrs):
    given = {"query", "seqlens_k", "total_sequence_length"} | ({"key", "value"} if not packed else set())
    given |= {"past_key", "past_value"} if with_past else set()
    given |= {"cos_cache", "sin_cache"} if rotary else set()
    given |= ({"attention_bias"} if bias else set()) | ({"head_sink"} if sink else set())
    given |= {"position_ids"} if positions else set()
    inputs = positional(GQA_INPUTS, given)
    attrs.setdefault("num_heads", GN)
    attrs.setdefault("kv_num_heads", GKV)
    if rotary:
        attrs["do_rotary"] = 1
    return model_of("GroupQueryAttention", inputs, feeds, ["output", "present_key", "present_value"], opset=opset,
                    elem=elem, declare_shapes="symbolic", **attrs)


GQA_INPUTS = ["query", "key", "value", "past_key", "past_value", "seqlens_k", "total_sequence_length", "cos_cache",
              "sin_cache", "position_ids", "attention_bias", "head_sink"]


def rotary_caches(rotary_dim=GH):
    angles = np.arange(MAX_POS)[:, None] / (10000.0 ** (np.arange(rotary_dim // 2)[None, :] * 2 / rotary_dim))
    return np.cos(angles).astype(np.float32), np.sin(angles).astype(np.float32)


def gqa_feeds(rng, batch, seq, past=None, seqlens=None, packed=False, rotary_dim=0, n=GN, kv=GKV):
    """A step of `seq` new tokens per row: a prompt when `past` is None (empty past), else appended to `past`."""
    feeds = {}
    if packed:
        feeds["query"] = normal(rng, (batch, seq, (n + 2 * kv) * GH))
    else:
        feeds["query"] = normal(rng, (batch, seq, n * GH))
        feeds["key"] = normal(rng, (batch, seq, kv * GH))
        feeds["value"] = normal(rng, (batch, seq, kv * GH))
    if past is None:
        past = (np.zeros((batch, kv, 0, GH), np.float32),) * 2
        seqlens = np.full(batch, seq - 1) if seqlens is None else seqlens
        total = seq
    else:
        total = int(np.max(seqlens)) + 1
    feeds["past_key"], feeds["past_value"] = past
    feeds["seqlens_k"] = np.asarray(seqlens, np.int32)
    feeds["total_sequence_length"] = np.array(total, np.int32)
    if rotary_dim:
        feeds["cos_cache"], feeds["sin_cache"] = rotary_caches(rotary_dim)
    return feeds


def prompt_then_decode(steps, batch=2, prompt_len=5, lengths=None, packed=False, rotary_dim=0, opset=17,
                       n=GN, kv=GKV, seed=0, sink=False, positions=False, **attrs):
    """Runs a prompt then `steps` single-token steps on lockstep and onnxruntime, each step fed onnxruntime's present
    outputs of the one before; yields (ours, theirs) per step. `lengths`: each row's prompt length (right padding)."""
    rng = np.random.default_rng(seed)
    lengths = np.full(batch, prompt_len) if lengths is None else np.asarray(lengths)
    model = None
    past = None
    seqlens = lengths - 1
    for step in range(steps + 1):
        feeds = gqa_feeds(rng, batch, prompt_len if step == 0 else 1, past, seqlens, packed, rotary_dim, n, kv)
        if sink:
            feeds["head_sink"] = normal(rng, (n,), 2)
        if positions:  # shifted by 3; a prompt's rows after the first get other numbers, which onnxruntime ignores
            feeds["position_ids"] = (3 + np.arange(prompt_len)[None, :] + 5 * np.arange(batch)[:, None] if step == 0
                                     else seqlens[:, None] + 3).astype(np.int64)
        if model is None:
            model = gqa_model(feeds, opset=opset, packed=packed, rotary=rotary_dim > 0, sink=sink,
                              positions=positions, num_heads=n, kv_num_heads=kv, **attrs)
        theirs = onnxruntime_outputs(model, feeds)
        yield model, feeds, session(model).run(None, feeds), theirs
        past = (theirs[1], theirs[2])
        seqlens = seqlens + 1


GQA_CASES = {
    "plain": {},
    "rotary": {"rotary_dim": GH},
    "rotary-interleaved": {"rotary_dim": GH, "rotary_interleaved": 1},
    "rotary-partial": {"rotary_dim": GH // 2},
    "padded-rows": {"lengths": [5, 3]},
    "padded-rows-rotary": {"lengths": [2, 5], "rotary_dim": GH},
    "softcap": {"softcap": 2.5},
    "scale": {"scale": 0.3},
    "window": {"local_window_size": 3},
    "packed": {"packed": True},
    "packed-rotary": {"packed": True, "rotary_dim": GH},
    "mqa": {"kv": 1},
    "same-heads": {"kv": GN},
    "opset23": {"opset": 23},
    "smooth-softmax": {"smooth_softmax": 1},
    "head-sink": {"sink": True},
    "head-sink-window-softcap-padded": {"sink": True, "local_window_size": 2, "softcap": 2.0, "lengths": [5, 2]},
    "smooth-softmax-window-padded": {"smooth_softmax": 1, "local_window_size": 2, "lengths": [2, 5]},
    "window-padded": {"local_window_size": 2, "lengths": [5, 2]},
    "position-ids": {"positions": True, "rotary_dim": GH},
    "position-ids-padded": {"positions": True, "rotary_dim": GH, "lengths": [3, 5]},
    "bidirectional": {"causal": 0},
    "bidirectional-padded-rotary": {"causal": 0, "lengths": [5, 2], "rotary_dim": GH},
    "batch1": {"batch": 1},
}


@pytest.mark.parametrize("case", sorted(GQA_CASES))
def test_group_query_attention_prompt_and_decode_match_onnxruntime(case):
    for model, feeds, ours, theirs in prompt_then_decode(3, **GQA_CASES[case]):
        assert_close(ours, theirs)


def test_group_query_attention_with_attention_bias_matches_onnxruntime():
    rng = np.random.default_rng(5)
    feeds = gqa_feeds(rng, 2, 4)
    feeds["attention_bias"] = normal(rng, (2, 1, 4, 4))
    model = gqa_model(feeds, bias=True)
    assert_close(session(model).run(None, feeds), onnxruntime_outputs(model, feeds))


def test_group_query_attention_prompt_without_past_inputs_matches_onnxruntime():
    rng = np.random.default_rng(6)
    feeds = gqa_feeds(rng, 2, 4, seqlens=np.array([3, 1]))
    del feeds["past_key"], feeds["past_value"]
    model = gqa_model(feeds, with_past=False)
    assert_close(session(model).run(None, feeds), onnxruntime_outputs(model, feeds))


@pytest.mark.parametrize("past_len", [2, 5, 7])
def test_group_query_attention_prompt_ignores_a_given_past_as_onnxruntime_does(past_len):
    """S == total_sequence_length is a prompt whatever the past holds: the present caches hold the new keys, then
    zeros up to max(total_sequence_length, past length)."""
    rng = np.random.default_rng(18)
    past = (normal(rng, (2, GKV, past_len, GH)), normal(rng, (2, GKV, past_len, GH)))
    feeds = gqa_feeds(rng, 2, 5, rotary_dim=GH)
    feeds["past_key"], feeds["past_value"] = past
    model = gqa_model(feeds, rotary=True)
    ours, theirs = session(model).run(None, feeds), onnxruntime_outputs(model, feeds)
    assert ours[1].shape == (2, GKV, max(5, past_len), GH)
    assert_close(ours, theirs)


def test_group_query_attention_continues_a_prompt_in_chunks_as_onnxruntime_does():
    """Batch 1, a second chunk of 3 tokens after a prompt of 4 (onnxruntime allows S > 1 with a past for batch 1)."""
    rng = np.random.default_rng(17)
    prompt = gqa_feeds(rng, 1, 4, rotary_dim=GH)
    model = gqa_model(prompt, rotary=True)
    first = onnxruntime_outputs(model, prompt)
    assert_close(session(model).run(None, prompt), first)
    chunk = gqa_feeds(rng, 1, 3, (first[1], first[2]), np.array([6]), rotary_dim=GH)
    assert_close(session(model).run(None, chunk), onnxruntime_outputs(model, chunk))


def test_group_query_attention_new_keys_land_after_each_rows_own_past():
    """Rows of a batch with different lengths: a step writes row b's new key at seqlens_k[b] (not at the end of the
    past buffer) and zeros after it, as onnxruntime does."""
    steps = list(prompt_then_decode(1, lengths=[5, 2]))
    _, feeds, (y, present_key, present_value), theirs = steps[1]
    assert present_key.shape == (2, GKV, 6, GH)
    assert np.array_equal(present_key[1, :, 2], theirs[1][1, :, 2])
    assert not present_key[1, :, 3:].any() and not present_value[1, :, 3:].any()
    assert_close([y, present_key, present_value], theirs)


# ---------------------------------------------------------------------------------------------------------------
# Attention (BERT, GPT-2)

AH = 6  # input hidden size


def attention_case(name, seed=0):
    rng = np.random.default_rng(seed)
    hidden = N * H
    feeds = {"input": normal(rng, (B, S, AH)), "weights": normal(rng, (AH, 3 * hidden), 0.7)}
    outputs, attrs = ["output"], {"num_heads": N}
    if "bias" in name:
        feeds["bias"] = normal(rng, (3 * hidden,))
    total = S + (2 if "past" in name else 0)
    if "lengths" in name:
        feeds["mask_index"] = np.array([total - 1, total - 3], np.int32)
    if "mask2d" in name:
        feeds["mask_index"] = (rng.random((B, total)) > 0.3).astype(np.int32)
        feeds["mask_index"][:, -1] = 1
    if "mask3d" in name:
        feeds["mask_index"] = (rng.random((B, S, total)) > 0.3).astype(np.int32)
    if "past" in name:
        feeds["past"] = normal(rng, (2, B, N, 2, H))
        outputs.append("present")
    if "attnbias" in name:
        feeds["attention_bias"] = normal(rng, (B, 1, S, total))
    if "unidirectional" in name:
        attrs["unidirectional"] = 1
    if "sizes" in name:
        feeds["weights"] = normal(rng, (AH, 2 * hidden + 2 * N), 0.7)
        feeds.pop("bias", None)
        attrs["qkv_hidden_sizes"] = [hidden, hidden, 2 * N]
    return positional(ATTENTION_INPUTS, feeds), feeds, outputs, attrs


ATTENTION_INPUTS = ["input", "weights", "bias", "mask_index", "past", "attention_bias"]


ATTENTION_CASES = ["plain", "bias", "bias-unidirectional", "bias-lengths", "bias-mask2d", "mask3d", "bias-attnbias",
                   "bias-past-unidirectional", "bias-past-mask2d", "bias-past-lengths", "sizes", "bias-present"]


@pytest.mark.parametrize("case", ATTENTION_CASES)
def test_attention_matches_onnxruntime(case):
    inputs, feeds, outputs, attrs = attention_case(case)
    if case.endswith("present"):
        outputs.append("present")
    model = model_of("Attention", inputs, feeds, outputs, **attrs)
    ours = session(model).run(None, feeds)
    if "bias" not in feeds:  # onnxruntime's CPU kernel crashes without a bias: compared with a bias of +0
        feeds["bias"] = np.zeros(feeds["weights"].shape[1], np.float32)
        inputs = positional(ATTENTION_INPUTS, feeds)
        model = model_of("Attention", inputs, feeds, outputs, **attrs)
    assert_close(ours, onnxruntime_outputs(model, feeds))


def test_attention_without_bias_matches_onnxruntime_with_a_zero_bias():
    """(The cases above feed onnxruntime a +0 bias where the model has none.)"""
    inputs, feeds, outputs, attrs = attention_case("unidirectional-lengths", 4)
    model = model_of("Attention", inputs, feeds, outputs, **attrs)
    ours = session(model).run(None, feeds)
    feeds["bias"] = np.zeros(feeds["weights"].shape[1], np.float32)
    zero_bias = model_of("Attention", positional(["input", "weights", "bias", "mask_index"], feeds), feeds, outputs,
                         **attrs)
    assert_close(ours, onnxruntime_outputs(zero_bias, feeds))


# ---------------------------------------------------------------------------------------------------------------
# The same bytes at every thread count and on every provider; other opsets


def byte_cases():
    cases = []
    for case in ["bias-mask2d-attnbias-filter-scale", "selfattn-past-unidirectional-mask2d-bias", "packedqkv"]:
        inputs, feeds, outputs, attrs = mha_case(case, 7)
        cases.append(("MultiHeadAttention/" + case, model_of("MultiHeadAttention", inputs, feeds, outputs, **attrs),
                      feeds))
    for case in ["bias-past-unidirectional", "bias-mask3d"]:
        inputs, feeds, outputs, attrs = attention_case(case, 8)
        cases.append(("Attention/" + case, model_of("Attention", inputs, feeds, outputs, **attrs), feeds))
    rng = np.random.default_rng(9)
    prompt = gqa_feeds(rng, 2, 5, seqlens=np.array([4, 2]), rotary_dim=GH)
    model = gqa_model(prompt, rotary=True, softcap=3.0, local_window_size=3)
    present = session(model).run(None, prompt)
    step = gqa_feeds(rng, 2, 1, (present[1], present[2]), np.array([5, 3]), rotary_dim=GH)
    cases += [("GroupQueryAttention/prompt", model, prompt), ("GroupQueryAttention/decode", model, step)]
    return cases


BYTE_CASES = byte_cases()


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("index", range(len(BYTE_CASES)), ids=[c[0] for c in BYTE_CASES])
def test_same_bytes_on_every_provider_and_thread_count(index, provider):
    _, model, feeds = BYTE_CASES[index]
    reference = session(model, lockstep.CPU, 1).run(None, feeds)
    for threads in (1, 2):
        for ours, ref in zip(session(model, provider, threads).run(None, feeds), reference):
            assert same_bits(ours, ref)


@pytest.mark.parametrize("index", range(len(BYTE_CASES)), ids=[c[0] for c in BYTE_CASES])
def test_optimization_level_changes_no_byte(index):
    """The expansion runs at every level; constant folding and the fusions after it change no bit."""
    _, model, feeds = BYTE_CASES[index]
    options = lockstep.SessionOptions()
    options.graph_optimization_level = lockstep.GraphOptimizationLevel.ORT_DISABLE_ALL
    unoptimized = lockstep.InferenceSession(model, options, providers=[lockstep.CPU]).run(None, feeds)
    assert all(same_bits(a, b) for a, b in zip(unoptimized, session(model).run(None, feeds)))


def test_an_opset_17_model_cannot_write_its_optimized_model(tmp_path):
    """The expansion's nodes follow opset 23 there: a model file has one opset per domain (graph/expand.h)."""
    inputs, feeds, outputs, attrs = mha_case("bias", 1)
    options = lockstep.SessionOptions()
    options.optimized_model_filepath = str(tmp_path / "optimized.onnx")
    with pytest.raises(lockstep.NotImplemented, match="Node 'attn/.*follows opset 23 where the model imports 17"):
        lockstep.InferenceSession(model_of("MultiHeadAttention", inputs, feeds, outputs, **attrs), options,
                                  providers=[lockstep.CPU])


@pytest.mark.parametrize("opset", [17, 21, 23, 24])
def test_every_model_opset_gives_the_same_bytes(opset):
    """The expansion's nodes follow opset 23 in an older model (onnx::Node::opset) and the model's own from 23 on."""
    inputs, feeds, outputs, attrs = mha_case("selfattn-past-unidirectional-mask2d-bias", 10)
    at = session(model_of("MultiHeadAttention", inputs, feeds, outputs, opset=opset, **attrs)).run(None, feeds)
    base = session(model_of("MultiHeadAttention", inputs, feeds, outputs, opset=23, **attrs)).run(None, feeds)
    assert all(same_bits(a, b) for a, b in zip(at, base))


def half(feeds):
    return {n: v.astype(np.float16) if v.dtype == np.float32 else v for n, v in feeds.items()}


def float16_case(op):
    """(inputs, float32 feeds holding float16 values, outputs, attrs)."""
    if op == "MultiHeadAttention":
        inputs, feeds, outputs, attrs = mha_case("bias-mask2d-unidirectional", 11)
    elif op == "Attention":
        inputs, feeds, outputs, attrs = attention_case("bias-past-unidirectional", 11)
    else:
        feeds = gqa_feeds(np.random.default_rng(11), 2, 5, seqlens=np.array([4, 2]), rotary_dim=GH)
        inputs = ["query", "key", "value", "past_key", "past_value", "seqlens_k", "total_sequence_length",
                  "cos_cache", "sin_cache"]
        outputs, attrs = ["output", "present_key", "present_value"], {"num_heads": GN, "kv_num_heads": GKV,
                                                                      "do_rotary": 1}
    feeds = {n: v.astype(np.float16).astype(np.float32) if v.dtype == np.float32 else v for n, v in feeds.items()}
    return inputs, feeds, outputs, attrs


def test_float16_group_query_attention_reads_the_float16_cache_as_onnxruntime_does():
    """GroupQueryAttention's keys and values are read from the present caches, which are float16 outputs, so they are
    rounded to float16 before the attention reads them (docs/arithmetic.md#half-precision), as onnxruntime's kernel
    rounds them: the outputs agree within one float16 step (here they are identical)."""
    inputs, feeds, outputs, attrs = float16_case("GroupQueryAttention")
    model = model_of("GroupQueryAttention", inputs, half(feeds), outputs, elem=F16, declare_shapes="symbolic",
                     **attrs)
    ours = session(model).run(None, half(feeds))
    theirs = onnxruntime_outputs(model, half(feeds))
    for a, b in zip(ours, theirs):
        assert a.dtype == np.float16 and a.shape == b.shape
        step = np.spacing(np.abs(b)).astype(np.float32)
        assert (np.abs(a.astype(np.float32) - b.astype(np.float32)) <= step).all()


@pytest.mark.parametrize("op", ["MultiHeadAttention", "Attention"])
def test_float16_is_the_float32_result_rounded_once(op):
    """float16 computes in float32 and rounds the outputs once (docs/arithmetic.md#half-precision; the expansion's
    constants take the type of the op's own input, so no computed value between its nodes is rounded): within half a
    float16 step of onnxruntime's float32 result on the same values, plus the float32 tolerance; onnxruntime's
    float16 kernels are held to the same bound."""
    inputs, feeds, outputs, attrs = float16_case(op)
    reference = onnxruntime_outputs(model_of(op, inputs, feeds, outputs, declare_shapes="symbolic", **attrs), feeds)
    model = model_of(op, inputs, half(feeds), outputs, elem=F16, declare_shapes="symbolic", **attrs)
    ours = session(model).run(None, half(feeds))
    theirs = onnxruntime_outputs(model, half(feeds))
    for a, b, r in zip(ours, theirs, reference):
        assert a.dtype == np.float16 and a.shape == b.shape == r.shape
        bound = np.spacing(np.abs(r).astype(np.float16)).astype(np.float32) / 2 + 1e-5 * np.abs(r) + 1e-6
        assert (np.abs(a.astype(np.float32) - r) <= bound).all()
        assert (np.abs(b.astype(np.float32) - r) <= bound).all()


# ---------------------------------------------------------------------------------------------------------------
# Refusals name the node


def refused(model, error, pattern):
    with pytest.raises(error, match=pattern):
        session(model)


def test_unsupported_inputs_and_attributes_are_refused_naming_the_node():
    rng = np.random.default_rng(12)
    feeds = gqa_feeds(rng, 1, 3)
    node = "Node 'attn' \\(GroupQueryAttention\\): "
    refused(gqa_model(feeds, k_quant_type="PER_TENSOR"), lockstep.NotImplemented, node + "k_quant_type")
    refused(gqa_model(feeds, causal=0, local_window_size=2), lockstep.InvalidGraph, node + "local_window_size")
    refused(gqa_model(feeds, qk_output=1), lockstep.NotImplemented, node + "output_qk")
    refused(gqa_model(feeds, num_heads=3), lockstep.InvalidGraph, node + "num_heads \\(3\\) must be a multiple")
    m = load_from_string(gqa_model(feeds))
    m.graph.node[0].input.extend([""] * 7 + ["q_norm"])
    m.graph.input.append(helper.make_tensor_value_info("q_norm", F, [GH]))
    refused(m.SerializeToString(), lockstep.NotImplemented, node + "input 14 \\(q_norm_weight\\)")

    inputs, feeds, outputs, attrs = mha_case("mask2d")
    node = "Node 'attn' \\(MultiHeadAttention\\): "
    undeclared = model_of("MultiHeadAttention", inputs, feeds, outputs, declare_shapes=False, **attrs)
    refused(undeclared, lockstep.NotImplemented, node + "key_padding_mask needs a declared rank")
    feeds["cache_indirection"] = np.zeros((B, 1, 8), np.int32)
    m = load_from_string(model_of("MultiHeadAttention", inputs, feeds, outputs, **attrs))
    m.graph.node[0].input.extend(["", "", "", "", "ci"])
    m.graph.input.append(helper.make_tensor_value_info("ci", I32, [B, 1, 8]))
    refused(m.SerializeToString(), lockstep.NotImplemented, node + "input 9 \\(cache_indirection")
    refused(model_of("MultiHeadAttention", ["query", "", "value"], feeds, outputs, **attrs), lockstep.InvalidGraph,
            node + "value is given without key")

    inputs, feeds, outputs, attrs = attention_case("bias-past", 13)
    feeds["attention_bias"] = normal(rng, (B, 1, S, S + 2))
    node = "Node 'attn' \\(Attention\\): "
    refused(model_of("Attention", positional(ATTENTION_INPUTS, feeds), feeds, outputs, **attrs),
            lockstep.InvalidGraph, node + "past and attention_bias")
    inputs, feeds, outputs, attrs = attention_case("bias", 13)
    feeds["mask_index"] = np.ones((B, 1, S, S), np.int32)
    refused(model_of("Attention", positional(["input", "weights", "bias", "mask_index"], feeds), feeds, outputs,
                     **attrs), lockstep.NotImplemented, node + "mask_index of rank 4")
    refused(model_of("Attention", inputs, feeds, outputs, num_heads=N, do_rotary=1), lockstep.NotImplemented,
            node + "do_rotary")
    refused(model_of("Attention", inputs, feeds, outputs, num_heads=N, qkv_hidden_sizes=[24, 12, 24]),
            lockstep.InvalidGraph, node + "qkv_hidden_sizes")


def test_seqlens_outside_the_caches_fail_at_run_time_as_in_onnxruntime():
    """seqlens_k[b] >= total_sequence_length, or a step past the end of the past buffer: onnxruntime refuses the run,
    and so does lockstep (an index out of range in the node that gathers the present cache) instead of returning
    numbers."""
    rng = np.random.default_rng(14)
    past = (normal(rng, (2, GKV, 4, GH)), normal(rng, (2, GKV, 4, GH)))
    model = None
    for seqlens, total in (([4, 5], 5), ([5, 5], 6), ([4, -1], 5)):
        feeds = gqa_feeds(rng, 2, 1, past, np.array(seqlens))
        feeds["total_sequence_length"] = np.array(total, np.int32)
        model = model or gqa_model(feeds)
        with pytest.raises(lockstep.Fail, match="Node 'attn/present_key' \\(GatherElements\\): index"):
            session(model).run(None, feeds)
        with pytest.raises(Exception):
            onnxruntime_outputs(model, feeds)
    # total_sequence_length above every row's total is accepted by both: the present caches are that long
    for seqlens, total in (([4, 4], 6), ([2, 3], 6)):
        feeds = gqa_feeds(rng, 2, 1, past, np.array(seqlens))
        feeds["total_sequence_length"] = np.array(total, np.int32)
        assert_close(session(model).run(None, feeds), onnxruntime_outputs(model, feeds))


# ---------------------------------------------------------------------------------------------------------------
# A small Llama-shaped decoder: prompt, then token by token


def llama_model(layers=2, hidden=GN * GH, ffn=96, vocab=40, seed=15):
    """Embeddings in; per layer RMSNormalization, Q/K/V projections, GroupQueryAttention with rotary and the KV cache,
    output projection, residual, RMSNormalization, SiLU-gated MLP, residual; final norm and LM head."""
    rng = np.random.default_rng(seed)
    init, nodes = [], []
    inputs = [helper.make_tensor_value_info("embeddings", F, ["batch", "seq", hidden]),
              helper.make_tensor_value_info("seqlens_k", I32, ["batch"]),
              helper.make_tensor_value_info("total_sequence_length", I32, [])]
    outputs = []

    def weight(name, shape, scale):
        init.append(helper.make_tensor(name, F, shape, (rng.standard_normal(shape) * scale).astype(np.float32)
                                       .ravel().tolist()))
        return name

    cos, sin = rotary_caches(GH)
    init += [helper.make_tensor("cos", F, cos.shape, cos.ravel().tolist()),
             helper.make_tensor("sin", F, sin.shape, sin.ravel().tolist())]
    x = "embeddings"
    for i in range(layers):
        p = f"l{i}_"
        scale_h = hidden ** -0.5
        nodes.append(helper.make_node("RMSNormalization", [x, weight(p + "norm1", [hidden], 0.1)], [p + "n1"],
                                      axis=-1))
        for proj, width in (("q", GN * GH), ("k", GKV * GH), ("v", GKV * GH)):
            nodes.append(helper.make_node("MatMul", [p + "n1", weight(p + "w" + proj, [hidden, width], scale_h)],
                                          [p + proj]))
        inputs += [helper.make_tensor_value_info(p + "past_key", F, ["batch", GKV, "past", GH]),
                   helper.make_tensor_value_info(p + "past_value", F, ["batch", GKV, "past", GH])]
        outputs += [helper.make_tensor_value_info(p + "present_key", F, None),
                    helper.make_tensor_value_info(p + "present_value", F, None)]
        nodes.append(helper.make_node(
            "GroupQueryAttention", [p + "q", p + "k", p + "v", p + "past_key", p + "past_value", "seqlens_k",
                                    "total_sequence_length", "cos", "sin"],
            [p + "attn", p + "present_key", p + "present_value"], domain=MS, name=p + "gqa", num_heads=GN,
            kv_num_heads=GKV, do_rotary=1))
        nodes += [helper.make_node("MatMul", [p + "attn", weight(p + "wo", [GN * GH, hidden], scale_h)], [p + "o"]),
                  helper.make_node("Add", [x, p + "o"], [p + "h"]),
                  helper.make_node("RMSNormalization", [p + "h", weight(p + "norm2", [hidden], 0.1)], [p + "n2"]),
                  helper.make_node("MatMul", [p + "n2", weight(p + "wg", [hidden, ffn], scale_h)], [p + "g"]),
                  helper.make_node("MatMul", [p + "n2", weight(p + "wu", [hidden, ffn], scale_h)], [p + "u"]),
                  helper.make_node("Sigmoid", [p + "g"], [p + "gs"]),
                  helper.make_node("Mul", [p + "g", p + "gs"], [p + "silu"]),
                  helper.make_node("Mul", [p + "silu", p + "u"], [p + "gu"]),
                  helper.make_node("MatMul", [p + "gu", weight(p + "wd", [ffn, hidden], ffn ** -0.5)], [p + "d"]),
                  helper.make_node("Add", [p + "h", p + "d"], [p + "out"])]
        x = p + "out"
    nodes += [helper.make_node("RMSNormalization", [x, weight("norm", [hidden], 0.1)], ["final"]),
              helper.make_node("MatMul", ["final", weight("lm_head", [hidden, vocab], scale_h)], ["logits"])]
    graph = helper.make_graph(nodes, "llama", inputs, [helper.make_tensor_value_info("logits", F, None)] + outputs,
                              init)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 23), helper.make_opsetid(MS, 1)],
                             ir_version=11).SerializeToString()


def test_llama_shaped_decoder_prompt_then_three_steps_matches_onnxruntime():
    ort = pytest.importorskip("onnxruntime")
    model = llama_model()
    theirs_session = ort.InferenceSession(model, providers=["CPUExecutionProvider"])
    ours_session = session(model)
    rng = np.random.default_rng(16)
    batch, prompt, layers = 2, 6, 2
    lengths = np.array([6, 4])  # the second row is right-padded
    ours_past = theirs_past = [np.zeros((batch, GKV, 0, GH), np.float32)] * (2 * layers)
    seqlens = lengths - 1
    for step in range(4):
        seq = prompt if step == 0 else 1
        feeds = {"embeddings": normal(rng, (batch, seq, GN * GH)), "seqlens_k": seqlens.astype(np.int32),
                 "total_sequence_length": np.array(prompt if step == 0 else int(seqlens.max()) + 1, np.int32)}
        names = [f"l{i}_{kind}" for i in range(layers) for kind in ("past_key", "past_value")]
        ours = ours_session.run(None, {**feeds, **dict(zip(names, ours_past))})
        theirs = theirs_session.run(None, {**feeds, **dict(zip(names, theirs_past))})
        assert_close(ours, theirs)
        ours_past, theirs_past = ours[1:], theirs[1:]
        seqlens = seqlens + 1


def test_a_4d_key_of_undeclared_rank_fails_the_run_rather_than_being_misread():
    """Without a declared rank a key is taken as (B, L, N * H); a (B, N, L, H) key then fails the Reshape that splits
    its heads (the head size is written out) instead of giving other numbers."""
    inputs, feeds, outputs, attrs = mha_case("bnsh", 19)
    model = model_of("MultiHeadAttention", inputs, feeds, outputs, declare_shapes=False, **attrs)
    with pytest.raises(lockstep.Fail, match="Node 'attn/"):
        session(model).run(None, feeds)
