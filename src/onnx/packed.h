// The sub-byte element types (int4, uint4, float4e2m1: 4 bits; int2, uint2: 2 bits) as ONNX stores them: packed,
// the first element in the lowest bits of the first byte. lockstep holds one element per byte (lockstep/tensor.h).
#pragma once

#include <cstdint>
#include <vector>

#include "lockstep/tensor.h"

namespace lockstep::onnx {

/// Bytes ONNX stores for `numel` elements of t (the last byte of a packed tensor may be partly used); saturates at
/// UINT64_MAX rather than overflow.
inline uint64_t stored_bytes(DType t, uint64_t numel) {
  const uint64_t bits = static_cast<uint64_t>(dtype_bits(t));
  if (bits >= 8) return numel > UINT64_MAX / (bits / 8) ? UINT64_MAX : numel * (bits / 8);
  return numel / 8 * bits + (numel % 8 * bits + 7) / 8;
}

/// Unpacks n elements of `bits` bits in place: buf holds the packed bytes on entry, n bytes on return (each
/// element's byte index is at least that of its packed byte, so a backwards pass never reads what it wrote).
inline void unpack_in_place(uint8_t* buf, uint64_t n, int bits) {
  const uint32_t mask = (1u << bits) - 1u;
  for (uint64_t i = n; i-- > 0;) {
    const uint64_t at = i * static_cast<uint64_t>(bits);
    buf[i] = static_cast<uint8_t>((buf[at / 8] >> (at % 8)) & mask);
  }
}

/// The packed bytes of n one-byte elements of `bits` bits (the unused high bits of the last byte zero).
inline std::vector<uint8_t> pack(const uint8_t* elements, uint64_t n, int bits) {
  std::vector<uint8_t> out((n * static_cast<uint64_t>(bits) + 7) / 8, 0);
  const uint32_t mask = (1u << bits) - 1u;
  for (uint64_t i = 0; i < n; ++i) {
    const uint64_t at = i * static_cast<uint64_t>(bits);
    out[at / 8] = static_cast<uint8_t>(out[at / 8] | ((elements[i] & mask) << (at % 8)));
  }
  return out;
}

}  // namespace lockstep::onnx
