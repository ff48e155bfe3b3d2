"""The promise's invariances, on small multi-op models with a dynamic batch dim "N":

(a) the bits do not depend on intra_op_num_threads (1, 2, 3, 8);
(b) per sample, batch 1 vs batch 8: output[i] of a batch-8 run is byte-identical to a batch-1 run on sample i;
(c) repeated runs give identical bytes;
(d) a session reused after a bad feed (wrong dtype) still gives identical bytes;
(e) the bits do not depend on the CPU kernels' ISA (LOCKSTEP_CPU_ISA=scalar, avx2, avx512).

Every check runs on the CPU provider, and on CUDA too when lockstep lists it, where the CUDA bytes must also
equal the CPU bytes. Comparisons are exact (tests/bits.py same_bits: NaN equals NaN).
"""

import numpy as np
import onnxruntime
import pytest
from onnx import TensorProto, helper, numpy_helper

import lockstep
from bits import same_bits

BATCH = 8
PROVIDERS = [lockstep.CPU] + ([lockstep.CUDA] if lockstep.CUDA in lockstep.get_available_providers() else [])


def f32(*shape, seed=0, scale=1.0):
    return (np.random.default_rng(seed).standard_normal(shape) * scale).astype(np.float32)


def vi(name, shape, elem=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, elem, shape)


def make_model(nodes, inputs, outputs, inits, opset=17):
    graph = helper.make_graph(nodes, "g", inputs, outputs, initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], producer_name="invariance")
    model.ir_version = 8
    return model


def conv_net():
    """x[N,4,13,13] -> Conv(4->8, k3, s2, pads 1) -> Relu -> Conv(8->8, groups 4, k3, dilation 2, asymmetric pads)
    -> BatchNormalization -> Relu -> MaxPool(k3, s2, pads 1) -> Conv(8->16, k1, groups 2) -> AveragePool(k2, s1)
    -> GlobalAveragePool -> Flatten -> Gemm(16->10, transB) -> Softmax.  Outputs: probabilities and a feature map."""
    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c1"], ["r1"]),
        helper.make_node("Conv", ["r1", "w2", "b2"], ["c2"], kernel_shape=[3, 3], group=4, dilations=[2, 2],
                         pads=[2, 1, 2, 3]),
        helper.make_node("BatchNormalization", ["c2", "bn_s", "bn_b", "bn_m", "bn_v"], ["bn"], epsilon=1e-5),
        helper.make_node("Relu", ["bn"], ["r2"]),
        helper.make_node("MaxPool", ["r2"], ["p1"], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]),
        helper.make_node("Conv", ["p1", "w3"], ["fmap"], kernel_shape=[1, 1], group=2),
        helper.make_node("AveragePool", ["fmap"], ["ap"], kernel_shape=[2, 2], strides=[1, 1]),
        helper.make_node("GlobalAveragePool", ["ap"], ["gap"]),
        helper.make_node("Flatten", ["gap"], ["flat"]),
        helper.make_node("Gemm", ["flat", "fc_w", "fc_b"], ["logits"], transB=1),
        helper.make_node("Softmax", ["logits"], ["prob"], axis=-1),
    ]
    inits = {
        "w1": f32(8, 4, 3, 3, seed=1, scale=0.3), "b1": f32(8, seed=2, scale=0.1),
        "w2": f32(8, 2, 3, 3, seed=3, scale=0.3), "b2": f32(8, seed=4, scale=0.1),
        "bn_s": 1 + f32(8, seed=5, scale=0.1), "bn_b": f32(8, seed=6, scale=0.1),
        "bn_m": f32(8, seed=7, scale=0.1), "bn_v": (0.5 + np.abs(f32(8, seed=8))).astype(np.float32),
        "w3": f32(16, 4, 1, 1, seed=9, scale=0.5),
        "fc_w": f32(10, 16, seed=10, scale=0.5), "fc_b": f32(10, seed=11, scale=0.1),
    }
    inits = [numpy_helper.from_array(v.astype(np.float32), k) for k, v in inits.items()]
    outputs = [vi("prob", ["N", 10]), vi("fmap", ["N", 16, None, None])]
    return make_model(nodes, [vi("x", ["N", 4, 13, 13])], outputs, inits)


