// Per-element rules of the reduce and pool families, shared by the CPU and CUDA kernels
// (docs/arithmetic.md#reduce, docs/arithmetic.md#pool). Both devices call exactly these functions, or reproduce
// them operation by operation (the AVX2 and warp versions of the canonical reduction).
#pragma once

#include <cstdint>

#include "arith/elementwise.h"  // abs_f32
#include "arith/hd.h"
#include "arith/reduce.h"

namespace lockstep::arith {

/// The contract's "Max and min over an axis" step: does t replace the running maximum m?
/// The first NaN wins; values that compare equal (+0, -0) keep the earlier one.
/// The same rule in any floating type (binary64 for the double reductions).
template <typename T>
LOCKSTEP_HD bool max_takes(T t, T m) { return (t > m || t != t) && m == m; }
template <typename T>
LOCKSTEP_HD bool min_takes(T t, T m) { return (t < m || t != t) && m == m; }
LOCKSTEP_HD bool max_takes_f32(float t, float m) { return max_takes(t, m); }
LOCKSTEP_HD bool min_takes_f32(float t, float m) { return min_takes(t, m); }

/// Sequential max (or min) of n terms in ascending order; `empty` for n == 0. Also reports the winning index.
/// T is the type of `empty`: float, or double for the double reductions.
template <bool IsMax, typename T, typename Load>
LOCKSTEP_HD T extreme_seq(int64_t n, T empty, Load load, int64_t* index = nullptr) {
  T m = empty;
  int64_t at = -1;
  for (int64_t i = 0; i < n; ++i) {
    T t = load(i);
    if (i == 0 || (IsMax ? max_takes(t, m) : min_takes(t, m))) {
      m = t;
      at = i;
    }
  }
  if (index) *index = at;
  return m;
}
template <bool IsMax, typename Load>
LOCKSTEP_HD float extreme_seq_f32(int64_t n, float empty, Load load, int64_t* index = nullptr) {
  return extreme_seq<IsMax>(n, empty, load, index);
}

/// Combines two (value, index) candidates of the sequential max rule so that any tree over them gives the
/// sequential result: the first NaN if any, else the first element equal to the extreme. Used by the warp
/// versions; index < 0 marks an empty candidate.
template <bool IsMax>
LOCKSTEP_HD void extreme_pick_f32(float& v, int64_t& i, float v2, int64_t i2) {
  if (i2 < 0) return;
  if (i < 0) { v = v2; i = i2; return; }
  bool n1 = v != v, n2 = v2 != v2;
  bool take;
  if (n1 || n2) take = n1 && n2 ? i2 < i : n2;
  else if (v2 == v) take = i2 < i;
  else take = IsMax ? v2 > v : v2 < v;
  if (take) { v = v2; i = i2; }
}

/// Term transforms of the float reductions (applied before a term enters the canonical sum).
enum class ReduceKind : int { Sum, Mean, Prod, Max, Min, L1, L2, SumSquare, LogSumExp, LogSum };

/// ReduceL1's term: |x| with the sign bit cleared (|-0| = +0); NaN passes through.
LOCKSTEP_HD float l1_term_f32(float x) { return x != x ? x : abs_f32(x); }
LOCKSTEP_HD float square_f32(float x) { return x * x; }

/// LogSumExp's finish: m is the sequential max; s the canonical sum of exp_f32(x_i - m).
/// Non-finite m (NaN, +inf, -inf: all terms -inf) is the result itself; see docs/arithmetic.md#reduce.
LOCKSTEP_HD bool lse_direct_f32(float m) { return !(m - m == 0.0f); }

struct Mul {
  template <typename T>
  LOCKSTEP_HD T operator()(T a, T b) const { return a * b; }
};

/// One output of a Reduce* on double (docs/arithmetic.md#double-reductions): the float32 sequence of the kind with
/// every operation in binary64 (the canonical sum and product, the sequential max and min, exp_f64 and log_f64,
/// IEEE sqrt). load(i) is the i-th reduced element (row-major over the reduced axes); it may be called twice per
/// element (LogSumExp). Both devices call this function, one output per thread.
template <typename Load>
LOCKSTEP_HD double reduce_output_f64(ReduceKind k, int64_t n, Load load) {
  constexpr double kInf = __builtin_huge_val();
  switch (k) {
    case ReduceKind::Max: return extreme_seq<true>(n, -kInf, load);
    case ReduceKind::Min: return extreme_seq<false>(n, kInf, load);
    case ReduceKind::Prod: return reduce_canonical<double>(n, 1.0, load, Mul{});
    case ReduceKind::Mean: return sum_canonical<double>(n, load) / static_cast<double>(n);
    case ReduceKind::L1:
      return sum_canonical<double>(n, [&](int64_t i) {
        const double x = load(i);
        return x != x ? x : abs_f64(x);
      });
    case ReduceKind::L2: return sqrt_f64(sum_canonical<double>(n, [&](int64_t i) { return load(i) * load(i); }));
    case ReduceKind::SumSquare: return sum_canonical<double>(n, [&](int64_t i) { return load(i) * load(i); });
    case ReduceKind::LogSum: return log_f64(sum_canonical<double>(n, load));
    case ReduceKind::LogSumExp: {
      const double m = extreme_seq<true>(n, -kInf, load);
      if (n == 0) return -kInf;
      if (!(m - m == 0.0)) return m;  // NaN, +inf, or every term -inf
      return log_f64(sum_canonical<double>(n, [&](int64_t i) { return exp_f64(load(i) - m); })) + m;
    }
    case ReduceKind::Sum: break;
  }
  return sum_canonical<double>(n, load);
}

#if defined(__CUDACC__)
// ---------------------------------------------------------------------------------------------- warp twins
// One warp computes the canonical reduction of a row: lane j combines the terms j, j+32, ... in ascending order
// (starting from the identity), then v = v (op) shfl_xor(v, w) for w = 16, 8, 4, 2, 1 reproduces
// tree_over_lanes_f32 in lane 0. The result is broadcast from lane 0.
template <typename Combine>
__device__ __forceinline__ float warp_tree_f32(float v, Combine combine) {
  for (int w = kReduceLanes / 2; w >= 1; w /= 2) v = combine(v, __shfl_xor_sync(0xffffffffu, v, w));
  return __shfl_sync(0xffffffffu, v, 0);
}

/// The sequential max (min) rule over a row held by a warp: each lane folds its (value, index) candidates with
/// extreme_pick_f32, a total order, so every tree gives the sequential result. Broadcast from lane 0.
template <bool IsMax>
__device__ __forceinline__ float warp_extreme_f32(float v, int64_t i, float empty) {
  for (int w = kReduceLanes / 2; w >= 1; w /= 2) {
    float v2 = __shfl_xor_sync(0xffffffffu, v, w);
    long long i2 = __shfl_xor_sync(0xffffffffu, static_cast<long long>(i), w);
    extreme_pick_f32<IsMax>(v, i, v2, i2);
  }
  v = __shfl_sync(0xffffffffu, v, 0);
  i = __shfl_sync(0xffffffffu, static_cast<long long>(i), 0);
  return i < 0 ? empty : v;
}
#endif

// ---------------------------------------------------------------------------------------------- pools

/// Up to three spatial dims; pools of rank 1 and 2 are padded in front with dims of size 1.
constexpr int kPoolDims = 3;

/// Geometry of a pool over one (n, c) plane. POD so it can be passed to CUDA kernels by value.
struct PoolGeom {
  int64_t planes = 0;                // N * C
  int64_t in[kPoolDims], out[kPoolDims], kernel[kPoolDims], stride[kPoolDims], dilation[kPoolDims];
  int64_t pad_begin[kPoolDims], pad_end[kPoolDims];
  int64_t in_plane = 1, out_plane = 1;
  bool count_include_pad = false;
  bool column_major_indices = false;  // MaxPool storage_order = 1
};

/// Where a tap falls along one dim: 0 = inside the input, 1 = in the padding, 2 = beyond the padding.
LOCKSTEP_HD int pool_tap_class(const PoolGeom& g, int d, int64_t pos) {
  if (pos >= 0 && pos < g.in[d]) return 0;
  if (pos >= -g.pad_begin[d] && pos < g.in[d] + g.pad_end[d]) return 1;
  return 2;
}

/// Splits a flat output index within a plane into (o0, o1, o2).
LOCKSTEP_HD void pool_out_coords(const PoolGeom& g, int64_t flat, int64_t (&o)[kPoolDims]) {
  o[2] = flat % g.out[2];
  flat /= g.out[2];
  o[1] = flat % g.out[1];
  o[0] = flat / g.out[1];
}

/// The canonical sum of term(t) over a window's terms in row-major kernel order, and their count. Taps inside the
/// input are terms; padding taps are +0 terms only if count_include_pad; taps beyond the padding (ceil_mode) are
/// never terms. The lanes are the reference reduction's, filled term by term.
template <typename Term>
LOCKSTEP_HD float window_sum_f32(const PoolGeom& g, const float* plane, int64_t out_flat, Term term, int64_t& count) {
  int64_t o[kPoolDims];
  pool_out_coords(g, out_flat, o);
  float lane[kReduceLanes];
  for (int j = 0; j < kReduceLanes; ++j) lane[j] = 0.0f;
  count = 0;
  for (int64_t k0 = 0; k0 < g.kernel[0]; ++k0) {
    int64_t p0 = o[0] * g.stride[0] - g.pad_begin[0] + k0 * g.dilation[0];
    int c0 = pool_tap_class(g, 0, p0);
    if (c0 == 2 || (c0 == 1 && !g.count_include_pad)) continue;
    for (int64_t k1 = 0; k1 < g.kernel[1]; ++k1) {
      int64_t p1 = o[1] * g.stride[1] - g.pad_begin[1] + k1 * g.dilation[1];
      int c1 = pool_tap_class(g, 1, p1);
      if (c1 == 2 || (c1 == 1 && !g.count_include_pad)) continue;
      for (int64_t k2 = 0; k2 < g.kernel[2]; ++k2) {
        int64_t p2 = o[2] * g.stride[2] - g.pad_begin[2] + k2 * g.dilation[2];
        int c2 = pool_tap_class(g, 2, p2);
        if (c2 == 2 || (c2 == 1 && !g.count_include_pad)) continue;
        bool inside = c0 == 0 && c1 == 0 && c2 == 0;
        float t = inside ? term(plane[(p0 * g.in[1] + p1) * g.in[2] + p2]) : 0.0f;
        int j = static_cast<int>(count % kReduceLanes);
        lane[j] = lane[j] + t;
        ++count;
      }
    }
  }
  return tree_over_lanes_f32(lane, AddF32{});
}

struct IdentityF32 {
  LOCKSTEP_HD float operator()(float x) const { return x; }
};

/// AveragePool of one output: the window's canonical sum divided by its count of terms.
LOCKSTEP_HD float avgpool_window_f32(const PoolGeom& g, const float* plane, int64_t out_flat) {
  int64_t count = 0;
  float s = window_sum_f32(g, plane, out_flat, IdentityF32{}, count);
  return s / static_cast<float>(count);
}

/// LpPool's and LpNormalization's term |x|^p: |x| for p = 1, x*x for p = 2, pow_f32(|x|, p) otherwise.
struct LpTermF32 {
  int64_t p;
  LOCKSTEP_HD float operator()(float x) const {
    if (p == 1) return l1_term_f32(x);
    if (p == 2) return x * x;
    return pow_f32(abs_f32(x), static_cast<float>(p));
  }
};
/// The p-th root of a sum of LpTermF32 terms: s, sqrt(s) (IEEE), or pow_f32(s, 1/p) (1/p rounded first).
LOCKSTEP_HD float lp_root_f32(float s, int64_t p) {
  if (p == 1) return s;
  if (p == 2) return sqrt_f32(s);
  return pow_f32(s, 1.0f / static_cast<float>(p));
}

/// LpPool of one output: (sum of |x|^p over the window, padding taps as +0 terms)^(1/p).
LOCKSTEP_HD float lppool_window_f32(const PoolGeom& g, const float* plane, int64_t out_flat, int64_t p) {
  int64_t count = 0;
  return lp_root_f32(window_sum_f32(g, plane, out_flat, LpTermF32{p}, count), p);
}

/// MaxPool's rule for the next tap t inside the input: the first such tap is taken, then float taps by
/// max_takes_f32 (NaN wins, as does a greater value), other types when greater.
template <typename T>
LOCKSTEP_HD bool maxpool_takes(T t, T m, bool any) {
  if constexpr (sizeof(T) == 4 && T(0.5) != T(0)) return !any || max_takes_f32(t, m);
  else return !any || t > m;
}

/// MaxPool of one output: the sequential max rule over the taps inside the input, in row-major kernel order
/// (padding never takes part). -inf and index -1 if no tap is inside. `index` is the tap's flat position in
/// the plane, row-major or (storage_order = 1) column-major over the spatial dims.
template <typename T>
LOCKSTEP_HD T maxpool_window(const PoolGeom& g, const T* plane, int64_t out_flat, T lowest, int64_t* index) {
  int64_t o[kPoolDims];
  pool_out_coords(g, out_flat, o);
  T m = lowest;
  int64_t at = -1;
  bool any = false;
  for (int64_t k0 = 0; k0 < g.kernel[0]; ++k0) {
    int64_t p0 = o[0] * g.stride[0] - g.pad_begin[0] + k0 * g.dilation[0];
    if (p0 < 0 || p0 >= g.in[0]) continue;
    for (int64_t k1 = 0; k1 < g.kernel[1]; ++k1) {
      int64_t p1 = o[1] * g.stride[1] - g.pad_begin[1] + k1 * g.dilation[1];
      if (p1 < 0 || p1 >= g.in[1]) continue;
      for (int64_t k2 = 0; k2 < g.kernel[2]; ++k2) {
        int64_t p2 = o[2] * g.stride[2] - g.pad_begin[2] + k2 * g.dilation[2];
        if (p2 < 0 || p2 >= g.in[2]) continue;
        int64_t flat = (p0 * g.in[1] + p1) * g.in[2] + p2;
        T t = plane[flat];
        if (maxpool_takes(t, m, any)) {
          m = t;
          at = g.column_major_indices ? (p2 * g.in[1] + p1) * g.in[0] + p0 : flat;
        }
        any = true;
      }
    }
  }
  if (index) *index = at;
  return m;
}

// ---------------------------------------------------------------------------------------------- axis rows
// One line along an axis: `len` elements `inner` apart. Both devices call these per line (a CPU task or one CUDA
// thread per line), so each output element gets the same operations.

/// Hardmax: 1 at the element the sequential max rule picks (the first NaN, else the first maximum), +0 elsewhere.
struct HardmaxRowF32 {
  LOCKSTEP_HD void operator()(const float* x, float* y, int64_t len, int64_t inner) const {
    int64_t at = -1;
    extreme_seq_f32<true>(len, 0.0f, [&](int64_t i) { return x[i * inner]; }, &at);
    for (int64_t i = 0; i < len; ++i) y[i * inner] = i == at ? 1.0f : 0.0f;
  }
};

/// Softmax / LogSoftmax of one row on double (docs/arithmetic.md#softmax--logsoftmax): the float32 row's sequence
/// with every operation in binary64. load(i) is element i, store(i, v) writes output i (each element is read for
/// the last time just before its own store, so the output may be the input). m = MAX(x_i) (sequential rule); s =
/// S(exp_f64(x_i - m)) (sum_canonical<double>); Softmax y_i = exp_f64(x_i - m) / s (e_i recomputed: same bits),
/// LogSoftmax y_i = (x_i - m) - log_f64(s). Both devices call this per row (Softmax on double, and Attention's
/// softmax_precision = 11 with float loads widened and stores rounded to float).
template <typename Load, typename Store>
LOCKSTEP_HD void softmax_row_f64(int64_t len, bool log, Load load, Store store) {
  const double m = extreme_seq<true>(len, -__builtin_huge_val(), load);
  const double s = sum_canonical<double>(len, [&](int64_t i) { return exp_f64(load(i) - m); });
  if (log) {
    const double ls = log_f64(s);
    for (int64_t i = 0; i < len; ++i) store(i, (load(i) - m) - ls);
  } else {
    for (int64_t i = 0; i < len; ++i) store(i, exp_f64(load(i) - m) / s);
  }
}
/// The row functor of Softmax / LogSoftmax on double over a line `inner` apart (the per-line kernels).
struct SoftmaxRowF64 {
  bool log;
  LOCKSTEP_HD void operator()(const double* x, double* y, int64_t len, int64_t inner) const {
    softmax_row_f64(len, log, [&](int64_t i) { return x[i * inner]; }, [&](int64_t i, double v) { y[i * inner] = v; });
  }
};

/// LpNormalization: y_i = x_i / norm, norm = S(|x_i|) (p = 1) or sqrt(S(x_i * x_i)) (p = 2), terms ascending;
/// a zero norm gives +0 (the spec's 0/0 = 0).
struct LpNormalizeRowF32 {
  int64_t p;
  LOCKSTEP_HD void operator()(const float* x, float* y, int64_t len, int64_t inner) const {
    const LpTermF32 term{p};
    const float norm = lp_root_f32(sum_canonical_f32(len, [&](int64_t i) { return term(x[i * inner]); }), p);
    for (int64_t i = 0; i < len; ++i) y[i * inner] = norm == 0.0f ? 0.0f : x[i * inner] / norm;
  }
};

/// CumSum / CumProd: a sequential scan along the line (descending with reverse): acc = acc (op) x_i, one rounding
/// per step; exclusive writes acc before the step (the identity first). Integers wrap (two's complement).
template <typename T>
struct ScanRow {
  bool product, exclusive, reverse;
  LOCKSTEP_HD static T step(T a, T b, bool product) {
    if constexpr (T(0.5) != T(0)) {
      return product ? a * b : a + b;
    } else {
      using U = unsigned long long;
      return static_cast<T>(product ? static_cast<U>(a) * static_cast<U>(b) : static_cast<U>(a) + static_cast<U>(b));
    }
  }
  LOCKSTEP_HD void operator()(const T* x, T* y, int64_t len, int64_t inner) const {
    T acc = product ? T(1) : T(0);
    for (int64_t k = 0; k < len; ++k) {
      const int64_t i = (reverse ? len - 1 - k : k) * inner;
      const T next = step(acc, x[i], product);
      y[i] = exclusive ? acc : next;
      acc = next;
    }
  }
};

}  // namespace lockstep::arith
