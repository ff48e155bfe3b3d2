"""Limits and clean failure (issue 7): tensor-size caps, overflowing sizes, stopping a run in flight, and broken models
from the fuzzers' seed corpus, each refused with a lockstep error, never a crash."""
import importlib.util
import threading
import time
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

import lockstep as ort

HERE = Path(__file__).resolve().parent


def load_corpus():
    spec = importlib.util.spec_from_file_location("make_corpus", HERE / "fuzz" / "make_corpus.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def expand_model():
    """y = Expand(x, shape): the output size is chosen by a feed."""
    graph = helper.make_graph([helper.make_node("Expand", ["x", "shape"], ["y"], name="grow")], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1]),
                               helper.make_tensor_value_info("shape", TensorProto.INT64, [2])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()


def capped_session(cap):
    options = ort.SessionOptions()
    options.add_session_config_entry("session.lockstep.max_tensor_bytes", str(cap))
    return ort.InferenceSession(expand_model(), options)


def test_output_over_the_cap_is_refused_naming_the_node_and_the_session_stays_usable():
    session = capped_session(4096)
    x = np.array([2.5], np.float32)
    with pytest.raises(ort.RuntimeException, match=r"grow.*output 0 \(float\[64,64\]\) would take 16384 bytes.*4096"):
        session.run(None, {"x": x, "shape": np.array([64, 64], np.int64)})
    (y,) = session.run(None, {"x": x, "shape": np.array([32, 32], np.int64)})  # 4096 bytes: at the cap
    assert y.shape == (32, 32) and np.all(y == 2.5)


@pytest.mark.skipif(ort.CUDA not in ort.get_available_providers(), reason="no GPU on this machine")
def test_gpu_out_of_memory_names_the_node_and_the_session_stays_usable():
    """1 TiB on the GPU: the kept blocks are released, the request is tried again, then refused naming the node;
    the session's next runs compute on the GPU as before."""
    session = ort.InferenceSession(expand_model(), providers=[ort.CUDA])
    x = np.array([1.5], np.float32)
    for rows in (1000, 2000):  # blocks the pool keeps
        assert np.all(session.run(None, {"x": x, "shape": np.array([rows, 1000], np.int64)})[0] == 1.5)
    with pytest.raises(ort.RuntimeException, match=r"grow.*output 0 \(float\[262144,1048576\]\).*out of GPU memory"):
        session.run(None, {"x": x, "shape": np.array([2**18, 2**20], np.int64)})
    for rows in (3, 2000):
        (y,) = session.run(None, {"x": x, "shape": np.array([rows, 1000], np.int64)})
        assert y.shape == (rows, 1000) and np.all(y == 1.5)


def test_sizes_that_overflow_64_bits_are_refused_without_a_cap():
    session = ort.InferenceSession(expand_model())
    with pytest.raises(ort.RuntimeException, match="overflows 64 bits"):
        session.run(None, {"x": np.array([1.0], np.float32), "shape": np.array([2**40, 2**40], np.int64)})
    (y,) = session.run(None, {"x": np.array([1.0], np.float32), "shape": np.array([2, 3], np.int64)})
    assert y.shape == (2, 3)


@pytest.mark.parametrize("key", ["max_tensor_bytes", "max_cached_host_bytes", "max_cached_device_bytes"])
@pytest.mark.parametrize("value", ["-1", "lots", "1e9"])
def test_a_cap_that_is_not_a_byte_count_is_refused(key, value):
    options = ort.SessionOptions()
    options.add_session_config_entry(f"session.lockstep.{key}", value)
    with pytest.raises(ValueError, match=f"{key}.*non-negative integer"):
        ort.InferenceSession(expand_model(), options)


def rss_bytes():
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmRSS:")) * 1024


def test_host_memory_stays_bounded_when_every_run_has_new_sizes():
    """The host allocator keeps freed blocks within twice the peak in use: 300 runs with outputs of 300 different
    sizes, 1 to 2.2 MB (about 480 MB if every size were kept), leave the process's RSS close to where it was."""
    session = ort.InferenceSession(expand_model())
    x = np.array([1.5], np.float32)
    session.run(None, {"x": x, "shape": np.array([256, 1024], np.int64)})
    start = rss_bytes()
    for rows in range(256, 556):
        (y,) = session.run(None, {"x": x, "shape": np.array([rows, 1024], np.int64)})
        assert y.shape == (rows, 1024) and y[-1, -1] == 1.5
        del y
    grown = rss_bytes() - start
    assert grown < 64 * 2**20, f"RSS grew by {grown / 2**20:.0f} MiB over 300 new sizes"


