"""Writes the fuzzers' seed corpus into the folder given: small valid models of the kinds lockstep runs, and broken
variants of each kind the loader must refuse cleanly (wrong wire types, truncation, lengths past the end, deep
nesting, huge or negative dims, element counts that overflow 64 bits, cycles, duplicate names, missing initializers,
subgraph scoping errors). The corpus is generated, not stored: libFuzzer grows it in the build folder.
    python tests/fuzz/make_corpus.py OUT_DIR
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

F = TensorProto.FLOAT


def model(nodes, inputs, outputs, inits=(), opset=17, **graph_kw):
    graph = helper.make_graph(nodes, "g", inputs, outputs, list(inits), **graph_kw)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=8)


def vi(name, dims, dtype=F):
    return helper.make_tensor_value_info(name, dtype, dims)


def init(name, shape, seed=0):
    return numpy_helper.from_array(np.random.default_rng(seed).standard_normal(shape).astype(np.float32), name)


def valid_models():
    conv = model([helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1]),
                  helper.make_node("Relu", ["c"], ["r"]),
                  helper.make_node("MaxPool", ["r"], ["p"], kernel_shape=[2, 2], strides=[2, 2]),
                  helper.make_node("GlobalAveragePool", ["p"], ["y"])],
                 [vi("x", [1, 3, 8, 8])], [vi("y", [1, 4, 1, 1])], [init("w", (4, 3, 3, 3)), init("b", (4,), 1)])
    mlp = model([helper.make_node("MatMul", ["x", "w"], ["h"]), helper.make_node("Add", ["h", "b"], ["a"]),
                 helper.make_node("Softmax", ["a"], ["y"], axis=-1)],
                [vi("x", ["N", 8])], [vi("y", ["N", 4])], [init("w", (8, 4)), init("b", (4,), 2)])
    shape_ops = model([helper.make_node("Shape", ["x"], ["s"]),
                       helper.make_node("Reshape", ["x", "s"], ["r"]),
                       helper.make_node("Transpose", ["r"], ["t"], perm=[1, 0]),
                       helper.make_node("Concat", ["t", "t"], ["y"], axis=0)],
                      [vi("x", [2, 3])], [vi("y", [6, 2])])
    then_g = helper.make_graph([helper.make_node("Add", ["x", "x"], ["o"])], "then", [], [vi("o", [2])])
    else_g = helper.make_graph([helper.make_node("Neg", ["x"], ["o"])], "else", [], [vi("o", [2])])
    branch = model([helper.make_node("If", ["c"], ["y"], then_branch=then_g, else_branch=else_g)],
                   [vi("c", [], TensorProto.BOOL), vi("x", [2])], [vi("y", [2])])
    gather = model([helper.make_node("Gather", ["table", "i"], ["y"], axis=0)],
                   [vi("i", [3], TensorProto.INT64)], [vi("y", [3, 4])], [init("table", (10, 4))])
    return {"conv": conv, "mlp": mlp, "shape_ops": shape_ops, "if": branch, "gather": gather}


def broken_models():
    out = {}
    out["cycle"] = model([helper.make_node("Relu", ["b"], ["a"]), helper.make_node("Relu", ["a"], ["b"])],
                         [vi("x", [2])], [vi("b", [2])])
    out["duplicate_output"] = model([helper.make_node("Relu", ["x"], ["y"]), helper.make_node("Neg", ["x"], ["y"])],
                                    [vi("x", [2])], [vi("y", [2])])
    out["missing_initializer"] = model([helper.make_node("Add", ["x", "nowhere"], ["y"])], [vi("x", [2])],
                                       [vi("y", [2])])
    out["negative_dim"] = model([helper.make_node("Relu", ["x"], ["y"])], [vi("x", [-5, 2])], [vi("y", [2])])
    huge = TensorProto(name="w", data_type=F, dims=[2**40, 2**40])
    out["overflowing_initializer"] = model([helper.make_node("Add", ["x", "w"], ["y"])], [vi("x", [2])],
                                           [vi("y", [2])], [huge])
    out["short_raw_data"] = model([helper.make_node("Add", ["x", "w"], ["y"])], [vi("x", [4])], [vi("y", [4])],
                                  [TensorProto(name="w", data_type=F, dims=[4], raw_data=b"\0" * 7)])
    inner = helper.make_graph([helper.make_node("Add", ["x", "not_in_scope"], ["o"])], "then", [], [vi("o", [2])])
    out["subgraph_scope"] = model([helper.make_node("If", ["c"], ["y"], then_branch=inner, else_branch=inner)],
                                  [vi("c", [], TensorProto.BOOL), vi("x", [2])], [vi("y", [2])])
    out["unknown_op"] = model([helper.make_node("NoSuchOp", ["x"], ["y"])], [vi("x", [2])], [vi("y", [2])])
    out["bad_attribute"] = model([helper.make_node("Transpose", ["x"], ["y"], perm=[0, 0])], [vi("x", [2, 3])],
                                 [vi("y", [3, 2])])
    out["future_opset"] = model([helper.make_node("Relu", ["x"], ["y"])], [vi("x", [2])], [vi("y", [2])], opset=99)
    return out


def byte_variants(name, data):
    """Damaged encodings of one valid model."""
    yield f"{name}_truncated_half", data[: len(data) // 2]
    yield f"{name}_truncated_last", data[:-1]
    flipped = bytearray(data)
    flipped[0] ^= 0x07  # the first tag's wire type
    yield f"{name}_wire_type", bytes(flipped)
    yield f"{name}_length_past_end", data + b"\x3a\xe8\x07abc"  # a graph field claiming 1000 bytes, 3 present


def deep_nesting(depth=3000):
    """graph -> node -> attribute g -> graph -> ...: far deeper than any real model (ModelProto field 7 is the graph,
    GraphProto 1 a node, NodeProto 5 an attribute, AttributeProto 6 its graph)."""
    graph = b""
    for _ in range(depth):
        attribute = _field(6, graph)
        node = _field(5, attribute)
        graph = _field(1, node)
    return _field(7, graph)


def _field(number, payload):
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def _varint(v):
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        out.append(b | (0x80 if v else 0))
        if not v:
            return bytes(out)


def main(folder):
    os.makedirs(folder, exist_ok=True)
    files = {}
    for name, m in {**valid_models(), **broken_models()}.items():
        files[name] = m.SerializeToString()
    for name in list(valid_models()):
        files.update(byte_variants(name, files[name]))
    files["deep_nesting"] = deep_nesting()
    files["empty"] = b""
    for name, data in files.items():
        with open(os.path.join(folder, name + ".onnx"), "wb") as f:
            f.write(data)
    print(f"wrote {len(files)} seed inputs to {folder}")


if __name__ == "__main__":
    main(sys.argv[1])
