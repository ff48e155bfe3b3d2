"""Sequences of tensors and optionals: graph inputs and outputs as onnxruntime's Python API gives them (lists of
arrays, None), every sequence op against numpy, and CUDA against the CPU byte for byte when a GPU is present."""

import numpy as np
import pytest
from onnx import TensorProto as T
from onnx import helper as h

import lockstep
from bits import same_bits

HAS_CUDA = lockstep.CUDA in lockstep.get_available_providers()
PROVIDERS = [lockstep.CPU] + ([lockstep.CUDA] if HAS_CUDA else [])


def seq(name, elem=T.FLOAT):
    return h.make_tensor_sequence_value_info(name, elem, None)


def tensor(name, elem=T.FLOAT, shape=None):
    return h.make_tensor_value_info(name, elem, shape)


def optional(value_info):
    return h.make_value_info(value_info.name, h.make_optional_type_proto(value_info.type))


def model(nodes, inputs, outputs, opset=18):
    graph = h.make_graph(nodes, "sequences", inputs, outputs)
    return h.make_model(graph, opset_imports=[h.make_opsetid("", opset)]).SerializeToString()


def session(data, provider=lockstep.CPU):
    return lockstep.InferenceSession(data, providers=[provider])


def int64(*values):
    return np.array(values, np.int64) if len(values) != 1 else np.array(values[0], np.int64)


X = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
A, B = X[0], X[1] * -1.5

# name: (model, feeds, expected outputs). Positions are int64 scalars unless said otherwise.
CASES = {
    "construct": (model([h.make_node("SequenceConstruct", ["a", "b"], ["s"])], [tensor("a"), tensor("b")], [seq("s")]),
                  {"a": A, "b": B}, [[A, B]]),
    "insert_default_end": (model([h.make_node("SequenceInsert", ["s", "t"], ["o"])], [seq("s"), tensor("t")], [seq("o")]),
                           {"s": [A], "t": B}, [[A, B]]),
    "insert_negative": (model([h.make_node("SequenceInsert", ["s", "t", "p"], ["o"])],
                              [seq("s"), tensor("t"), tensor("p", T.INT64, [])], [seq("o")]),
                        {"s": [A, A], "t": B, "p": int64(-1)}, [[A, B, A]]),
    "insert_into_empty": (model([h.make_node("SequenceInsert", ["s", "t"], ["o"])], [seq("s"), tensor("t")], [seq("o")]),
                          {"s": [], "t": B}, [[B]]),
    "at_negative_int32": (model([h.make_node("SequenceAt", ["s", "p"], ["o"])], [seq("s"), tensor("p", T.INT32, [])],
                                [tensor("o")]),
                          {"s": [A, B], "p": np.array(-1, np.int32)}, [B]),
    "erase_default_last": (model([h.make_node("SequenceErase", ["s"], ["o"])], [seq("s")], [seq("o")]),
                           {"s": [A, B, A]}, [[A, B]]),
    "erase_first": (model([h.make_node("SequenceErase", ["s", "p"], ["o"])], [seq("s"), tensor("p", T.INT64, [])],
                          [seq("o")]),
                    {"s": [A, B], "p": int64(0)}, [[B]]),
    "length": (model([h.make_node("SequenceLength", ["s"], ["n"])], [seq("s")], [tensor("n", T.INT64, [])]),
               {"s": [A, B, A]}, [int64(3)]),
    "empty_int32_then_insert": (
        model([h.make_node("SequenceEmpty", [], ["e"], dtype=T.INT32), h.make_node("SequenceInsert", ["e", "t"], ["o"])],
              [tensor("t", T.INT32)], [seq("o", T.INT32)]),
        {"t": np.array([7, -8], np.int32)}, [[np.array([7, -8], np.int32)]]),
    "split_ones_keepdims": (model([h.make_node("SplitToSequence", ["x"], ["s"], axis=1)], [tensor("x")], [seq("s")]),
                            {"x": X}, [[X[:, i:i + 1] for i in range(3)]]),
    "split_ones_squeezed": (model([h.make_node("SplitToSequence", ["x"], ["s"], axis=-1, keepdims=0)], [tensor("x")],
                                  [seq("s")]),
                            {"x": X}, [[X[..., i] for i in range(4)]]),
    "split_scalar_uneven": (model([h.make_node("SplitToSequence", ["x", "k"], ["s"], axis=2)],
                                  [tensor("x"), tensor("k", T.INT64, [])], [seq("s")]),
                            {"x": X, "k": int64(3)}, [[X[..., :3], X[..., 3:]]]),
    "split_lengths": (model([h.make_node("SplitToSequence", ["x", "k"], ["s"], axis=2)],
                            [tensor("x"), tensor("k", T.INT64, [3])], [seq("s")]),
                      {"x": X, "k": int64(1, 0, 3)}, [[X[..., :1], X[..., 1:1], X[..., 1:]]]),
    "split_lengths_opset_11": (model([h.make_node("SplitToSequence", ["x", "k"], ["s"], axis=0)],
                                     [tensor("x"), tensor("k", T.INT32, [2])], [seq("s")], opset=11),
                               {"x": X, "k": np.array([1, 1], np.int32)}, [[X[:1], X[1:]]]),
    "concat": (model([h.make_node("ConcatFromSequence", ["s"], ["y"], axis=1)], [seq("s")], [tensor("y")]),
               {"s": [X, X[:, :1]]}, [np.concatenate([X, X[:, :1]], axis=1)]),
    "concat_new_axis_last": (model([h.make_node("ConcatFromSequence", ["s"], ["y"], axis=-1, new_axis=1)], [seq("s")],
                                   [tensor("y")]),
                             {"s": [A, B]}, [np.stack([A, B], axis=-1)]),
    "split_then_concat_round_trip": (
        model([h.make_node("SplitToSequence", ["x"], ["s"], axis=0, keepdims=0),
               h.make_node("ConcatFromSequence", ["s"], ["y"], axis=0, new_axis=1)], [tensor("x")], [tensor("y")]),
        {"x": X}, [X]),
    "identity_of_sequence": (model([h.make_node("Identity", ["s"], ["o"])], [seq("s")], [seq("o")]),
                             {"s": [A, B]}, [[A, B]]),
}


