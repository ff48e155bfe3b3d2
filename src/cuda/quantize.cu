// CUDA kernel of the quantize family: one thread per output element, the shared per-element formula.
#include "cuda/common.cuh"
#include "ops/quantize.h"
#include "ops/registry.h"

namespace lockstep::cuda {

namespace {

// Contract: arith::quantize_element / dequantize_element per element; see docs/arithmetic.md#quantize.
template <class In, class Out, class Q, class F>
__global__ void quantize_map_kernel(const In* __restrict__ x, const float* __restrict__ scale,
                                    const Q* __restrict__ zp, Out* __restrict__ y, int64_t n, arith::ScaleIndex index,
                                    F f) {
  int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (e >= n) return;
  int64_t s = index.of(e);
  y[e] = f(x[e], scale[s], zp ? zp[s] : Q(0));
}

// Contract: arith::qlinear_dot per output; see docs/arithmetic.md#quantize.
template <class A, class B, class Y>
__global__ void qlinear_matmul_kernel(QLinearDims p, const A* __restrict__ a, const B* __restrict__ b,
                                      Y* __restrict__ y, int64_t total) {
  int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (e < total) y[e] = qlinear_output<Y>(p, a, b, e);
}

struct CudaQuantize {
  template <class In, class Out, class Q, class F>
  static void map(KernelContext& ctx, const In* x, const float* scale, const Q* zp, Out* y, int64_t n,
                  const arith::ScaleIndex& index, F f) {
    quantize_map_kernel<In, Out, Q, F><<<blocks_for(n), kThreadsPerBlock, 0, stream_of(ctx)>>>(x, scale, zp, y, n,
                                                                                             index, f);
    check_launch(ctx);
  }
  static void upload(KernelContext& ctx, const Tensor& host, Tensor& out) {
    // Pageable source: cudaMemcpyAsync returns once `host` is staged, so it may be freed when this returns.
    check(ctx, cudaMemcpyAsync(out.raw(), host.raw(), host.bytes(), cudaMemcpyHostToDevice, stream_of(ctx)),
          "cudaMemcpyAsync");
  }
  template <class A, class B, class Y>
  static void qmatmul(KernelContext& ctx, const QLinearDims& p, const A* a, const B* b, Y* y) {
    const int64_t total = p.batch * p.M * p.N;
    qlinear_matmul_kernel<A, B, Y><<<blocks_for(total), kThreadsPerBlock, 0, stream_of(ctx)>>>(p, a, b, y, total);
    check_launch(ctx);
  }
};

}  // namespace

void quantize(KernelContext& ctx) { run_linear_quantize<CudaQuantize, false>(ctx); }
void dynamic_quantize(KernelContext& ctx) { run_dynamic_quantize<CudaQuantize>(ctx); }
void dequantize(KernelContext& ctx) { run_linear_quantize<CudaQuantize, true>(ctx); }
void qlinear_matmul(KernelContext& ctx) { run_qlinear_matmul<CudaQuantize>(ctx); }

}  // namespace lockstep::cuda
