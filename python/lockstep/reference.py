"""The float64 reference provider (ReferenceExecutionProvider): a yardstick for accuracy, not a runtime.

The model is rewritten so that every float32 tensor becomes float64 (inputs, outputs, initializers, Constant and
ConstantOfShape values, Cast/EyeLike targets, LayerNormalization's stash type, subgraphs and functions), then run by
onnx's ReferenceEvaluator (numpy). float32 inputs widen exactly, every op computes in double, and each float32
graph output is rounded once, at the end. It is slow and needs the `onnx` package.
"""

import numpy as np

NAME = "ReferenceExecutionProvider"

_FLOAT, _DOUBLE = 1, 11  # onnx.TensorProto.FLOAT, DOUBLE
# Ops whose integer attribute names the element type they produce or compute in.
_TYPE_ATTRIBUTES = {("Cast", "to"), ("EyeLike", "dtype"), ("LayerNormalization", "stash_type"),
                    ("RandomNormal", "dtype"), ("RandomUniform", "dtype"),
                    ("RandomNormalLike", "dtype"), ("RandomUniformLike", "dtype"),
                    ("HannWindow", "output_datatype"), ("HammingWindow", "output_datatype"),
                    ("BlackmanWindow", "output_datatype"), ("MelWeightMatrix", "output_datatype")}
# Ops whose type attribute defaults to float when absent: the widened node states double.
_FLOAT_BY_DEFAULT = {("HannWindow", "output_datatype"), ("HammingWindow", "output_datatype"),
                     ("BlackmanWindow", "output_datatype"), ("MelWeightMatrix", "output_datatype")}


def _onnx():
    try:
        import onnx
    except ImportError:
        raise ImportError("the reference provider needs the onnx package (pip install onnx)") from None
    return onnx


def _widen_tensor(tensor):
    _onnx()
    from onnx import numpy_helper

    if tensor.data_type != _FLOAT:
        return tensor
    widened = numpy_helper.from_array(numpy_helper.to_array(tensor).astype(np.float64), tensor.name)
    tensor.CopyFrom(widened)
    return tensor


def _widen_type(type_proto):
    kind = type_proto.WhichOneof("value")
    if kind == "tensor_type" and type_proto.tensor_type.elem_type == _FLOAT:
        type_proto.tensor_type.elem_type = _DOUBLE
    elif kind == "sequence_type":
        _widen_type(type_proto.sequence_type.elem_type)
    elif kind == "optional_type":
        _widen_type(type_proto.optional_type.elem_type)


def _widen_constant(node):
    """Constant's value_float(s) become a double tensor; ConstantOfShape's default (float32 zero) an explicit one."""
    _onnx()
    from onnx import helper, numpy_helper

    if node.op_type == "ConstantOfShape" and not any(a.name == "value" for a in node.attribute):
        node.attribute.append(helper.make_attribute("value", numpy_helper.from_array(np.zeros(1, np.float64))))
    if node.op_type != "Constant":
        return
    for i, attr in enumerate(node.attribute):
        if attr.name in ("value_float", "value_floats"):
            values = np.array(attr.f if attr.name == "value_float" else list(attr.floats), np.float32)
            tensor = numpy_helper.from_array(values.reshape(() if attr.name == "value_float" else -1)
                                             .astype(np.float64))
            node.attribute[i].CopyFrom(helper.make_attribute("value", tensor))


def _widen_node(node):
    onnx = _onnx()
    _widen_constant(node)
    for op_type, name in _FLOAT_BY_DEFAULT:
        if node.op_type == op_type and all(a.name != name for a in node.attribute):
            node.attribute.append(onnx.helper.make_attribute(name, _DOUBLE))
    for attr in node.attribute:
        if (node.op_type, attr.name) in _TYPE_ATTRIBUTES and attr.i == _FLOAT:
            attr.i = _DOUBLE
        if attr.type == onnx.AttributeProto.TENSOR:
            _widen_tensor(attr.t)
        for tensor in attr.tensors:
            _widen_tensor(tensor)
        if attr.type == onnx.AttributeProto.GRAPH:
            _widen_graph(attr.g)
        for graph in attr.graphs:
            _widen_graph(graph)


def _widen_graph(graph):
    for value in list(graph.input) + list(graph.output) + list(graph.value_info):
        _widen_type(value.type)
    for tensor in graph.initializer:
        _widen_tensor(tensor)
    for sparse in graph.sparse_initializer:
        _widen_tensor(sparse.values)
    for node in graph.node:
        _widen_node(node)


def widen_model(model):
    """A copy of the ModelProto `model` with every float32 tensor, type and cast target made float64."""
    onnx = _onnx()
    widened = onnx.ModelProto()
    widened.CopyFrom(model)
    _widen_graph(widened.graph)
    for function in widened.functions:
        for node in function.node:
            _widen_node(node)
    return widened


