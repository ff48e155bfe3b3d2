// CPU kernels of the recurrent family: the input projection on the GEMM core, then one parallel pass over the
// (batch, hidden) units per time step (two for GRU), each unit computed by the shared arith::cell_unit.
#include <algorithm>
#include <cstring>

#include "cpu/isa.h"
#include "ops/gemm.h"
#include "ops/recurrent.h"
#include "runtime/thread_pool.h"

namespace lockstep::cpu {

namespace {

// Contract: arith::cell_unit / arith::gru_gates per unit; see docs/arithmetic.md#recurrent.
void unit_range(const arith::CellStep& step, bool gates_pass, int64_t b, int64_t e) {
  for (int64_t i = b; i < e; ++i) gates_pass ? arith::gru_gates(step, i) : arith::cell_unit(step, i);
}

// The same, built for AVX2 with FMA and with every call inlined (flatten): the shared scalar functions' fma_f32 is
// then one instruction instead of a call into libm (the same rounding wherever it runs), which is most of a unit's
// time in the activations. Chosen when the CPU has AVX2 (cpu_isa() above scalar).
__attribute__((target("avx2,fma"), flatten)) void unit_range_fma(const arith::CellStep& step, bool gates_pass,
                                                                 int64_t b, int64_t e) {
  for (int64_t i = b; i < e; ++i) gates_pass ? arith::gru_gates(step, i) : arith::cell_unit(step, i);
}

struct CpuRecurrent {
  static void fill_zero(KernelContext&, float* p, int64_t n) { std::fill(p, p + n, 0.0f); }
  static void copy_rows(KernelContext&, float* dst, int64_t dst_stride, const float* src, int64_t src_stride,
                        int64_t rows, int64_t cols) {
    for (int64_t r = 0; r < rows; ++r)
      std::memcpy(dst + r * dst_stride, src + r * src_stride, static_cast<size_t>(cols) * sizeof(float));
  }
  // Contract: dot_chunked_f32(input, +0, x[m][k], w[n][k]) over k ascending (the GEMM core with init +0);
  // see docs/arithmetic.md#recurrent.
  static void project(KernelContext& ctx, const float* x, int64_t rows, int64_t input, const float* w,
                      int64_t gate_rows, float* xw) {
    if (rows == 0) return;
    if (input == 0) return fill_zero(ctx, xw, rows * gate_rows);
    gemm_f32_strided(ctx.pool, rows, gate_rows, input, x, input, 1, w, 1, input, GemmOut{xw, gate_rows, 1});
  }
  // Contract: arith::cell_unit / arith::gru_gates per unit; see docs/arithmetic.md#recurrent.
  static void units(KernelContext& ctx, const arith::CellStep& step, bool gates_pass) {
    const auto range = cpu_isa() == CpuIsa::Scalar ? unit_range : unit_range_fma;
    ctx.pool->parallel_for(step.batch * step.hidden, [&](int64_t b, int64_t e) { range(step, gates_pass, b, e); }, 16);
  }
};

}  // namespace

void recurrent(KernelContext& ctx) { run_recurrent<CpuRecurrent>(ctx); }

}  // namespace lockstep::cpu
