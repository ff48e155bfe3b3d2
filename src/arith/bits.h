// Bit reinterpretation and fma for the code shared by the CPU and CUDA providers: the same operation on both.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#include "hd.h"

namespace lockstep::arith {

/// Bit pattern of a float.
LOCKSTEP_HD uint32_t bits_of(float x) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(x);
#else
  uint32_t u;
  std::memcpy(&u, &x, sizeof u);
  return u;
#endif
}

/// Float with the given bit pattern.
LOCKSTEP_HD float float_of(uint32_t u) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(u);
#else
  float x;
  std::memcpy(&x, &u, sizeof x);
  return x;
#endif
}

/// Bit pattern of a double.
LOCKSTEP_HD uint64_t bits_of(double x) {
#if defined(__CUDA_ARCH__)
  return static_cast<uint64_t>(__double_as_longlong(x));
#else
  uint64_t u;
  std::memcpy(&u, &x, sizeof u);
  return u;
#endif
}

/// Double with the given bit pattern.
LOCKSTEP_HD double double_of(uint64_t u) {
#if defined(__CUDA_ARCH__)
  return __longlong_as_double(static_cast<long long>(u));
#else
  double x;
  std::memcpy(&x, &u, sizeof x);
  return x;
#endif
}

/// Fused multiply-add a*b+c with a single rounding (IEEE fusedMultiplyAdd). Not used by the functions below;
/// provided for kernels whose contract says "fma".
LOCKSTEP_HD float fma_f32(float a, float b, float c) {
#if defined(__CUDA_ARCH__)
  return __fmaf_rn(a, b, c);
#else
  return std::fma(a, b, c);
#endif
}

}  // namespace lockstep::arith
