"""onnxruntime's normalization and rotary contrib ops, which lockstep runs by expansion into standard ONNX ops
(src/graph/expand_microsoft_norm.cpp): SkipLayerNormalization, SkipSimplifiedLayerNormalization,
EmbedLayerNormalization and RotaryEmbedding of com.microsoft, SimplifiedLayerNormalization of the default domain.
Against onnxruntime's own kernels, 1 and 2 threads byte for byte, CUDA byte for byte against the CPU where a GPU is
present; malformed nodes and attributes lockstep cannot express are refused naming the node."""

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

import lockstep
from bits import same_bits

MS = "com.microsoft"
PROVIDERS = [lockstep.CPU] + ([lockstep.CUDA] if lockstep.CUDA in lockstep.get_available_providers() else [])
TYPES = {np.dtype(np.float32): TensorProto.FLOAT, np.dtype(np.float16): TensorProto.FLOAT16,
         np.dtype(np.int32): TensorProto.INT32, np.dtype(np.int64): TensorProto.INT64}


def model_of(op, inputs, outputs, out_types, opset=17, declare=True, domain=MS, **attrs):
    """One node `contrib` of `op`; `inputs` maps names to arrays ("" entries are absent inputs), `out_types` gives
    each named output's element type. declare=False leaves the inputs' shapes undeclared."""
    node = helper.make_node(op, [n if v is not None else "" for n, v in inputs], outputs, domain=domain,
                            name="contrib", **attrs)
    graph = helper.make_graph(
        [node], "g",
        [helper.make_tensor_value_info(n, TYPES[v.dtype], list(v.shape) if declare else None)
         for n, v in inputs if v is not None],
        [helper.make_tensor_value_info(n, t, None) for n, t in zip(outputs, out_types) if n])
    imports = [helper.make_opsetid("", opset)] + ([helper.make_opsetid(MS, 1)] if domain == MS else [])
    return helper.make_model(graph, opset_imports=imports, ir_version=9).SerializeToString()


def feeds_of(inputs):
    return {n: v for n, v in inputs if v is not None}


def session(model, provider=lockstep.CPU, threads=1):
    options = lockstep.SessionOptions()
    options.intra_op_num_threads = threads
    return lockstep.InferenceSession(model, options, providers=[provider])


def normal(rng, shape, dtype=np.float32, scale=1.0, offset=0.0):
    return (rng.standard_normal(shape) * scale + offset).astype(dtype)


# Each case: (op, inputs as (name, array or None), outputs ("" for absent), attributes). F32 outputs unless named
# mask_index.

def skip_case(seed, simplified, shape=(2, 5, 32), skip_shape=None, bias=True, beta=True, outputs=4, dtype=np.float32,
              **attrs):
    rng = np.random.default_rng(seed)
    hidden = shape[-1]
    inputs = [("input", normal(rng, shape, dtype, 2.0, 0.5)), ("skip", normal(rng, skip_shape or shape, dtype)),
              ("gamma", normal(rng, hidden, dtype, 0.5, 1.0))]
    if not simplified:
        inputs.append(("beta", normal(rng, hidden, dtype) if beta else None))
    inputs.append(("bias", normal(rng, hidden, dtype) if bias else None))
    while inputs[-1][1] is None:
        inputs.pop()
    names = ["output", "mean", "inv_std_var", "input_skip_bias_sum"]
    if outputs == "sum":
        names = ["output", "", "", "input_skip_bias_sum"]
    else:
        names = names[:outputs]
    op = "SkipSimplifiedLayerNormalization" if simplified else "SkipLayerNormalization"
    return op, inputs, names, attrs


def simplified_case(seed, shape, axis=None, **attrs):
    rng = np.random.default_rng(seed)
    x = normal(rng, shape, scale=3.0, offset=0.25)
    block = shape[axis:] if axis is not None else shape[-1:]
    if axis is not None:
        attrs["axis"] = axis
    return "SimplifiedLayerNormalization", [("X", x), ("scale", normal(rng, block, offset=1.0))], ["Y"], attrs


