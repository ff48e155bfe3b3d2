"""SessionOptions.optimized_model_filepath: the session writes the graph it runs (constants folded, nodes fused) as
an ONNX model that loads back in lockstep and returns the same bytes, on every provider."""

import numpy as np
import onnx
import onnxruntime
import pytest
from onnx import TensorProto, helper, numpy_helper

import lockstep
from bits import same_bits
from test_fusion import feed, gelu_chain, silu_patterns

PROVIDERS = [lockstep.CPU] + ([lockstep.CUDA] if lockstep.CUDA in lockstep.get_available_providers() else [])


def write_optimized(model, path, level=lockstep.GraphOptimizationLevel.ORT_ENABLE_ALL, provider=lockstep.CPU):
    options = lockstep.SessionOptions()
    options.graph_optimization_level = level
    options.optimized_model_filepath = str(path)
    return lockstep.InferenceSession(model, options, providers=[provider])


def folding_model():
    """y = If(cond, then: x * (c1 + c2) via Constant nodes folded away, else: Cast(x) to int32 then back); z = a
    string-valued attribute round trip (Cast's `to`, Concat's axis, an If's subgraphs)."""
    f = TensorProto.FLOAT
    then_graph = helper.make_graph([helper.make_node("Neg", ["x"], ["t"])], "then", [],
                                   [helper.make_tensor_value_info("t", f, ["N", 4])])
    else_graph = helper.make_graph([helper.make_node("Cast", ["x"], ["e_i"], to=TensorProto.INT32),
                                    helper.make_node("Cast", ["e_i"], ["e"], to=TensorProto.FLOAT)], "else", [],
                                   [helper.make_tensor_value_info("e", f, ["N", 4])])
    nodes = [
        helper.make_node("Constant", [], ["c1"], value=numpy_helper.from_array(np.full(4, 1.5, np.float32))),
        helper.make_node("Constant", [], ["c2"], value_floats=[0.25, -2.0, 3.0, 1e-30]),
        helper.make_node("Add", ["c1", "c2"], ["c"], name="folded_add"),
        helper.make_node("Mul", ["x", "c"], ["m"]),
        helper.make_node("ReduceSum", ["m"], ["r"], keepdims=1, axes=[1]),
        helper.make_node("Greater", ["r0", "zero"], ["cond"]),
        helper.make_node("If", ["cond"], ["y"], then_branch=then_graph, else_branch=else_graph),
        helper.make_node("Concat", ["m", "y"], ["z"], axis=1, name="joined"),
    ]
    graph = helper.make_graph(
        nodes, "folding", [helper.make_tensor_value_info("x", f, ["N", 4]),
                           helper.make_tensor_value_info("r0", f, [])],
        [helper.make_tensor_value_info("z", f, ["N", 8]), helper.make_tensor_value_info("r", f, ["N", 1])],
        initializer=[numpy_helper.from_array(np.float32(0), "zero")], doc_string="a graph doc")
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 11)], producer_name="tests",
                              doc_string="a model doc")
    model.ir_version = 6
    helper.set_model_props(model, {"k": "v"})
    return model.SerializeToString()


def folding_feeds():
    x = np.random.default_rng(3).standard_normal((3, 4)).astype(np.float32) * 5
    x[0, 0] = -0.0  # no NaN: its Cast to int32 is one of the documented differences from onnxruntime
    return [{"x": x, "r0": np.array(r, np.float32)} for r in (1.0, -1.0)]


@pytest.mark.parametrize("provider", PROVIDERS)
def test_the_written_fused_model_loads_back_and_gives_the_same_bytes(provider, tmp_path):
    path = tmp_path / "opt.onnx"
    original = write_optimized(silu_patterns(), path, provider=provider)
    written = onnx.load(str(path))
    onnx.checker.check_model(written)  # lockstep's domain is a custom domain: the checker accepts its nodes
    fused = [n for n in written.graph.node if n.domain == "lockstep"]
    assert [n.op_type for n in fused] == ["Silu", "Silu"]
    assert {(o.domain, o.version) for o in written.opset_import} == {("", 17), ("lockstep", 1)}
    assert {p.key: p.value for p in written.metadata_props} == {"lockstep.fused_graph": "1"}
    reloaded = lockstep.InferenceSession(str(path), providers=[provider])
    for a, b in zip(original.run(None, feed()), reloaded.run(None, feed())):
        assert same_bits(a, b)
    cpu = lockstep.InferenceSession(str(path), providers=[lockstep.CPU])
    for a, b in zip(original.run(None, feed()), cpu.run(None, feed())):
        assert same_bits(a, b)


