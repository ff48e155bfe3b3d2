// The LSTM cell on AVX2 registers (lstm_f32.h): each lane is one hidden unit running arith::cell_unit's sequence.
// Two registers are computed side by side with no branch between them, so that the scheduler interleaves their
// ten independent sigmoid/tanh chains (each is a long chain of dependent operations).
// Contract: arith::cell_unit (LSTM) per unit; see docs/arithmetic.md#recurrent.
#if defined(__AVX2__)
#include "cpu/lanes_avx2.h"  // first: see there

#include <algorithm>
#include <limits>

#include "cpu/recurrent/lstm_f32.h"

namespace lockstep::cpu {

namespace {

using arith::f32x8;

constexpr int kRegisters = 2;

f32x8 splat(float v) { return reinterpret_cast<f32x8>(_mm256_set1_ps(v)); }

struct RowLanes {
  __m256i mask;  // the lanes of units below hidden
  f32x8 load(const float* p) const { return reinterpret_cast<f32x8>(_mm256_maskload_ps(p, mask)); }
  void store(float* p, f32x8 v) const { _mm256_maskstore_ps(p, mask, reinterpret_cast<__m256>(v)); }
};

RowLanes lanes_below(int64_t left) {
  const int32_t n = static_cast<int32_t>(std::clamp<int64_t>(left, 0, 8));
  return {_mm256_cmpgt_epi32(_mm256_set1_epi32(n), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7))};
}

/// The pre-activation of gate row n (arith::gate_finish before its activation): ((xw + hr) [+ p c]) + Wb) + Rb,
/// then arith::cell_clip's two comparisons, with bounds -inf and +inf when there is no clip (which select the
/// sum itself, NaN included).
struct GateSums {
  const arith::CellStep& s;
  const float *xw, *hr;
  f32x8 lo, hi;
  f32x8 operator()(const RowLanes& l, int64_t n, f32x8 peephole) const {
    f32x8 v = l.load(xw + n) + l.load(hr + n);
    v = v + peephole;
    return finish(l, n, v);
  }
  f32x8 operator()(const RowLanes& l, int64_t n) const { return finish(l, n, l.load(xw + n) + l.load(hr + n)); }
  f32x8 finish(const RowLanes& l, int64_t n, f32x8 v) const {
    v = v + l.load(s.wb + n);
    v = v + l.load(s.rb + n);
    v = v < lo ? lo : v;
    return hi < v ? hi : v;
  }
};

template <bool kInputForget>
void lstm_row_lanes(const arith::CellStep& s, int64_t b, const float* hr) {
  const int64_t H = s.hidden;
  constexpr float kInf = std::numeric_limits<float>::infinity();
  const GateSums sum{s, s.xw + b * s.xw_bs, hr, splat(s.has_clip ? -s.clip : -kInf), splat(s.has_clip ? s.clip : kInf)};
  float* c = s.c + b * H;
  for (int64_t j0 = 0; j0 < H; j0 += 8 * kRegisters) {
    RowLanes l[kRegisters];
    f32x8 c_new[kRegisters], out[kRegisters];
    for (int r = 0; r < kRegisters; ++r) {
      const int64_t j = j0 + 8 * r;
      l[r] = lanes_below(H - j);
      const f32x8 c_prev = l[r].load(c + j);
      // cell_unit's order: i (peephole on c_prev), f (or 1 - i), the cell gate, c_new, o (peephole on c_new).
      const f32x8 i = arith::sigmoid_f32(sum(l[r], j, l[r].load(s.p + j) * c_prev));
      f32x8 f;
      if constexpr (kInputForget) f = 1.0f - i;
      else f = arith::sigmoid_f32(sum(l[r], 2 * H + j, l[r].load(s.p + 2 * H + j) * c_prev));
      const f32x8 cc = arith::tanh_f32(sum(l[r], 3 * H + j));
      const f32x8 kept = f * c_prev, added = i * cc;
      c_new[r] = kept + added;
      const f32x8 o = arith::sigmoid_f32(sum(l[r], H + j, l[r].load(s.p + H + j) * c_new[r]));
      out[r] = o * arith::tanh_f32(c_new[r]);
    }
    for (int r = 0; r < kRegisters; ++r) {
      const int64_t j = j0 + 8 * r;
      l[r].store(c + j, c_new[r]);
      l[r].store(s.h_next + b * H + j, out[r]);
      if (s.y) l[r].store(s.y + b * s.y_bs + j, out[r]);
    }
  }
}

}  // namespace

void lstm_row_f32_avx2(const arith::CellStep& s, int64_t b, const float* hr) {
  if (s.input_forget) lstm_row_lanes<true>(s, b, hr);
  else lstm_row_lanes<false>(s, b, hr);
}

}  // namespace lockstep::cpu
#endif