def sequence_map_model():
    body = h.make_graph([h.make_node("Add", ["x", "y"], ["z"]), h.make_node("Shape", ["x"], ["shape"])], "body",
                        [tensor("x"), tensor("y")], [tensor("z"), tensor("shape", T.INT64, [None])])
    return model([h.make_node("SequenceMap", ["s", "t"], ["sums", "shapes"], body=body)], [seq("s"), tensor("t")],
                 [seq("sums"), seq("shapes", T.INT64)])


CASES["sequence_map_with_tensor"] = (sequence_map_model(), {"s": [A, B], "t": A},
                                     [[A + A, B + A], [int64(3, 4), int64(3, 4)]])


def loop_carrying_sequence():
    body = h.make_graph([h.make_node("Identity", ["c"], ["c_out"]),
                         h.make_node("Cast", ["i"], ["f"], to=T.FLOAT),
                         h.make_node("SequenceInsert", ["s", "f"], ["s_out"])], "body",
                        [tensor("i", T.INT64, []), tensor("c", T.BOOL, []), seq("s")],
                        [tensor("c_out", T.BOOL, []), seq("s_out")])
    return model([h.make_node("SequenceEmpty", [], ["e"]), h.make_node("Loop", ["n", "", "e"], ["out"], body=body)],
                 [tensor("n", T.INT64, [])], [seq("out")])


CASES["loop_carrying_sequence"] = (loop_carrying_sequence(), {"n": int64(3)},
                                   [[np.array(0, np.float32), np.array(1, np.float32), np.array(2, np.float32)]])


def assert_same_value(got, expected, what):
    if isinstance(expected, list):
        assert isinstance(got, list), f"{what}: got {type(got).__name__}, expected a list"
        assert len(got) == len(expected), f"{what}: {len(got)} items, expected {len(expected)}"
        for k, (g, e) in enumerate(zip(got, expected)):
            assert_same_value(g, e, f"{what}[{k}]")
        return
    assert isinstance(got, np.ndarray) and got.dtype == expected.dtype and got.shape == expected.shape, \
        f"{what}: {getattr(got, 'dtype', None)}{getattr(got, 'shape', None)}, expected {expected.dtype}{expected.shape}"
    assert same_bits(got, expected), f"{what}: values differ"


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("name", list(CASES))
def test_sequence_ops(name, provider):
    data, feeds, expected = CASES[name]
    outputs = session(data, provider).run(None, feeds)
    for i, (got, want) in enumerate(zip(outputs, expected)):
        assert_same_value(got, want, f"{name} output {i}")


@pytest.mark.skipif(not HAS_CUDA, reason="no GPU on this machine")
@pytest.mark.parametrize("name", list(CASES))
def test_cuda_bit_identical(name):
    data, feeds, _ = CASES[name]
    cpu = session(data).run(None, feeds)
    cuda = session(data, lockstep.CUDA).run(None, feeds)
    for i, (c, g) in enumerate(zip(cpu, cuda)):
        assert_same_value(g, c, f"{name} output {i} CUDA vs CPU")


def test_declared_types_are_onnxruntime_spellings():
    data = model([h.make_node("Identity", ["s"], ["o"]), h.make_node("OptionalHasElement", ["p"], ["has"])],
                 [seq("s", T.INT64), optional(tensor("p", T.FLOAT, [2]))], [seq("o", T.INT64), tensor("has", T.BOOL, [])])
    s = session(data)
    assert [i.type for i in s.get_inputs()] == ["seq(tensor(int64))", "optional(tensor(float))"]
    assert [o.type for o in s.get_outputs()] == ["seq(tensor(int64))", "tensor(bool)"]


