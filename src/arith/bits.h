// Bit reinterpretation and fma for the code shared by the CPU and CUDA providers: the same operation on both.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#include "hd.h"
#include "lanes.h"

namespace lockstep::arith {

/// Bit pattern of a float (lanes.h's as_int, unsigned).
LOCKSTEP_HD uint32_t bits_of(float x) { return static_cast<uint32_t>(as_int(x)); }

/// Float with the given bit pattern.
LOCKSTEP_HD float float_of(uint32_t u) { return as_float(static_cast<int32_t>(u)); }

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

/// Fused multiply-add a*b+c with a single rounding (IEEE fusedMultiplyAdd), for kernels whose contract says
/// "fma": lanes.h's mul_add on one float.
LOCKSTEP_HD float fma_f32(float a, float b, float c) { return mul_add(a, b, c); }

/// The binary64 fma (Einsum on double operands).
LOCKSTEP_HD double fma_f64(double a, double b, double c) {
#if defined(__CUDA_ARCH__)
  return __fma_rn(a, b, c);
#else
  return std::fma(a, b, c);
#endif
}
/// fma_f32 or fma_f64 by operand type, for the templates of reduce.h.
LOCKSTEP_HD float fma_of(float a, float b, float c) { return fma_f32(a, b, c); }
LOCKSTEP_HD double fma_of(double a, double b, double c) { return fma_f64(a, b, c); }

}  // namespace lockstep::arith
