// CUDA kernels of the elementwise family: the same functors as src/cpu/elementwise.cpp, one thread per output
// element, grid-stride loops. Nothing here does arithmetic of its own: every float operation is in the functor.
#include "cuda/broadcast.cuh"
#include "cuda/common.cuh"
#include "ops/elementwise.h"

namespace lockstep::cuda {

namespace {

unsigned grid_for(int64_t n) {
  int64_t blocks = (n + kThreadsPerBlock - 1) / kThreadsPerBlock;
  return static_cast<unsigned>(blocks < 65536 * 8 ? blocks : 65536 * 8);
}

// Contract: one functor call per element, elementwise; see docs/arithmetic.md#elementwise
template <class Out, class In, class F>
__global__ void map1_kernel(const In* __restrict__ in, Out* __restrict__ out, int64_t n, F f) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    out[i] = f(in[i]);
}

// Contract: the same, below 2^31 elements: four a thread, read and written as aligned vectors; the last partial
// quad element by element.
template <class Out, class In, class F>
__global__ void map1_kernel_quads(const In* __restrict__ in, Out* __restrict__ out, uint32_t n, F f) {
  const uint32_t quads = (n + 3) / 4;
  for (uint32_t q = blockIdx.x * blockDim.x + threadIdx.x; q < quads; q += gridDim.x * blockDim.x) {
    if (4 * q + 4 <= n) {
      const Quad<In> x = reinterpret_cast<const Quad<In>*>(in)[q];
      Quad<Out> y;
#pragma unroll
      for (int j = 0; j < 4; ++j) y.v[j] = f(x.v[j]);
      reinterpret_cast<Quad<Out>*>(out)[q] = y;
    } else {
      for (uint32_t i = 4 * q; i < n; ++i) out[i] = f(in[i]);
    }
  }
}

// Contract: out[i] = f(a[i'], b[i'']) with numpy broadcasting; see docs/arithmetic.md#elementwise
template <class Out, class T, class F>
__global__ void map2_kernel(const T* __restrict__ a, const T* __restrict__ b, Out* __restrict__ out,
                            BroadcastPlan plan, F f) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < plan.numel;
       i += int64_t(gridDim.x) * blockDim.x)
    out[i] = f(a[plan.offset(0, i)], b[plan.offset(1, i)]);
}

// Contract: the same, for fewer than 2^31 elements: offsets by 32-bit index arithmetic (broadcast.cuh).
template <class Out, class T, class F>
__global__ void map2_kernel_32bit(const T* __restrict__ a, const T* __restrict__ b, Out* __restrict__ out,
                                  BroadcastIndex32<2> index, F f) {
  for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < index.numel; i += gridDim.x * blockDim.x) {
    uint32_t off[2];
    index.offsets(i, off);
    out[i] = f(a[off[0]], b[off[1]]);
  }
}

// Contract: the same, for inputs that are whole (same shape as the output) or one element: four outputs a thread,
// read and written as aligned vectors; the last partial quad element by element.
template <class Out, class T, class F>
__global__ void map2_kernel_quads(const T* __restrict__ a, const T* __restrict__ b, Out* __restrict__ out,
                                  uint32_t n, bool a_scalar, bool b_scalar, F f) {
  const uint32_t quads = (n + 3) / 4;
  for (uint32_t q = blockIdx.x * blockDim.x + threadIdx.x; q < quads; q += gridDim.x * blockDim.x) {
    const uint32_t first = 4 * q;
    if (first + 4 <= n) {
      Quad<T> x, y;
      if (a_scalar) x = Quad<T>{{a[0], a[0], a[0], a[0]}};
      else x = reinterpret_cast<const Quad<T>*>(a)[q];
      if (b_scalar) y = Quad<T>{{b[0], b[0], b[0], b[0]}};
      else y = reinterpret_cast<const Quad<T>*>(b)[q];
      Quad<Out> z;
#pragma unroll
      for (int j = 0; j < 4; ++j) z.v[j] = f(x.v[j], y.v[j]);
      reinterpret_cast<Quad<Out>*>(out)[q] = z;
    } else {
      for (uint32_t i = first; i < n; ++i) out[i] = f(a[a_scalar ? 0 : i], b[b_scalar ? 0 : i]);
    }
  }
}

/// Input k's four elements of output quad q, from the quad's offset: one aligned vector where the input runs along
/// the innermost dim, its one element four times where it stays.
template <class T>
__device__ __forceinline__ Quad<T> quad_at(const T* __restrict__ x, uint32_t offset, bool runs) {
  if (runs) return *reinterpret_cast<const Quad<T>*>(x + offset);
  const T v = x[offset];
  return Quad<T>{{v, v, v, v}};
}