def _replaced_ops():
    """Ops whose onnx reference implementation fails on real models or is missing, done here instead."""
    from onnx.reference.op_run import OpRun

    class GatherElements(OpRun):
        # onnx 1.23's version goes through np.choose, which takes at most 64 choices along the axis.
        def _run(self, data, indices, axis=None):
            axis = 0 if axis is None else axis
            indices = np.where(indices < 0, indices + data.shape[axis], indices)
            return (np.take_along_axis(data, indices, axis=axis),)

    class Scatter(OpRun):
        # Opsets 9-10's name for ScatterElements (without reduction), which onnx's evaluator no longer has.
        def _run(self, data, indices, updates, axis=None):
            axis = 0 if axis is None else axis
            indices = np.where(indices < 0, indices + data.shape[axis], indices)
            out = np.array(data, copy=True)
            np.put_along_axis(out, indices, updates, axis=axis)
            return (out,)

    from onnx.reference.ops.op_bitcast import BitCast as _BitCast
    from onnx.reference.ops.op_dynamic_quantize_linear import DynamicQuantizeLinear as _DynamicQuantizeLinear
    from onnx.reference.ops.op_tfidf_vectorizer import TfIdfVectorizer as _TfIdfVectorizer

    # Ops defined on float32 bits or float32 rounding steps: a widened float64 input is the float32 value it
    # widened (exact), so it is narrowed back, and a float32 result widened again for the rest of the graph.
    class BitCast(_BitCast):
        def _run(self, x, to=None):
            if x.dtype == np.float64 and np.dtype(_onnx_np_type(to)).itemsize == 4:
                x = x.astype(np.float32)
            (y,) = super()._run(x, to=to)
            return (y.astype(np.float64) if y.dtype == np.float32 else y,)

    class DynamicQuantizeLinear(_DynamicQuantizeLinear):
        def _run(self, x):
            y, scale, zero_point = super()._run(np.asarray(x, np.float32))
            return y, scale.astype(np.float64), zero_point

    class TfIdfVectorizer(_TfIdfVectorizer):
        # Its output is float32 by definition (exact counts, or counts times float32 weights): widened as it is.
        def _run(self, x, **kwargs):
            (y,) = super()._run(x, **kwargs)
            return (y.astype(np.float64),)

    return [GatherElements, Scatter, BitCast, DynamicQuantizeLinear, TfIdfVectorizer]


def _onnx_np_type(elem_type):
    return _onnx().helper.tensor_dtype_to_np_dtype(elem_type)


def _dims(type_proto):
    shape = type_proto.tensor_type.shape if type_proto.tensor_type.HasField("shape") else None
    if shape is None:
        return None
    return [d.dim_value if d.HasField("dim_value") else (d.dim_param or None) for d in shape.dim]


def _element_type(type_proto):
    """The element type code of the tensor inside a tensor, sequence or optional type."""
    kind = type_proto.WhichOneof("value")
    if kind == "sequence_type":
        return _element_type(type_proto.sequence_type.elem_type)
    if kind == "optional_type":
        return _element_type(type_proto.optional_type.elem_type)
    return type_proto.tensor_type.elem_type


def _each_tensor(value, convert):
    """convert applied to an array, to each array of a sequence (a list), and not at all to None (empty optional)."""
    if value is None:
        return None
    return [convert(v) for v in value] if isinstance(value, list) else convert(value)


class _Arg:
    """A graph input or output as lockstep.NodeArg shows it."""

    def __init__(self, value_info):
        onnx = _onnx()
        elem = _element_type(value_info.type)
        name = onnx.helper.tensor_dtype_to_np_dtype(elem).name if elem else "float"
        self.name = value_info.name
        self.type = "tensor(" + {"float32": "float", "float64": "double", "bool": "bool"}.get(name, name) + ")"
        self.shape = _dims(value_info.type) or []
        self.elem_type = elem


class ReferenceSession:
    """An InferenceSession-like object (get_inputs, get_outputs, run) that computes in float64."""

    def __init__(self, model):
        """model: a path, serialized bytes or a ModelProto."""
        onnx = _onnx()
        from onnx.reference import ReferenceEvaluator

        if isinstance(model, onnx.ModelProto):
            proto = model
        elif isinstance(model, (bytes, bytearray, memoryview)):
            proto = onnx.load_model_from_string(bytes(model))
        else:
            proto = onnx.load(model)
        initializers = {t.name for t in proto.graph.initializer}
        self._inputs = [_Arg(v) for v in proto.graph.input if v.name not in initializers]
        self._outputs = [_Arg(v) for v in proto.graph.output]
        self._evaluator = ReferenceEvaluator(widen_model(proto), new_ops=_replaced_ops())

    def get_inputs(self):
        return list(self._inputs)

    def get_outputs(self):
        return list(self._outputs)

    def get_providers(self):
        return [NAME]

    def _widened_feeds(self, input_feed):
        def widen(value):
            value = np.asarray(value)
            return value.astype(np.float64) if value.dtype == np.float32 else value

        return {name: _each_tensor(value, widen) for name, value in input_feed.items()}

    def run_float64(self, output_names, input_feed, intermediate=False):
        """The unrounded float64 results: a list for output_names (None: every output), or with intermediate=True a
        dict of every tensor the graph computes, by name."""
        feeds = self._widened_feeds(input_feed)
        with np.errstate(all="ignore"):  # overflow to inf and NaN are results here, as in float32 kernels
            if intermediate:
                return self._evaluator.run(None, feeds, intermediate=True)
            return list(self._evaluator.run(list(output_names or [o.name for o in self._outputs]), feeds))

    def run(self, output_names, input_feed, run_options=None):
        """Outputs rounded once to their declared type (float32 outputs from the float64 results)."""
        names = list(output_names or [o.name for o in self._outputs])
        declared = {o.name: o.elem_type for o in self._outputs}
        results = self.run_float64(names, input_feed)
        def rounded(name):
            return lambda v: np.asarray(v).astype(np.float32) if declared.get(name) == _FLOAT else np.asarray(v)

        return [_each_tensor(value, rounded(name)) for name, value in zip(names, results)]
