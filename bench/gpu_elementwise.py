"""Broadcasting elementwise ops on the GPU: lockstep CUDA's kernel time against torch's for the same op, the bandwidth
each reaches, and the bytes of lockstep CUDA against lockstep CPU (uint32 views: the output must be identical).
  python3 bench/gpu_elementwise.py [--runs R]
The cases are the elementwise nodes of BERT-base batch 32 (residual Add, the attention mask's broadcast Add, the
scale Mul by a scalar, the masked attention's Where) plus odd sizes that leave a partial quad of four elements."""

import argparse
import os
import sys

import numpy as np
from onnx import TensorProto, helper

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from gpu_gemm import lockstep_kernel_ms, session, torch_ms  # noqa: E402

import lockstep  # noqa: E402

RNG = np.random.default_rng(7)


def binary_model(op, shapes, dtypes):
    inputs = [helper.make_tensor_value_info(n, t, list(s)) for (n, s), t in zip(shapes.items(), dtypes)]
    node = helper.make_node(op, list(shapes), ["Out"])
    graph = helper.make_graph([node], op, inputs, [helper.make_empty_tensor_value_info("Out")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8).SerializeToString()


def cases():
    """(name, op, feeds, torch function of the torch tensors)"""
    f = lambda *s: RNG.standard_normal(s).astype(np.float32)  # noqa: E731
    mask = (RNG.random((32, 1, 1, 128)) < 0.9)
    return [
        ("residual Add [32,128,768]", "Add", {"A": f(32, 128, 768), "B": f(32, 128, 768)}, lambda a, b: a + b),
        ("mask Add [32,12,128,128]+[32,1,1,128]", "Add", {"A": f(32, 12, 128, 128), "B": f(32, 1, 1, 128)},
         lambda a, b: a + b),
        ("scale Mul [32,12,128,64]*[]", "Mul", {"A": f(32, 12, 128, 64), "B": np.array(0.125, np.float32)},
         lambda a, b: a * b),
        ("bias Add [4096,3072]+[3072]", "Add", {"A": f(4096, 3072), "B": f(3072)}, lambda a, b: a + b),
        ("Where [32,1,1,128] ? [32,12,128,128] : []", "Where",
         {"C": mask, "X": f(32, 12, 128, 128), "Y": np.array(-1e4, np.float32)}, lambda c, x, y: torch_where(c, x, y)),
        ("odd Add [1000003]+[1000003]", "Add", {"A": f(1000003), "B": f(1000003)}, lambda a, b: a + b),
        ("odd Greater [3,5,7,11]>[5,1,11]", "Greater", {"A": f(3, 5, 7, 11), "B": f(5, 1, 11)}, lambda a, b: a > b),
    ]


def torch_where(c, x, y):
    import torch

    return torch.where(c, x, y)


def tensor_type(a):
    return {np.float32: TensorProto.FLOAT, np.bool_: TensorProto.BOOL}[a.dtype.type]


def main():
    import torch

    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=20)
    args = ap.parse_args()
    print(f"# {torch.cuda.get_device_name()}, median of {args.runs}; GB/s counts each input element read once and the"
          f" output written once")
    print(f"{'case':46s} {'lockstep us':>11s} {'GB/s':>6s} {'torch us':>9s} {'GB/s':>6s} {'ratio':>6s}  bits")
    failed = 0
    for name, op, feeds, fn in cases():
        model = binary_model(op, {k: v.shape for k, v in feeds.items()}, [tensor_type(v) for v in feeds.values()])
        ours_ms, _, _ = lockstep_kernel_ms(model, feeds, args.runs)
        (gpu,) = session(model, lockstep.CUDA).run(None, feeds)
        (cpu,) = session(model, lockstep.CPU).run(None, feeds)
        same = gpu.dtype == cpu.dtype and gpu.shape == cpu.shape and gpu.tobytes() == cpu.tobytes()
        failed += not same
        tensors = [torch.from_numpy(v).cuda() for v in feeds.values()]
        theirs_ms = torch_ms(lambda: fn(*tensors), args.runs)
        moved = sum(v.nbytes for v in feeds.values()) + gpu.nbytes
        print(f"{name:46s} {ours_ms * 1e3:11.1f} {moved / ours_ms / 1e6:6.0f} {theirs_ms * 1e3:9.1f} "
              f"{moved / theirs_ms / 1e6:6.0f} {ours_ms / theirs_ms:6.2f}  {'same' if same else 'DIFFERENT'}")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