def softmax_model():
    """y = Softmax(MatMul(x, w)) over x[N, 16]: intermediates whose sizes follow the feed."""
    w = helper.make_tensor("w", TensorProto.FLOAT, [16, 16],
                           np.random.default_rng(3).standard_normal(256).astype(np.float32).tolist())
    graph = helper.make_graph([helper.make_node("MatMul", ["x", "w"], ["m"]), helper.make_node("Softmax", ["m"], ["y"])],
                              "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 16])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 16])], [w])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()


@pytest.mark.parametrize("kept", ["0", "4096", str(2**40)])
def test_the_host_cache_bound_changes_no_bit(kept):
    """Blocks reused, larger ones shared or none kept at all: the bytes are those of the default session."""
    options = ort.SessionOptions()
    options.add_session_config_entry("session.lockstep.max_cached_host_bytes", kept)
    bounded, default = ort.InferenceSession(softmax_model(), options), ort.InferenceSession(softmax_model())
    rng = np.random.default_rng(4)
    for n in [5, 300, 7, 301, 150, 5, 600, 299]:
        x = rng.standard_normal((n, 16)).astype(np.float32)
        (a,), (b,) = bounded.run(None, {"x": x}), default.run(None, {"x": x})
        assert a.tobytes() == b.tobytes(), f"N={n}: max_cached_host_bytes={kept} changed the output"


def long_model(nodes=3000):
    """A chain of 128x128 MatMuls: long enough to be stopped while it runs."""
    w = helper.make_tensor("w", TensorProto.FLOAT, [128, 128],
                           (np.eye(128, dtype=np.float32) * 0.5).ravel().tolist())
    chain = [helper.make_node("MatMul", [f"h{i}", "w"], [f"h{i + 1}"]) for i in range(nodes)]
    graph = helper.make_graph(chain, "g", [helper.make_tensor_value_info("h0", TensorProto.FLOAT, [128, 128])],
                              [helper.make_tensor_value_info(f"h{nodes}", TensorProto.FLOAT, [128, 128])], [w])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()


def test_terminate_stops_a_run_in_flight_and_the_session_stays_usable():
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    session = ort.InferenceSession(long_model(), options)
    x = np.ones((128, 128), np.float32)
    start = time.perf_counter()
    session.run(None, {"h0": x})
    full = time.perf_counter() - start
    run_options = ort.RunOptions()
    outcome = {}

    def work():
        try:
            session.run(None, {"h0": x}, run_options)
            outcome["finished"] = True
        except ort.Fail as e:
            outcome["error"] = str(e)

    thread = threading.Thread(target=work)
    thread.start()
    time.sleep(full / 10)
    run_options.terminate = True
    thread.join()
    assert outcome == {"error": "Exiting due to terminate flag being set to true."}
    assert run_options.terminate
    (y,) = session.run(None, {"h0": x})  # new runs, without the flag, are unaffected
    assert y.shape == (128, 128)


def broken_inputs():
    corpus = load_corpus()
    cases = {name: m.SerializeToString() for name, m in corpus.broken_models().items()}
    for name, m in corpus.valid_models().items():
        cases.update(corpus.byte_variants(name, m.SerializeToString()))
    cases["deep_nesting"] = corpus.deep_nesting()
    cases["empty"] = b""
    return cases


BROKEN = broken_inputs()


@pytest.mark.parametrize("name", sorted(BROKEN))
def test_broken_model_is_refused_with_a_lockstep_error(name):
    # An exception of lockstep's own (not a crash, not a Python TypeError or MemoryError) naming what is wrong.
    with pytest.raises((ort.InvalidGraph, ort.NotImplemented, ort.Fail, ort.InvalidArgument)) as caught:
        session = ort.InferenceSession(BROKEN[name])
        session.run(None, {i.name: np.zeros([d if isinstance(d, int) else 1 for d in i.shape], np.float32)
                           for i in session.get_inputs()})
    assert str(caught.value)
