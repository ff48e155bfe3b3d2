// float16 and bfloat16 inputs of the ops that compute in float32: the contract's half-precision rule
// (docs/arithmetic.md#half-precision), applied around a kernel by the executor on every provider.
#pragma once

#include <vector>

#include "graph/plan.h"
#include "runtime/kernel.h"

namespace lockstep {

/// Whether the row's op computes (conv, gemm, elementwise math, reduce, normalization, pool, resize, loss,
/// recurrent, attention, detection, signal, fused ops, TopK, Unique, Range) rather than moving, selecting or converting
/// bytes.
bool computes_in_float(const OpEntry& entry);

/// A node's half values that stay in float32 between ops that compute (docs/arithmetic.md#half-precision).
struct HalfValuesInFloat {
  std::vector<DType> input_half;   // per input: the half type of an input a previous node left in float32, else
                                   // DType::Undefined
  std::vector<bool> keep_output;   // per output: leave it in float32 (a value that only ops that compute read)
  std::vector<DType> output_half;  // filled per output: the half type of an output left in float32, else Undefined
};

/// Runs `kernel` on ctx under the half-precision rule. When the op computes in float and an input is float16 or
/// bfloat16, or is a half value left in float32 (`kept`), the first such input's type is the half type: every
/// input of that type is widened to float32 (exact), the float32 kernel runs, and each float32 output is rounded
/// once, to nearest even, to the half type, unless `kept` keeps it. Otherwise `kernel` runs as it is. `cast` is
/// the Cast kernel of ctx's device (cast_row()): its conversions are the contract's on every provider, so both
/// providers give the same bits. Returns the half type (DType::Undefined when the rule did not apply).
DType run_kernel_with_half_rule(KernelFn kernel, KernelFn cast, KernelContext& ctx,
                                HalfValuesInFloat* kept = nullptr);

/// By node, per output: whether a half value that output makes stays in float32. It does when the node computes,
/// or only moves the bytes of its first input (Reshape, Flatten, Squeeze, Unsqueeze, Identity, Transpose, Slice,
/// Expand, Tile, Gather, Split, DepthToSpace, SpaceToDepth) and that input stays in float32; and when the value is
/// no graph output, no subgraph reads it, and every node that reads it computes, moves it in that way (the first
/// input, with outputs that stay in float32), or reads only its shape (Shape, Size).
std::vector<std::vector<bool>> half_values_in_float(const Plan& plan);

/// Per value id: whether a float16 or bfloat16 constant may be held widened to float32 from session creation on
/// (widening is exact, so this only saves the per-run conversion): it has readers, every one a node that computes,
/// and it is no graph output and no subgraph reads it.
std::vector<bool> half_constants_in_float(const Plan& plan);

/// A host float16 or bfloat16 tensor widened to float32 by the CPU Cast kernel.
Tensor widen_on_host(const Tensor& t, ThreadPool& pool, Allocator& allocator);

/// The Cast row of the op table.
const OpEntry& cast_row();

}  // namespace lockstep
