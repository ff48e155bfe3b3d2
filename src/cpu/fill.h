// Element-by-element fill of a float32 output over the pool: the CPU side of the ops whose output element is one
// shared arith function of its index (Col2Im, GridSample), as CUDA's fill_output_f32 is theirs.
#pragma once

#include "runtime/kernel.h"
#include "runtime/thread_pool.h"

namespace lockstep::cpu {

/// Allocates output `output` as float32 of `shape` and sets element i to element(i), at least `grain` elements a
/// task.
template <typename Element>
void fill_output_f32(KernelContext& ctx, const Shape& shape, int64_t grain, const Element& element, int output = 0) {
  Tensor& y = ctx.output(output, DType::Float, shape);
  if (y.numel() == 0) return;
  float* yd = y.data<float>();
  ctx.pool->parallel_for(y.numel(), [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) yd[i] = element(i);
  }, grain);
}

}  // namespace lockstep::cpu
