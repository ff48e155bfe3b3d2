"""Writes the small models onnxruntime's Python API tests load (onnxruntime/test/testdata), rebuilt with onnx.helper
from what the tests assert about them (names, types, shapes, values), because this machine has no copy of
onnxruntime's test data. Models the tests need but that are not rebuilt here (mnist.onnx, the external-data models,
CUDA-only ones) are left out: the tests that load them fail on both runtimes and so do not count. The LoRA adapter
is written by onnxruntime's own AdapterFormat, so lockstep reads a file in onnxruntime's format.

    python3 scripts/ort_api/testdata.py DIR
"""

import json
import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper, save

F, I64, B, S = TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL, TensorProto.STRING


def tensor(name, elem, dims):
    return helper.make_tensor_value_info(name, elem, dims)


def model(nodes, inputs, outputs, initializers=(), opset=13, ir=7, metadata=None):
    graph = helper.make_graph(nodes, "test", inputs, outputs, initializer=list(initializers))
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = ir
    if metadata:
        helper.set_model_props(m, metadata)
    return m


def sequence_info(name, elem):
    return helper.make_value_info(name, helper.make_sequence_type_proto(helper.make_tensor_type_proto(elem, None)))


def models():
    w = numpy_helper.from_array(np.array([[1, 2], [3, 4], [5, 6]], np.float32), "W")
    yield "mul_1.onnx", model([helper.make_node("Mul", ["X", "W"], ["Y"])], [tensor("X", F, [3, 2])],
                              [tensor("Y", F, [3, 2])], [w], opset=7, ir=3)
    w21 = numpy_helper.from_array(np.array([[1], [2]], np.float32), "W")
    yield "matmul_1.onnx", model([helper.make_node("MatMul", ["X", "W"], ["Y"])], [tensor("X", F, [3, 2])],
                                 [tensor("Y", F, [3, 1])], [w21])
    yield "matmul_2.onnx", model([helper.make_node("MatMul", ["X", "W"], ["Y"])], [tensor("X", F, ["None", 2])],
                                 [tensor("Y", F, ["None", 1])], [w21])
    yield "logicaland.onnx", model([helper.make_node("And", ["input1:0", "input:0"], ["output:0"])],
                                   [tensor("input1:0", B, [2, 2]), tensor("input:0", B, [2, 2])],
                                   [tensor("output:0", B, [2, 2])])
    yield "identity_string.onnx", model([helper.make_node("Identity", ["input:0"], ["output:0"])],
                                        [tensor("input:0", S, [2, 2])], [tensor("output:0", S, [2, 2])])
    optional = helper.make_optional_type_proto(helper.make_sequence_type_proto(helper.make_tensor_type_proto(F, [5])))
    yield "identity_opt.onnx", model([helper.make_node("Identity", ["x"], ["y"])],
                                     [helper.make_value_info("x", optional)], [helper.make_value_info("y", optional)],
                                     opset=16, ir=8)
    yield "sequence_length.onnx", model([helper.make_node("SequenceLength", ["X"], ["Y"])], [sequence_info("X", F)],
                                        [tensor("Y", I64, [])], opset=11, ir=6)
    yield "sequence_construct.onnx", model(
        [helper.make_node("SequenceConstruct", ["tensor1", "tensor2"], ["output_sequence"])],
        [tensor("tensor1", I64, [2, 3]), tensor("tensor2", I64, [2, 3])], [sequence_info("output_sequence", I64)],
        opset=11, ir=6)
    yield "sequence_insert.onnx", model(
        [helper.make_node("SequenceInsert", ["input_seq", "tensor"], ["output_sequence"])],
        [sequence_info("input_seq", I64), tensor("tensor", I64, [2, 3])], [sequence_info("output_sequence", I64)],
        opset=11, ir=6)
    x = tensor("x", F, ["Dim1", "Dim2", 5])
    x.type.tensor_type.shape.dim[0].denotation = "DATA_BATCH"
    x.type.tensor_type.shape.dim[1].denotation = "DATA_CHANNEL"
    yield "abs_free_dimensions.onnx", model([helper.make_node("Abs", ["x"], ["y"])], [x],
                                            [tensor("y", F, ["Dim1", "Dim2", 5])])
    config = {"session_options": {"inter_op_num_threads": 5, "intra_op_num_threads": 2,
                                  "graph_optimization_level": 99, "enable_profiling": 1}}
    yield "model_with_valid_ort_config_json.onnx", model(
        [helper.make_node("Identity", ["X"], ["Y"])], [tensor("X", F, [2])], [tensor("Y", F, [2])],
        metadata={"ort_config": json.dumps(config)})
    pads = TensorProto(name="Pads_not_on_disk", data_type=I64, dims=[4], data_location=TensorProto.EXTERNAL)
    pads.external_data.add(key="location", value="Pads_not_on_disk.bin")
    yield "model_with_external_initializer_come_from_user.onnx", model(
        [helper.make_node("Pad", ["X", "Pads_not_on_disk"], ["Y"])], [tensor("X", F, [1, 2])],
        [tensor("Y", F, [1, 4])], [pads])
    yield "add_mul_add.onnx", model(
        [helper.make_node("Add", ["A", "B"], ["t0"], name="add_0"), helper.make_node("Mul", ["t0", "B"], ["t1"],
                                                                                    name="mul_0"),
         helper.make_node("Add", ["t1", "A"], ["C"], name="add_1")],
        [tensor("A", F, [3]), tensor("B", F, [3])], [tensor("C", F, [3])])


