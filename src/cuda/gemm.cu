// CUDA kernels of the gemm family, and the tiled SIMT GEMM they share with Conv (implicit GEMM).
//
// One block computes a 64x64 output tile with 256 threads; thread (tx, ty) owns the 4x4 outputs
// (m0 + ty + 16i, n0 + tx + 16j) and keeps, per output, the chunk partial p and the running total in registers.
// k advances in shared-memory tiles of 16, which divide the contract's 64-long chunks, so a chunk ends exactly at
// a tile end (or at K): there total = total + p and p = +0. The k loop stops at K exactly (no zero-padded
// terms, which could turn a -0 partial into +0). This is dot_chunked_f32 (docs/arithmetic.md#gemm).
#include <algorithm>

#include "arith/dot.h"
#include "cuda/common.cuh"
#include "ops/conv.h"
#include "ops/gemm.h"

namespace lockstep::cuda {

namespace {

constexpr int kTileM = 64, kTileN = 64, kTileK = 16, kThreads = 256;
constexpr int kMaxBatchDims = kMaxRank - 2;

// Contract: dot_chunked_f32 over k ascending, init = prob.init(m); see docs/arithmetic.md#gemm.
template <class Problem>
__global__ void __launch_bounds__(kThreads) gemm_tiled_f32(Problem prob) {
  __shared__ float as[kTileK][kTileM + 1];
  __shared__ float bs[kTileK][kTileN];
  const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
  const int64_t M = prob.M, N = prob.N, K = prob.K;
  const int64_t m_tiles = (M + kTileM - 1) / kTileM;
  for (int64_t z = blockIdx.z; z < prob.batches; z += gridDim.z)
    for (int64_t mt = blockIdx.y; mt < m_tiles; mt += gridDim.y) {
      const int64_t m0 = mt * kTileM, n0 = int64_t(blockIdx.x) * kTileN;
      typename Problem::Batch bt = prob.batch(z);
      float total[4][4], p[4][4];
      for (int i = 0; i < 4; ++i) {
        int64_t m = m0 + ty + 16 * i;
        float init = m < M ? prob.init(bt, m) : 0.0f;
        for (int j = 0; j < 4; ++j) total[i][j] = init, p[i][j] = 0.0f;
      }
      for (int64_t k0 = 0; k0 < K; k0 += kTileK) {
        for (int l = 0; l < kTileM * kTileK / kThreads; ++l) {
          // A: consecutive threads walk k (rows of A are k-contiguous); B: consecutive threads walk n.
          int idx = threadIdx.x + kThreads * l;
          int kk = idx % kTileK, mm = idx / kTileK;
          int64_t m = m0 + mm, k = k0 + kk;
          as[kk][mm] = (m < M && k < K) ? prob.load_a(bt, m, k) : 0.0f;
          int kb = idx / kTileN, nn = idx % kTileN;
          int64_t n = n0 + nn, kq = k0 + kb;
          bs[kb][nn] = (n < N && kq < K) ? prob.load_b(bt, kq, n) : 0.0f;
        }
        __syncthreads();
        const int kmax = int(K - k0 < kTileK ? K - k0 : kTileK);
        for (int kk = 0; kk < kmax; ++kk) {
          float a[4], b[4];
          for (int i = 0; i < 4; ++i) a[i] = as[kk][ty + 16 * i];
          for (int j = 0; j < 4; ++j) b[j] = bs[kk][tx + 16 * j];
          for (int i = 0; i < 4; ++i)
            for (int j = 0; j < 4; ++j) p[i][j] = arith::fma_f32(a[i], b[j], p[i][j]);
        }
        const int64_t kend = k0 + kmax;
        if (kend % arith::kDotChunk == 0 || kend == K)
          for (int i = 0; i < 4; ++i)
            for (int j = 0; j < 4; ++j) total[i][j] = total[i][j] + p[i][j], p[i][j] = 0.0f;
        __syncthreads();
      }
      for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 4; ++j) {
          int64_t m = m0 + ty + 16 * i, n = n0 + tx + 16 * j;
          if (m < M && n < N) prob.store(bt, m, n, total[i][j]);
        }
    }
}

/// Gemm and MatMul: strided A'(m,k), B'(k,n) per batch; Gemm's epilogue when `gemm` is set.
struct MatrixProblem {
  int64_t M, N, K, batches;
  const float *a_data, *b_data, *c_data;
  float* y;
  int64_t a_rs, a_cs, b_rs, b_cs, c_rs, c_cs;
  bool gemm, has_c;
  float alpha, beta;
  int batch_rank;
  int64_t batch_dims[kMaxBatchDims], a_bstride[kMaxBatchDims], b_bstride[kMaxBatchDims];

