// CUDA kernels of the quantize family: one thread per output element, the shared per-element formula.
#include <memory>
#include <string>

#include "cuda/common.cuh"
#include "ops/quantize.h"
#include "ops/registry.h"

namespace lockstep::cuda {

namespace {

// Contract: arith::quantize_element / dequantize_element per element; see docs/arithmetic.md#quantize.
template <class In, class Out, class Q, class S, class F>
__global__ void quantize_map_kernel(const In* __restrict__ x, const S* __restrict__ scale,
                                    const Q* __restrict__ zp, Out* __restrict__ y, int64_t n, arith::ScaleIndex index,
                                    F f) {
  int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (e >= n) return;
  int64_t s = index.of(e);
  y[e] = f(x[e], scale[s], zp ? zp[s] : Q{});
}

// Contract: arith::qlinear_dot per output; see docs/arithmetic.md#quantize.
template <class A, class B, class Y>
__global__ void qlinear_matmul_kernel(QLinearDims p, const A* __restrict__ a, const B* __restrict__ b,
                                      Y* __restrict__ y, int64_t total) {
  int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (e < total) y[e] = qlinear_output<Y>(p, a, b, e);
}

/// MatMulInteger's shapes as plain data (MatMulParams holds vectors): the batch dims and A's and B's element
/// offsets per batch dim (0 where broadcast), walked as MatMulParams::batch_offset walks them.
struct IntegerMatMulShape {
  int64_t M = 0, N = 0, K = 0;
  int batch_rank = 0;
  int64_t batch_dims[kMaxRank], a_bstride[kMaxRank], b_bstride[kMaxRank];
};

// Contract: arith::integer_dot_i32 per output of batch*M*N (matmul_integer_output); docs/arithmetic.md#quantize.
template <class A, class B>
__global__ void matmul_integer_kernel(IntegerMatMulShape s, const A* __restrict__ a, const B* __restrict__ b,
                                      ZeroPointView a_zp, ZeroPointView b_zp, int32_t* __restrict__ y,
                                      int64_t total) {
  const int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (e >= total) return;
  const int64_t n = e % s.N, m = (e / s.N) % s.M;
  int64_t rest = e / (s.N * s.M), ao = 0, bo = 0;
  for (int d = s.batch_rank - 1; d >= 0; --d) {
    const int64_t idx = rest % s.batch_dims[d];
    rest /= s.batch_dims[d];
    ao += idx * s.a_bstride[d];
    bo += idx * s.b_bstride[d];
  }
  y[e] = matmul_integer_output(s.K, s.N, a + ao + m * s.K, a_zp.of(m), b + bo + n, b_zp.of(n));
}

// Contract: arith::integer_dot_i32 per output over (c, kd, kh, kw), padding taps 0 (conv_integer_output);
// docs/arithmetic.md#quantize.
template <class X, class W>
__global__ void conv_integer_kernel(arith::ConvDims g, const X* __restrict__ x, int32_t x_zp,
                                    const W* __restrict__ w, ZeroPointView w_zp, int32_t* __restrict__ y,
                                    int64_t total) {
  const int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (e < total) y[e] = conv_integer_output(g, x, x_zp, w, w_zp, e);
}

// Contract: qlinear_conv_output per output, as cpu::qlinear_conv; docs/arithmetic.md#quantize.
template <class X, class W, class Y>
__global__ void qlinear_conv_kernel(arith::ConvDims g, const X* __restrict__ x, int32_t x_zp, const W* __restrict__ w,
                                    ZeroPointView w_zp, const int32_t* __restrict__ bias,
                                    const float* __restrict__ multipliers, Y y_zp, Y* __restrict__ y, int64_t total) {
  const int64_t e = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (e < total) y[e] = qlinear_conv_output<Y>(g, x, x_zp, w, w_zp, bias, multipliers, y_zp, e);
}

/// The zero points on the device, as the kernels read them; `keep` holds the buffer until the launch is queued.
ZeroPointView device_zero_points(KernelContext& ctx, const ZeroPoints& z, std::shared_ptr<Buffer>& keep) {
  keep = upload(ctx, z.values.data(), z.values.size() * sizeof(int32_t));
  return {static_cast<const int32_t*>(keep->data), static_cast<int64_t>(z.values.size())};
}

struct CudaQuantize {
  template <class In, class Out, class Q, class S, class F>
  static void map(KernelContext& ctx, const In* x, const S* scale, const Q* zp, Out* y, int64_t n,
                  const arith::ScaleIndex& index, F f) {
    quantize_map_kernel<In, Out, Q, S, F><<<blocks_for(n), kThreadsPerBlock, 0, stream_of(ctx)>>>(x, scale, zp, y,
                                                                                                n, index, f);
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

void quantize(KernelContext& ctx) { run_quantize<CudaQuantize>(ctx); }
void dynamic_quantize(KernelContext& ctx) { run_dynamic_quantize<CudaQuantize>(ctx); }
void dequantize(KernelContext& ctx) { run_dequantize<CudaQuantize>(ctx); }
void qlinear_matmul(KernelContext& ctx) { run_qlinear_matmul<CudaQuantize>(ctx); }

// Contract: as cpu::matmul_integer, exact int32 wrapping; docs/arithmetic.md#quantize.
void matmul_integer(KernelContext& ctx) {
  const MatMulIntegerPlan p = matmul_integer_plan(ctx);
  const MatMulParams& m = p.shapes;
  Tensor& y = ctx.output(0, DType::Int32, m.out_shape);
  const int64_t total = y.numel();
  if (total == 0) return;
  if (m.batch_dims.size() > size_t(kMaxRank))
    throw ctx.error("MatMulInteger with more than " + std::to_string(kMaxRank) + " batch dims",
                    ErrorCode::NotImplemented);
  IntegerMatMulShape s;
  s.M = m.M, s.N = m.N, s.K = m.K, s.batch_rank = int(m.batch_dims.size());
  for (int d = 0; d < s.batch_rank; ++d)
    s.batch_dims[d] = m.batch_dims[d], s.a_bstride[d] = m.a_batch_strides[d], s.b_bstride[d] = m.b_batch_strides[d];
  std::shared_ptr<Buffer> a_keep, b_keep;
  const ZeroPointView a_zp = device_zero_points(ctx, p.a_zp, a_keep), b_zp = device_zero_points(ctx, p.b_zp, b_keep);
  dispatch_integer_pair(ctx, "A", "B", [&](auto a, auto b) {
    using A = decltype(a);
    using B = decltype(b);
    matmul_integer_kernel<A, B><<<blocks_for(total), kThreadsPerBlock, 0, stream_of(ctx)>>>(
        s, ctx.input(0).data<A>(), ctx.input(1).data<B>(), a_zp, b_zp, y.data<int32_t>(), total);
  });
  check_launch(ctx);
}

// Contract: as cpu::qlinear_conv; docs/arithmetic.md#quantize.
void qlinear_conv(KernelContext& ctx) {
  const QLinearConvPlan p = qlinear_conv_plan(ctx);
  Tensor& y = ctx.output(0, p.y_type, p.conv.geom.out_shape);
  const int64_t total = y.numel();
  if (total == 0) return;
  std::shared_ptr<Buffer> w_keep;
  const ZeroPointView w_zp = device_zero_points(ctx, p.conv.w_zp, w_keep);
  const std::shared_ptr<Buffer> bias = upload(ctx, p.bias.data(), p.bias.size() * sizeof(int32_t));
  const std::shared_ptr<Buffer> multipliers = upload(ctx, p.multipliers.data(), p.multipliers.size() * sizeof(float));
  dispatch_qlinear_conv(ctx, p, [&](auto x_type, auto w_type, auto y_type) {
    using X = decltype(x_type);
    using W = decltype(w_type);
    using Y = decltype(y_type);
    qlinear_conv_kernel<X, W, Y><<<blocks_for(total), kThreadsPerBlock, 0, stream_of(ctx)>>>(
        p.conv.geom.dims(), ctx.input(0).data<X>(), p.conv.x_zp, ctx.input(3).data<W>(), w_zp,
        static_cast<const int32_t*>(bias->data), static_cast<const float*>(multipliers->data),
        static_cast<Y>(p.y_zp), y.data<Y>(), total);
  });
  check_launch(ctx);
}

// Contract: as cpu::conv_integer, exact int32 wrapping; docs/arithmetic.md#quantize.
void conv_integer(KernelContext& ctx) {
  const ConvIntegerPlan p = conv_integer_plan(ctx);
  Tensor& y = ctx.output(0, DType::Int32, p.geom.out_shape);
  const int64_t total = y.numel();
  if (total == 0) return;
  std::shared_ptr<Buffer> w_keep;
  const ZeroPointView w_zp = device_zero_points(ctx, p.w_zp, w_keep);
  dispatch_integer_pair(ctx, "x", "w", [&](auto x, auto w) {
    using X = decltype(x);
    using W = decltype(w);
    conv_integer_kernel<X, W><<<blocks_for(total), kThreadsPerBlock, 0, stream_of(ctx)>>>(
        p.geom.dims(), ctx.input(0).data<X>(), p.x_zp, ctx.input(1).data<W>(), w_zp, y.data<int32_t>(), total);
  });
  check_launch(ctx);
}

}  // namespace lockstep::cuda
