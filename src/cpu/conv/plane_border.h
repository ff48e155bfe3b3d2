// The +0 around the inside of a packed input plane (phase planes, framed planes): the padding taps' value, written
// where the packing copies nothing.
#pragma once

#include <algorithm>
#include <cstdint>

namespace lockstep::cpu {

/// +0 in every float of [plane, plane + len) (rows of `pitch` floats, then any tail) but the inside, rows [r0, r1)
/// x columns [c0, c1), which the packing copies from the input.
inline void zero_outside(float* plane, int64_t len, int64_t pitch, int64_t r0, int64_t r1, int64_t c0, int64_t c1) {
  if (r1 <= r0 || c1 <= c0) return std::fill(plane, plane + len, 0.0f);
  std::fill(plane, plane + r0 * pitch + c0, 0.0f);
  for (int64_t r = r0; r + 1 < r1; ++r) std::fill(plane + r * pitch + c1, plane + (r + 1) * pitch + c0, 0.0f);
  std::fill(plane + (r1 - 1) * pitch + c1, plane + len, 0.0f);
}

}  // namespace lockstep::cpu
