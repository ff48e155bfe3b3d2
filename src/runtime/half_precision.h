// float16 and bfloat16 inputs of the ops that compute in float32: the contract's half-precision rule
// (docs/arithmetic.md#half-precision), applied around a kernel by the executor on every provider.
#pragma once

#include "runtime/kernel.h"

namespace lockstep {

/// Whether the row's op computes (conv, gemm, elementwise math, reduce, normalization, pool, resize, loss,
/// recurrent, attention, detection, fused ops, TopK, Unique) rather than moving, selecting or converting bytes.
bool computes_in_float(const OpEntry& entry);

/// Runs `kernel` on ctx under the half-precision rule. When the op computes in float and an input is float16 or
/// bfloat16 (the first such input's type is the half type), every input of the half type is widened to float32
/// (exact), the float32 kernel runs, and each float32 output is rounded once, to nearest even, to the half type.
/// Otherwise `kernel` runs as it is. `cast` is the Cast kernel of ctx's device (cast_row()): its conversions are
/// the contract's on every provider, so both providers give the same bits.
void run_kernel_with_half_rule(KernelFn kernel, KernelFn cast, KernelContext& ctx);

/// The Cast row of the op table.
const OpEntry& cast_row();

}  // namespace lockstep