def test_a_written_gelu_epilogue_loads_back_and_a_broken_one_is_refused(tmp_path):
    """The erf GELU chain absorbed into a FusedMatMul's epilogue keeps its constants in the written model, which
    loads back with the same bytes; the same node short of a constant is an InvalidGraph error naming the
    activation."""
    path = tmp_path / "opt.onnx"
    x = np.random.default_rng(6).standard_normal((5, 8)).astype(np.float32)
    original = write_optimized(gelu_chain(True), path)
    written = onnx.load(str(path))
    (node,) = written.graph.node
    constants = [a for a in node.attribute if a.name == "activation_constants"][0]
    assert node.op_type == "FusedMatMul" and list(constants.floats) == [np.float32(1.4142135), 1.0, 0.5]
    assert same_bits(original.run(None, {"x": x})[0],
                     lockstep.InferenceSession(str(path), providers=[lockstep.CPU]).run(None, {"x": x})[0])
    del constants.floats[2]
    onnx.save(written, str(tmp_path / "short.onnx"))
    with pytest.raises(lockstep.InvalidGraph, match="GeluErfChain needs a FusedMatMul with 3 activation_constants"):
        lockstep.InferenceSession(str(tmp_path / "short.onnx"), providers=[lockstep.CPU]).run(None, {"x": x})


def test_the_written_model_has_the_folded_constants_and_keeps_the_rest(tmp_path):
    path = tmp_path / "folded.onnx"
    original = write_optimized(folding_model(), path)
    written = onnx.load(str(path))
    onnx.checker.check_model(written, full_check=True)
    ops = [n.op_type for n in written.graph.node]
    assert "Constant" not in ops and "Add" not in ops  # folded into an initializer
    assert ops == ["Mul", "ReduceSum", "Greater", "If", "Concat"]
    assert written.doc_string == "a model doc" and written.graph.doc_string == "a graph doc"
    assert written.producer_name == "tests" and {p.key: p.value for p in written.metadata_props} == {"k": "v"}
    if_node = written.graph.node[3]
    assert [a.name for a in if_node.attribute] == ["else_branch", "then_branch"]
    assert written.graph.node[4].attribute[0].i == 1
    # No fused node: onnxruntime loads the file too.
    theirs = onnxruntime.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    reloaded = lockstep.InferenceSession(str(path))
    for feeds in folding_feeds():
        ours = original.run(None, feeds)
        for a, b in zip(ours, reloaded.run(None, feeds)):
            assert same_bits(a, b)
        # Only exact ops on this path (Mul, ReduceSum of 4, Neg, Cast, Concat): onnxruntime agrees bit for bit.
        for a, b in zip(ours, theirs.run(None, feeds)):
            assert same_bits(a, b)


def test_level_zero_writes_the_graph_as_given(tmp_path):
    path = tmp_path / "plain.onnx"
    write_optimized(folding_model(), path, level=lockstep.GraphOptimizationLevel.ORT_DISABLE_ALL)
    written = onnx.load(str(path))
    assert [n.op_type for n in written.graph.node][:3] == ["Constant", "Constant", "Add"]
    assert written.graph.node[2].name == "folded_add"


def test_free_dimension_overrides_are_written(tmp_path):
    path = tmp_path / "fixed.onnx"
    options = lockstep.SessionOptions()
    options.add_free_dimension_override_by_name("N", 3)
    options.optimized_model_filepath = str(path)
    lockstep.InferenceSession(folding_model(), options)
    dims = onnx.load(str(path)).graph.input[0].type.tensor_type.shape.dim
    assert [d.dim_value for d in dims] == [3, 4]


