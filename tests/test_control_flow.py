"""Loop and Scan (issue 6): models built with onnx.helper, compared with onnxruntime byte for byte (their bodies
compute with single IEEE operations, Add and Mul, or integers, so every correct runtime gives the same bytes), the
CPU provider against CUDA (when a GPU is present), RunOptions.terminate stopping a Loop without bound, and the
errors, each naming the node."""
import threading

import numpy as np
import onnxruntime
import pytest
from onnx import TensorProto as T
from onnx import helper as h

import lockstep
from bits import same_bits

HAS_CUDA = lockstep.CUDA in lockstep.get_available_providers()
F, I64, B = T.FLOAT, T.INT64, T.BOOL


def info(name, elem, shape=None):
    return h.make_tensor_value_info(name, elem, shape)


def model(nodes, inputs, outputs, opset=17, initializers=()):
    graph = h.make_graph(nodes, "g", inputs, outputs, list(initializers))
    # IR 8: what the installed onnxruntime reads.
    return h.make_model(graph, opset_imports=[h.make_opsetid("", opset)], ir_version=8).SerializeToString()


def scalar(name, elem, value):
    return h.make_tensor(name, elem, [], [value])


# ---------------------------------------------------------------- models


def loop_while_model():
    """y = y * w + float(i) while i < M and i < stop: `w` and `stop` are read from the outer scope; the scan output
    is y after each iteration."""
    body = h.make_graph(
        [h.make_node("Cast", ["i"], ["fi"], to=F),
         h.make_node("Mul", ["y_in", "w"], ["p"]),
         h.make_node("Add", ["p", "fi"], ["y_out"]),
         h.make_node("Add", ["i", "one"], ["next"]),
         h.make_node("Less", ["next", "stop"], ["cond_out"]),
         h.make_node("Identity", ["y_out"], ["scan"])],
        "body", [info("i", I64, []), info("cond_in", B, []), info("y_in", F, [3])],
        [info("cond_out", B, []), info("y_out", F, [3]), info("scan", F, [3])],
        [scalar("one", I64, 1)])
    return model([h.make_node("Loop", ["M", "cond", "y0"], ["y", "ys"], body=body, name="loop")],
                 [info("M", I64, []), info("cond", B, []), info("y0", F, [3]), info("w", F, [3]),
                  info("stop", I64, [])],
                 [info("y", F, [3]), info("ys", F, [None, 3])])


def loop_while_feeds(trips=5, stop=4):
    rng = np.random.default_rng(1)
    return {"M": np.array(trips, np.int64), "cond": np.array(True), "y0": rng.standard_normal(3, np.float32),
            "w": rng.standard_normal(3, np.float32), "stop": np.array(stop, np.int64)}


def loop_growing_model():
    """v = Concat(v, [i]): the loop-carried value grows by one element each iteration (int64, exact)."""
    body = h.make_graph(
        [h.make_node("Identity", ["cond_in"], ["cond_out"]),
         h.make_node("Unsqueeze", ["i", "zero"], ["i1"]),
         h.make_node("Concat", ["v_in", "i1"], ["v_out"], axis=0),
         h.make_node("ReduceSum", ["v_out"], ["total"], keepdims=0)],
        "body", [info("i", I64, []), info("cond_in", B, []), info("v_in", I64, None)],
        [info("cond_out", B, []), info("v_out", I64, None), info("total", I64, [])],
        [h.make_tensor("zero", I64, [1], [0])])
    return model([h.make_node("Loop", ["M", "", "v0"], ["v", "totals"], body=body, name="grow")],
                 [info("M", I64, []), info("v0", I64, [None])], [info("v", I64, None), info("totals", I64, None)])


