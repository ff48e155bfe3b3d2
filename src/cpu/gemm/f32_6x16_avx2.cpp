// The GEMM core's AVX2 micro-kernels (src/cpu/gemm/micro_kernel.h): 6x16 tiles (two registers a row) and one-row
// kernels over 16-wide panels. Compiled with the ISA's flags (CMakeLists.txt).
#if defined(__AVX2__)
#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <utility>

#include "arith/dot.h"
#include "arith/elementwise.h"
#include "cpu/gemm/micro_kernel.h"

namespace lockstep::cpu {

namespace {

using arith::kDotChunk;

#include "cpu/gemm/ahead_walk.inc"

/// The fused Relu of the last chunk's store: arith's ReluOp on the register's lanes, as the epilogue tiles run it.
inline __m256 relu_avx2(__m256 x) { return arith::ReluOp{}(x); }

/// A vector of B or C in an AVX2 kernel: whole, or the lanes of mask alone for a pointed tail panel.
template <class B>
inline __m256 load_lanes_avx2(const float* p, __m256i mask) {
  if constexpr (B::kMaskedTail) return _mm256_maskload_ps(p, mask);
  else return _mm256_loadu_ps(p);
}
template <class B>
inline void store_lanes_avx2(float* p, __m256 v, __m256i mask) {
  if constexpr (B::kMaskedTail) _mm256_maskstore_ps(p, mask, v);
  else _mm256_storeu_ps(p, v);
}

// Contract: dot_chunked_f32 over k ascending, one chain per lane; see docs/arithmetic.md#gemm.
// With kRelu, the last chunk's store applies a fused Relu (relu_avx2: arith's ReluOp) to the totals:
// the caller picks it only for a call that ends K, so the stored values are final.
template <int R, class B, bool kRelu = false>
void micro_avx2_6x16(int64_t K, const float* pa, int64_t a_step, B b, float* c, int64_t ldc, const float* init,
                     int64_t ldi, const char* ahead_next, int64_t ahead_lines) {
  AheadWalk ahead(ahead_next, ahead_lines, K);
  // A pointed tail panel's lanes (PointedRowsTail) as the two vectors' masks for maskload and maskstore.
  __m256i mask0 = _mm256_set1_epi32(-1), mask1 = mask0;
  if constexpr (B::kMaskedTail) {
    const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    const int lanes = __builtin_popcount(b.tail);
    mask0 = _mm256_cmpgt_epi32(_mm256_set1_epi32(lanes), lane);
    mask1 = _mm256_cmpgt_epi32(_mm256_set1_epi32(lanes - 8), lane);
  }
  for (int64_t k0 = 0; k0 < K; k0 += kDotChunk) {
    int64_t k1 = std::min(K, k0 + kDotChunk);
    __m256 acc0[R], acc1[R];
#pragma GCC unroll 8
    for (int i = 0; i < R; ++i) acc0[i] = acc1[i] = _mm256_setzero_ps();
    for (int64_t k = k0; k < k1; ahead.step()) {
      for (const int64_t k_end = std::min(k1, k + ahead.spacing()); k < k_end; ++k) {
        const float* pb = b(k);
        if constexpr (B::kPrefetchNext) _mm_prefetch(reinterpret_cast<const char*>(pb + 16), _MM_HINT_T0);
        const __m256 b0 = load_lanes_avx2<B>(pb, mask0), b1 = load_lanes_avx2<B>(pb + 8, mask1);
        const float* a = pa + k * a_step;
#pragma GCC unroll 8
        for (int i = 0; i < R; ++i) {
          __m256 av = _mm256_broadcast_ss(a + i);
          acc0[i] = _mm256_fmadd_ps(av, b0, acc0[i]);
          acc1[i] = _mm256_fmadd_ps(av, b1, acc1[i]);
        }
      }
    }
    const bool relu = kRelu && k1 == K;
#pragma GCC unroll 8
    for (int i = 0; i < R; ++i) {
      float* t = c + i * ldc;
      const float* s = init && k0 == 0 ? init + i * ldi : t;
      __m256 lo = _mm256_add_ps(load_lanes_avx2<B>(s, mask0), acc0[i]),
             hi = _mm256_add_ps(load_lanes_avx2<B>(s + 8, mask1), acc1[i]);
      if (relu) {
        lo = relu_avx2(lo);
        hi = relu_avx2(hi);
      }
      store_lanes_avx2<B>(t, lo, mask0);
      store_lanes_avx2<B>(t + 8, hi, mask1);
    }
  }
}


// Contract: dot_chunked_f32 over k ascending, one chain per lane; see docs/arithmetic.md#gemm.
template <int P>
void row_avx2_16(int64_t K, const float* a, int64_t a_step, const float* pb, int64_t panel_step, float* c,
                 const float* init) {
  constexpr int NR = 16;
  for (int64_t k0 = 0; k0 < K; k0 += kDotChunk) {
    int64_t k1 = std::min(K, k0 + kDotChunk);
    __m256 acc[2 * P];
#pragma GCC unroll 8
    for (int i = 0; i < 2 * P; ++i) acc[i] = _mm256_setzero_ps();
    for (int64_t k = k0; k < k1; ++k) {
      const __m256 av = _mm256_broadcast_ss(a + k * a_step);
#pragma GCC unroll 8
      for (int p = 0; p < P; ++p) {
        const float* b = pb + p * panel_step + k * NR;
        acc[2 * p] = _mm256_fmadd_ps(av, _mm256_loadu_ps(b), acc[2 * p]);
        acc[2 * p + 1] = _mm256_fmadd_ps(av, _mm256_loadu_ps(b + 8), acc[2 * p + 1]);
      }
    }
    const float* s = init && k0 == 0 ? init : c;
#pragma GCC unroll 8
    for (int i = 0; i < 2 * P; ++i) _mm256_storeu_ps(c + 8 * i, _mm256_add_ps(_mm256_loadu_ps(s + 8 * i), acc[i]));
  }
}

// {nullptr, kernel<1, B>, ..., kernel<6, B>}: the kernel for each row count of a tile.
template <class B, bool kRelu = false, int... R>
constexpr std::array<MicroFn<B>, 9> table_avx2(std::integer_sequence<int, R...>) {
  return {nullptr, micro_avx2_6x16<R + 1, B, kRelu>...};
}

constexpr auto kRows = std::make_integer_sequence<int, 6>();

}  // namespace

constexpr IsaKernels kGemmAvx2_6x16 = {
    6, 16, 12 * 1024,
    table_avx2<PackedRows>(kRows), table_avx2<PointedRows>(kRows),
    {nullptr, row_avx2_16<1>, row_avx2_16<2>, row_avx2_16<3>, row_avx2_16<4>},
    table_avx2<PackedRows, true>(kRows), table_avx2<PointedRows, true>(kRows),
    {},
    {table_avx2<PointedRowsTail>(kRows)}};

}  // namespace lockstep::cpu
#endif
