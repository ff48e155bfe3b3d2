// CUDA kernels of the recurrent family: one thread per projected input element, then per time step one thread
// per (batch, hidden) unit (two launches for GRU), each unit computed by the shared arith::cell_unit.
#include "cuda/common.cuh"
#include "ops/recurrent.h"
#include "ops/registry.h"

namespace lockstep::cuda {

namespace {

// Contract: dot_chunked_f32(input, +0, x[m][k], w[n][k]) over k ascending; see docs/arithmetic.md#recurrent.
__global__ void project_kernel(const float* __restrict__ x, const float* __restrict__ w, float* __restrict__ xw,
                               int64_t input, int64_t gate_rows, int64_t total) {
  int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (e >= total) return;
  const float* xr = x + (e / gate_rows) * input;
  const float* wr = w + (e % gate_rows) * input;
  xw[e] = arith::dot_chunked_f32(input, 0.0f, [&](int64_t k) { return xr[k]; }, [&](int64_t k) { return wr[k]; });
}

// Contract: arith::cell_unit / arith::gru_gates per unit; see docs/arithmetic.md#recurrent.
__global__ void units_kernel(arith::CellStep step, bool gates_pass, int64_t total) {
  int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (e >= total) return;
  if (gates_pass) arith::gru_gates(step, e);
  else arith::cell_unit(step, e);
}

struct CudaRecurrent {
  explicit CudaRecurrent(const RecurrentPlan&) {}
  static void fill_zero(KernelContext& ctx, float* p, int64_t n) {
    check(ctx, cudaMemsetAsync(p, 0, static_cast<size_t>(n) * sizeof(float), stream_of(ctx)), "cudaMemsetAsync");
  }
  static void copy_rows(KernelContext& ctx, float* dst, int64_t dst_stride, const float* src, int64_t src_stride,
                        int64_t rows, int64_t cols) {
    check(ctx,
          cudaMemcpy2DAsync(dst, dst_stride * sizeof(float), src, src_stride * sizeof(float), cols * sizeof(float),
                            rows, cudaMemcpyDeviceToDevice, stream_of(ctx)),
          "cudaMemcpy2DAsync");
  }
  static void project(KernelContext& ctx, const float* x, int64_t rows, int64_t input, const float* w,
                      int64_t gate_rows, float* xw) {
    int64_t total = rows * gate_rows;
    if (total == 0) return;
    project_kernel<<<blocks_for(total), kThreadsPerBlock, 0, stream_of(ctx)>>>(x, w, xw, input, gate_rows, total);
    check_launch(ctx);
  }
  static void units(KernelContext& ctx, const arith::CellStep& step, bool gates_pass) {
    int64_t total = step.batch * step.hidden;
    units_kernel<<<blocks_for(total), kThreadsPerBlock, 0, stream_of(ctx)>>>(step, gates_pass, total);
    check_launch(ctx);
  }
};

}  // namespace

void recurrent(KernelContext& ctx) { run_recurrent<CudaRecurrent>(ctx); }

}  // namespace lockstep::cuda
