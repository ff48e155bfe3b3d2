# Verbatim from onnxruntime issue 21220 (../shared/seed/onnxruntime-issue-21220.txt).
import numpy as np
import onnx
from onnx import helper, numpy_helper

# Define convolution parameters
input_name = "input"  # Assuming the input tensor name
output_name = "output"  # Assuming the output tensor name
input_shape = (
    1,
    256,
    14,
    14,
)  # Example input shape: (batch_size, channels, height, width)

# Convolution node attributes
conv_attributes = {
    "dilations": [1, 1],
    "group": 1,
    "kernel_shape": [3, 3],
    "pads": [1, 1, 1, 1],
    "strides": [1, 1],
}

# Create the input tensor
input_tensor = helper.make_tensor_value_info(
    input_name, onnx.TensorProto.FLOAT, input_shape
)

# Create the convolution output tensor
output_tensor = helper.make_tensor_value_info(
    output_name, onnx.TensorProto.FLOAT, input_shape
)

# Create Conv node
conv_node = helper.make_node(
    "Conv",
    inputs=[input_name, "weight", "bias"],
    outputs=[output_name],
    **conv_attributes,
)

# Initializer for weights
weight_shape = (
    256,
    256,
    3,
    3,
)
weight_data = np.ones(weight_shape).astype(np.float32) * (0.1)
weight_initializer = numpy_helper.from_array(weight_data, name="weight")

# Initializer for bias
bias_shape = 256
bias_data = np.ones(bias_shape).astype(np.float32) * (0.05)
bias_initializer = numpy_helper.from_array(bias_data, name="bias")

# Create the graph with the Conv node and initializers
graph_def = helper.make_graph(
    nodes=[conv_node],
    name="convolution_model",
    inputs=[input_tensor],
    outputs=[output_tensor],
    initializer=[weight_initializer, bias_initializer],
)

# Create the ONNX model
model_def = helper.make_model(graph_def, opset_imports=[helper.make_opsetid("", 11)])

# Save the model
onnx.save(model_def, "conv_model.onnx")