def embed_case(seed, segments=True, mask=True, position_ids=None, embedding_sum=True, **attrs):
    rng = np.random.default_rng(seed)
    batch, seq, hidden, vocab, max_pos = 3, 7, 24, 50, 16
    ids = rng.integers(0, vocab, (batch, seq)).astype(np.int32)
    inputs = [("input_ids", ids),
              ("segment_ids", rng.integers(0, 2, (batch, seq)).astype(np.int32) if segments else None),
              ("word_embedding", normal(rng, (vocab, hidden))),
              ("position_embedding", normal(rng, (max_pos, hidden), scale=0.5)),
              ("segment_embedding", normal(rng, (2, hidden), scale=0.25) if segments else None),
              ("gamma", normal(rng, hidden, offset=1.0)), ("beta", normal(rng, hidden))]
    m = None
    if mask:
        m = np.ones((batch, seq), np.int32)
        m[0, 5:] = 0
        m[1, 2] = 0
        m[2, 3] = 2  # counted only where equal to 1, as onnxruntime counts
    inputs.append(("mask", m))
    if position_ids is not None:
        inputs.append(("position_ids", rng.integers(0, max_pos, (position_ids, seq)).astype(np.int32)))
    while inputs[-1][1] is None:
        inputs.pop()
    return ("EmbedLayerNormalization", inputs, ["output", "mask_index"] + (["embedding_sum"] if embedding_sum else []),
            attrs)


def rotary_case(seed, layout, heads=4, head=16, positions="ids", cache_width=None, dtype=np.float32, **attrs):
    rng = np.random.default_rng(seed)
    batch, seq, max_pos = 2, 5, 12
    x = normal(rng, (batch, heads, seq, head) if layout == 4 else (batch, seq, heads * head), dtype)
    rotary = attrs.get("rotary_embedding_dim", 0) or head
    width = cache_width or rotary // 2
    angles = rng.uniform(0, 6.3, (max_pos, width))
    cos, sin = np.cos(angles).astype(dtype), np.sin(angles).astype(dtype)
    pos = {"ids": rng.integers(0, max_pos, (batch, seq)), "offset": np.array([3]), "scalar": np.array(4)}[positions]
    return ("RotaryEmbedding", [("input", x), ("position_ids", pos.astype(np.int64)), ("cos_cache", cos),
                                ("sin_cache", sin)], ["output"], attrs)


CASES = {
    "skip_ln": skip_case(1, False),
    "skip_ln_broadcast_skip": skip_case(2, False, skip_shape=(1, 5, 32), bias=False, outputs=1, epsilon=1e-5),
    "skip_ln_2d_skip": skip_case(3, False, skip_shape=(5, 32), beta=False, outputs="sum"),
    "skip_ln_tokens": skip_case(4, False, shape=(9, 48), outputs=3),
    "skip_ln_no_bias_sum": skip_case(5, False, bias=False, outputs="sum", epsilon=1e-6),
    "skip_rms": skip_case(6, True, outputs="sum"),
    "skip_rms_broadcast_skip": skip_case(7, True, skip_shape=(1, 5, 32), bias=False, outputs=1, epsilon=1e-6),
    "skip_rms_tokens": skip_case(8, True, shape=(9, 48), outputs=1),
    "simplified": simplified_case(9, (2, 5, 32)),
    "simplified_axis1": simplified_case(10, (2, 3, 4, 8), axis=1, epsilon=1e-6),
    "simplified_axis_minus2": simplified_case(11, (3, 6, 10), axis=-2),
    "embed": embed_case(12),
    "embed_no_segment_no_mask": embed_case(13, segments=False, mask=False, embedding_sum=False, epsilon=1e-5),
    "embed_position_ids_1": embed_case(14, segments=False, position_ids=1),
    "embed_position_ids_batch": embed_case(15, position_ids=3, mask=False),
    "rotary_3d": rotary_case(16, 3, num_heads=4),
    "rotary_3d_interleaved": rotary_case(17, 3, num_heads=4, interleaved=1),
    "rotary_3d_head_from_cache": rotary_case(18, 3),
    "rotary_3d_head_from_cache_interleaved": rotary_case(19, 3, interleaved=1, positions="offset"),
    "rotary_4d": rotary_case(20, 4),
    "rotary_4d_offset_interleaved": rotary_case(21, 4, positions="offset", interleaved=1),
    "rotary_4d_scalar_offset": rotary_case(22, 4, positions="scalar"),
    "rotary_partial": rotary_case(23, 3, num_heads=4, rotary_embedding_dim=8),
    "rotary_partial_wide_cache": rotary_case(24, 3, num_heads=4, rotary_embedding_dim=8, cache_width=8),
    "rotary_partial_4d_interleaved": rotary_case(25, 4, num_heads=4, rotary_embedding_dim=8, interleaved=1),
    "rotary_scale": rotary_case(26, 3, num_heads=4, scale=0.5),
}