  struct Batch {
    const float *a, *b;
    float* y;
  };
  __device__ Batch batch(int64_t z) const {
    int64_t ao = 0, bo = 0, rest = z;
    for (int d = batch_rank - 1; d >= 0; --d) {
      int64_t i = rest % batch_dims[d];
      rest /= batch_dims[d];
      ao += i * a_bstride[d];
      bo += i * b_bstride[d];
    }
    return {a_data + ao, b_data + bo, y + z * M * N};
  }
  __device__ float init(const Batch&, int64_t) const { return 0.0f; }
  __device__ float load_a(const Batch& bt, int64_t m, int64_t k) const { return bt.a[m * a_rs + k * a_cs]; }
  __device__ float load_b(const Batch& bt, int64_t k, int64_t n) const { return bt.b[k * b_rs + n * b_cs]; }
  __device__ void store(const Batch& bt, int64_t m, int64_t n, float t) const {
    bt.y[m * N + n] = gemm ? arith::gemm_epilogue_f32(t, alpha, has_c, has_c ? c_data[m * c_rs + n * c_cs] : 0.0f, beta)
                           : t;
  }
};

/// Conv as implicit GEMM, one (image, group) per batch: A = weights (cout_g x K), B(k, n) = the input tap of
/// k = (c, kd, kh, kw) for output pixel n, +0 in the padding.
struct ConvProblem {
  int64_t M, N, K, batches;
  arith::ConvDims g;
  const float *x, *w, *bias;
  float* y;

  struct Batch {
    int64_t img, grp;
  };
  __device__ Batch batch(int64_t z) const { return {z / g.group, z % g.group}; }
  __device__ float init(const Batch& bt, int64_t m) const { return bias ? bias[bt.grp * g.cout_g + m] : 0.0f; }
  __device__ float load_a(const Batch& bt, int64_t m, int64_t k) const { return w[(bt.grp * g.cout_g + m) * K + k]; }
  __device__ float load_b(const Batch& bt, int64_t k, int64_t n) const {
    const int64_t taps = g.kernel[0] * g.kernel[1] * g.kernel[2];
    const int64_t c = k / taps, t = k % taps;
    const int64_t kw = t % g.kernel[2], kh = (t / g.kernel[2]) % g.kernel[1], kd = t / (g.kernel[2] * g.kernel[1]);
    const int64_t ow = n % g.out[2], oh = (n / g.out[2]) % g.out[1], od = n / (g.out[2] * g.out[1]);
    const int64_t id = od * g.stride[0] - g.pad[0] + kd * g.dilation[0];
    const int64_t ih = oh * g.stride[1] - g.pad[1] + kh * g.dilation[1];
    const int64_t iw = ow * g.stride[2] - g.pad[2] + kw * g.dilation[2];
    if (id < 0 || id >= g.in[0] || ih < 0 || ih >= g.in[1] || iw < 0 || iw >= g.in[2]) return 0.0f;
    return x[((bt.img * g.c_in + bt.grp * g.cin_g + c) * g.in[0] + id) * g.in[1] * g.in[2] + ih * g.in[2] + iw];
  }
  __device__ void store(const Batch& bt, int64_t m, int64_t n, float t) const {
    y[((bt.img * g.c_out + bt.grp * g.cout_g + m) * N) + n] = t;
  }
};

template <class Problem>
void launch_tiled(const KernelContext& ctx, const Problem& prob) {
  if (prob.M <= 0 || prob.N <= 0 || prob.batches <= 0) return;
  int64_t n_tiles = (prob.N + kTileN - 1) / kTileN, m_tiles = (prob.M + kTileM - 1) / kTileM;
  if (n_tiles > 0x7fffffff) throw ctx.error("output too wide for the CUDA GEMM", ErrorCode::NotImplemented);
  dim3 grid(unsigned(n_tiles), unsigned(std::min<int64_t>(m_tiles, 65535)),
            unsigned(std::min<int64_t>(prob.batches, 65535)));
  gemm_tiled_f32<Problem><<<grid, kThreads, 0, stream_of(ctx)>>>(prob);
  check_launch(ctx);
}

// Integer MatMul: exact wrapping arithmetic, one thread per output.
template <typename T>
__global__ void matmul_int(MatrixProblem shape, const T* a, const T* b, T* y, int64_t total) {
  using U = typename std::make_unsigned<T>::type;
  int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= total) return;
  int64_t n = i % shape.N, m = (i / shape.N) % shape.M, z = i / (shape.N * shape.M);
  int64_t ao = 0, bo = 0, rest = z;
  for (int d = shape.batch_rank - 1; d >= 0; --d) {
    int64_t idx = rest % shape.batch_dims[d];
    rest /= shape.batch_dims[d];
    ao += idx * shape.a_bstride[d];
    bo += idx * shape.b_bstride[d];
  }
  U acc = 0;
  for (int64_t k = 0; k < shape.K; ++k) acc += U(a[ao + m * shape.K + k]) * U(b[bo + k * shape.N + n]);
  y[i] = T(acc);
}

}  // namespace

