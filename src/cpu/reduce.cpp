// CPU kernels of the reduce family (Reduce*, ArgMax/ArgMin, Softmax/LogSoftmax, per-line ops). Contract: docs/arithmetic.md#reduce.
#include <immintrin.h>

#include <cstring>
#include <limits>
#include <optional>
#include <type_traits>

#include "arith/elementwise.h"
#include "arith/math.h"
#include "arith/reduce.h"
#include "arith/reduce_ops.h"
#include "cpu/elementwise/unary_f32.h"
#include "cpu/isa.h"
#include "ops/reduce.h"
#include "ops/registry.h"
#include "runtime/thread_pool.h"

namespace lockstep::cpu {

namespace {

/// The term transforms a contiguous canonical reduction can apply, in scalar, 8-wide and 16-wide form.
struct TermIdentity {
  static float s(float x) { return x; }
  __attribute__((target("avx2"))) static __m256 v(__m256 x) { return x; }
  __attribute__((target("avx512f"))) static __m512 w(__m512 x) { return x; }
};
struct TermSquare {
  static float s(float x) { return x * x; }
  __attribute__((target("avx2"))) static __m256 v(__m256 x) { return _mm256_mul_ps(x, x); }
  __attribute__((target("avx512f"))) static __m512 w(__m512 x) { return _mm512_mul_ps(x, x); }
};
struct TermAbs {
  static float s(float x) { return arith::l1_term_f32(x); }
  __attribute__((target("avx2"))) static __m256 v(__m256 x) { return _mm256_andnot_ps(_mm256_set1_ps(-0.0f), x); }
  __attribute__((target("avx512f"))) static __m512 w(__m512 x) { return _mm512_abs_ps(x); }
};

/// The AVX2 forms run unless the kernels' ISA (cpu/isa.h: the CPU's, or LOCKSTEP_CPU_ISA) is scalar.
inline bool use_avx2() { return cpu_isa() != CpuIsa::Scalar; }

// Contract: canonical reduction, lane j = elements j, j+32, ... ascending, then the 16-8-4-2-1 tree.
// Register r holds lanes 8r..8r+7; the tail (< 32 elements) and the tree run on the stored lanes in scalar,
// exactly as the reference does.
template <bool Product>
__attribute__((target("avx2"))) inline __m256 combine8(__m256 a, __m256 b) {
  return Product ? _mm256_mul_ps(a, b) : _mm256_add_ps(a, b);
}

template <typename Term, bool Product>
__attribute__((target("avx2"))) float reduce_contiguous_avx2(const float* x, int64_t n) {
  const __m256 id = _mm256_set1_ps(Product ? 1.0f : 0.0f);
  __m256 r0 = id, r1 = id, r2 = id, r3 = id;
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    r0 = combine8<Product>(r0, Term::v(_mm256_loadu_ps(x + i)));
    r1 = combine8<Product>(r1, Term::v(_mm256_loadu_ps(x + i + 8)));
    r2 = combine8<Product>(r2, Term::v(_mm256_loadu_ps(x + i + 16)));
    r3 = combine8<Product>(r3, Term::v(_mm256_loadu_ps(x + i + 24)));
  }
  alignas(32) float lane[arith::kReduceLanes];
  _mm256_store_ps(lane, r0);
  _mm256_store_ps(lane + 8, r1);
  _mm256_store_ps(lane + 16, r2);
  _mm256_store_ps(lane + 24, r3);
  for (int j = 0; i + j < n; ++j) lane[j] = Product ? lane[j] * Term::s(x[i + j]) : lane[j] + Term::s(x[i + j]);
  if (Product) return arith::tree_over_lanes_f32(lane, arith::MulF32{});
  return arith::tree_over_lanes_f32(lane, arith::AddF32{});
}

// Contract: canonical reduction, lane j = elements j, j+32, ... ascending, then the 16-8-4-2-1 tree.
// Lanes 0..15 in lo, 16..31 in hi. The tail (< 32 elements) is combined into its lanes alone (merge masking leaves
// the others as they are: adding +0 would turn a -0 into +0), and each level of the tree combines lane j with lane
// j + w, in that operand order: the reference's operations, 16 lanes at once. The scalar tail and tree took most of
// a short row's time (GlobalAveragePool over 7x7 planes: 2.0 -> 0.9 of onnxruntime's time).
template <bool Product>
__attribute__((target("avx512f"))) inline __m512 combine16(__m512 a, __m512 b) {
  return Product ? _mm512_mul_ps(a, b) : _mm512_add_ps(a, b);
}

template <typename Term, bool Product>
__attribute__((target("avx512f"))) float reduce_contiguous_avx512(const float* x, int64_t n) {
  __m512 lo = _mm512_set1_ps(Product ? 1.0f : 0.0f), hi = lo;
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    lo = combine16<Product>(lo, Term::w(_mm512_loadu_ps(x + i)));
    hi = combine16<Product>(hi, Term::w(_mm512_loadu_ps(x + i + 16)));
  }
  const int64_t tail = n - i;
  const __mmask16 lo_tail = static_cast<__mmask16>(tail >= 16 ? 0xFFFF : (1u << tail) - 1);
  const __mmask16 hi_tail = static_cast<__mmask16>(tail > 16 ? (1u << (tail - 16)) - 1 : 0);
  const __m512 t_lo = Term::w(_mm512_maskz_loadu_ps(lo_tail, x + i));
  const __m512 t_hi = Term::w(_mm512_maskz_loadu_ps(hi_tail, hi_tail ? x + i + 16 : x));  // x may be null: n = 0
  lo = Product ? _mm512_mask_mul_ps(lo, lo_tail, lo, t_lo) : _mm512_mask_add_ps(lo, lo_tail, lo, t_lo);
  hi = Product ? _mm512_mask_mul_ps(hi, hi_tail, hi, t_hi) : _mm512_mask_add_ps(hi, hi_tail, hi, t_hi);
  // Each level's lane j + w moved down to lane j by a shuffle; lanes past w are not read again.
  const __m512 w16 = combine16<Product>(lo, hi);
  const __m512 w8 = combine16<Product>(w16, _mm512_maskz_shuffle_f32x4(0xFFFF, w16, w16, _MM_SHUFFLE(3, 2, 3, 2)));
  const __m512 w4 = combine16<Product>(w8, _mm512_maskz_shuffle_f32x4(0xFFFF, w8, w8, _MM_SHUFFLE(1, 1, 1, 1)));
  const __m512 w2 = combine16<Product>(w4, _mm512_maskz_permute_ps(0xFFFF, w4, _MM_SHUFFLE(3, 2, 3, 2)));
  return _mm512_cvtss_f32(combine16<Product>(w2, _mm512_maskz_permute_ps(0xFFFF, w2, _MM_SHUFFLE(1, 1, 1, 1))));
}