def lora_model():
    """lora/two_params_lora_model.onnx: Y = X W + (X A) B, where the LoRA parameters A [4, dim] and B [dim, 4] are
    inputs whose initializers are empty (dim 0), so that the base model adds zeros."""
    w = numpy_helper.from_array(np.arange(1, 17, dtype=np.float32).reshape(4, 4), "weight_x")
    a = numpy_helper.from_array(np.zeros((4, 0), np.float32), "lora_param_a")
    b = numpy_helper.from_array(np.zeros((0, 4), np.float32), "lora_param_b")
    nodes = [helper.make_node("MatMul", ["input_x", "weight_x"], ["base"]),
             helper.make_node("MatMul", ["input_x", "lora_param_a"], ["down"]),
             helper.make_node("MatMul", ["down", "lora_param_b"], ["up"]),
             helper.make_node("Add", ["base", "up"], ["output"])]
    inputs = [tensor("input_x", F, [4, 4]), tensor("lora_param_a", F, [4, "dim"]), tensor("lora_param_b", F, ["dim", 4])]
    return model(nodes, inputs, [tensor("output", F, [4, 4])], [w, a, b], opset=21, ir=10)


def write_lora_adapter(path):
    """lora/two_params_lora_model.onnx_adapter, written by onnxruntime's own AdapterFormat: A = [3,4,5,6]^T, B =
    [7,8,9,10]."""
    import onnxruntime

    adapter = onnxruntime.AdapterFormat()
    adapter.set_adapter_version(1)
    adapter.set_model_version(1)
    adapter.set_parameters({
        "lora_param_a": onnxruntime.OrtValue.ortvalue_from_numpy(np.array([[3], [4], [5], [6]], np.float32)),
        "lora_param_b": onnxruntime.OrtValue.ortvalue_from_numpy(np.array([[7, 8, 9, 10]], np.float32))})
    adapter.export_adapter(path)


def main(directory):
    os.makedirs(os.path.join(directory, "lora"), exist_ok=True)
    for name, m in models():
        save(m, os.path.join(directory, name))
    save(lora_model(), os.path.join(directory, "lora", "two_params_lora_model.onnx"))
    write_lora_adapter(os.path.join(directory, "lora", "two_params_lora_model.onnx_adapter"))


if __name__ == "__main__":
    main(sys.argv[1])
