// CPU kernels of the recurrent family. The input projection runs on the GEMM core. Each time step then runs one of
// two ways, with the same bits:
//   - the scalar ISA: arith::cell_unit / arith::gru_gates per (batch, hidden) unit, the sequence CUDA runs
//     literally (each unit computes its own recurrent dots);
//   - AVX2 / AVX-512: the step's recurrent dots of all units as one product on the GEMM core against R packed once
//     per node, then the rest of the cell row by row: LSTM with its default activations in one pass with the units
//     in lanes (cpu/recurrent/lstm_f32_avx2.cpp), the others gate by gate on the SIMD unary kernels.
// tests/test_isa_invariance.py compares the two on every recurrent case and node test.
#include <algorithm>
#include <cstring>
#include <vector>

#include "cpu/elementwise/unary_f32.h"
#include "cpu/isa.h"
#include "cpu/recurrent/lstm_f32.h"
#include "ops/gemm.h"
#include "ops/recurrent.h"
#include "runtime/thread_pool.h"

namespace lockstep::cpu {

namespace {

using arith::CellKind;
using arith::CellStep;

// Contract: arith::cell_unit / arith::gru_gates per unit; see docs/arithmetic.md#recurrent.
void unit_range(const CellStep& step, bool gates_pass, int64_t b, int64_t e) {
  for (int64_t i = b; i < e; ++i) gates_pass ? arith::gru_gates(step, i) : arith::cell_unit(step, i);
}

/// W and R of every direction packed for the GEMM core, R in two blocks of gate rows: `first` holds the rows whose
/// dots read h_prev, `second` (GRU with linear_before_reset = 0 only) the h gate's rows, whose dots read r*h_prev.
/// R is packed for the SIMD ISAs only: the scalar ISA's units read it in place.
struct PackedRecurrence {
  CpuIsa isa;
  int64_t split;  // the first row of `second`; gate_rows when there is no second block
  std::vector<PackedB> w, first, second;  // one per direction
};

/// f applied to x[0..n) in place: the SIMD kernel where one exists for the ISA, else arith::activate (the same bits).
void activate_array(arith::Activation a, float* x, int64_t n) {
  if (a.kind == arith::CellActivation::Sigmoid)
    if (auto kernel = unary_f32_kernel<arith::SigmoidOp>()) return kernel(arith::SigmoidOp{}, x, x, n);
  if (a.kind == arith::CellActivation::Tanh)
    if (auto kernel = unary_f32_kernel<arith::TanhOp>()) return kernel(arith::TanhOp{}, x, x, n);
  for (int64_t i = 0; i < n; ++i) x[i] = arith::activate(a, x[i]);
}

/// Gate rows [n0, n0 + H) of one batch row: pre holds the recurrent dots hr on entry and the clipped
/// pre-activation on exit, ((xw + hr) [+ P*c]) + Wb) + Rb as in arith::gate_sum, gate_finish (peep null: no
/// peephole term).
void gate_inputs(const CellStep& s, const float* xw, float* pre, int64_t n0, const float* peep, const float* c) {
  for (int64_t j = 0; j < s.hidden; ++j) {
    const int64_t n = n0 + j;
    float v = xw[n] + pre[n];
    if (peep) v = v + peep[j] * c[j];
    v = v + s.wb[n];
    v = v + s.rb[n];
    pre[n] = arith::cell_clip(s, v);
  }
}

void store_output(const CellStep& s, int64_t b, int64_t j, float out) {
  s.h_next[b * s.hidden + j] = out;
  if (s.y) s.y[b * s.y_bs + j] = out;
}

// Contract: arith::cell_unit (LSTM) for every unit of row b; see docs/arithmetic.md#recurrent.
void lstm_row(const CellStep& s, int64_t b, float* pre) {
#if defined(__x86_64__) || defined(__i386__)
  if (lstm_row_lanes_apply(s)) return lstm_row_f32_avx2(s, b, pre);  // this function's ISAs all have AVX2
#endif
  const int64_t H = s.hidden;
  const float* xw = s.xw + b * s.xw_bs;
  float* c = s.c + b * H;
  gate_inputs(s, xw, pre, 0, s.p, c);
  if (!s.input_forget) gate_inputs(s, xw, pre, 2 * H, s.p + 2 * H, c);
  gate_inputs(s, xw, pre, 3 * H, nullptr, nullptr);
  activate_array(s.f, pre, H);
  if (!s.input_forget) activate_array(s.f, pre + 2 * H, H);
  activate_array(s.g, pre + 3 * H, H);
  float* h_of_c = pre + 2 * H;  // the f gate's slots, free once c is updated
  for (int64_t j = 0; j < H; ++j) {
    const float i = pre[j], f = s.input_forget ? 1.0f - i : pre[2 * H + j];
    float kept = f * c[j];
    float added = i * pre[3 * H + j];
    c[j] = kept + added;
    h_of_c[j] = c[j];
  }
  gate_inputs(s, xw, pre, H, s.p + H, c);
  activate_array(s.f, pre + H, H);
  activate_array(s.h, h_of_c, H);
  for (int64_t j = 0; j < H; ++j) store_output(s, b, j, pre[H + j] * h_of_c[j]);
}

// Contract: arith::cell_unit (RNN) for every unit of row b; see docs/arithmetic.md#recurrent.
void rnn_row(const CellStep& s, int64_t b, float* pre) {
  gate_inputs(s, s.xw + b * s.xw_bs, pre, 0, nullptr, nullptr);
  activate_array(s.f, pre, s.hidden);
  for (int64_t j = 0; j < s.hidden; ++j) store_output(s, b, j, pre[j]);
}

// Contract: arith::gru_gates for every unit of row b; see docs/arithmetic.md#recurrent.
void gru_gates_row(const CellStep& s, int64_t b, float* pre) {
  const int64_t H = s.hidden;
  const float* xw = s.xw + b * s.xw_bs;
  const float* hp = s.h_prev + b * H;
  gate_inputs(s, xw, pre, 0, nullptr, nullptr);
  gate_inputs(s, xw, pre, H, nullptr, nullptr);
  activate_array(s.f, pre, 2 * H);
  for (int64_t j = 0; j < H; ++j) {
    s.gate_z[b * H + j] = pre[j];
    s.gate_r[b * H + j] = s.linear_before_reset ? pre[H + j] : pre[H + j] * hp[j];
  }
}

// Contract: arith::cell_unit (GRU) for every unit of row b; see docs/arithmetic.md#recurrent.
void gru_row(const CellStep& s, int64_t b, float* pre) {
  const int64_t H = s.hidden;
  const float* xw = s.xw + b * s.xw_bs;
  const float* hp = s.h_prev + b * H;
  const float* z = s.gate_z + b * H;
  if (s.linear_before_reset) {
    for (int64_t j = 0; j < H; ++j) {
      const int64_t n = 2 * H + j;
      float u = pre[n] + s.rb[n];
      float v = s.gate_r[b * H + j] * u;
      float sum = xw[n] + v;
      pre[n] = arith::cell_clip(s, sum + s.wb[n]);
    }
  } else {
    gate_inputs(s, xw, pre, 2 * H, nullptr, nullptr);
  }
  activate_array(s.g, pre + 2 * H, H);
  for (int64_t j = 0; j < H; ++j) {
    float keep = 1.0f - z[j];
    float a = keep * pre[2 * H + j];
    float c = z[j] * hp[j];
    store_output(s, b, j, a + c);
  }
}

/// A row past its sequence length keeps its state and outputs +0 (as arith::cell_unit).
void inactive_row(const CellStep& s, int64_t b) {
  for (int64_t j = 0; j < s.hidden; ++j) {
    s.h_next[b * s.hidden + j] = s.h_prev[b * s.hidden + j];
    if (s.y) s.y[b * s.y_bs + j] = 0.0f;
  }
}

// Below this many multiply-adds a step's product runs on the calling thread: waking the pool costs more.
constexpr int64_t kThreadedStepWork = int64_t{1} << 18;

class CpuRecurrent {
 public:
  explicit CpuRecurrent(const RecurrentPlan& plan) : plan_(plan), isa_(cpu_isa()) {}
  static void fill_zero(KernelContext&, float* p, int64_t n) { std::fill(p, p + n, 0.0f); }
  static void copy_rows(KernelContext&, float* dst, int64_t dst_stride, const float* src, int64_t src_stride,
                        int64_t rows, int64_t cols) {
    for (int64_t r = 0; r < rows; ++r)
      std::memcpy(dst + r * dst_stride, src + r * src_stride, static_cast<size_t>(cols) * sizeof(float));
  }
  // Contract: dot_chunked_f32(input, +0, x[m][k], w[n][k]) over k ascending (the GEMM core with init +0);
  // see docs/arithmetic.md#recurrent.
  void project(KernelContext& ctx, const float* x, int64_t rows, int64_t input, const float* w, int64_t gate_rows,
               float* xw) {
    if (rows == 0) return;
    if (input == 0) return fill_zero(ctx, xw, rows * gate_rows);
    if (!packed_) prepare(ctx);
    const int64_t d = (w - ctx.input(kW).data<float>()) / (gate_rows * input);
    gemm_f32_packed_b(ctx.pool, rows, strided_panels({x, input, 1}, input), packed_->w[d], GemmOut{xw, gate_rows, 1});
  }

