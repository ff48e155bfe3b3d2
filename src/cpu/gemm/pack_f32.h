// Packing of GEMM operands whose rows lie along k (A of a row-major product, B of a product with B transposed):
// pure data movement, so every version writes the same bytes.
#pragma once

#include <cstdint>

namespace lockstep::cpu {

/// Packs `count` rows (row i at src + i * row_stride, K consecutive floats each) into one width-wide panel, k-major:
/// dst[k * width + i] = row i's element k, and +0 for the rows count .. width-1. width is a multiple of 8 or is 6
/// (the AVX2 micro-kernel's rows); count <= width. An 8x8 transpose in registers per 8 rows and 8 k, where a
/// float-by-float copy writes every width-th float (BERT-base: 4% of a run packing its activations).
void pack_rows_along_k_f32_avx2(const float* src, int64_t row_stride, int64_t count, int64_t K, int width,
                                float* dst);

}  // namespace lockstep::cpu