// Contract: canonical reduction (scalar fallback with the same bits).
template <typename Term, bool Product>
float reduce_contiguous_scalar(const float* x, int64_t n) {
  auto term = [x](int64_t i) { return Term::s(x[i]); };
  if (Product) return arith::product_canonical_f32(n, term);
  return arith::sum_canonical_f32(n, term);
}

/// Canonical sum (or product) of Term(x[0..n)), the bits of the reference on every host.
template <typename Term, bool Product = false>
float reduce_contiguous_f32(const float* x, int64_t n) {
  if (cpu_isa() == CpuIsa::Avx512) return reduce_contiguous_avx512<Term, Product>(x, n);
  if (use_avx2()) return reduce_contiguous_avx2<Term, Product>(x, n);
  return reduce_contiguous_scalar<Term, Product>(x, n);
}

// Contract: the sequential max/min rule (docs/arithmetic.md#max-and-min-over-an-axis), reached without a per-element
// branch: when no term is NaN and the extreme is not zero, every term equal to it has its bits, so which one the
// rule picks does not matter and max_ps/min_ps over 8 lanes find it. Otherwise (a NaN, or +0 against -0) the
// sequential rule runs.
template <bool IsMax>
__attribute__((target("avx2"))) float extreme_contiguous_avx2(const float* x, int64_t n) {
  const auto sequential = [&] { return arith::extreme_seq_f32<IsMax>(n, 0.0f, [x](int64_t i) { return x[i]; }); };
  if (n < 16) return sequential();
  __m256 m = _mm256_loadu_ps(x), nan = _mm256_cmp_ps(m, m, _CMP_UNORD_Q);
  int64_t i = 8;
  for (; i + 8 <= n; i += 8) {
    const __m256 v = _mm256_loadu_ps(x + i);
    m = IsMax ? _mm256_max_ps(m, v) : _mm256_min_ps(m, v);
    nan = _mm256_or_ps(nan, _mm256_cmp_ps(v, v, _CMP_UNORD_Q));
  }
  const __m256 last = _mm256_loadu_ps(x + n - 8);  // overlaps: a repeated term changes neither max nor min
  m = IsMax ? _mm256_max_ps(m, last) : _mm256_min_ps(m, last);
  nan = _mm256_or_ps(nan, _mm256_cmp_ps(last, last, _CMP_UNORD_Q));
  if (_mm256_movemask_ps(nan)) return sequential();
  alignas(32) float lane[8];
  _mm256_store_ps(lane, m);
  float e = lane[0];
  for (int j = 1; j < 8; ++j) e = IsMax ? (lane[j] > e ? lane[j] : e) : (lane[j] < e ? lane[j] : e);
  return e == 0.0f ? sequential() : e;
}

}  // namespace

