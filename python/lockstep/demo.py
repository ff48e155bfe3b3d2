"""The demo: the Conv from onnxruntime issue 21220 on every provider lockstep has here, compared bit for bit,
with each result's error against a float64 computation (and onnxruntime's, if it is installed)."""

import numpy as np

import lockstep


def seed_conv_model():
    """The issue's model: 3x3 Conv, 256 -> 256 channels, 1x256x14x14, weights 0.1, bias 0.05, opset 11."""
    import onnx
    from onnx import helper, numpy_helper

    weight = numpy_helper.from_array(np.full((256, 256, 3, 3), 0.1, np.float32), "weight")
    bias = numpy_helper.from_array(np.full(256, 0.05, np.float32), "bias")
    node = helper.make_node("Conv", ["input", "weight", "bias"], ["output"], dilations=[1, 1], group=1,
                            kernel_shape=[3, 3], pads=[1, 1, 1, 1], strides=[1, 1])
    shape = [1, 256, 14, 14]
    graph = helper.make_graph([node], "convolution_model",
                              [helper.make_tensor_value_info("input", onnx.TensorProto.FLOAT, shape)],
                              [helper.make_tensor_value_info("output", onnx.TensorProto.FLOAT, shape)],
                              initializer=[weight, bias])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 11)])
    model.ir_version = 10  # readable by older onnxruntime releases too
    return model.SerializeToString()


def float64_reference(x):
    """The seed Conv in float64 (all-ones input: each output is bias + 0.1 * the number of in-image taps)."""
    w = np.float64(np.float32(0.1))
    b = np.float64(np.float32(0.05))
    taps = np.zeros((14, 14))
    padded = np.pad(x[0, 0].astype(np.float64), 1)
    for i in range(14):
        for j in range(14):
            taps[i, j] = padded[i:i + 3, j:j + 3].sum()
    return b + 256 * w * taps


def main():
    model = seed_conv_model()
    x = np.ones((1, 256, 14, 14), np.float32)
    reference = float64_reference(x)
    results = {}
    for provider in lockstep.get_available_providers():
        session = lockstep.InferenceSession(model, providers=[provider])
        results[provider] = session.run(None, {"input": x})[0]
    try:
        import onnxruntime

        session = onnxruntime.InferenceSession(model, providers=["CPUExecutionProvider"])
        results["onnxruntime CPU"] = session.run(None, {"input": x})[0]
    except ImportError:
        pass
    print("seed Conv (onnxruntime issue 21220): 1x256x14x14, 3x3, 256 -> 256 channels")
    print(f"{'run':<26}{'max abs error vs float64':>26}")
    for name, out in results.items():
        print(f"{name:<26}{np.abs(out.astype(np.float64) - reference[None]).max():>26.3e}")
    ours = [results[p] for p in lockstep.get_available_providers()]
    if len(ours) > 1:
        same = all(o.tobytes() == ours[0].tobytes() for o in ours)
        print("lockstep CPU and CUDA: " + ("bit-identical" if same else "DIFFERENT"))
        return 0 if same else 1
    print("lockstep CUDA: not available on this machine (no GPU); the CPU result above is what CUDA returns")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