def loop_in_scan_model():
    """A Scan whose body runs a Loop whose body runs an If: the innermost graph reads `k` (the main graph's input)
    and `s` (the Scan body's state), two scopes up."""
    then_g = h.make_graph([h.make_node("Mul", ["acc_in", "k"], ["r"])], "then", [], [info("r", F, [2])])
    else_g = h.make_graph([h.make_node("Add", ["acc_in", "s"], ["r2"])], "else", [], [info("r2", F, [2])])
    loop_body = h.make_graph(
        [h.make_node("Identity", ["c"], ["c_out"]),
         h.make_node("Mod", ["i", "two"], ["odd"]),
         h.make_node("Cast", ["odd"], ["pick"], to=B),
         h.make_node("If", ["pick"], ["acc_out"], then_branch=then_g, else_branch=else_g)],
        "loop_body", [info("i", I64, []), info("c", B, []), info("acc_in", F, [2])],
        [info("c_out", B, []), info("acc_out", F, [2])], [scalar("two", I64, 2)])
    scan_body = h.make_graph(
        [h.make_node("Loop", ["trips", "", "x"], ["acc"], body=loop_body, name="inner"),
         h.make_node("Add", ["s", "acc"], ["s_out"]),
         h.make_node("Identity", ["acc"], ["out"])],
        "scan_body", [info("s", F, [2]), info("x", F, [2])], [info("s_out", F, [2]), info("out", F, [2])])
    return model([h.make_node("Scan", ["s0", "xs"], ["s", "outs"], body=scan_body, num_scan_inputs=1, name="outer")],
                 [info("s0", F, [2]), info("xs", F, [4, 2]), info("k", F, [2]), info("trips", I64, [])],
                 [info("s", F, [2]), info("outs", F, [4, 2])])


def loop_in_scan_feeds():
    rng = np.random.default_rng(2)
    return {"s0": rng.standard_normal(2, np.float32), "xs": rng.standard_normal((4, 2), np.float32),
            "k": rng.standard_normal(2, np.float32), "trips": np.array(3, np.int64)}


def scan9_model(opset=17):
    """Two scan inputs, the second read along axis 1 last element first; the scan outputs stacked along axis 1
    (and, the second, last iteration first) and along axis -1."""
    body = h.make_graph(
        [h.make_node("Mul", ["a", "b"], ["ab"]),
         h.make_node("Add", ["s", "ab"], ["s_out"]),
         h.make_node("Identity", ["s_out"], ["o1"]),
         h.make_node("Sub", ["a", "b"], ["o2"])],
        "body", [info("s", F, [2]), info("a", F, [2]), info("b", F, [2])],
        [info("s_out", F, [2]), info("o1", F, [2]), info("o2", F, [2])])
    node = h.make_node("Scan", ["s0", "xa", "xb"], ["s", "y1", "y2"], body=body, num_scan_inputs=2, name="scan",
                       scan_input_axes=[0, 1], scan_input_directions=[0, 1], scan_output_axes=[1, -1],
                       scan_output_directions=[1, 0])
    return model([node], [info("s0", F, [2]), info("xa", F, ["n", 2]), info("xb", F, [2, "m"])],
                 [info("s", F, [2]), info("y1", F, None), info("y2", F, None)], opset=opset)


def scan9_feeds():
    rng = np.random.default_rng(3)
    return {"s0": rng.standard_normal(2, np.float32), "xa": rng.standard_normal((5, 2), np.float32),
            "xb": rng.standard_normal((2, 5), np.float32)}


def scan8_model():
    """Scan-8: a batch of 3 with sequence_lens, the scan input read last element first."""
    body = h.make_graph(
        [h.make_node("Add", ["s", "x"], ["s_out"]), h.make_node("Mul", ["s_out", "x"], ["o"])],
        "body", [info("s", F, [2]), info("x", F, [2])], [info("s_out", F, [2]), info("o", F, [2])])
    node = h.make_node("Scan", ["lens", "s0", "xs"], ["s", "ys"], body=body, num_scan_inputs=1, directions=[1],
                       name="scan8")
    return model([node], [info("lens", I64, [3]), info("s0", F, [3, 2]), info("xs", F, [3, 4, 2])],
                 [info("s", F, [3, 2]), info("ys", F, [3, 4, 2])], opset=8)


def scan8_feeds():
    rng = np.random.default_rng(4)
    return {"lens": np.array([4, 1, 3], np.int64), "s0": rng.standard_normal((3, 2), np.float32),
            "xs": rng.standard_normal((3, 4, 2), np.float32)}