float max_contiguous_f32(const float* x, int64_t n) {
  if (use_avx2()) return extreme_contiguous_avx2<true>(x, n);
  return arith::extreme_seq_f32<true>(n, 0.0f, [x](int64_t i) { return x[i]; });
}
float min_contiguous_f32(const float* x, int64_t n) {
  if (use_avx2()) return extreme_contiguous_avx2<false>(x, n);
  return arith::extreme_seq_f32<false>(n, 0.0f, [x](int64_t i) { return x[i]; });
}

float sum_contiguous_f32(const float* x, int64_t n) { return reduce_contiguous_f32<TermIdentity>(x, n); }
float sum_squares_contiguous_f32(const float* x, int64_t n) { return reduce_contiguous_f32<TermSquare>(x, n); }
float sum_abs_contiguous_f32(const float* x, int64_t n) { return reduce_contiguous_f32<TermAbs>(x, n); }
float product_contiguous_f32(const float* x, int64_t n) { return reduce_contiguous_f32<TermIdentity, true>(x, n); }

namespace {

using arith::ReduceKind;

/// Walks the reduced elements of one output in row-major order of the reduced axes (no divisions per term).
struct TermWalker {
  const ReducePlan& p;
  int64_t idx[kMaxRank] = {};
  int64_t off = 0;
  int64_t next() {
    int64_t at = off;
    for (int d = p.red_rank - 1; d >= 0; --d) {
      off += p.red_strides[d];
      if (++idx[d] < p.red_dims[d]) break;
      off -= p.red_strides[d] * p.red_dims[d];
      idx[d] = 0;
    }
    return at;
  }
};

// Contract: canonical reduction of Term(x) over the reduced elements in row-major order; docs/arithmetic.md#reduce.
template <typename Term, bool Product = false>
float canonical_of_output(const float* x, const ReducePlan& p) {
  if (p.contiguous()) return reduce_contiguous_f32<Term, Product>(x, p.n_red);
  TermWalker w{p};
  auto term = [&](int64_t) { return Term::s(x[w.next()]); };
  return Product ? arith::product_canonical_f32(p.n_red, term) : arith::sum_canonical_f32(p.n_red, term);
}

// Contract: sequential max/min rule, reduced axes in row-major order; docs/arithmetic.md#max-and-min-over-an-axis.
template <bool IsMax>
float extreme_of_output(const float* x, const ReducePlan& p) {
  const float empty = IsMax ? -std::numeric_limits<float>::infinity() : std::numeric_limits<float>::infinity();
  if (p.contiguous() && p.n_red > 0) return IsMax ? max_contiguous_f32(x, p.n_red) : min_contiguous_f32(x, p.n_red);
  TermWalker w{p};
  return arith::extreme_seq_f32<IsMax>(p.n_red, empty, [&](int64_t) { return x[w.next()]; });
}

// Contract: ReduceLogSumExp = log_f32(S(exp_f32(x_i - m))) + m, m the sequential max; docs/arithmetic.md#reduce.
float logsumexp_of_output(const float* x, const ReducePlan& p) {
  const float m = extreme_of_output<true>(x, p);
  if (p.n_red == 0) return -std::numeric_limits<float>::infinity();
  if (arith::lse_direct_f32(m)) return m;
  float s;
  if (p.contiguous()) {
    s = arith::sum_canonical_f32(p.n_red, [&](int64_t i) { return arith::exp_f32(x[i] - m); });
  } else {
    TermWalker w{p};
    s = arith::sum_canonical_f32(p.n_red, [&](int64_t) { return arith::exp_f32(x[w.next()] - m); });
  }
  return arith::log_f32(s) + m;
}

// Contract: one output of a float Reduce*; docs/arithmetic.md#reduce.
float reduce_output_f32(const float* x, const ReducePlan& p, ReduceKind kind) {
  switch (kind) {
    case ReduceKind::Sum: return canonical_of_output<TermIdentity>(x, p);
    case ReduceKind::Mean: return canonical_of_output<TermIdentity>(x, p) / static_cast<float>(p.n_red);
    case ReduceKind::Prod: return canonical_of_output<TermIdentity, true>(x, p);
    case ReduceKind::Max: return extreme_of_output<true>(x, p);
    case ReduceKind::Min: return extreme_of_output<false>(x, p);
    case ReduceKind::L1: return canonical_of_output<TermAbs>(x, p);
    case ReduceKind::L2: return __builtin_sqrtf(canonical_of_output<TermSquare>(x, p));
    case ReduceKind::SumSquare: return canonical_of_output<TermSquare>(x, p);
    case ReduceKind::LogSumExp: return logsumexp_of_output(x, p);
    case ReduceKind::LogSum: return arith::log_f32(canonical_of_output<TermIdentity>(x, p));
  }
  return 0.0f;
}

// Integer reductions are exact (sums and products wrap, two's complement), so their order does not matter.
template <typename T>
T reduce_output_int(const T* x, const ReducePlan& p, ReduceKind kind) {
  using U = std::make_unsigned_t<T>;
  TermWalker w{p};
  auto at = [&](int64_t i) { return p.contiguous() ? x[i] : x[w.next()]; };
  if (kind == ReduceKind::Max || kind == ReduceKind::Min) {
    T m = kind == ReduceKind::Max ? std::numeric_limits<T>::lowest() : std::numeric_limits<T>::max();
    for (int64_t i = 0; i < p.n_red; ++i) {
      T t = at(i);
      m = kind == ReduceKind::Max ? (t > m ? t : m) : (t < m ? t : m);
    }
    return m;
  }
  U acc = kind == ReduceKind::Prod ? U(1) : U(0);
  for (int64_t i = 0; i < p.n_red; ++i) {
    const T v = at(i);
    U t = static_cast<U>(v);
    if constexpr (std::is_signed_v<T>) {
      if (kind == ReduceKind::L1 && v < 0) t = U(0) - t;
    }
    if (kind == ReduceKind::Prod) acc = static_cast<U>(acc * t);
    else if (kind == ReduceKind::SumSquare) acc = static_cast<U>(acc + static_cast<U>(t * t));
    else acc = static_cast<U>(acc + t);
  }
  T r = static_cast<T>(acc);
  if (kind == ReduceKind::Mean) return p.n_red == 0 ? T(0) : static_cast<T>(r / static_cast<T>(p.n_red));
  return r;
}

int64_t grain_for(int64_t work_per_item) { return std::max<int64_t>(1, 16384 / std::max<int64_t>(1, work_per_item)); }

template <typename T, typename Fn>
void for_each_output(KernelContext& ctx, const ReducePlan& p, const T* x, T* y, Fn fn) {
  ctx.pool->parallel_for(
      p.n_out,
      [&](int64_t begin, int64_t end) {
        for (int64_t o = begin; o < end; ++o) y[o] = fn(x + reduce_base_offset(p, o));
      },
      grain_for(p.n_red));
}

// Contract: ArgMax/ArgMin, sequential rule (descending with select_last_index); docs/arithmetic.md#argmax--argmin.
template <typename T>
void arg_reduce_typed(KernelContext& ctx, const AxisPlan& p, bool is_max, bool last, const T* x, int64_t* y) {
  ctx.pool->parallel_for(
      p.rows(),
      [&](int64_t begin, int64_t end) {
        for (int64_t r = begin; r < end; ++r) {
          const T* row = x + p.row_base(r);
          int64_t best = last ? p.len - 1 : 0;
          T m = row[best * p.inner];
          for (int64_t k = 1; k < p.len; ++k) {
            int64_t i = last ? p.len - 1 - k : k;
            T t = row[i * p.inner];
            bool take;
            if constexpr (std::is_floating_point_v<T>)
              take = is_max ? arith::max_takes_f32(t, m) : arith::min_takes_f32(t, m);
            else
              take = is_max ? t > m : t < m;
            if (take) {
              m = t;
              best = i;
            }
          }
          y[r] = best;
        }
      },
      grain_for(p.len));
}

/// The SIMD forms of Softmax's steps (unary_f32.h), or null ones on the scalar path.
struct SoftmaxKernels {
  UnaryF32Kernel<arith::ExpOfDifferenceOp> exp = unary_f32_kernel<arith::ExpOfDifferenceOp>();
  UnaryF32Kernel<arith::QuotientOp> divide = unary_f32_kernel<arith::QuotientOp>();
  UnaryF32Kernel<arith::TwoDifferencesOp> log_finish = unary_f32_kernel<arith::TwoDifferencesOp>();
};

/// y[i * inner] = f(x[i * inner]) for i < len, through the SIMD kernel when the row is contiguous.
template <class F>
void softmax_step(UnaryF32Kernel<F> kernel, const F& f, const float* x, float* y, int64_t len, int64_t inner) {
  if (inner == 1 && kernel) return kernel(f, x, y, len);
  for (int64_t i = 0; i < len; ++i) y[i * inner] = f(x[i * inner]);
}

// Contract: Softmax/LogSoftmax of one row; docs/arithmetic.md#softmax--logsoftmax.
// e_i = exp_f32(x_i - m) is first stored in y, summed canonically, then y is overwritten.
void softmax_row(const float* x, float* y, int64_t len, int64_t inner, bool log, const SoftmaxKernels& k) {
  const float m = inner == 1 ? max_contiguous_f32(x, len)
                             : arith::extreme_seq_f32<true>(len, 0.0f, [&](int64_t i) { return x[i * inner]; });
  softmax_step(k.exp, arith::ExpOfDifferenceOp{m}, x, y, len, inner);
  const float s = inner == 1 ? sum_contiguous_f32(y, len)
                             : arith::sum_canonical_f32(len, [&](int64_t i) { return y[i * inner]; });
  if (log) softmax_step(k.log_finish, arith::TwoDifferencesOp{m, arith::log_f32(s)}, x, y, len, inner);
  else softmax_step(k.divide, arith::QuotientOp{s}, y, y, len, inner);
}

struct CpuReduce {
  static void copy(KernelContext&, const Tensor& x, Tensor& y) {
    if (x.bytes()) std::memcpy(y.raw(), x.raw(), x.bytes());
  }
  template <typename T>
  static void reduce(KernelContext& ctx, const ReducePlan& p, ReduceKind kind, const T* x, T* y) {
    for_each_output(ctx, p, x, y, [&](const T* b) {
      if constexpr (std::is_same_v<T, float>) {
        return reduce_output_f32(b, p, kind);
      } else if constexpr (std::is_same_v<T, double>) {
        // Contract: arith::reduce_output_f64, the CUDA kernel's function; docs/arithmetic.md#double-reductions.
        return arith::reduce_output_f64(kind, p.n_red, [&](int64_t i) {
          return b[p.contiguous() ? i : reduce_term_offset(p, i)];
        });
      } else {
        return reduce_output_int(b, p, kind);
      }
    });
  }
  template <typename T>
  static void arg_reduce(KernelContext& ctx, const AxisPlan& p, bool is_max, bool last, const T* x, int64_t* y) {
    arg_reduce_typed(ctx, p, is_max, last, x, y);
  }
  // Contract: the rows, then (nan_value) arith::nan_replaced_f32 per element (a selection).
  static void softmax(KernelContext& ctx, const AxisPlan& p, bool log, const float* x, float* y,
                      std::optional<float> nan_value) {
    softmax_rows(ctx, p, log, x, y);
    if (!nan_value) return;
    const float value = *nan_value;
    ctx.pool->parallel_for(p.rows() * p.len, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) y[i] = arith::nan_replaced_f32(y[i], value);
    }, 1 << 15);
  }
  template <typename T, class Row>
  static void lines(KernelContext& ctx, const AxisPlan& p, Row row, const T* x, T* y) {
    ctx.pool->parallel_for(
        p.rows(),
        [&](int64_t begin, int64_t end) {
          for (int64_t r = begin; r < end; ++r) row(x + p.row_base(r), y + p.row_base(r), p.len, p.inner);
        },
        grain_for(p.len * 2));
  }
};

}  // namespace

