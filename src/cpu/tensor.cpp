// CPU kernels of the tensor family. Every kernel moves elements by element size (1, 2, 4 or 8), so one
// instantiation per size serves every numeric dtype, and std::string serves string tensors (host only). Work is
// split over output rows with the pool.
#include <algorithm>
#include <cstring>

#include "cpu/isa.h"
#include "cpu/tensor/transpose.h"
#include "ops/tensor.h"
#include "ops/registry.h"
#include "runtime/thread_pool.h"

namespace lockstep::cpu {

namespace {

constexpr int64_t kRowGrain = 64;

constexpr int64_t kTile = 16;

// A transposition: the last dim is contiguous in dst only and dim k (another one) in src only. Walking dst's rows
// one by one would read one element per src cache line; tiles of kTile x kTile read and write whole lines.
// Tiles (over the other dims, then k, then the last dim) go to threads.
template <typename T>
void transpose_tiles(const StridedCopy& c, int k, const T* src, T* dst, ThreadPool* pool) {
  const int last = c.rank - 1;
  const int64_t nk = c.dims[k], nl = c.dims[last], tk = (nk + kTile - 1) / kTile, tl = (nl + kTile - 1) / kTile;
  const int64_t outer = c.numel() / (nk * nl), is = c.src_strides[last], dk = c.dst_strides[k];
  const bool simd_tiles = sizeof(T) == 4 && cpu_isa() != CpuIsa::Scalar;
  pool->parallel_for(outer * tk * tl, [&](int64_t begin, int64_t end) {
    for (int64_t t = begin; t < end; ++t) {
      int64_t rest = t / (tk * tl), s = c.src_offset, d = c.dst_offset;
      for (int dim = last - 1; dim >= 0; --dim) {
        if (dim == k) continue;
        const int64_t i = rest % c.dims[dim];
        rest /= c.dims[dim];
        s += i * c.src_strides[dim];
        d += i * c.dst_strides[dim];
      }
      const int64_t i0 = t / tl % tk * kTile, j0 = t % tl * kTile;
      const int64_t i1 = std::min(nk, i0 + kTile), j1 = std::min(nl, j0 + kTile);
#if defined(__x86_64__) || defined(__i386__)
      if constexpr (sizeof(T) == 4) {
        if (simd_tiles) {
          transpose_tile_b32_avx2(reinterpret_cast<const uint32_t*>(src + s + i0 + j0 * is), is,
                                  reinterpret_cast<uint32_t*>(dst + d + i0 * dk + j0), dk, i1 - i0, j1 - j0);
          continue;
        }
      }
#endif
      for (int64_t i = i0; i < i1; ++i)
        for (int64_t j = j0; j < j1; ++j) dst[d + i * dk + j] = src[s + i + j * is];
    }
  }, 4);
}

// Contract: exact copy; see docs/arithmetic.md#strided-copy. Rows (all dims but the last) go to threads.
template <typename T>
void strided_copy(const StridedCopy& c, const T* src, T* dst, ThreadPool* pool) {
  if (c.rank == 0) {
    dst[c.dst_offset] = src[c.src_offset];
    return;
  }
  int last = c.rank - 1;
  if (c.dst_strides[last] == 1 && c.src_strides[last] != 1)
    for (int k = 0; k < last; ++k)
      if (c.src_strides[k] == 1 && c.dims[k] > 1) return transpose_tiles(c, k, src, dst, pool);
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
        std::copy_n(src + s, inner, dst + d);  // a memmove for the numeric words
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
      std::copy_n(from, p.inner, dst + r * p.inner);
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

struct CpuTensor {
  static constexpr bool kStrings = true;  // string tensors live on the host
  template <typename T>
  static void copy(KernelContext& ctx, const StridedCopy& c, const T* src, T* dst) {
    strided_copy(c, src, dst, ctx.pool);
  }
  template <typename T>
  static void pad(KernelContext& ctx, const PadPlan& p, const T* src, T* dst, int64_t n) {
    pad_rows(p, src, dst, n, ctx.pool);
  }
  template <typename T, typename I>
  static void gather(KernelContext& ctx, const GatherPlan& p, const T* src, const I* idx, T* dst, int64_t) {
    gather_rows(p, src, idx, dst, ctx.pool);
  }
  template <typename T, typename I>
  static void gather(KernelContext& ctx, const GatherElementsPlan& p, const T* src, const I* idx, T* dst, int64_t n) {
    gather_elements_all(p, src, idx, dst, n, ctx.pool);
  }
  template <typename T>
  static void fill(KernelContext& ctx, T value, T* dst, int64_t n) {
    ctx.pool->parallel_for(n, [&](int64_t b, int64_t e) { std::fill(dst + b, dst + e, value); }, 1 << 14);
  }
  static void check_indices(KernelContext& ctx, int64_t axis_dim) { validate_indices(ctx, ctx.input(1), axis_dim); }
  static void upload(KernelContext&, const Tensor& host, Tensor& out) {
    std::memcpy(out.raw(), host.raw(), host.bytes());
  }
};

}  // namespace

// Contract: exact copy; see docs/arithmetic.md#strided-copy.
void movement(KernelContext& ctx) { run_movement<CpuTensor>(ctx); }

// Contract: exact copy; see docs/arithmetic.md#pad.
void pad(KernelContext& ctx) { run_pad<CpuTensor>(ctx); }

// Contract: exact copy; see docs/arithmetic.md#gather and docs/arithmetic.md#gatherelements.
void gather(KernelContext& ctx) { run_gather<CpuTensor>(ctx); }

// Contract: values computed on the host by src/ops/tensor.cpp; see docs/arithmetic.md#host-computed.
void host_computed(KernelContext& ctx) { run_host_computed<CpuTensor>(ctx); }

// Contract: every element is the value's bytes; see docs/arithmetic.md#host-computed.
void constant_of_shape(KernelContext& ctx) { run_constant_of_shape<CpuTensor>(ctx); }

}  // namespace lockstep::cpu
