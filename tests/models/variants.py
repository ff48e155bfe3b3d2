"""Variants of the fixture models that users bring: float16 weights and activations, and QDQ quantization by
onnxruntime's own tool. Each function takes and returns an onnx.ModelProto."""

import numpy as np
import onnx
from onnx import TensorProto, numpy_helper


def to_float16(model):
    """Every float32 initializer, Constant, graph input, output and value_info as float16 (what users get from
    onnxconverter-common's float16 conversion with keep_io_types off)."""
    m = onnx.ModelProto()
    m.CopyFrom(model)
    g = m.graph
    for i, t in enumerate(g.initializer):
        if t.data_type == TensorProto.FLOAT:
            g.initializer[i].CopyFrom(numpy_helper.from_array(numpy_helper.to_array(t).astype(np.float16), t.name))
    for node in g.node:
        for a in node.attribute:
            if a.name == "value" and a.t.data_type == TensorProto.FLOAT:
                a.t.CopyFrom(numpy_helper.from_array(numpy_helper.to_array(a.t).astype(np.float16), a.t.name))
            if node.op_type == "Cast" and a.name == "to" and a.i == TensorProto.FLOAT:
                a.i = TensorProto.FLOAT16
    for v in list(g.input) + list(g.output) + list(g.value_info):
        if v.type.tensor_type.elem_type == TensorProto.FLOAT:
            v.type.tensor_type.elem_type = TensorProto.FLOAT16
    return m


def to_qdq(model, feeds, per_channel=True):
    """The model quantized by onnxruntime.quantization.quantize_static in the QDQ format (int8 weights per channel,
    uint8 activations, MinMax calibration on `feeds`), as its documentation shows."""
    import os
    import tempfile

    from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static

    class Reader(CalibrationDataReader):
        def __init__(self):
            self.items = iter([feeds])

        def get_next(self):
            return next(self.items, None)

    with tempfile.TemporaryDirectory() as d:
        src, dst = os.path.join(d, "model.onnx"), os.path.join(d, "model.qdq.onnx")
        onnx.save(model, src)
        quantize_static(src, dst, Reader(), quant_format=QuantFormat.QDQ, per_channel=per_channel,
                        activation_type=QuantType.QUInt8, weight_type=QuantType.QInt8)
        return onnx.load(dst)
