// The contract's canonical orders for sums, products and dot products (docs/arithmetic.md, "Canonical orders").
// Every kernel on every device that sums floats must produce exactly what these reference functions produce.
#pragma once

#include <cstdint>

#include "arith/hd.h"
#include "arith/math.h"

namespace lockstep::arith {

/// Number of strided partial sums in the canonical reduction: one warp, or four AVX2 / two AVX-512 registers.
constexpr int kReduceLanes = 32;
/// Length of the chunks a dot product is summed in (see dot_chunked_f32).
constexpr int64_t kDotChunk = 64;

/// Pairwise tree over the 32 lanes: lane[j] = lane[j] + lane[j + w] for w = 16, 8, 4, 2, 1.
/// A warp computes the same bits with v = v + __shfl_xor_sync(~0u, v, w).
/// The same tree over lanes of any floating type (binary64 for Einsum on double).
template <typename T, typename Combine>
LOCKSTEP_HD T tree_over_lanes(T (&lane)[kReduceLanes], Combine combine) {
  for (int w = kReduceLanes / 2; w >= 1; w /= 2)
    for (int j = 0; j < w; ++j) lane[j] = combine(lane[j], lane[j + w]);
  return lane[0];
}
template <typename Combine>
LOCKSTEP_HD float tree_over_lanes_f32(float (&lane)[kReduceLanes], Combine combine) {
  return tree_over_lanes(lane, combine);
}

/// Canonical reduction of n terms: lane j = identity (+) term(j) (+) term(j+32) (+) ... in ascending order,
/// then tree_over_lanes_f32. term(i) yields the i-th term already transformed (x, x*x, exp(x-max), ...).
template <typename T, typename Term, typename Combine>
LOCKSTEP_HD T reduce_canonical(int64_t n, T identity, Term term, Combine combine) {
  T lane[kReduceLanes];
  for (int j = 0; j < kReduceLanes; ++j) lane[j] = identity;
  for (int64_t i = 0; i < n; ++i) lane[i % kReduceLanes] = combine(lane[i % kReduceLanes], term(i));
  return tree_over_lanes(lane, combine);
}
template <typename Term, typename Combine>
LOCKSTEP_HD float reduce_canonical_f32(int64_t n, float identity, Term term, Combine combine) {
  return reduce_canonical<float>(n, identity, term, combine);
}

struct AddF32 {
  LOCKSTEP_HD float operator()(float a, float b) const { return a + b; }
};
struct MulF32 {
  LOCKSTEP_HD float operator()(float a, float b) const { return a * b; }
};

struct Add {
  template <typename T>
  LOCKSTEP_HD T operator()(T a, T b) const { return a + b; }
};
/// The canonical sum in any floating type T (float32, or binary64 for Einsum on double).
template <typename T, typename Term>
LOCKSTEP_HD T sum_canonical(int64_t n, Term term) {
  return reduce_canonical<T>(n, T(0), term, Add{});
}

/// Canonical sum (ReduceSum, the means of ReduceMean/LayerNorm/pools, Softmax's denominator).
template <typename Term>
LOCKSTEP_HD float sum_canonical_f32(int64_t n, Term term) {
  return reduce_canonical_f32(n, 0.0f, term, AddF32{});
}

/// Canonical product (ReduceProd).
template <typename Term>
LOCKSTEP_HD float product_canonical_f32(int64_t n, Term term) {
  return reduce_canonical_f32(n, 1.0f, term, MulF32{});
}

/// Canonical dot product (Conv, ConvTranspose, Gemm, MatMul): k runs in [0, K) in the op's canonical order.
/// Each chunk of kDotChunk consecutive k starts a partial p = +0 and accumulates p = fma(a(k), b(k), p);
/// the total starts at `init` (the bias, or +0) and adds each chunk's p in chunk order: total = total + p.
/// dot_chunked in any floating type T (fma_of: binary32 or binary64 fma).
template <typename T, typename A, typename B>
LOCKSTEP_HD T dot_chunked(int64_t K, T init, A a, B b) {
  T total = init;
  for (int64_t start = 0; start < K; start += kDotChunk) {
    int64_t end = start + kDotChunk < K ? start + kDotChunk : K;
    T p = T(0);
    for (int64_t k = start; k < end; ++k) p = fma_of(static_cast<T>(a(k)), static_cast<T>(b(k)), p);
    total = total + p;
  }
  return total;
}
template <typename A, typename B>
LOCKSTEP_HD float dot_chunked_f32(int64_t K, float init, A a, B b) {
  return dot_chunked<float>(K, init, a, b);
}

}  // namespace lockstep::arith