CASES = {
    "loop_while": (loop_while_model, loop_while_feeds),
    "loop_stops_on_cond": (loop_while_model, lambda: loop_while_feeds(trips=10, stop=2)),
    "loop_stops_on_trips": (loop_while_model, lambda: loop_while_feeds(trips=3, stop=10)),
    "loop_growing": (loop_growing_model, lambda: {"M": np.array(4, np.int64), "v0": np.array([7], np.int64)}),
    "loop_in_scan": (loop_in_scan_model, loop_in_scan_feeds),
    "scan9_axes_and_directions": (scan9_model, scan9_feeds),
    "scan11_axes_and_directions": (lambda: scan9_model(opset=11), scan9_feeds),
    "scan8_sequence_lens": (scan8_model, scan8_feeds),
}


def run(model_bytes, feeds, provider=lockstep.CPU, run_options=None):
    options = lockstep.SessionOptions()
    options.log_severity_level = 3
    return lockstep.InferenceSession(model_bytes, options, providers=[provider]).run(None, feeds, run_options)


def run_ort(model_bytes, feeds):
    options = onnxruntime.SessionOptions()
    options.log_severity_level = 3
    return onnxruntime.InferenceSession(model_bytes, options, providers=["CPUExecutionProvider"]).run(None, feeds)


@pytest.mark.parametrize("name", CASES)
def test_same_bytes_as_onnxruntime(name):
    make, feeds = CASES[name]
    ours, theirs = run(make(), feeds()), run_ort(make(), feeds())
    assert len(ours) == len(theirs)
    for i, (a, b) in enumerate(zip(ours, theirs)):
        assert same_bits(a, b), f"output {i}: {a} != {b}"


@pytest.mark.skipif(not HAS_CUDA, reason="no GPU on this machine")
@pytest.mark.parametrize("name", CASES)
def test_cuda_same_bytes_as_cpu(name):
    make, feeds = CASES[name]
    cpu, cuda = run(make(), feeds()), run(make(), feeds(), provider=lockstep.CUDA)
    for i, (a, b) in enumerate(zip(cpu, cuda)):
        assert same_bits(a, b), f"output {i}: {a} != {b}"


def test_loop_of_zero_iterations_gives_the_initial_values_and_empty_scan_outputs():
    feeds = loop_while_feeds(trips=0)
    (y, ys), (y_ort, ys_ort) = run(loop_while_model(), feeds), run_ort(loop_while_model(), feeds)
    assert same_bits(y, feeds["y0"]) and same_bits(y, y_ort)
    assert ys.shape == ys_ort.shape == (0, 3) and ys.dtype == np.float32
    # The body declares no shape for `total`: onnxruntime's [0] as well.
    v, totals = run(loop_growing_model(), {"M": np.array(0, np.int64), "v0": np.array([7], np.int64)})
    assert v.tolist() == [7] and totals.shape == (0,) and totals.dtype == np.int64


# ---------------------------------------------------------------- terminate


def unbounded_loop_model():
    """A Loop with neither M nor cond whose body has no node: only RunOptions.terminate, checked before each
    iteration, can stop it."""
    body = h.make_graph([], "body", [info("i", I64, []), info("c", B, []), info("v", F, [1])],
                        [info("c", B, []), info("v", F, [1])])
    return model([h.make_node("Loop", ["", "", "x"], ["y"], body=body, name="forever")],
                 [info("x", F, [1])], [info("y", F, [1])])


def test_terminate_stops_a_loop_without_bound_and_the_session_stays_usable():
    session = lockstep.InferenceSession(unbounded_loop_model())
    run_options = lockstep.RunOptions()
    outcome = {}

    def work():
        try:
            session.run(None, {"x": np.ones(1, np.float32)}, run_options)
            outcome["finished"] = True
        except lockstep.Fail as e:
            outcome["error"] = str(e)

    thread = threading.Thread(target=work, daemon=True)
    thread.start()
    thread.join(0.2)
    assert thread.is_alive()  # looping
    run_options.terminate = True
    thread.join(10)
    assert not thread.is_alive()
    assert outcome == {"error": "Exiting due to terminate flag being set to true."}


# ---------------------------------------------------------------- errors


