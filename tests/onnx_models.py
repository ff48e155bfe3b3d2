"""Builds one-node ONNX models for op cases."""

import numpy as np
from onnx import helper, numpy_helper


def _value_info(name, array):
    dtype = helper.np_dtype_to_tensor_dtype(array.dtype)
    return helper.make_tensor_value_info(name, dtype, list(array.shape))


def single_node_model(c):
    """The model of a Case: feeds become graph inputs, `const` names become initializers."""
    node_inputs, graph_inputs, inits = [], [], []
    for name, value in c.inputs.items():
        if value is None:
            node_inputs.append("")
            continue
        node_inputs.append(name)
        if name in c.const:
            inits.append(numpy_helper.from_array(np.asarray(value), name=name))
        else:
            graph_inputs.append(_value_info(name, np.asarray(value)))
    attrs = {k: numpy_helper.from_array(v) if isinstance(v, np.ndarray) else v for k, v in c.attrs.items()}
    node = helper.make_node(c.op_type, node_inputs, c.output_names, **attrs)
    outputs = [helper.make_empty_tensor_value_info(n) for n in c.output_names if n]
    graph = helper.make_graph([node], c.name, graph_inputs, outputs, initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", c.opset)])
    model.ir_version = min(model.ir_version, 10)
    return model.SerializeToString()


def feeds_of(c):
    return {k: np.asarray(v) for k, v in c.inputs.items() if v is not None and k not in c.const}