// Contract: the same, with broadcasting whose innermost dim is a whole number of quads (QuadIndex): four outputs a
// thread, their operands found once per quad (attention's mask Add, [32,12,128,128] + [32,1,1,128], on the H100:
// 27 us element by element, 15.6 us by quads).
template <class Out, class T, class F>
__global__ void map2_kernel_strided_quads(const T* __restrict__ a, const T* __restrict__ b, Out* __restrict__ out,
                                          QuadIndex<2> quads, F f) {
  for (uint32_t q = blockIdx.x * blockDim.x + threadIdx.x; q < quads.index.numel; q += gridDim.x * blockDim.x) {
    uint32_t off[2];
    quads.index.offsets(q, off);
    const Quad<T> x = quad_at(a, off[0], quads.runs[0]), y = quad_at(b, off[1], quads.runs[1]);
    Quad<Out> z;
#pragma unroll
    for (int j = 0; j < 4; ++j) z.v[j] = f(x.v[j], y.v[j]);
    reinterpret_cast<Quad<Out>*>(out)[q] = z;
  }
}

// Contract: a selection, no arithmetic; see docs/arithmetic.md#where
template <class T>
__global__ void where_kernel(const uint8_t* __restrict__ c, const T* __restrict__ x, const T* __restrict__ y,
                             T* __restrict__ out, BroadcastPlan plan) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < plan.numel;
       i += int64_t(gridDim.x) * blockDim.x)
    out[i] = c[plan.offset(0, i)] != 0 ? x[plan.offset(1, i)] : y[plan.offset(2, i)];
}

// Contract: the same selection, for fewer than 2^31 elements (broadcast.cuh).
template <class T>
__global__ void where_kernel_32bit(const uint8_t* __restrict__ c, const T* __restrict__ x, const T* __restrict__ y,
                                   T* __restrict__ out, BroadcastIndex32<3> index) {
  for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < index.numel; i += gridDim.x * blockDim.x) {
    uint32_t off[3];
    index.offsets(i, off);
    out[i] = c[off[0]] != 0 ? x[off[1]] : y[off[2]];
  }
}

// Contract: cast_element<D>(s) per element; see docs/arithmetic.md#cast
template <class D>
__global__ void cast_kernel(const void* __restrict__ in, DType src, D* __restrict__ out, int64_t n,
                            arith::CastMode mode) {
  using arith::Low;
  using arith::LowType;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
    arith::CastValue v;
    switch (src) {
      case DType::Float: v = arith::cast_load(static_cast<const float*>(in)[i]); break;
      case DType::Double: v = arith::cast_load(static_cast<const double*>(in)[i]); break;
      case DType::Float16: v = arith::cast_load(static_cast<const arith::Half*>(in)[i]); break;
      case DType::BFloat16: v = arith::cast_load(static_cast<const arith::BHalf*>(in)[i]); break;
      case DType::Int8: v = arith::cast_load(static_cast<const int8_t*>(in)[i]); break;
      case DType::Int16: v = arith::cast_load(static_cast<const int16_t*>(in)[i]); break;
      case DType::Int32: v = arith::cast_load(static_cast<const int32_t*>(in)[i]); break;
      case DType::Int64: v = arith::cast_load(static_cast<const int64_t*>(in)[i]); break;
      case DType::UInt8: v = arith::cast_load(static_cast<const uint8_t*>(in)[i]); break;
      case DType::UInt16: v = arith::cast_load(static_cast<const uint16_t*>(in)[i]); break;
      case DType::UInt32: v = arith::cast_load(static_cast<const uint32_t*>(in)[i]); break;
      case DType::UInt64: v = arith::cast_load(static_cast<const uint64_t*>(in)[i]); break;
      case DType::Float8E4M3FN: v = arith::cast_load(static_cast<const Low<LowType::E4M3FN>*>(in)[i]); break;
      case DType::Float8E4M3FNUZ: v = arith::cast_load(static_cast<const Low<LowType::E4M3FNUZ>*>(in)[i]); break;
      case DType::Float8E5M2: v = arith::cast_load(static_cast<const Low<LowType::E5M2>*>(in)[i]); break;
      case DType::Float8E5M2FNUZ: v = arith::cast_load(static_cast<const Low<LowType::E5M2FNUZ>*>(in)[i]); break;
      case DType::Float4E2M1: v = arith::cast_load(static_cast<const Low<LowType::E2M1>*>(in)[i]); break;
      case DType::Int4: v = arith::cast_load(static_cast<const Low<LowType::Int4>*>(in)[i]); break;
      case DType::UInt4: v = arith::cast_load(static_cast<const Low<LowType::UInt4>*>(in)[i]); break;
      case DType::Int2: v = arith::cast_load(static_cast<const Low<LowType::Int2>*>(in)[i]); break;
      case DType::UInt2: v = arith::cast_load(static_cast<const Low<LowType::UInt2>*>(in)[i]); break;
      case DType::Float8E8M0: v = arith::cast_load(static_cast<const Low<LowType::E8M0>*>(in)[i]); break;
      default: v = arith::cast_load(static_cast<const arith::Boolean*>(in)[i]); break;
    }
    out[i] = arith::cast_store<D>(v, mode);
  }
}

