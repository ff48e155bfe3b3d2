// The GEMM core's store of a finished tile into a C whose rows are strided and whose columns are contiguous (the
// transposed product of Conv: lanes along output channels, output planes in memory): pure data movement plus the
// fused epilogue, so every version writes the same bytes as the per-element store.
#pragma once

#include <cstdint>

#include "ops/epilogue.h"

namespace lockstep::cpu {

/// Tile element (i, j), i < rows <= 8, j < cols (row i at tile + i * tile_pitch, readable up to the next multiple
/// of 8 columns), goes to dst[i + j * col_step] through absorbed_ops_f32: the addend (null: none) read at
/// addend[i + j * col_step], or addend[j] when per_column, in the node's operand order, then the activation. 8x8
/// blocks are transposed in registers, so that each output column is one store, where a float-by-float copy wrote
/// every col_step-th float.
void store_tile_transposed_f32_avx2(const float* tile, int64_t tile_pitch, int rows, int64_t cols, float* dst,
                                    int64_t col_step, const float* addend, bool per_column, bool addend_first,
                                    Activation activation);

}  // namespace lockstep::cpu