def build(case, opset=17, declare=True):
    op, inputs, outputs, attrs = CASES[case]
    data_type = next(TYPES[v.dtype] for _, v in inputs if v is not None and v.dtype.kind == "f")
    out_types = [TensorProto.INT32 if n == "mask_index" else TensorProto.FLOAT if n in ("mean", "inv_std_var")
                 else data_type for n in outputs]
    domain = "" if op == "SimplifiedLayerNormalization" else MS
    return model_of(op, inputs, outputs, out_types, opset, declare, domain, **attrs), feeds_of(inputs)


@pytest.mark.parametrize("case", CASES)
def test_matches_onnxruntime(case):
    ort = pytest.importorskip("onnxruntime")
    model, feeds = build(case)
    ours = session(model).run(None, feeds)
    theirs = ort.InferenceSession(model, providers=["CPUExecutionProvider"]).run(None, feeds)
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        assert a.dtype == b.dtype and a.shape == b.shape
        if a.dtype == np.int32:
            np.testing.assert_array_equal(a, b)
        else:
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("case", ["rotary_3d", "rotary_3d_head_from_cache", "rotary_4d",
                                  "rotary_4d_offset_interleaved", "rotary_partial_wide_cache"])
def test_rotary_matches_onnxruntime_with_shapes_undeclared(case):
    """Position ids of undeclared rank take the run-time choice between ids and an offset; without num_heads, an
    input of undeclared rank takes the route that serves both layouts (head size from the cache)."""
    ort = pytest.importorskip("onnxruntime")
    model, feeds = build(case, declare=False)
    (ours,) = session(model).run(None, feeds)
    (theirs,) = ort.InferenceSession(model, providers=["CPUExecutionProvider"]).run(None, feeds)
    np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-6)
    (declared,) = session(build(case)[0]).run(None, feeds)
    assert same_bits(ours, declared)


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("case", CASES)
def test_same_bytes_on_every_provider_and_thread_count(case, provider):
    model, feeds = build(case)
    one = session(model).run(None, feeds)
    other = session(model, provider, threads=2).run(None, feeds)
    assert all(same_bits(a, b) for a, b in zip(one, other))


@pytest.mark.parametrize("case, opset", [("skip_ln", 13), ("skip_ln", 23), ("skip_rms", 23), ("simplified", 24),
                                         ("embed", 12), ("embed_position_ids_1", 18), ("rotary_3d", 23),
                                         ("rotary_3d_head_from_cache", 24), ("rotary_partial", 21)])
def test_gives_the_same_bytes_at_every_model_opset(case, opset):
    """The nodes an expansion makes follow opset 17 (LayerNormalization) or 23 (RMSNormalization, RotaryEmbedding)
    in an older model and the model's own opset in a newer one: the same definitions, the same bytes."""
    model, feeds = build(case)
    newer, _ = build(case, opset)
    assert all(same_bits(a, b) for a, b in zip(session(model).run(None, feeds), session(newer).run(None, feeds)))


def reference_layer_norm(s, gamma, beta, epsilon):
    s = s.astype(np.float64)
    d = s - s.mean(-1, keepdims=True)
    y = d / np.sqrt((d * d).mean(-1, keepdims=True) + epsilon) * gamma
    return y if beta is None else y + beta


def test_skip_sum_is_input_plus_skip_then_bias():
    """onnxruntime adds input and skip first, then the bias: (1e8 + 1) - 1e8 = 0 where 1 + (1e8 - 1e8) = 1."""
    x = np.array([[[1e8, 1.0, 2.0, 3.0]]], np.float32)
    skip = np.array([[[-1e8, 1e8, 0.5, 0.25]]], np.float32)
    bias = np.array([1.0, -1e8, 0.0, 0.0], np.float32)
    inputs = [("input", x), ("skip", skip), ("gamma", np.ones(4, np.float32)), ("beta", None), ("bias", bias)]
    f = TensorProto.FLOAT
    model = model_of("SkipLayerNormalization", inputs, ["output", "", "", "sum"], [f, f, f, f])
    output, total = session(model).run(None, feeds_of(inputs))
    assert total.tolist() == [[[1.0, 0.0, 2.5, 3.25]]]
    np.testing.assert_allclose(output, reference_layer_norm(total, 1.0, None, 1e-12), rtol=1e-5, atol=1e-6)


