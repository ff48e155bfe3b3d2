// Division of 31-bit indices by a multiply and a shift: how the broadcasting GPU kernels turn an element index
// into coordinates without a division instruction (src/cuda/broadcast.cuh). Index arithmetic only.
#pragma once

#include <cstdint>

#include "arith/hd.h"

namespace lockstep {

/// n / d for 0 <= n < 2^31 and 1 <= d < 2^31: (n * m) >> p with p = 31 + ceil(log2 d) and m = ceil(2^p / d). The
/// error n * (m d - 2^p) / (d 2^p) is below 2^31 / 2^p = 2^-ceil(log2 d) <= 1/d, too little to reach the next
/// integer, so the quotient is exact; m < 2^32 because d > 2^(ceil(log2 d) - 1).
struct FastDivisor {
  uint32_t divisor = 1, multiplier = 1u << 31, shift = 31;

  FastDivisor() = default;
  explicit FastDivisor(uint32_t d) : divisor(d) {
    uint32_t log2 = 0;
    while ((uint64_t(1) << log2) < d) ++log2;
    shift = 31 + log2;
    multiplier = uint32_t(((uint64_t(1) << shift) + d - 1) / d);
  }
  LOCKSTEP_HD uint32_t quotient(uint32_t n) const { return uint32_t((uint64_t(n) * multiplier) >> shift); }
};

}  // namespace lockstep
