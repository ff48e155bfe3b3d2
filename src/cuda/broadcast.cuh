// Index arithmetic of the broadcasting elementwise kernels: where each input's element of output element i lies.
// Integer work only (no float operation), so nothing here touches the contract; it decides only how fast the
// kernels find their operands. A 64-bit division is a long subroutine on the GPU and a 32-bit one about twenty
// instructions: below 2^31 elements the coordinates come from a multiply-high and a shift per dimension instead.
#pragma once

#include <cstdint>
#include <optional>

#include "cuda/common.cuh"
#include "ops/elementwise.h"
#include "ops/fast_divisor.h"

namespace lockstep::cuda {

/// A BroadcastPlan in 32-bit form, for plans whose every offset is below 2^31 (fits_32bit).
template <int kInputs>
struct BroadcastIndex32 {
  int rank = 1;
  uint32_t numel = 0;
  FastDivisor dims[kMaxRank];
  uint32_t strides[kInputs][kMaxRank] = {};

  /// The offsets of output element i in each input, from one walk over the dimensions.
  __device__ __forceinline__ void offsets(uint32_t i, uint32_t (&off)[kInputs]) const {
#pragma unroll
    for (int k = 0; k < kInputs; ++k) off[k] = 0;
    for (int d = rank - 1; d >= 0; --d) {
      const uint32_t q = dims[d].quotient(i), coordinate = i - q * dims[d].divisor;
#pragma unroll
      for (int k = 0; k < kInputs; ++k) off[k] += coordinate * strides[k][d];
      i = q;
    }
  }
};

/// Whether every element count and offset of the plan stays below 2^31.
inline bool fits_32bit(const BroadcastPlan& plan) {
  constexpr int64_t kLimit = int64_t(1) << 31;
  if (plan.numel >= kLimit) return false;
  for (int k = 0; k < plan.num_inputs; ++k) {
    int64_t last = 0;
    for (int d = 0; d < plan.rank; ++d) last += (plan.dims[d] - 1) * plan.strides[k][d];
    if (last >= kLimit) return false;
  }
  return true;
}

template <int kInputs>
BroadcastIndex32<kInputs> index_32bit(const BroadcastPlan& plan) {
  BroadcastIndex32<kInputs> index;
  index.rank = plan.rank;
  index.numel = uint32_t(plan.numel);
  for (int d = 0; d < plan.rank; ++d) {
    index.dims[d] = FastDivisor(uint32_t(plan.dims[d]));
    for (int k = 0; k < kInputs; ++k) index.strides[k][d] = uint32_t(plan.strides[k][d]);
  }
  return index;
}

/// A plan whose innermost dim is a whole number of quads (four outputs), in quads: output quad q's first element's
/// offset in each input comes from index_32bit over the quads, and each input either runs along the innermost dim
/// (stride 1: its four elements are one aligned vector) or stays on one element along it (stride 0). Nothing where
/// that does not hold, where an offset reaches 2^31, or where a running input's other strides or its base would put
/// a vector off its 16-byte alignment (`aligned[k]`: input k's pointer is).
template <int kInputs>
struct QuadIndex {
  BroadcastIndex32<kInputs> index;  // over the quads, offsets in elements
  bool runs[kInputs] = {};          // input k's four elements are consecutive
};
template <int kInputs>
std::optional<QuadIndex<kInputs>> quad_index_32bit(const BroadcastPlan& plan, const bool (&aligned)[kInputs]) {
  const int inner = plan.rank - 1;
  if (!fits_32bit(plan) || plan.dims[inner] % 4 != 0) return std::nullopt;
  QuadIndex<kInputs> q;
  q.index = index_32bit<kInputs>(plan);
  q.index.numel = uint32_t(plan.numel / 4);
  q.index.dims[inner] = FastDivisor(uint32_t(plan.dims[inner] / 4));
  for (int k = 0; k < kInputs; ++k) {
    const int64_t step = plan.strides[k][inner];
    if (step != 0 && step != 1) return std::nullopt;
    q.runs[k] = step == 1;
    if (q.runs[k] && !aligned[k]) return std::nullopt;
    for (int d = 0; q.runs[k] && d < inner; ++d)
      if (plan.strides[k][d] % 4 != 0) return std::nullopt;
    q.index.strides[k][inner] = uint32_t(4 * step);
  }
  return q;
}

/// Four consecutive elements of type T, moved as one aligned vector.
template <class T>
struct alignas(4 * sizeof(T)) Quad {
  T v[4];
};

/// Whether p may be read or written as Quad<T>s.
template <class T>
bool quad_aligned(const T* p) {
  return reinterpret_cast<uintptr_t>(p) % sizeof(Quad<T>) == 0;
}

}  // namespace lockstep::cuda
