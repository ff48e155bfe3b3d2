// The GEMM core's AVX-512 micro-kernels (src/cpu/gemm/micro_kernel.h): 8x48 tiles (three registers a row), their
// 8x32 and 8x16 variants for 32-wide panels and partial last panels, and one-row kernels. Compiled with the ISA's
// flags (CMakeLists.txt).
#if defined(__AVX512F__)
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

/// The lanes of a pointed tail panel's last vector (only PointedRowsTail has any: the kernels read it only then).
template <class B>
__mmask16 tail_mask(const B& b) {
  if constexpr (B::kMaskedTail) return b.tail;
  else return 0xFFFF;
}

/// The fused Relu of the last chunk's store: arith's ReluOp on the register's lanes, as the epilogue tiles run it.
inline __m512 relu_avx512(__m512 x) { return arith::ReluOp{}(x); }

// Contract: dot_chunked_f32 over k ascending, one chain per lane; see docs/arithmetic.md#gemm.
// With kRelu, as micro_avx2_6x16: the last chunk's store applies the fused Relu (relu_avx512).
// 8 rows x 16 * NV columns. The main tile is 8x48 (NV = 3, three registers a row) rather than 8x32: per 24 fmas,
// 8 broadcasts of A and 3 loads of B, where 8x32 needs 8 and 2 per 16. Conv's B rows are unaligned (each tap shifts
// them by a float), so every B load splits across two cache lines, and the loads can bound the kernel: on a 2-vCPU
// Sapphire Rapids VM, the 3x3 conv loop alone ran 10-14% faster in the machine's slow phases and 2-4% in its fast
// ones (docs/performance.md, 2026-12-06). NV = 2 serves kGemmAvx512_8x32; NV < 3 also the partial last panel of a
// product (its first 16 * NV columns), so that a plane of 14x14 pixels (4 panels and 4 columns) does not compute a
// whole 48-wide panel for 4 columns.
template <int R, class B, bool kRelu = false, int NV = 3>
void micro_avx512_8rows(int64_t K, const float* pa, int64_t a_step, B b, float* c, int64_t ldc, const float* init,
                        int64_t ldi, const char* ahead_next, int64_t ahead_lines) {
  AheadWalk ahead(ahead_next, ahead_lines, K);
  for (int64_t k0 = 0; k0 < K; k0 += kDotChunk) {
    int64_t k1 = std::min(K, k0 + kDotChunk);
    __m512 acc[R][NV];
#pragma GCC unroll 8
    for (int i = 0; i < R; ++i)
#pragma GCC unroll 3
      for (int v = 0; v < NV; ++v) acc[i][v] = _mm512_setzero_ps();
    for (int64_t k = k0; k < k1; ahead.step()) {
      for (const int64_t k_end = std::min(k1, k + ahead.spacing()); k < k_end; ++k) {
        const float* pb = b(k);
        if constexpr (B::kPrefetchNext) _mm_prefetch(reinterpret_cast<const char*>(pb + 16 * NV), _MM_HINT_T0);
        __m512 bv[NV];
#pragma GCC unroll 3
        for (int v = 0; v < NV; ++v)
          bv[v] = B::kMaskedTail && v + 1 == NV ? _mm512_maskz_loadu_ps(tail_mask(b), pb + 16 * v)
                                                : _mm512_loadu_ps(pb + 16 * v);
        const float* a = pa + k * a_step;
#pragma GCC unroll 8
        for (int i = 0; i < R; ++i) {
          __m512 av = _mm512_set1_ps(a[i]);
#pragma GCC unroll 3
          for (int v = 0; v < NV; ++v) acc[i][v] = _mm512_fmadd_ps(av, bv[v], acc[i][v]);
        }
      }
    }
    const bool relu = kRelu && k1 == K;
    // Every running total is read before any is stored: C's rows often lie a multiple of 4 KB apart (BERT's and
    // ViT's 3072-wide products), where a load of row i + 1 issued behind the store to row i waits for that store as
    // if it hit it. bench_gemm_core 197x3072x768, B from memory, alternating runs: 4.86-4.92 -> 4.74-4.80 ms
    // (docs/performance.md, 2026-12-07, twentieth session). Not measured as a gain on the AVX2 kernel, which keeps
    // the plain order.
#pragma GCC unroll 8
    for (int i = 0; i < R; ++i) {
      const float* s = init && k0 == 0 ? init + i * ldi : c + i * ldc;
#pragma GCC unroll 3
      for (int v = 0; v < NV; ++v) {
        // A tail panel's last vector reads and writes C (and init) in its lanes only: the panel runs in place.
        const bool masked = B::kMaskedTail && v + 1 == NV;
        const __m512 total = masked ? _mm512_maskz_loadu_ps(tail_mask(b), s + 16 * v) : _mm512_loadu_ps(s + 16 * v);
        acc[i][v] = _mm512_add_ps(total, acc[i][v]);
        if (relu) acc[i][v] = relu_avx512(acc[i][v]);
      }
    }
#pragma GCC unroll 8
    for (int i = 0; i < R; ++i)
#pragma GCC unroll 3
      for (int v = 0; v < NV; ++v) {
        if (B::kMaskedTail && v + 1 == NV) _mm512_mask_storeu_ps(c + i * ldc + 16 * v, tail_mask(b), acc[i][v]);
        else _mm512_storeu_ps(c + i * ldc + 16 * v, acc[i][v]);
      }
  }
}