// Contract: dot_chunked_f32 over k = (c_in, kd, kh, kw) ascending, init = bias; see docs/arithmetic.md#conv.
void conv_implicit_gemm(const KernelContext& ctx, const ConvGeom& g, const float* x, const float* w,
                        const float* bias, float* y) {
  ConvProblem prob{g.cout_g, g.out_pixels(), g.K(), g.batch * g.group, g.dims(), x, w, bias, y};
  launch_tiled(ctx, prob);
}

// Contract: dot_chunked_f32 over k ascending, init +0, then gemm_epilogue_f32; see docs/arithmetic.md#gemm.
void gemm(KernelContext& ctx) {
  GemmParams p = gemm_params(ctx);
  Tensor& y = ctx.output(0, DType::Float, p.out_shape);
  if (y.numel() == 0) return;
  MatrixProblem prob{};
  prob.M = p.M, prob.N = p.N, prob.K = p.K, prob.batches = 1;
  prob.a_data = ctx.input(0).data<float>(), prob.b_data = ctx.input(1).data<float>();
  prob.c_data = p.has_c ? ctx.input(2).data<float>() : nullptr;
  prob.y = y.data<float>();
  prob.a_rs = p.a_rs, prob.a_cs = p.a_cs, prob.b_rs = p.b_rs, prob.b_cs = p.b_cs, prob.c_rs = p.c_rs,
  prob.c_cs = p.c_cs;
  prob.gemm = true, prob.has_c = p.has_c, prob.alpha = p.alpha, prob.beta = p.beta;
  launch_tiled(ctx, prob);
}

// Contract: dot_chunked_f32 over k ascending, init +0; see docs/arithmetic.md#matmul.
void matmul(KernelContext& ctx) {
  MatMulParams p = matmul_params(ctx);
  const Tensor& at = ctx.input(0);
  Tensor& y = ctx.output(0, at.dtype(), p.out_shape);
  if (y.numel() == 0) return;
  if (p.batch_dims.size() > size_t(kMaxBatchDims))
    throw ctx.error("MatMul with more than " + std::to_string(kMaxBatchDims) + " batch dims",
                    ErrorCode::NotImplemented);
  MatrixProblem prob{};
  prob.M = p.M, prob.N = p.N, prob.K = p.K, prob.batches = p.batch;
  prob.a_rs = p.K, prob.a_cs = 1, prob.b_rs = p.N, prob.b_cs = 1;
  prob.batch_rank = int(p.batch_dims.size());
  for (int d = 0; d < prob.batch_rank; ++d)
    prob.batch_dims[d] = p.batch_dims[d], prob.a_bstride[d] = p.a_batch_strides[d],
    prob.b_bstride[d] = p.b_batch_strides[d];
  if (at.dtype() == DType::Float) {
    prob.a_data = at.data<float>(), prob.b_data = ctx.input(1).data<float>(), prob.y = y.data<float>();
    launch_tiled(ctx, prob);
    return;
  }
  const int64_t total = y.numel();
  if (at.dtype() == DType::Int32)
    matmul_int<int32_t><<<blocks_for(total), kThreadsPerBlock, 0, stream_of(ctx)>>>(
        prob, at.data<int32_t>(), ctx.input(1).data<int32_t>(), y.data<int32_t>(), total);
  else
    matmul_int<int64_t><<<blocks_for(total), kThreadsPerBlock, 0, stream_of(ctx)>>>(
        prob, at.data<int64_t>(), ctx.input(1).data<int64_t>(), y.data<int64_t>(), total);
  check_launch(ctx);
}

}  // namespace lockstep::cuda