T, D, FF = 6, 16, 32


def attention_block():
    """x[N,6,16] -> LayerNormalization -> Q,K,V MatMuls -> Q.K^T * 1/sqrt(D) + mask -> Softmax -> .V -> MatMul Wo
    -> + x -> LayerNormalization -> MatMul W1 + b1 -> Relu -> MatMul W2 + b2 -> + residual.  Outputs: the block's
    output and the attention weights."""
    nodes = [
        helper.make_node("LayerNormalization", ["x", "ln1_g", "ln1_b"], ["h"], axis=-1, epsilon=1e-5),
        helper.make_node("MatMul", ["h", "wq"], ["q"]),
        helper.make_node("MatMul", ["h", "wk"], ["k"]),
        helper.make_node("MatMul", ["h", "wv"], ["v"]),
        helper.make_node("Transpose", ["k"], ["kt"], perm=[0, 2, 1]),
        helper.make_node("MatMul", ["q", "kt"], ["scores"]),
        helper.make_node("Mul", ["scores", "scale"], ["scaled"]),
        helper.make_node("Add", ["scaled", "mask"], ["masked"]),
        helper.make_node("Softmax", ["masked"], ["attn"], axis=-1),
        helper.make_node("MatMul", ["attn", "v"], ["ctx"]),
        helper.make_node("MatMul", ["ctx", "wo"], ["proj"]),
        helper.make_node("Add", ["proj", "x"], ["res1"]),
        helper.make_node("LayerNormalization", ["res1", "ln2_g", "ln2_b"], ["h2"], axis=-1, epsilon=1e-5),
        helper.make_node("MatMul", ["h2", "w1"], ["m1"]),
        helper.make_node("Add", ["m1", "bias1"], ["m1b"]),
        helper.make_node("Relu", ["m1b"], ["m1r"]),
        helper.make_node("MatMul", ["m1r", "w2"], ["m2"]),
        helper.make_node("Add", ["m2", "bias2"], ["m2b"]),
        helper.make_node("Add", ["m2b", "res1"], ["y"]),
    ]
    causal = np.triu(np.full((T, T), -1e9, np.float32), k=1)
    inits = {
        "ln1_g": 1 + f32(D, seed=20, scale=0.1), "ln1_b": f32(D, seed=21, scale=0.1),
        "wq": f32(D, D, seed=22, scale=0.25), "wk": f32(D, D, seed=23, scale=0.25),
        "wv": f32(D, D, seed=24, scale=0.25), "wo": f32(D, D, seed=25, scale=0.25),
        "scale": np.array(1 / np.sqrt(D), np.float32), "mask": causal,
        "ln2_g": 1 + f32(D, seed=26, scale=0.1), "ln2_b": f32(D, seed=27, scale=0.1),
        "w1": f32(D, FF, seed=28, scale=0.25), "bias1": f32(FF, seed=29, scale=0.1),
        "w2": f32(FF, D, seed=30, scale=0.25), "bias2": f32(D, seed=31, scale=0.1),
    }
    inits = [numpy_helper.from_array(np.asarray(v, np.float32), k) for k, v in inits.items()]
    outputs = [vi("y", ["N", T, D]), vi("attn", ["N", T, T])]
    return make_model(nodes, [vi("x", ["N", T, D])], outputs, inits)


ACTIVATIONS = ["Tanh", "Erf", "Sigmoid", "Softplus", "Elu", "Selu", "Exp", "Gelu"]


