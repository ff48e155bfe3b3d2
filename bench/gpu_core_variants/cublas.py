# cuBLAS float32 (TF32 off) through torch.matmul on the core bench's cases: median ms and TFLOP/s by CUDA events.
import torch
torch.backends.cuda.matmul.allow_tf32 = False
for M, N, K, B in [(4096, 4096, 4096, 1), (8192, 8192, 8192, 1), (4096, 768, 768, 1), (4096, 3072, 768, 1),
                   (4096, 768, 3072, 1), (16384, 768, 768, 1), (16384, 3072, 768, 1)]:
    a = torch.randn(B, M, K, device='cuda'); b = torch.randn(B, K, N, device='cuda')
    for _ in range(3): torch.matmul(a, b)
    ts = []
    for _ in range(10):
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        e0.record(); torch.matmul(a, b); e1.record(); torch.cuda.synchronize(); ts.append(e0.elapsed_time(e1))
    ms = sorted(ts)[len(ts) // 2]
    print(f'cublas {M}x{N}x{K} b{B}: {ms:.3f} ms {2 * M * N * K * B / ms / 1e9:.1f} TF/s')