// Contract: dot_chunked_f32 over k ascending, one chain per lane; see docs/arithmetic.md#gemm.
// Panels of 16 * NV lanes (48, or 32 for kGemmAvx512_8x32).
template <int P, int NV = 3>
void row_avx512(int64_t K, const float* a, int64_t a_step, const float* pb, int64_t panel_step, float* c,
                const float* init) {
  constexpr int NR = 16 * NV;
  for (int64_t k0 = 0; k0 < K; k0 += kDotChunk) {
    int64_t k1 = std::min(K, k0 + kDotChunk);
    __m512 acc[NV * P];
#pragma GCC unroll 12
    for (int i = 0; i < NV * P; ++i) acc[i] = _mm512_setzero_ps();
    for (int64_t k = k0; k < k1; ++k) {
      const __m512 av = _mm512_set1_ps(a[k * a_step]);
#pragma GCC unroll 4
      for (int p = 0; p < P; ++p) {
        const float* b = pb + p * panel_step + k * NR;
#pragma GCC unroll 3
        for (int v = 0; v < NV; ++v)
          acc[NV * p + v] = _mm512_fmadd_ps(av, _mm512_loadu_ps(b + 16 * v), acc[NV * p + v]);
      }
    }
    const float* s = init && k0 == 0 ? init : c;
#pragma GCC unroll 12
    for (int i = 0; i < NV * P; ++i) _mm512_storeu_ps(c + 16 * i, _mm512_add_ps(_mm512_loadu_ps(s + 16 * i), acc[i]));
  }
}

// {nullptr, kernel<1, B>, ..., kernel<8, B>}: the kernel for each row count of a tile 16 * NV wide.
template <class B, int NV = 3, bool kRelu = false, int... R>
constexpr std::array<MicroFn<B>, 9> table_avx512(std::integer_sequence<int, R...>) {
  return {nullptr, micro_avx512_8rows<R + 1, B, kRelu, NV>...};
}
constexpr auto kRows = std::make_integer_sequence<int, 8>();

}  // namespace

constexpr IsaKernels kGemmAvx512_8x48 = {
    8, 48, 42 * 1024,
    table_avx512<PackedRows>(kRows), table_avx512<PointedRows>(kRows),
    {nullptr, row_avx512<1>, row_avx512<2>, row_avx512<3>, row_avx512<4>},
    table_avx512<PackedRows, 3, true>(kRows), table_avx512<PointedRows, 3, true>(kRows),
    {table_avx512<PackedRows, 1>(kRows), table_avx512<PackedRows, 2>(kRows)},
    {table_avx512<PointedRowsTail, 1>(kRows), table_avx512<PointedRowsTail, 2>(kRows),
     table_avx512<PointedRowsTail, 3>(kRows)}};
constexpr IsaKernels kGemmAvx512_8x32 = {
    8, 32, 30 * 1024,
    table_avx512<PackedRows, 2>(kRows), table_avx512<PointedRows, 2>(kRows),
    {nullptr, row_avx512<1, 2>, row_avx512<2, 2>, row_avx512<3, 2>, row_avx512<4, 2>},
    table_avx512<PackedRows, 2, true>(kRows), table_avx512<PointedRows, 2, true>(kRows),
    {table_avx512<PackedRows, 1>(kRows), {}},
    {table_avx512<PointedRowsTail, 1>(kRows), table_avx512<PointedRowsTail, 2>(kRows)}};

}  // namespace lockstep::cpu
#endif