void softmax_rows(KernelContext& ctx, const AxisPlan& p, bool log, const float* x, float* y) {
  const SoftmaxKernels kernels;
  ctx.pool->parallel_for(
      p.rows(),
      [&](int64_t begin, int64_t end) {
        for (int64_t r = begin; r < end; ++r)
          softmax_row(x + p.row_base(r), y + p.row_base(r), p.len, p.inner, log, kernels);
      },
      grain_for(p.len * 8));
}

// Contract: Softmax of one contiguous row (softmax_row); see docs/arithmetic.md#softmax--logsoftmax.
void softmax_row_f32(const float* x, float* y, int64_t len) {
  static const SoftmaxKernels kernels;
  softmax_row(x, y, len, 1, false, kernels);
}

// Contract: Reduce* per docs/arithmetic.md#reduce; one thread per output.
void reduce(KernelContext& ctx) { run_reduce<CpuReduce>(ctx); }

// Contract: ArgMax/ArgMin, sequential max/min rule per row; see docs/arithmetic.md#argmax--argmin.
void arg_reduce(KernelContext& ctx) { run_arg_reduce<CpuReduce>(ctx); }

// Contract: Softmax/LogSoftmax per row (softmax_row); see docs/arithmetic.md#softmax--logsoftmax.
void softmax(KernelContext& ctx) { run_softmax<CpuReduce>(ctx); }

// Contract: Hardmax, LpNormalization, CumSum/CumProd per line (arith's *Row functors); docs/arithmetic.md#lines.
void lines(KernelContext& ctx) { run_lines<CpuReduce>(ctx); }

}  // namespace lockstep::cpu
