// The DFT contract in code (docs/arithmetic.md#signal): per output element, one canonical dot product over the signal
// with twiddles from the shared sin_f32/cos_f32. Plain C++ on the host, __host__ __device__ under nvcc.
#pragma once

#include <cstdint>

#include "arith/hd.h"
#include "arith/math_binary64.h"  // sin_f32, cos_f32
#include "arith/reduce.h"         // dot_chunked_f32

namespace lockstep::arith {

enum class DftKind : int { Forward, Inverse, InverseOfOneSided };

/// A DFT along one axis of x (outer, length, inner, components): `length` positions of `components` (1: real,
/// 2: complex) values; the transform has `size` points (dft_length) and writes `bins` positions of
/// `out_components` values. STFT: each line has `frames` frames, frame f starting at position f * frame_step, its
/// values multiplied by `window` (if any) before the transform.
struct DftGeometry {
  const float* x;
  int64_t outer, length, inner, components;
  int64_t size, bins, out_components;
  DftKind kind;
  int64_t frames = 1, frame_step = 0;
  const float* window = nullptr;

  /// Component c (0 real, 1 imaginary) of the input's position t of line (o, i); +0 past the input (zero padding)
  /// and for the imaginary part of a real input. InverseOfOneSided completes the spectrum by conjugate symmetry.
  LOCKSTEP_HD float value(int64_t o, int64_t i, int64_t t, int64_t c) const {
    bool conjugate = false;
    if (kind == DftKind::InverseOfOneSided && t > size / 2) {
      t = size - t;
      conjugate = true;
    }
    if (t >= length || c >= components) return 0.0f;
    const float v = x[((o * length + t) * inner + i) * components + c];
    return conjugate && c == 1 ? -v : v;
  }
};

/// cos and sin of the twiddle angle 2*pi*m/n, m = k*t mod n, reduced exactly: m past n/2 is taken as n - m with
/// sin negated (so angles a and 2*pi - a get the same values up to sin's sign); then with 4m = q*n + r
/// (0 <= r < n, q <= 2) the angle is q*pi/2 + phi, phi = (float(r) * float(pi/2)) / float(n) (two roundings), and
/// the quarter q swaps and negates cos(phi) and sin(phi) exactly. Multiples of a quarter turn are exact (0, +-1).
LOCKSTEP_HD void dft_twiddle_f32(int64_t k, int64_t t, int64_t n, float& cos_a, float& sin_a) {
  int64_t m = (k * t) % n;
  const bool lower_half = 2 * m > n;
  if (lower_half) m = n - m;
  const int64_t q = 4 * m / n, r = 4 * m % n;
  const float phi = (static_cast<float>(r) * 1.5707964f) / static_cast<float>(n);
  const float c = cos_f32(phi), s = sin_f32(phi);
  if (q == 0) cos_a = c, sin_a = s;
  else if (q == 1) cos_a = -s, sin_a = c;
  else cos_a = -c, sin_a = -s;
  if (lower_half) sin_a = -sin_a;
}

/// Output element e of (outer, frames, bins, inner, out_components).
// Contract: dot_chunked_f32 over 2n terms (t ascending; per t the real part's term, then the imaginary part's; STFT:
// each value times the window first), init +0; the inverse then divided by n; see docs/arithmetic.md#signal.
LOCKSTEP_HD float dft_element_f32(const DftGeometry& g, int64_t e) {
  const int64_t part = e % g.out_components;
  int64_t rest = e / g.out_components;
  const int64_t i = rest % g.inner;
  rest /= g.inner;
  const int64_t k = rest % g.bins;
  rest /= g.bins;
  const int64_t frame = rest % g.frames, o = rest / g.frames, start = frame * g.frame_step;
  // e^{-+j a} (xr + j xi): real part xr cos a +- xi sin a, imaginary part xi cos a -+ xr sin a (forward: upper).
  const float sign = g.kind == DftKind::Forward ? 1.0f : -1.0f;
  auto term = [&](int64_t j) {
    const float v = g.value(o, i, start + j / 2, part == 0 ? j % 2 : 1 - j % 2);
    return g.window ? v * g.window[j / 2] : v;
  };
  auto twiddle = [&](int64_t j) {
    float c, s;
    dft_twiddle_f32(k, j / 2, g.size, c, s);
    if (j % 2 == 0) return c;
    return part == 0 ? sign * s : -sign * s;
  };
  const float y = dot_chunked_f32(2 * g.size, 0.0f, term, twiddle);
  return g.kind == DftKind::Forward ? y : y / static_cast<float>(g.size);
}

}  // namespace lockstep::arith
