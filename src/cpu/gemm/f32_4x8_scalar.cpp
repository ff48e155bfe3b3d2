// The GEMM core's scalar micro-kernels (src/cpu/gemm/micro_kernel.h): 4x8 tiles and one-row kernels over 8-wide
// panels, for CPUs without AVX2 and for the forced scalar path (LOCKSTEP_CPU_ISA=scalar).
#include <algorithm>
#include <cstdint>
#include <utility>

#include "arith/dot.h"
#include "cpu/gemm/micro_kernel.h"

namespace lockstep::cpu {

namespace {

using arith::kDotChunk;

// Contract: dot_chunked_f32 over k ascending, one chain per tile element; see docs/arithmetic.md#gemm.
template <int NR, int R, class B>
void micro_scalar(int64_t K, const float* pa, int64_t a_step, B b, float* c, int64_t ldc, const float* init,
                  int64_t ldi) {
  for (int64_t k0 = 0; k0 < K; k0 += kDotChunk) {
    int64_t k1 = std::min(K, k0 + kDotChunk);
    float acc[R][NR] = {};
    for (int64_t k = k0; k < k1; ++k) {
      const float* pb = b(k);
      for (int i = 0; i < R; ++i) {
        float a = pa[k * a_step + i];
        for (int j = 0; j < NR; ++j) acc[i][j] = arith::fma_f32(a, pb[j], acc[i][j]);
      }
    }
    for (int i = 0; i < R; ++i) {
      const float* t = init && k0 == 0 ? init + i * ldi : c + i * ldc;
      for (int j = 0; j < NR; ++j) c[i * ldc + j] = t[j] + acc[i][j];
    }
  }
}

// Contract: dot_chunked_f32 over k ascending, one chain per lane; see docs/arithmetic.md#gemm.
template <int P>
void row_scalar_8(int64_t K, const float* a, int64_t a_step, const float* pb, int64_t panel_step, float* c,
                  const float* init) {
  constexpr int NR = 8;
  for (int64_t k0 = 0; k0 < K; k0 += kDotChunk) {
    int64_t k1 = std::min(K, k0 + kDotChunk);
    float acc[P * NR] = {};
    for (int64_t k = k0; k < k1; ++k)
      for (int p = 0; p < P; ++p)
        for (int j = 0; j < NR; ++j)
          acc[p * NR + j] = arith::fma_f32(a[k * a_step], pb[p * panel_step + k * NR + j], acc[p * NR + j]);
    const float* s = init && k0 == 0 ? init : c;
    for (int i = 0; i < P * NR; ++i) c[i] = s[i] + acc[i];
  }
}

template <int R, class B>
void scalar_4x8(int64_t K, const float* pa, int64_t a_step, B b, float* c, int64_t ldc, const float* init,
                int64_t ldi, const char*, int64_t) {
  micro_scalar<8, R>(K, pa, a_step, b, c, ldc, init, ldi);
}


// {nullptr, kernel<1, B>, ..., kernel<4, B>}: the kernel for each row count of a tile.
template <class B, int... R>
constexpr std::array<MicroFn<B>, 9> table_scalar(std::integer_sequence<int, R...>) {
  return {nullptr, scalar_4x8<R + 1, B>...};
}

}  // namespace

constexpr IsaKernels kGemmScalar4x8 = {
    4, 8, 12 * 1024,
    table_scalar<PackedRows>(std::make_integer_sequence<int, 4>()),
    table_scalar<PointedRows>(std::make_integer_sequence<int, 4>()),
    {nullptr, row_scalar_8<1>, row_scalar_8<2>, row_scalar_8<3>, row_scalar_8<4>}};

}  // namespace lockstep::cpu
