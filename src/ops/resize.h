// The resize family (Resize 10-23, Upsample 7-9): parsing of every opset's inputs and attributes into one plan
// of per-axis taps, shared by the CPU and CUDA kernels (docs/arithmetic.md#resize).
#pragma once

#include <vector>

#include "arith/resize.h"
#include "ops/common.h"
#include "runtime/kernel.h"

namespace lockstep {

struct ResizePlan {
  Shape out_shape;
  DType dtype = DType::Undefined;
  bool nearest = true;          // nearest: pure data movement (any dtype); else float32 interpolation
  float extrapolation = 0.0f;   // output where a tap is outside (tf_crop_and_resize)
  uint64_t extrapolation_bits = 0;  // the same value converted to the data type, as its bytes (nearest)
  int rank = 0;
  int64_t out_dims[kMaxRank];
  int64_t axis_start[kMaxRank];             // axis k's taps are taps[axis_start[k] + o_k]
  std::vector<arith::ResizeTaps> taps;      // computed once on the host, identical for both devices
};

/// Reads inputs/attributes of Resize or Upsample at ctx.opset, validates, and builds the taps.
ResizePlan resize_plan(const KernelContext& ctx);

namespace cpu {
void resize(KernelContext& ctx);
}
namespace cuda {
void resize(KernelContext& ctx);
}

}  // namespace lockstep