  // Contract: arith::cell_unit / arith::gru_gates per unit; see docs/arithmetic.md#recurrent.
  void units(KernelContext& ctx, const CellStep& step, bool gates_pass) {
    if (isa_ == CpuIsa::Scalar) {
      ctx.pool->parallel_for(step.batch * step.hidden,
                             [&](int64_t b, int64_t e) { unit_range(step, gates_pass, b, e); }, 16);
      return;
    }
    const int64_t G = plan_.gate_rows(), H = plan_.hidden;
    if (!packed_) prepare(ctx);
    if (!hr_) {
      hr_buffer_ = ctx.allocator->allocate(static_cast<size_t>(step.batch * G) * sizeof(float));
      hr_ = static_cast<float*>(hr_buffer_->data);
    }
    const int64_t d = (step.r - ctx.input(kR).data<float>()) / (G * H);
    ThreadPool* pool = step.batch * G * H >= kThreadedStepWork ? ctx.pool : nullptr;
    // The dots: hr(b, n) = dot_chunked_f32(H, +0, h_prev[b][k], R[n][k]), or r*h_prev for GRU's second block.
    if (gates_pass || step.kind != CellKind::Gru) product(pool, step.h_prev, packed_->first[d], step, 0);
    else if (packed_->split < G) product(pool, step.gate_r, packed_->second[d], step, packed_->split);
    ctx.pool->parallel_for(step.batch, [&](int64_t b0, int64_t b1) {
      for (int64_t b = b0; b < b1; ++b) {
        float* pre = hr_ + b * G;
        if (!arith::cell_row_active(step, b)) {
          if (!gates_pass) inactive_row(step, b);
        } else if (gates_pass) {
          gru_gates_row(step, b, pre);
        } else if (step.kind == CellKind::Lstm) {
          lstm_row(step, b, pre);
        } else if (step.kind == CellKind::Gru) {
          gru_row(step, b, pre);
        } else {
          rnn_row(step, b, pre);
        }
      }
    }, std::max<int64_t>(1, 4096 / G));
  }