def test_a_model_that_only_claims_the_mark_keeps_its_own_fused_nodes_refused(tmp_path):
    graph = helper.make_graph([helper.make_node("Silu", ["x"], ["y"], domain="lockstep", name="mine")], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    helper.set_model_props(model, {"lockstep.fused_graph": "1"})  # the mark, but no import of the domain
    with pytest.raises(lockstep.NotImplemented, match="Node 'mine' \\(Silu\\): ops of domain 'lockstep'"):
        lockstep.InferenceSession(model.SerializeToString())


def test_an_unwritable_path_is_a_clear_error(tmp_path):
    target = tmp_path / "missing_dir" / "opt.onnx"
    with pytest.raises(lockstep.NoSuchFile, match="missing_dir/opt.onnx"):
        write_optimized(silu_patterns(), target)


def test_a_sparse_constant_is_written_as_the_dense_value_it_holds(tmp_path):
    from test_api_sparse import sparse_model

    path = tmp_path / "sparse.onnx"
    original = write_optimized(sparse_model(), path, level=lockstep.GraphOptimizationLevel.ORT_DISABLE_ALL)
    written = onnx.load(str(path))
    onnx.checker.check_model(written)
    assert [a.name for a in written.graph.node[0].attribute] == ["value"]
    assert not written.graph.sparse_initializer and len(written.graph.initializer) == 1  # densified at load
    x = {"x": np.arange(12, dtype=np.float32).reshape(3, 4)}
    assert same_bits(original.run(None, x)[0], lockstep.InferenceSession(str(path)).run(None, x)[0])



EXTERNAL_FILE = "session.optimized_model_external_initializers_file_name"
EXTERNAL_MIN_SIZE = "session.optimized_model_external_initializers_min_size_in_bytes"


def weights_model():
    """y = x * W + B and, in an If branch, z = x * V: W and V take 2048 bytes, B 16; S is 300 strings."""
    f = TensorProto.FLOAT
    rng = np.random.default_rng(5)
    w, v = (rng.standard_normal(512).astype(np.float32) for _ in range(2))
    b = np.float32([0.5, -1, 2, 3])
    then_graph = helper.make_graph([helper.make_node("Mul", ["x", "V"], ["t"])], "then", [],
                                   [helper.make_tensor_value_info("t", f, ["N", 512])],
                                   initializer=[numpy_helper.from_array(v, "V")])
    else_graph = helper.make_graph([helper.make_node("Neg", ["x"], ["e"])], "else", [],
                                   [helper.make_tensor_value_info("e", f, ["N", 512])])
    nodes = [helper.make_node("Mul", ["x", "W"], ["m"]), helper.make_node("Add", ["m", "B"], ["y"]),
             helper.make_node("If", ["c"], ["z"], then_branch=then_graph, else_branch=else_graph),
             helper.make_node("Identity", ["S"], ["s"])]
    initializers = [numpy_helper.from_array(w, "W"), numpy_helper.from_array(np.tile(b, 128), "B"),
                    numpy_helper.from_array(b, "small"),
                    numpy_helper.from_array(np.array(["lockstep"] * 300, dtype=object), "S")]
    nodes.append(helper.make_node("Add", ["c_f", "small"], ["q"]))
    graph = helper.make_graph(
        nodes, "weights",
        [helper.make_tensor_value_info("x", f, ["N", 512]), helper.make_tensor_value_info("c", TensorProto.BOOL, []),
         helper.make_tensor_value_info("c_f", f, [4])],
        [helper.make_tensor_value_info(n, f, ["N", 512]) for n in ("y", "z")]
        + [helper.make_tensor_value_info("s", TensorProto.STRING, [300]), helper.make_tensor_value_info("q", f, [4])],
        initializer=initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 9
    return model.SerializeToString()


def weights_feeds():
    x = np.random.default_rng(6).standard_normal((2, 512)).astype(np.float32)
    return [{"x": x, "c": np.array(flag), "c_f": np.float32([1, 2, 3, 4])} for flag in (True, False)]


def write_with_external(path, min_size=None, level=lockstep.GraphOptimizationLevel.ORT_DISABLE_ALL,
                        file_name="weights.bin"):
    options = lockstep.SessionOptions()
    options.graph_optimization_level = level
    options.optimized_model_filepath = str(path)
    options.add_session_config_entry(EXTERNAL_FILE, file_name)
    if min_size is not None:
        options.add_session_config_entry(EXTERNAL_MIN_SIZE, min_size)
    return lockstep.InferenceSession(weights_model(), options)


def initializers_of(model):
    """Every initializer of the model's graphs (the If's branches included), by name."""
    graphs = [model.graph] + [a.g for n in model.graph.node for a in n.attribute if a.type == onnx.AttributeProto.GRAPH]
    return {t.name: t for g in graphs for t in g.initializer}


def external_names(path):
    tensors = initializers_of(onnx.load(str(path), load_external_data=False))
    return {name for name, t in tensors.items() if t.data_location == TensorProto.EXTERNAL}


def assert_same_outputs(a, b):
    for feeds in weights_feeds():
        for x, y in zip(a.run(None, feeds), b.run(None, feeds)):
            assert x.dtype == y.dtype and x.shape == y.shape
            # An object array's bytes are pointers: its strings are compared instead.
            assert x.tolist() == y.tolist() if x.dtype == object else x.tobytes() == y.tobytes()


@pytest.mark.parametrize("level", [lockstep.GraphOptimizationLevel.ORT_DISABLE_ALL,
                                   lockstep.GraphOptimizationLevel.ORT_ENABLE_ALL])
def test_large_initializers_go_to_the_external_file_and_the_model_loads_back(tmp_path, level):
    path = tmp_path / "opt.onnx"
    original = write_with_external(path, level=level)
    onnx.checker.check_model(str(path))  # from the path, so that it checks the external data's locations too
    assert external_names(path) == {"W", "B", "V"}  # 2048 bytes each; "small" (16) and the strings stay inline
    stored = initializers_of(onnx.load(str(path), load_external_data=False))
    assert {e.key: e.value for e in stored["W"].external_data}["location"] == "weights.bin"
    assert stored["S"].data_location == TensorProto.DEFAULT
    assert (tmp_path / "weights.bin").stat().st_size == 3 * 2048
    loaded = initializers_of(onnx.load(str(path)))  # onnx reads the external file back
    expected = initializers_of(onnx.load_from_string(weights_model()))
    for name in ("W", "B", "V"):
        assert numpy_helper.to_array(loaded[name]).tobytes() == numpy_helper.to_array(expected[name]).tobytes()
    assert_same_outputs(original, lockstep.InferenceSession(str(path)))


def test_the_written_model_with_external_data_runs_on_onnxruntime_with_the_same_bytes(tmp_path):
    path = tmp_path / "opt.onnx"
    write_with_external(path)
    # Only exact ops (Mul, Add, Neg, Identity): onnxruntime agrees bit for bit.
    theirs = onnxruntime.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    assert_same_outputs(lockstep.InferenceSession(weights_model()), theirs)


def test_the_min_size_entry_moves_small_initializers_too_but_never_strings(tmp_path):
    path = tmp_path / "opt.onnx"
    original = write_with_external(path, min_size="0")
    assert external_names(path) == {"W", "B", "V", "small"}
    assert_same_outputs(original, lockstep.InferenceSession(str(path)))
    write_with_external(path, min_size="4096")
    assert external_names(path) == set()


def test_the_external_file_entry_without_an_optimized_model_path_writes_nothing(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    options = lockstep.SessionOptions()
    options.add_session_config_entry(EXTERNAL_FILE, "weights.bin")
    lockstep.InferenceSession(weights_model(), options)
    assert list(tmp_path.iterdir()) == []


def test_an_absolute_external_file_name_or_a_bad_min_size_is_a_clear_error(tmp_path):
    with pytest.raises(lockstep.InvalidArgument, match="external initializers file '/.*' must be a path relative"):
        write_with_external(tmp_path / "opt.onnx", file_name=str(tmp_path / "weights.bin"))
    with pytest.raises(ValueError, match=f"'{EXTERNAL_MIN_SIZE}' = 'big' is not supported"):
        write_with_external(tmp_path / "opt.onnx", min_size="big")


def test_rewriting_the_loaded_model_and_its_mapped_external_file_keeps_the_data(tmp_path):
    # 1 MiB: the reader maps such a tensor from the file the second session then writes again.
    w = np.random.default_rng(7).standard_normal(1 << 18).astype(np.float32)
    graph = helper.make_graph([helper.make_node("Mul", ["x", "W"], ["y"])], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1 << 18])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 1 << 18])],
                              initializer=[numpy_helper.from_array(w, "W")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 9

    def write_from(source):
        options = lockstep.SessionOptions()
        options.optimized_model_filepath = str(tmp_path / "opt.onnx")
        options.add_session_config_entry(EXTERNAL_FILE, "weights.bin")
        return lockstep.InferenceSession(source, options)

    x = {"x": np.ones((1, 1 << 18), np.float32)}
    first = write_from(model.SerializeToString()).run(None, x)[0]
    again = write_from(str(tmp_path / "opt.onnx"))  # reads opt.onnx and weights.bin, then writes both again
    assert again.run(None, x)[0].tobytes() == first.tobytes() == w.tobytes()
    assert lockstep.InferenceSession(str(tmp_path / "opt.onnx")).run(None, x)[0].tobytes() == w.tobytes()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["opt.onnx", "weights.bin"]  # no temporary left