def test_embedding_sum_is_word_plus_position_then_segment():
    op, inputs, outputs, attrs = embed_case(30)
    values = dict(inputs)
    values["word_embedding"] = values["word_embedding"] * 1e8
    values["position_embedding"][:7] = -values["word_embedding"][values["input_ids"][0]]
    inputs = [(n, values[n]) for n, _ in inputs]
    model = model_of(op, inputs, outputs, [TensorProto.FLOAT, TensorProto.INT32, TensorProto.FLOAT])
    _, mask_index, total = session(model).run(None, feeds_of(inputs))
    word, pos = values["word_embedding"][values["input_ids"]], values["position_embedding"][np.arange(7)]
    segment = values["segment_embedding"][values["segment_ids"]]
    assert same_bits(total, (word + pos) + segment) and not same_bits(total, word + (pos + segment))
    assert mask_index.tolist() == [5, 6, 6]


def test_float16_runs_through_the_half_precision_path():
    """float16 inputs: the expanded nodes widen, compute in float32 and round once; onnxruntime's float16 kernels
    compute in float32 too, so the two agree within one float16 rounding."""
    ort = pytest.importorskip("onnxruntime")
    for op, inputs, outputs, attrs in [skip_case(40, False, dtype=np.float16, outputs="sum"),
                                       skip_case(41, True, dtype=np.float16, outputs="sum"),
                                       rotary_case(42, 3, dtype=np.float16, num_heads=4)]:
        f16 = TensorProto.FLOAT16
        model = model_of(op, inputs, outputs, [f16, TensorProto.FLOAT, TensorProto.FLOAT, f16][:len(outputs)], **attrs)
        feeds = feeds_of(inputs)
        ours = session(model).run(None, feeds)
        theirs = ort.InferenceSession(model, providers=["CPUExecutionProvider"]).run(None, feeds)
        two = session(model, PROVIDERS[-1], threads=2).run(None, feeds)
        for a, b, c in zip(ours, theirs, two):
            assert a.dtype == np.float16 and same_bits(a, c)
            np.testing.assert_allclose(a.astype(np.float32), b.astype(np.float32), rtol=2 ** -10, atol=2 ** -14)


def halved(case):
    """The case with its float32 inputs rounded to float16."""
    op, inputs, outputs, attrs = CASES[case]
    return op, [(n, v.astype(np.float16) if v is not None and v.dtype == np.float32 else v) for n, v in inputs], \
        outputs, attrs


@pytest.mark.parametrize("case", ["skip_ln", "skip_ln_no_bias_sum", "skip_rms", "simplified", "embed",
                                  "rotary_3d_head_from_cache", "rotary_partial"])
def test_float16_is_the_float32_computation_rounded_once(case):
    """The half-precision rule: a float16 model gives the float32 model's results on the widened inputs, each output
    rounded once to float16. The sums the normalization reads stay in float32 also where the op outputs them (then
    rounded) too."""
    op, inputs, outputs, attrs = halved(case)
    wide = [(n, v.astype(np.float32) if v is not None and v.dtype == np.float16 else v) for n, v in inputs]
    domain = "" if op == "SimplifiedLayerNormalization" else MS
    def types(half):
        data = TensorProto.FLOAT16 if half else TensorProto.FLOAT
        return [TensorProto.INT32 if n == "mask_index" else TensorProto.FLOAT if n in ("mean", "inv_std_var")
                else data for n in outputs]
    ours = session(model_of(op, inputs, outputs, types(True), domain=domain, **attrs)).run(None, feeds_of(inputs))
    want = session(model_of(op, wide, outputs, types(False), domain=domain, **attrs)).run(None, feeds_of(wide))
    for name, a, b in zip([n for n in outputs if n], ours, want):
        rounded = b if name in ("mask_index", "mean", "inv_std_var") else b.astype(np.float16)
        assert same_bits(a, rounded), name