 private:
  // Packs W, and R where the steps read it packed (kept in the node's state when both are initializers).
  void prepare(KernelContext& ctx) {
    const Tensor &w = ctx.input(kW), &r = ctx.input(kR);
    const int64_t dirs = plan_.dirs, G = plan_.gate_rows(), H = plan_.hidden, input = plan_.input;
    const bool gru_split = plan_.kind == CellKind::Gru && !plan_.linear_before_reset;
    const int64_t split = gru_split ? 2 * H : G;
    auto make = [&] {
      PackedRecurrence packed{isa_, split, {}, {}, {}};
      for (int64_t d = 0; d < dirs; ++d) {
        const float *wd = w.data<float>() + d * G * input, *rd = r.data<float>() + d * G * H;
        packed.w.push_back(pack_b(ctx.pool, G, input, strided_panels({wd, input, 1}, input)));
        if (isa_ == CpuIsa::Scalar) continue;
        packed.first.push_back(pack_b(ctx.pool, split, H, strided_panels({rd, H, 1}, H)));
        if (split < G)
          packed.second.push_back(pack_b(ctx.pool, G - split, H, strided_panels({rd + split * H, H, 1}, H)));
      }
      return packed;
    };
    auto fits = [&](const PackedRecurrence& p) {
      return p.isa == isa_ && p.split == split && static_cast<int64_t>(p.w.size()) == dirs && p.w[0].N == G &&
             p.w[0].K == input && (p.first.empty() || p.first[0].K == H);
    };
    if (ctx.state && ctx.input_is_constant(kW) && ctx.input_is_constant(kR))
      packed_ = ctx.state->get_or_make<PackedRecurrence>(fits, make);
    else
      packed_ = std::make_shared<const PackedRecurrence>(make());
  }

  // hr[b][col0 + n] = dot_chunked_f32(H, +0, a[b][k], B(k, n)) for every batch row b.
  // Contract: dot_chunked_f32 over k ascending, init +0; see docs/arithmetic.md#recurrent.
  void product(ThreadPool* pool, const float* a, const PackedB& b, const CellStep& step, int64_t col0) {
    const int64_t H = plan_.hidden;
    const GemmOut out{hr_ + col0, plan_.gate_rows(), 1};
    if (step.batch == 1) gemm_f32_row_packed_b(pool, a, b, out);
    else gemm_f32_packed_b(pool, step.batch, strided_panels({a, H, 1}, H), b, out);
  }

  const RecurrentPlan& plan_;
  const CpuIsa isa_;  // one per run, so that the steps run the path the packing was made for
  std::shared_ptr<const PackedRecurrence> packed_;
  std::shared_ptr<Buffer> hr_buffer_;
  float* hr_ = nullptr;
};

}  // namespace

void recurrent(KernelContext& ctx) { run_recurrent<CpuRecurrent>(ctx); }

}  // namespace lockstep::cpu