def test_trip_count_of_another_type_is_refused_naming_the_node():
    feeds = loop_while_feeds()
    bad = model(*_loop_with_float_trip_count())
    with pytest.raises(lockstep.InvalidArgument, match=r"Node 'loop' \(Loop\).*trip count M must be a single int64, got float\[\]"):
        run(bad, {"M": np.array(3.0, np.float32), **{k: v for k, v in feeds.items() if k != "M"}})


def _loop_with_float_trip_count():
    body = h.make_graph([h.make_node("Identity", ["y_in"], ["y_out"]), h.make_node("Identity", ["cond_in"], ["c"])],
                        "body", [info("i", I64, []), info("cond_in", B, []), info("y_in", F, [3])],
                        [info("c", B, []), info("y_out", F, [3])])
    return ([h.make_node("Loop", ["M", "cond", "y0"], ["y"], body=body, name="loop")],
            [info("M", F, []), info("cond", B, []), info("y0", F, [3]), info("w", F, [3]), info("stop", I64, [])],
            [info("y", F, [3])])


def test_scan_state_that_changes_shape_is_refused_naming_the_node():
    body = h.make_graph([h.make_node("Concat", ["s", "x"], ["s_out"], axis=0)], "body",
                        [info("s", F, None), info("x", F, [1])], [info("s_out", F, None)])
    bad = model([h.make_node("Scan", ["s0", "xs"], ["s"], body=body, num_scan_inputs=1, name="widen")],
                [info("s0", F, [1]), info("xs", F, [3, 1])], [info("s", F, None)])
    with pytest.raises(lockstep.InvalidArgument,
                       match=r"Node 'widen' \(Scan\).*state 's_out' changed from float\[1\] to float\[2\] at iteration 0"):
        run(bad, {"s0": np.zeros(1, np.float32), "xs": np.ones((3, 1), np.float32)})


def test_scan_output_whose_shape_changes_is_refused_naming_the_node():
    feeds = {"M": np.array(3, np.int64), "v0": np.array([7], np.int64)}
    body = h.make_graph([h.make_node("Identity", ["c"], ["c_out"]),
                         h.make_node("Unsqueeze", ["i", "zero"], ["i1"]),
                         h.make_node("Concat", ["v", "i1"], ["v_out"], axis=0),
                         h.make_node("Identity", ["v_out"], ["each"])],
                        "body", [info("i", I64, []), info("c", B, []), info("v", I64, None)],
                        [info("c_out", B, []), info("v_out", I64, None), info("each", I64, None)],
                        [h.make_tensor("zero", I64, [1], [0])])
    bad = model([h.make_node("Loop", ["M", "", "v0"], ["v", "all"], body=body, name="ragged")],
                [info("M", I64, []), info("v0", I64, [1])], [info("v", I64, None), info("all", I64, None)])
    with pytest.raises(lockstep.InvalidArgument,
                       match=r"Node 'ragged' \(Loop\).*scan output 'each' is int64\[3\] at iteration 1 but was int64\[2\]"):
        run(bad, feeds)


def test_loop_carried_value_that_changes_type_is_refused_naming_the_node():
    body = h.make_graph([h.make_node("Identity", ["c"], ["c_out"]), h.make_node("Cast", ["v"], ["v_out"], to=I64)],
                        "body", [info("i", I64, []), info("c", B, []), info("v", F, [1])],
                        [info("c_out", B, []), info("v_out", I64, [1])])
    bad = model([h.make_node("Loop", ["M", "", "v0"], ["v"], body=body, name="recast")],
                [info("M", I64, []), info("v0", F, [1])], [info("v", F, [1])])
    with pytest.raises(lockstep.InvalidArgument,
                       match=r"Node 'recast' \(Loop\).*'v_out' changed from float\[1\] to int64\[1\] at iteration 0"):
        run(bad, {"M": np.array(2, np.int64), "v0": np.ones(1, np.float32)})


def test_scan_inputs_of_different_lengths_are_refused_naming_the_node():
    with pytest.raises(lockstep.InvalidArgument, match=r"Node 'scan' \(Scan\).*scan input 1 \(float\[2,4\]\) has 4 elements along its scan axis but scan input 0"):
        run(scan9_model(), {**scan9_feeds(), "xb": np.ones((2, 4), np.float32)})