def refused(case_or_model, error, pattern):
    model = build(case_or_model)[0] if isinstance(case_or_model, str) else case_or_model
    with pytest.raises(error, match=pattern):
        lockstep.InferenceSession(model)


def with_changes(case, inputs=None, outputs=None, declare=True, **attrs):
    op, case_inputs, case_outputs, case_attrs = CASES[case]
    inputs = case_inputs if inputs is None else inputs
    outputs = case_outputs if outputs is None else outputs
    domain = "" if op == "SimplifiedLayerNormalization" else MS
    return model_of(op, inputs, outputs, [TensorProto.FLOAT] * len(outputs), 17, declare, domain,
                    **{**case_attrs, **attrs})


def test_malformed_nodes_are_refused_naming_them():
    _, inputs, _, _ = CASES["skip_ln"]
    refused(with_changes("skip_ln", inputs=inputs[:2]), lockstep.InvalidGraph,
            r"Node 'contrib' \(SkipLayerNormalization\): takes 3 to 5 inputs")
    refused(with_changes("simplified", outputs=["Y", "inv", "extra"]), lockstep.InvalidGraph,
            r"Node 'contrib' \(SimplifiedLayerNormalization\): takes 2 inputs and gives 1 to 2 outputs")
    _, inputs, _, _ = CASES["embed"]
    no_segment_table = [(n, None if n == "segment_embedding" else v) for n, v in inputs]
    refused(with_changes("embed", inputs=no_segment_table), lockstep.InvalidGraph,
            r"Node 'contrib' \(EmbedLayerNormalization\): segment_ids and segment_embedding")
    refused(with_changes("rotary_3d", rotary_embedding_dim=8, num_heads=0), lockstep.InvalidGraph,
            r"Node 'contrib' \(RotaryEmbedding\): rotary_embedding_dim needs num_heads")


def test_what_lockstep_cannot_express_is_refused_naming_the_node():
    refused(with_changes("skip_rms", outputs=["output", "mean"]), lockstep.NotImplemented,
            r"Node 'contrib' \(SkipSimplifiedLayerNormalization\): the optional output mean")
    refused(with_changes("skip_rms", outputs=["output", "", "inv_std_var"]), lockstep.NotImplemented,
            r"Node 'contrib' \(SkipSimplifiedLayerNormalization\): the optional output inv_std_var")
    refused(with_changes("simplified", outputs=["Y", "inv_std_var"]), lockstep.NotImplemented,
            r"Node 'contrib' \(SimplifiedLayerNormalization\): the optional output inv_std_var")
    refused(with_changes("rotary_3d", is_packed_batching=1), lockstep.NotImplemented,
            r"Node 'contrib' \(RotaryEmbedding\): is_packed_batching = 1")


def test_errors_inside_an_expansion_name_the_node_it_came_from():
    op, inputs, outputs, attrs = CASES["rotary_3d"]
    narrow = [(n, v[:, :4] if n in ("cos_cache", "sin_cache") else v) for n, v in inputs]
    model = model_of(op, narrow, outputs, [TensorProto.FLOAT], **attrs)
    with pytest.raises(lockstep.Fail, match=r"Node 'contrib/output' \(RotaryEmbedding\): cos_cache"):
        session(model).run(None, feeds_of(narrow))


def test_an_older_model_whose_expansion_made_newer_nodes_cannot_be_written_optimized(tmp_path):
    model, feeds = build("skip_rms")
    options = lockstep.SessionOptions()
    options.optimized_model_filepath = str(tmp_path / "optimized.onnx")
    with pytest.raises(lockstep.NotImplemented, match=r"Node 'contrib/output' \(RMSNormalization\): .*"
                                                      r"follows opset 23 where the model imports 17: the optimized "
                                                      r"model cannot be written"):
        lockstep.InferenceSession(model, options)
    assert not (tmp_path / "optimized.onnx").exists()
    # At opset 23 nothing is newer than the model: the written model runs and gives the same bytes.
    model, feeds = build("skip_rms", opset=23)
    lockstep.InferenceSession(model, options)
    written = (tmp_path / "optimized.onnx").read_bytes()
    assert all(same_bits(a, b) for a, b in zip(session(written).run(None, feeds), session(model).run(None, feeds)))