def activation_mix():
    """x[N,37] -> Gemm(37->45, transB) -> h; each float math activation of h (Gelu with the tanh approximation),
    concatenated (odd widths: the SIMD tails), and LogSoftmax over their sum. Outputs: the activations, the
    LogSoftmax."""
    nodes = [helper.make_node("Gemm", ["x", "w", "b"], ["h"], transB=1)]
    for op in ACTIVATIONS:
        attrs = {"approximate": "tanh"} if op == "Gelu" else {}
        nodes.append(helper.make_node(op, ["h"], [op.lower()], **attrs))
    names = [op.lower() for op in ACTIVATIONS]
    nodes += [
        helper.make_node("Concat", names, ["acts"], axis=1),
        helper.make_node("Sum", names, ["total"]),
        helper.make_node("LogSoftmax", ["total"], ["lsm"], axis=-1),
    ]
    inits = [numpy_helper.from_array(f32(45, 37, seed=40, scale=0.6), "w"),
             numpy_helper.from_array(f32(45, seed=41, scale=0.2), "b")]
    outputs = [vi("acts", ["N", 45 * len(ACTIVATIONS)]), vi("lsm", ["N", 45])]
    return make_model(nodes, [vi("x", ["N", 37])], outputs, inits, opset=20)


MODELS = {
    "conv_net": (conv_net, lambda n, seed: f32(n, 4, 13, 13, seed=seed)),
    "attention": (attention_block, lambda n, seed: f32(n, T, D, seed=seed)),
    "activations": (activation_mix, lambda n, seed: f32(n, 37, seed=seed)),
}


_model_cache = {}


def model_bytes(name):
    if name not in _model_cache:
        _model_cache[name] = MODELS[name][0]().SerializeToString()
    return _model_cache[name]


def session(name, provider, threads=0):
    options = lockstep.SessionOptions()
    options.intra_op_num_threads = threads
    return lockstep.InferenceSession(model_bytes(name), sess_options=options, providers=[provider])


def batch(name, n=BATCH, seed=100):
    return MODELS[name][1](n, seed)


def assert_same(outs_a, outs_b, what):
    assert len(outs_a) == len(outs_b)
    for i, (a, b) in enumerate(zip(outs_a, outs_b)):
        assert same_bits(a, b), f"{what}: output {i} differs (shape {a.shape} vs {b.shape})"


_cpu_reference = {}


def cpu_reference(name):
    """lockstep CPU at 1 thread on the batch: the bytes every other configuration must reproduce."""
    if name not in _cpu_reference:
        _cpu_reference[name] = session(name, lockstep.CPU, threads=1).run(None, {"x": batch(name)})
    return _cpu_reference[name]


@pytest.mark.parametrize("name", list(MODELS))
def test_reference_is_sane(name):
    """Guards the bit checks against a degenerate model: lockstep CPU agrees with onnxruntime (rtol/atol 1e-5)
    and the outputs are finite and not constant."""
    ort = onnxruntime.InferenceSession(model_bytes(name), providers=["CPUExecutionProvider"])
    want = ort.run(None, {"x": batch(name)})
    got = cpu_reference(name)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)
        assert np.all(np.isfinite(g)) and np.ptp(g) > 0


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("name", list(MODELS))
@pytest.mark.parametrize("threads", [1, 2, 3, 8])
def test_thread_count_does_not_change_bits(name, provider, threads):
    outs = session(name, provider, threads).run(None, {"x": batch(name)})
    assert_same(outs, cpu_reference(name), f"{provider} threads={threads} vs CPU threads=1")


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("name", list(MODELS))
def test_batch_of_8_equals_8_batches_of_1(name, provider):
    s = session(name, provider, threads=3)
    x = batch(name)
    full = s.run(None, {"x": x})
    assert_same(full, cpu_reference(name), f"{provider} batch 8 vs CPU")
    for i in range(BATCH):
        single = s.run(None, {"x": x[i:i + 1]})
        for k, (f, one) in enumerate(zip(full, single)):
            assert one.shape[0] == 1
            assert same_bits(f[i:i + 1], one), f"{provider}: output {k}, sample {i}: batch 8 != batch 1"


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("name", list(MODELS))
def test_repeated_runs_are_identical(name, provider):
    s = session(name, provider, threads=2)
    x = batch(name, seed=200)
    first = s.run(None, {"x": x})
    for r in range(4):
        assert_same(s.run(None, {"x": x}), first, f"{provider} run {r + 2} vs run 1")
    # Interleaving another batch size does not disturb a later run either.
    s.run(None, {"x": batch(name, n=3, seed=201)})
    assert_same(s.run(None, {"x": x}), first, f"{provider} after a batch-3 run")
    if provider != lockstep.CPU:
        assert_same(first, session(name, lockstep.CPU, threads=1).run(None, {"x": x}), f"{provider} vs CPU")


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("name", list(MODELS))
def test_session_after_bad_feed(name, provider):
    s = session(name, provider, threads=2)
    x = batch(name)
    before = s.run(None, {"x": x})
    with pytest.raises(lockstep.InvalidArgument, match=r"input 'x'.*tensor\(double\).*tensor\(float\)"):
        s.run(None, {"x": x.astype(np.float64)})
    with pytest.raises(lockstep.InvalidArgument, match="x"):
        s.run(None, {"x": x.astype(np.int32)})
    after = s.run(None, {"x": x})
    assert_same(after, before, f"{provider} after bad feed")
    assert_same(after, cpu_reference(name), f"{provider} after bad feed vs CPU threads=1")
    # A fresh session that never saw a bad feed gives the same bytes too.
    assert_same(session(name, provider, threads=2).run(None, {"x": x}), after, f"{provider} fresh session")


