// CPU kernels of the tensor family. Every kernel moves bytes by element size (1, 2, 4 or 8), so one
// instantiation per size serves every dtype. Work is split over output rows with the pool.
#include <cstring>

#include "ops/tensor.h"
#include "ops/registry.h"
#include "runtime/thread_pool.h"

namespace lockstep::cpu {

namespace {

template <int Size> struct Word;
template <> struct Word<1> { using T = uint8_t; };
template <> struct Word<2> { using T = uint16_t; };
template <> struct Word<4> { using T = uint32_t; };
template <> struct Word<8> { using T = uint64_t; };

// Calls fn.template operator()<T>() with T the unsigned word of `size` bytes.
template <typename Fn>
void by_size(int size, Fn&& fn) {
  switch (size) {
    case 1: fn(typename Word<1>::T{}); break;
    case 2: fn(typename Word<2>::T{}); break;
    case 4: fn(typename Word<4>::T{}); break;
    default: fn(typename Word<8>::T{}); break;
  }
}

constexpr int64_t kRowGrain = 64;

// Contract: exact copy; see docs/arithmetic.md#strided-copy. Rows (all dims but the last) go to threads.
template <typename T>
void strided_copy(const StridedCopy& c, const T* src, T* dst, ThreadPool* pool) {
  if (c.rank == 0) {
    dst[c.dst_offset] = src[c.src_offset];
    return;
  }
  int last = c.rank - 1;
  int64_t inner = c.dims[last], rows = c.numel() / (inner ? inner : 1);
  if (inner == 0) return;
  int64_t is = c.src_strides[last], id = c.dst_strides[last];
  pool->parallel_for(rows, [&](int64_t begin, int64_t end) {
    for (int64_t row = begin; row < end; ++row) {
      int64_t s = c.src_offset, d = c.dst_offset, rest = row;
      for (int k = last - 1; k >= 0; --k) {
        int64_t i = rest % c.dims[k];
        rest /= c.dims[k];
        s += i * c.src_strides[k];
        d += i * c.dst_strides[k];
      }
      if (is == 1 && id == 1) {
        std::memcpy(dst + d, src + s, static_cast<size_t>(inner) * sizeof(T));
      } else {
        for (int64_t j = 0; j < inner; ++j) dst[d + j * id] = src[s + j * is];
      }
    }
  }, std::max<int64_t>(1, kRowGrain * 64 / inner));
}

// Contract: exact copy; see docs/arithmetic.md#pad. Each output row resolves its outer coordinates once.
template <typename T>
void pad_rows(const PadPlan& p, const T* src, T* dst, int64_t numel, ThreadPool* pool) {
  T value;
  std::memcpy(&value, &p.value_bits, sizeof(T));
  if (p.rank == 0) {
    if (numel) dst[0] = src[0];
    return;
  }
  int last = p.rank - 1;
  int64_t inner = p.out_dims[last];
  if (inner == 0 || numel == 0) return;
  int64_t rows = numel / inner;
  pool->parallel_for(rows, [&](int64_t begin, int64_t end) {
    for (int64_t row = begin; row < end; ++row) {
      int64_t base = 0, rest = row;
      bool constant = false;
      for (int k = last - 1; k >= 0; --k) {
        int64_t o = rest % p.out_dims[k];
        rest /= p.out_dims[k];
        int64_t i = pad_source_index(o - p.begin[k], p.in_dims[k], p.mode);
        if (i < 0) constant = true;
        else base += i * p.in_strides[k];
      }
      T* out = dst + row * inner;
      for (int64_t j = 0; j < inner; ++j) {
        int64_t i = constant ? -1 : pad_source_index(j - p.begin[last], p.in_dims[last], p.mode);
        out[j] = i < 0 ? value : src[base + i * p.in_strides[last]];
      }
    }
  }, std::max<int64_t>(1, kRowGrain * 64 / inner));
}

template <typename I>
int64_t wrapped(I v, int64_t n) {
  int64_t i = static_cast<int64_t>(v);
  return i < 0 ? i + n : i;
}

// Contract: exact copy; see docs/arithmetic.md#gather. Indices were validated before the copy.
template <typename T, typename I>
void gather_rows(const GatherPlan& p, const T* src, const I* idx, T* dst, ThreadPool* pool) {
  int64_t rows = p.outer * p.n_idx;
  pool->parallel_for(rows, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      int64_t o = r / p.n_idx, j = r % p.n_idx;
      const T* from = src + (o * p.axis_dim + wrapped(idx[j], p.axis_dim)) * p.inner;
      std::memcpy(dst + r * p.inner, from, static_cast<size_t>(p.inner) * sizeof(T));
    }
  }, std::max<int64_t>(1, kRowGrain * 64 / std::max<int64_t>(p.inner, 1)));
}

