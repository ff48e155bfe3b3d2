// MelWeightMatrix (opset 17) in code (docs/arithmetic.md#melweightmatrix-17): the band edges on the mel scale, their
// spectrogram bins and the triangle value of one output element, in binary64 with lockstep's own exp and log
// (math_f64.h), so both devices compute the same bins and values. The caller converts the value to the output
// type as Cast converts a double.
#pragma once

#include <cstdint>

#include "arith/bits.h"
#include "arith/hd.h"
#include "arith/math_f64.h"

namespace lockstep::arith {

constexpr double kMelLn10 = 0x1.26bb1bbb55516p+1;  // ln 10 rounded to binary64

/// The validated scalars of a MelWeightMatrix node. Output (dft_length / 2 + 1, mel_bins), row-major.
struct MelGeometry {
  int64_t mel_bins = 0;
  int64_t dft_length = 0;
  double sample_rate = 0.0;
  double lower_mel = 0.0;  // mel_of_hertz_f64(lower_edge_hertz)
  double mel_step = 0.0;   // (mel_of_hertz_f64(upper_edge_hertz) - lower_mel) / (mel_bins + 2)
};

/// mel(h) = 2595 log10(1 + h / 700), as (2595 * log_f64(1 + h / 700)) / ln10, each operation rounded.
LOCKSTEP_HD double mel_of_hertz_f64(double hertz) { return (2595.0 * log_f64(1.0 + hertz / 700.0)) / kMelLn10; }

/// The spectrogram bin of band edge k (0 <= k <= mel_bins + 1): m = lower_mel + double(k) * mel_step;
/// h = 700 * (exp_f64((m / 2595) * ln10) - 1); the bin is the floor of the exact quotient
/// ((dft_length + 1) * h) / sample_rate: q = floor of the rounded quotient, less 1 where fma(-q, sample_rate, a)
/// is negative (the rounded quotient reached an integer the exact one is below, as Python's // knows).
LOCKSTEP_HD int64_t mel_edge_bin(const MelGeometry& g, int64_t k) {
  const double m = g.lower_mel + static_cast<double>(k) * g.mel_step;
  const double hertz = 700.0 * (exp_f64((m / 2595.0) * kMelLn10) - 1.0);
  const double a = static_cast<double>(g.dft_length + 1) * hertz;
  const double quotient = a / g.sample_rate;
  if (!(quotient > -9.0e15 && quotient < 9.0e15)) return quotient > 0.0 ? INT64_MAX / 2 : -1;  // never a row
  int64_t q = static_cast<int64_t>(quotient);  // toward zero, then down to the floor
  if (static_cast<double>(q) > quotient) --q;
  if (fma_f64(-static_cast<double>(q), g.sample_rate, a) < 0.0) --q;
  return q;
}

/// Output element e = j * mel_bins + i: band i has edges lo, c, hi = the bins of edges i, i + 1, i + 2.
/// Falling side first: c <= j < hi gives double(hi - j) / double(hi - c); else, with c == lo, 1 at j == c;
/// else lo <= j <= c gives double(j - lo) / double(c - lo); everything else is +0 (one division at most).
LOCKSTEP_HD double mel_weight_f64(const MelGeometry& g, int64_t e) {
  const int64_t j = e / g.mel_bins, i = e % g.mel_bins;
  const int64_t lo = mel_edge_bin(g, i), c = mel_edge_bin(g, i + 1), hi = mel_edge_bin(g, i + 2);
  if (hi > c && j >= c && j < hi) return static_cast<double>(hi - j) / static_cast<double>(hi - c);
  if (c == lo) return j == c ? 1.0 : 0.0;
  if (j >= lo && j <= c) return static_cast<double>(j - lo) / static_cast<double>(c - lo);
  return 0.0;
}

}  // namespace lockstep::arith