def test_optionals_fed_left_out_and_returned_empty():
    data = model([h.make_node("OptionalHasElement", ["p"], ["has"]), h.make_node("Identity", ["p"], ["same"])],
                 [optional(tensor("p", T.FLOAT, [2]))], [tensor("has", T.BOOL, []), optional(tensor("same", T.FLOAT, [2]))],
                 opset=18)
    s = session(data)
    x = np.array([1.5, -2], np.float32)
    has, same = s.run(None, {"p": x})
    assert has == np.True_ and same_bits(same, x)
    for feeds in ({"p": None}, {}):
        has, same = s.run(None, feeds)
        assert has == np.False_ and same is None


def test_optional_sequence_through_loop_state():
    """A Loop whose carried value starts as an empty optional sequence (onnx's loop16_seq_none, smaller)."""
    opt_seq = optional(seq("o"))
    then_branch = h.make_graph([h.make_node("SequenceEmpty", [], ["fresh"])], "then", [], [seq("fresh")])
    else_branch = h.make_graph([h.make_node("OptionalGetElement", ["o"], ["held"])], "else", [], [seq("held")])
    body = h.make_graph([h.make_node("Identity", ["c"], ["c_out"]),
                         h.make_node("OptionalHasElement", ["o"], ["has"]), h.make_node("Not", ["has"], ["none"]),
                         h.make_node("If", ["none"], ["s"], then_branch=then_branch, else_branch=else_branch),
                         h.make_node("Cast", ["i"], ["f"], to=T.FLOAT),
                         h.make_node("SequenceInsert", ["s", "f"], ["s_out"])], "body",
                        [tensor("i", T.INT64, []), tensor("c", T.BOOL, []), opt_seq],
                        [tensor("c_out", T.BOOL, []), seq("s_out")])
    data = model([h.make_node("Loop", ["n", "", "o"], ["out"], body=body)], [tensor("n", T.INT64, []), opt_seq],
                 [seq("out")])
    out, = session(data).run(None, {"n": int64(2), "o": None})
    assert_same_value(out, [np.array(0, np.float32), np.array(1, np.float32)], "out")


@pytest.mark.parametrize("case, feeds, message", [
    ("at", {"s": [A], "p": int64(1)}, "position 1 is out of range [-1, 0]"),
    ("at", {"s": [], "p": int64(0)}, "the sequence is empty"),
    ("at", {"s": A, "p": int64(0)}, "cannot be fed"),
    ("at", {"s": [A, np.zeros(2, np.int32)], "p": int64(0)}, "is int32, expected float"),
    ("add", {"s": [A], "t": A}, "input 's' is a sequence"),
    ("concat_empty", {"s": []}, "the sequence is empty: there is nothing to concatenate"),
    ("split_bad_lengths", {"x": X, "k": int64(1, 2)}, "split lengths add up to 3, but axis 0 has 2"),
])
def test_bad_sequences_are_clear_errors(case, feeds, message):
    models = {
        "at": model([h.make_node("SequenceAt", ["s", "p"], ["o"], name="take")], [seq("s"), tensor("p", T.INT64, [])],
                    [tensor("o")]),
        "add": model([h.make_node("Add", ["s", "t"], ["o"], name="plus")], [seq("s"), tensor("t")], [tensor("o")]),
        "concat_empty": model([h.make_node("ConcatFromSequence", ["s"], ["o"], axis=0, name="join")], [seq("s")],
                              [tensor("o")]),
        "split_bad_lengths": model([h.make_node("SplitToSequence", ["x", "k"], ["s"], name="cut")],
                                   [tensor("x"), tensor("k", T.INT64, [2])], [seq("s")]),
    }
    s = session(models[case])
    with pytest.raises(lockstep.InvalidArgument, match=message.replace("[", r"\[").replace("]", r"\]")):
        s.run(None, feeds)
    # the session stays usable
    good = {"at": {"s": [A], "p": int64(0)}, "add": None, "concat_empty": {"s": [A]},
            "split_bad_lengths": {"x": X, "k": int64(1, 1)}}[case]
    if good is not None:
        s.run(None, good)


def test_sequence_types_survive_the_optimized_model(tmp_path):
    path = str(tmp_path / "written.onnx")
    options = lockstep.SessionOptions()
    options.optimized_model_filepath = path
    lockstep.InferenceSession(CASES["insert_negative"][0], options)
    written = lockstep.InferenceSession(path)
    assert [i.type for i in written.get_inputs()] == ["seq(tensor(float))", "tensor(float)", "tensor(int64)"]
    assert written.get_outputs()[0].type == "seq(tensor(float))"
    assert_same_value(written.run(None, CASES["insert_negative"][1])[0], CASES["insert_negative"][2][0], "written")


def test_sequence_op_before_its_opset_is_refused():
    data = model([h.make_node("SequenceMap", ["s"], ["o"], body=h.make_graph(
        [h.make_node("Identity", ["x"], ["y"])], "body", [tensor("x")], [tensor("y")]))], [seq("s")], [seq("o")], opset=16)
    with pytest.raises(lockstep.NotImplemented, match="SequenceMap is not supported at opset 16"):
        session(data)
