// The tensor family (shape and data movement): device-independent definitions shared by the CPU and CUDA
// kernels. Every op of the family is exact (no float arithmetic) except float Range, so both devices agree by
// construction as long as they move the same bytes; the plans below fix which bytes go where.
#pragma once

#include <cstdint>
#include <vector>

#include "arith/hd.h"
#include "ops/common.h"
#include "runtime/kernel.h"

namespace lockstep {

/// Rank limit of a strided copy after dimension merging (Tile doubles the rank before merging).
constexpr int kCopyMaxRank = 16;

/// dst[dst_offset + sum_d i_d*dst_strides[d]] = src[src_offset + sum_d i_d*src_strides[d]] for every index
/// i in dims (strides in elements, possibly 0 or negative). Serves Transpose, Slice, Expand, Tile, Concat, Split.
struct StridedCopy {
  int rank = 0;
  int64_t dims[kCopyMaxRank];
  int64_t src_strides[kCopyMaxRank];
  int64_t dst_strides[kCopyMaxRank];
  int64_t src_offset = 0;
  int64_t dst_offset = 0;
  int64_t numel() const {
    int64_t n = 1;
    for (int d = 0; d < rank; ++d) n *= dims[d];
    return n;
  }
};

/// Builds a copy plan from per-dimension sizes and strides, dropping size-1 dims and merging contiguous ones.
StridedCopy make_copy(const onnx::Node& node, const std::vector<int64_t>& dims, const std::vector<int64_t>& src_strides,
                      const std::vector<int64_t>& dst_strides, int64_t src_offset = 0, int64_t dst_offset = 0);

/// Pad: how an out-of-range source coordinate is mapped back (docs/arithmetic.md#pad).
enum class PadMode : int { Constant = 0, Reflect = 1, Edge = 2, Wrap = 3 };

/// Pad plan: output is contiguous; out coordinate o_d reads input coordinate o_d - begin[d], mapped by mode.
struct PadPlan {
  int rank = 0;
  PadMode mode = PadMode::Constant;
  int64_t out_dims[kMaxRank];
  int64_t in_dims[kMaxRank];
  int64_t in_strides[kMaxRank];
  int64_t begin[kMaxRank];
  uint64_t value_bits = 0;  // the constant, as the element's bytes (low bytes)
};

/// Maps coordinate c (may be outside [0, n)) into [0, n) by the pad mode; -1 means "use the constant".
/// Reflect mirrors without repeating the edge (period 2(n-1)), Edge clamps, Wrap is modulo n.
LOCKSTEP_HD int64_t pad_source_index(int64_t c, int64_t n, PadMode mode) {
  if (c >= 0 && c < n) return c;
  switch (mode) {
    case PadMode::Constant: return -1;
    case PadMode::Edge: return c < 0 ? 0 : n - 1;
    case PadMode::Wrap: {
      int64_t m = c % n;
      return m < 0 ? m + n : m;
    }
    case PadMode::Reflect: {
      if (n == 1) return 0;
      int64_t period = 2 * (n - 1);
      int64_t m = c % period;
      if (m < 0) m += period;
      return m < n ? m : period - m;
    }
  }
  return -1;
}

/// Gather plan: out[o, j, i] = data[o, idx[j], i] over (outer, n_idx, inner); axis_dim bounds idx.
struct GatherPlan {
  int64_t outer = 0, n_idx = 0, inner = 0, axis_dim = 0;
};

/// GatherElements plan: out[i] = data[i with coordinate `axis` replaced by idx[i]].
struct GatherElementsPlan {
  int rank = 0, axis = 0;
  int64_t out_dims[kMaxRank];
  int64_t data_strides[kMaxRank];
  int64_t axis_dim = 0;
};

// ---- Definitions shared by both devices (src/ops/tensor.cpp) ----

/// Output shape of Reshape/Flatten/Squeeze/Unsqueeze (all aliases of input 0).
Shape alias_shape(const KernelContext& ctx);

/// The copies one data-movement node performs: Transpose, Slice, Expand, Tile (one copy, out = output 0),
/// Concat (one per input, into output 0), Split (one per output, from input 0). Allocates nothing.
struct CopyJob {
  int src_input = 0;   // which input the copy reads
  int dst_output = 0;  // which output it writes
  StridedCopy copy;
};
struct MovementPlan {
  std::vector<Shape> out_shapes;  // one per output
  DType dtype = DType::Undefined;
  std::vector<CopyJob> jobs;
};
MovementPlan movement_plan(const KernelContext& ctx);

/// Pad: the output shape and plan (reads pads/constant_value/axes through host_input).
PadPlan pad_plan(const KernelContext& ctx, Shape& out_shape);

/// Gather: output shape and plan. Indices are validated separately (validate_indices).
GatherPlan gather_plan(const KernelContext& ctx, Shape& out_shape);
GatherElementsPlan gather_elements_plan(const KernelContext& ctx, Shape& out_shape);
/// Throws InvalidArgument naming the first index outside [-n, n) of a host int32/int64 tensor.
void validate_indices(const KernelContext& ctx, const Tensor& host_indices, int64_t n);

/// Host-computed outputs (Shape, Size, Constant, Range, ConstantOfShape's value): the value as a host tensor.
enum class HostOp : int { Shape = 0, Size = 1, Constant = 2, Range = 3 };
Tensor host_value(const KernelContext& ctx, HostOp op);
/// ConstantOfShape: output shape and the element value (as a 1-element host tensor of the output dtype).
Tensor constant_of_shape_value(const KernelContext& ctx, Shape& out_shape);

/// Bytes per element if the dtype can be moved (1, 2, 4 or 8); throws NotImplemented naming it otherwise.
int movable_size(const KernelContext& ctx, DType t);

namespace cpu {
void alias(KernelContext& ctx);
void movement(KernelContext& ctx);
void pad(KernelContext& ctx);
void gather(KernelContext& ctx);
void gather_elements(KernelContext& ctx);
void host_computed(KernelContext& ctx);
void constant_of_shape(KernelContext& ctx);
}  // namespace cpu

namespace cuda {
void alias(KernelContext& ctx);
void movement(KernelContext& ctx);
void pad(KernelContext& ctx);
void gather(KernelContext& ctx);
void gather_elements(KernelContext& ctx);
void host_computed(KernelContext& ctx);
void constant_of_shape(KernelContext& ctx);
}  // namespace cuda

}  // namespace lockstep