// Contract: exact copy; see docs/arithmetic.md#gatherelements.
template <typename T, typename I>
void gather_elements_all(const GatherElementsPlan& p, const T* src, const I* idx, T* dst, int64_t n, ThreadPool* pool) {
  pool->parallel_for(n, [&](int64_t begin, int64_t end) {
    for (int64_t e = begin; e < end; ++e) {
      int64_t s = 0, rest = e;
      for (int k = p.rank - 1; k >= 0; --k) {
        int64_t i = rest % p.out_dims[k];
        rest /= p.out_dims[k];
        if (k == p.axis) i = wrapped(idx[e], p.axis_dim);
        s += i * p.data_strides[k];
      }
      dst[e] = src[s];
    }
  }, 4096);
}

}  // namespace

// Contract: no data is touched; the output shares the input's buffer. See docs/arithmetic.md#aliases.
void alias(KernelContext& ctx) { ctx.alias_output(0, ctx.input(0).reshaped(alias_shape(ctx))); }

// Contract: exact copy; see docs/arithmetic.md#strided-copy.
void movement(KernelContext& ctx) {
  MovementPlan plan = movement_plan(ctx);
  for (size_t i = 0; i < plan.out_shapes.size(); ++i) ctx.output(static_cast<int>(i), plan.dtype, plan.out_shapes[i]);
  int size = movable_size(ctx, plan.dtype);
  for (const CopyJob& job : plan.jobs) {
    const void* src = ctx.input(job.src_input).raw();
    void* dst = ctx.outputs[job.dst_output].raw();
    by_size(size, [&](auto w) {
      using T = decltype(w);
      strided_copy(job.copy, static_cast<const T*>(src), static_cast<T*>(dst), ctx.pool);
    });
  }
}

// Contract: exact copy; see docs/arithmetic.md#pad.
void pad(KernelContext& ctx) {
  Shape shape;
  PadPlan plan = pad_plan(ctx, shape);
  const Tensor& x = ctx.input(0);
  Tensor& out = ctx.output(0, x.dtype(), shape);
  by_size(movable_size(ctx, x.dtype()), [&](auto w) {
    using T = decltype(w);
    pad_rows(plan, x.data<T>(), out.data<T>(), out.numel(), ctx.pool);
  });
}

// Contract: exact copy; see docs/arithmetic.md#gather.
void gather(KernelContext& ctx) {
  Shape shape;
  GatherPlan plan = gather_plan(ctx, shape);
  const Tensor& x = ctx.input(0);
  const Tensor& idx = ctx.input(1);
  validate_indices(ctx, idx, plan.axis_dim);
  Tensor& out = ctx.output(0, x.dtype(), shape);
  if (out.numel() == 0) return;
  by_size(movable_size(ctx, x.dtype()), [&](auto w) {
    using T = decltype(w);
    if (idx.dtype() == DType::Int64) gather_rows(plan, x.data<T>(), idx.data<int64_t>(), out.data<T>(), ctx.pool);
    else gather_rows(plan, x.data<T>(), idx.data<int32_t>(), out.data<T>(), ctx.pool);
  });
}

// Contract: exact copy; see docs/arithmetic.md#gatherelements.
void gather_elements(KernelContext& ctx) {
  Shape shape;
  GatherElementsPlan plan = gather_elements_plan(ctx, shape);
  const Tensor& x = ctx.input(0);
  const Tensor& idx = ctx.input(1);
  validate_indices(ctx, idx, plan.axis_dim);
  Tensor& out = ctx.output(0, x.dtype(), shape);
  if (out.numel() == 0) return;
  by_size(movable_size(ctx, x.dtype()), [&](auto w) {
    using T = decltype(w);
    if (idx.dtype() == DType::Int64)
      gather_elements_all(plan, x.data<T>(), idx.data<int64_t>(), out.data<T>(), out.numel(), ctx.pool);
    else
      gather_elements_all(plan, x.data<T>(), idx.data<int32_t>(), out.data<T>(), out.numel(), ctx.pool);
  });
}

// Contract: values computed on the host by src/ops/tensor.cpp; see docs/arithmetic.md#host-computed.
void host_computed(KernelContext& ctx) {
  Tensor v = host_value(ctx, static_cast<HostOp>(ctx.entry.variant));
  Tensor& out = ctx.output(0, v.dtype(), v.shape());
  if (v.bytes()) std::memcpy(out.raw(), v.raw(), v.bytes());
}

// Contract: every element is the value's bytes; see docs/arithmetic.md#host-computed.
void constant_of_shape(KernelContext& ctx) {
  Shape shape;
  Tensor v = constant_of_shape_value(ctx, shape);
  Tensor& out = ctx.output(0, v.dtype(), shape);
  by_size(movable_size(ctx, v.dtype()), [&](auto w) {
    using T = decltype(w);
    T value = v.data<T>()[0];
    T* o = out.data<T>();
    ctx.pool->parallel_for(out.numel(), [&](int64_t b, int64_t e) { std::fill(o + b, o + e, value); }, 1 << 14);
  });
}

}  // namespace lockstep::cpu
