// SIMD blocks of the tensor family's transposition (src/cpu/tensor.cpp, transpose_tiles): pure data movement, so
// every version writes the same bytes.
#pragma once

#include <cstdint>

namespace lockstep::cpu {

/// dst[i * dst_row + j] = src[i + j * src_row] for i < rows, j < cols, 32-bit words (any 4-byte dtype): whole 8x8
/// blocks through AVX2 registers (8 loads, a transpose, 8 stores), the rest word by word.
void transpose_tile_b32_avx2(const uint32_t* src, int64_t src_row, uint32_t* dst, int64_t dst_row, int64_t rows,
                             int64_t cols);

}  // namespace lockstep::cpu
