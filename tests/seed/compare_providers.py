# Verbatim from onnxruntime issue 21220, with only the import line changed to lockstep.
import numpy as np

import lockstep as ort

def assert_almost_equal(dict_or_list1, dict_or_list2, decimal=5, compare_model=""):
    assert len(dict_or_list1) == len(dict_or_list2)
    err_msg = "The consistency check between " + compare_model + " failed!"
    if isinstance(dict_or_list1, dict):
        for name in dict_or_list1.keys():
            np.testing.assert_almost_equal(
                dict_or_list1[name], dict_or_list2[name], decimal, err_msg
            )
    elif isinstance(dict_or_list1, list):
        for i in range(len(dict_or_list1)):
            np.testing.assert_almost_equal(
                dict_or_list1[i], dict_or_list2[i], decimal, err_msg
            )
    else:
        raise ValueError(
            f"unspport parameter type received in assert_almost_equal, dict or list expected but {type(dict_or_list1)} received"
        )

# Load ONNX model
onnx_model_path = "conv_model.onnx"
ort_session = ort.InferenceSession(onnx_model_path)

# Load inference data
inference_data = np.ones((1, 256, 14, 14)).astype(np.float32)

# Perform inference
input_name = ort_session.get_inputs()[0].name
output_name = ort_session.get_outputs()[0].name

ort_session.set_providers(["CUDAExecutionProvider"])
cuda_result = ort_session.run([output_name], {input_name: inference_data})

ort_session.set_providers(["CPUExecutionProvider"])
cpu_result = ort_session.run([output_name], {input_name: inference_data})

assert_almost_equal(cpu_result, cuda_result)
print("single op test pass")