struct CudaElementwise {
  template <class Out, class In, class F>
  static void map1(KernelContext& ctx, const Tensor& x, Tensor& y, F f) {
    int64_t n = x.numel();
    if (n == 0) return;
    const In* in = x.data<In>();
    Out* out = y.data<Out>();
    if (n < (int64_t(1) << 31) && quad_aligned(in) && quad_aligned(out))
      map1_kernel_quads<Out, In><<<grid_for((n + 3) / 4), kThreadsPerBlock, 0, stream_of(ctx)>>>(in, out, uint32_t(n), f);
    else
      map1_kernel<Out, In><<<grid_for(n), kThreadsPerBlock, 0, stream_of(ctx)>>>(in, out, n, f);
    check_launch(ctx);
  }
  template <class Out, class T, class F>
  static void map2(KernelContext& ctx, const BroadcastPlan& plan, const T* a, const T* b, Out* out, F f) {
    const bool a_scalar = plan.kind[0] == BroadcastPlan::Scalar, b_scalar = plan.kind[1] == BroadcastPlan::Scalar;
    if (plan.flat() && fits_32bit(plan) && (a_scalar || quad_aligned(a)) && (b_scalar || quad_aligned(b)) &&
        quad_aligned(out)) {
      map2_kernel_quads<Out, T><<<grid_for((plan.numel + 3) / 4), kThreadsPerBlock, 0, stream_of(ctx)>>>(
          a, b, out, uint32_t(plan.numel), a_scalar, b_scalar, f);
    } else if (const auto quads = quad_aligned(out) ? quad_index_32bit<2>(plan, {quad_aligned(a), quad_aligned(b)})
                                                    : std::nullopt) {
      map2_kernel_strided_quads<Out, T><<<grid_for(quads->index.numel), kThreadsPerBlock, 0, stream_of(ctx)>>>(
          a, b, out, *quads, f);
    } else if (fits_32bit(plan)) {
      map2_kernel_32bit<Out, T><<<grid_for(plan.numel), kThreadsPerBlock, 0, stream_of(ctx)>>>(
          a, b, out, index_32bit<2>(plan), f);
    } else {
      map2_kernel<Out, T><<<grid_for(plan.numel), kThreadsPerBlock, 0, stream_of(ctx)>>>(a, b, out, plan, f);
    }
    check_launch(ctx);
  }
  template <class T>
  static void where(KernelContext& ctx, const BroadcastPlan& plan, const uint8_t* c, const T* x, const T* y,
                    T* out) {
    if (fits_32bit(plan))
      where_kernel_32bit<T><<<grid_for(plan.numel), kThreadsPerBlock, 0, stream_of(ctx)>>>(c, x, y, out,
                                                                                            index_32bit<3>(plan));
    else
      where_kernel<T><<<grid_for(plan.numel), kThreadsPerBlock, 0, stream_of(ctx)>>>(c, x, y, out, plan);
    check_launch(ctx);
  }
  static void cast(KernelContext& ctx, const Tensor& x, Tensor& y, arith::CastMode mode) {
    const int64_t n = x.numel();
    dispatch_cast_type(ctx, y.dtype(), [&](auto dst) {
      using D = decltype(dst);
      cast_kernel<D><<<grid_for(n), kThreadsPerBlock, 0, stream_of(ctx)>>>(x.raw(), x.dtype(),
                                                                           static_cast<D*>(y.raw()), n, mode);
      check_launch(ctx);
    });
  }
  static Tensor exponent_as_float(KernelContext& ctx, const Tensor& y) {
    if (y.dtype() == DType::Float) return y;
    dispatch_dtype<arith::kFloats | arith::kInts>(ctx, y.dtype(), [](auto) {});
    Tensor f = new_tensor(ctx, DType::Float, y.shape());
    if (y.numel() == 0) return f;
    cast_kernel<float><<<grid_for(y.numel()), kThreadsPerBlock, 0, stream_of(ctx)>>>(y.raw(), y.dtype(),
                                                                                        f.data<float>(), y.numel(), true);
    check_launch(ctx);
    return f;
  }
};

}  // namespace

// Contract: the op's per-element formula; see docs/arithmetic.md#elementwise-unary
void unary(KernelContext& ctx) { run_unary<CudaElementwise>(ctx); }

// Contract: out = f(a, b) with broadcasting; see docs/arithmetic.md#elementwise-binary
void binary(KernelContext& ctx) { run_binary<CudaElementwise>(ctx); }

// Contract: left fold acc = step(acc, x_k), Mean then acc / n; see docs/arithmetic.md#variadic-sum-mean-max-min
void variadic(KernelContext& ctx) { run_variadic<CudaElementwise>(ctx); }

// Contract: v = x < lo ? lo : x; hi < v ? hi : v; see docs/arithmetic.md#clip
void clip(KernelContext& ctx) { run_clip<CudaElementwise>(ctx); }

// Contract: a selection, no arithmetic; see docs/arithmetic.md#where
void where(KernelContext& ctx) { run_where<CudaElementwise>(ctx); }

// Contract: cast_element<D>(s) per element; see docs/arithmetic.md#cast
void cast(KernelContext& ctx) { run_cast<CudaElementwise>(ctx); }

}  // namespace lockstep::cuda