def test_sequence_lens_outside_the_sequence_is_refused_naming_the_node():
    with pytest.raises(lockstep.InvalidArgument, match=r"Node 'scan8' \(Scan\).*sequence_lens entry 0 is outside \[1, 4\]"):
        run(scan8_model(), {**scan8_feeds(), "lens": np.array([0, 1, 4], np.int64)})


def test_body_with_the_wrong_number_of_inputs_is_refused_naming_the_node():
    body = h.make_graph([h.make_node("Identity", ["c"], ["c_out"])], "body", [info("i", I64, []), info("c", B, [])],
                        [info("c_out", B, []), info("c_out2", B, [])])
    bad = model([h.make_node("Loop", ["M", "", "v0"], ["v"], body=body, name="short")],
                [info("M", I64, []), info("v0", F, [1])], [info("v", F, [1])])
    with pytest.raises(lockstep.InvalidGraph, match=r"Node 'short' \(Loop\).*the body has 2 inputs, expected 3"):
        lockstep.InferenceSession(bad)
    fitting = h.make_graph([h.make_node("Identity", ["c"], ["c_out"])], "body",
                           [info("i", I64, []), info("c", B, []), info("v", F, [1])], [info("c_out", B, []), info("v", F, [1])])
    given = model([h.make_node("Loop", ["M", "", ""], ["v"], body=fitting, name="blank")],
                  [info("M", I64, [])], [info("v", F, [1])])
    with pytest.raises(lockstep.InvalidGraph, match=r"Node 'blank' \(Loop\).*input 2 feeds the body and must be given"):
        lockstep.InferenceSession(given)


# ---------------------------------------------------------------- optionals


def test_optional_of_a_tensor_is_that_tensor_and_an_absent_one_is_empty():
    nodes = [h.make_node("Optional", ["x"], ["opt"]), h.make_node("OptionalGetElement", ["opt"], ["y"]),
             h.make_node("OptionalHasElement", ["opt"], ["has"]), h.make_node("OptionalHasElement", [""], ["none"])]
    m = model(nodes, [info("x", F, [2])], [info("y", F, [2]), info("has", B, []), info("none", B, [])], opset=18)
    x = np.array([1.5, -0.0], np.float32)
    y, has, none = run(m, {"x": x})
    assert same_bits(y, x) and bool(has) and not bool(none)


def test_optional_without_input_is_empty():
    opt_type = h.make_tensor_type_proto(F, [2])
    empty = h.make_node("Optional", [], ["opt"], type=opt_type, name="nothing")
    m = model([empty, h.make_node("OptionalHasElement", ["opt"], ["has"])], [], [info("has", B, [])], opset=18)
    has, = run(m, {})
    assert has.dtype == np.bool_ and not bool(has)
    m = model([empty, h.make_node("OptionalGetElement", ["opt"], ["element"], name="take")], [],
              [info("element", F, [2])], opset=18)
    with pytest.raises(lockstep.InvalidArgument, match=r"Node 'take' \(OptionalGetElement\).*'opt' is empty"):
        run(m, {})


def test_scan_over_strings_matches_onnxruntime():
    """String tensors live on the host: the elements are cut and stacked by the CPU kernels, on any provider."""
    S = T.STRING
    body = h.make_graph([h.make_node("Identity", ["x"], ["o"]), h.make_node("Identity", ["x"], ["s_out"])], "body",
                        [info("s", S, [2]), info("x", S, [2])], [info("s_out", S, [2]), info("o", S, [2])])
    m = model([h.make_node("Scan", ["s0", "xs"], ["s", "ys"], body=body, num_scan_inputs=1,
                           scan_input_directions=[1], scan_output_axes=[1])],
              [info("s0", S, [2]), info("xs", S, [3, 2])], [info("s", S, None), info("ys", S, None)])
    feeds = {"s0": np.array(["a", "b"], object), "xs": np.array([["c", "d"], ["e", "f"], ["g", "h"]], object)}
    ours, theirs = run(m, feeds), run_ort(m, feeds)
    assert [o.tolist() for o in ours] == [o.tolist() for o in theirs] == [["c", "d"], [["g", "e", "c"], ["h", "f", "d"]]]