def special_batch(name):
    """A batch where sample 1 holds a NaN, sample 3 an inf, sample 4 huge values, sample 6 subnormals; the other
    samples are ordinary. Whatever those samples give, no sample may change another's bytes."""
    x = batch(name, seed=300)
    flat = x.reshape(BATCH, -1)
    flat[1, 5] = np.nan
    flat[3, 0] = np.inf
    flat[4] *= np.float32(1e30)
    flat[6] *= np.float32(1e-40)
    return x


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("name", list(MODELS))
def test_special_values_stay_in_their_sample(name, provider):
    x = special_batch(name)
    full = session(name, provider, threads=8).run(None, {"x": x})
    ordinary = batch(name, seed=300)
    s = session(name, provider, threads=1)
    for i in range(BATCH):
        single = s.run(None, {"x": x[i:i + 1]})
        for k, (f, one) in enumerate(zip(full, single)):
            assert same_bits(f[i:i + 1], one), f"{provider}: output {k}, sample {i}: batch 8 != batch 1"
    # Samples left ordinary give the same bytes as in a batch without special values.
    clean = session(name, provider, threads=8).run(None, {"x": ordinary})
    for i in (0, 2, 5, 7):
        for k, (f, c) in enumerate(zip(full, clean)):
            assert same_bits(f[i], c[i]), f"{provider}: output {k}, ordinary sample {i} changed"
    assert np.isnan(full[0][1]).any()  # the NaN sample really carried its NaN through
    if provider != lockstep.CPU:
        assert_same(full, session(name, lockstep.CPU, threads=1).run(None, {"x": x}), f"{provider} vs CPU")


_ISA_SCRIPT = """
import sys
import numpy as np
sys.path.insert(0, sys.argv[1])
import test_invariance as t
outs = {}
for name in t.MODELS:
    for i, o in enumerate(t.session(name, t.lockstep.CPU, threads=2).run(None, {"x": t.batch(name)})):
        outs[f"{name}_{i}"] = o
np.savez(sys.argv[2], **outs)
"""


@pytest.mark.parametrize("isa", ["scalar", "avx2", "avx512"])
def test_cpu_isa_does_not_change_bits(isa, tmp_path):
    """Each model run in a process whose CPU kernels are forced to one ISA (an ISA this CPU lacks falls back to the
    best one below it) gives the bytes of the default process."""
    import os
    import subprocess
    import sys
    out = tmp_path / "outs.npz"
    env = dict(os.environ, LOCKSTEP_CPU_ISA=isa)
    subprocess.run([sys.executable, "-c", _ISA_SCRIPT, os.path.dirname(__file__), str(out)], env=env, check=True)
    got = np.load(out)
    for name in MODELS:
        want = cpu_reference(name)
        assert_same([got[f"{name}_{i}"] for i in range(len(want))], want, f"LOCKSTEP_CPU_ISA={isa} vs default")
