// The tensor family (shape and data movement): device-independent definitions shared by the CPU and CUDA
// kernels. Every op of the family is exact (no float arithmetic) except float Range and the window generators
// (both computed on the host), so both devices agree by construction as long as they move the same bytes; the
// plans below fix which bytes go where.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
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
enum class HostOp : int {
  Shape = 0, Size = 1, Constant = 2, Range = 3, HannWindow, HammingWindow, BlackmanWindow, OptionalHasElement
};
Tensor host_value(const KernelContext& ctx, HostOp op);
/// ConstantOfShape: output shape and the element value (as a 1-element host tensor of the output dtype).
Tensor constant_of_shape_value(const KernelContext& ctx, Shape& out_shape);

/// Throws NotImplemented naming a dtype the copy kernels cannot move: strings move on the host only.
void check_movable(const KernelContext& ctx, DType t);
/// Bytes per element if the dtype can be moved (1, 2, 4 or 8); throws NotImplemented naming it otherwise.
int movable_size(const KernelContext& ctx, DType t);

/// Reshape/Flatten/Squeeze/Unsqueeze/Identity on either device: the output shares input 0's buffer.
void alias(KernelContext& ctx);
/// BitCast on either device: the output shares input 0's buffer under another type of the same size.
void bitcast(KernelContext& ctx);
/// Optional and OptionalGetElement on either device: an optional that holds a tensor is that tensor (the output
/// shares its buffer); an empty one (an absent input) is refused, naming the node.
void optional_element(KernelContext& ctx);

/// Calls fn(W{}) with W the unsigned word of `size` bytes (1, 2, 4 or 8, as movable_size returns).
template <class Fn>
void by_element_size(int size, Fn&& fn) {
  switch (size) {
    case 1: return fn(uint8_t{});
    case 2: return fn(uint16_t{});
    case 4: return fn(uint32_t{});
    default: return fn(uint64_t{});
  }
}

/// Calls fn(T{}) with T the element type to move: std::string for a string tensor on a device that holds them,
/// else the unsigned word of the dtype's size; throws NotImplemented naming any other dtype.
template <class Dev, class Fn>
void by_movable_type(const KernelContext& ctx, DType t, Fn&& fn) {
  if constexpr (kHoldsStrings<Dev>)
    if (t == DType::String) return fn(std::string{});
  by_element_size(movable_size(ctx, t), fn);
}

/// Calls fn(I{}) with I the element type of an index tensor (int64 or int32; the plans reject the others).
template <class Fn>
void by_index_type(const Tensor& indices, Fn&& fn) {
  if (indices.dtype() == DType::Int64) return fn(int64_t{});
  return fn(int32_t{});
}

// The kernels' drivers, shared by both devices: plans, output allocation and element-size dispatch. `Dev` holds
// only the device's loops, each called with at least one element to move:
//   copy<T>(ctx, copy, src, dst)                       one StridedCopy
//   pad<T>(ctx, plan, src, dst, n)
//   gather<T, I>(ctx, plan, src, idx, dst, n)          plan: GatherPlan or GatherElementsPlan
//   fill<T>(ctx, value, dst, n)
//   check_indices(ctx, axis_dim)                       input 1, before the output is allocated
//   upload(ctx, host, out)                             a host tensor's bytes into the output
template <class Dev>
void run_movement(KernelContext& ctx) {
  MovementPlan plan = movement_plan(ctx);
  for (size_t i = 0; i < plan.out_shapes.size(); ++i) ctx.output(static_cast<int>(i), plan.dtype, plan.out_shapes[i]);
  by_movable_type<Dev>(ctx, plan.dtype, [&](auto w) {
    using T = decltype(w);
    for (const CopyJob& job : plan.jobs) {
      if (job.copy.numel() == 0) continue;
      Dev::template copy<T>(ctx, job.copy, static_cast<const T*>(ctx.input(job.src_input).raw()),
                            static_cast<T*>(ctx.outputs[job.dst_output].raw()));
    }
  });
}

template <class Dev>
void run_pad(KernelContext& ctx) {
  Shape shape;
  PadPlan plan = pad_plan(ctx, shape);
  const Tensor& x = ctx.input(0);
  Tensor& out = ctx.output(0, x.dtype(), shape);
  if (out.numel() == 0) return;
  by_element_size(movable_size(ctx, x.dtype()), [&](auto w) {
    using T = decltype(w);
    Dev::template pad<T>(ctx, plan, x.data<T>(), out.data<T>(), out.numel());
  });
}

/// Gather and GatherElements after planning: out = data at the (validated) indices of input 1.
template <class Dev, class Plan>
void run_indexed(KernelContext& ctx, const Plan& plan, const Shape& shape) {
  Dev::check_indices(ctx, plan.axis_dim);
  const Tensor& x = ctx.input(0);
  const Tensor& idx = ctx.input(1);
  Tensor& out = ctx.output(0, x.dtype(), shape);
  if (out.numel() == 0) return;
  by_movable_type<Dev>(ctx, x.dtype(), [&](auto w) {
    by_index_type(idx, [&](auto i) {
      using T = decltype(w);
      using I = decltype(i);
      Dev::template gather<T, I>(ctx, plan, x.data<T>(), idx.data<I>(), out.data<T>(), out.numel());
    });
  });
}

/// OpEntry::variant of the `gather` kernel rows.
enum class GatherOp : int { Gather = 0, Elements = 1 };

template <class Dev>
void run_gather(KernelContext& ctx) {
  Shape shape;
  if (static_cast<GatherOp>(ctx.entry.variant) == GatherOp::Elements) {
    GatherElementsPlan plan = gather_elements_plan(ctx, shape);
    return run_indexed<Dev>(ctx, plan, shape);
  }
  GatherPlan plan = gather_plan(ctx, shape);
  run_indexed<Dev>(ctx, plan, shape);
}

template <class Dev>
void run_host_computed(KernelContext& ctx) {
  Tensor v = host_value(ctx, static_cast<HostOp>(ctx.entry.variant));
  if (v.dtype() == DType::String) return ctx.alias_output(0, v);  // a fresh host tensor; strings stay on the host
  Tensor& out = ctx.output(0, v.dtype(), v.shape());
  if (v.bytes()) Dev::upload(ctx, v, out);
}

template <class Dev>
void run_constant_of_shape(KernelContext& ctx) {
  Shape shape;
  Tensor v = constant_of_shape_value(ctx, shape);
  Tensor& out = ctx.output(0, v.dtype(), shape);
  if (out.numel() == 0) return;
  by_element_size(movable_size(ctx, v.dtype()), [&](auto w) {
    using T = decltype(w);
    T value;
    std::memcpy(&value, v.raw(), sizeof(T));
    Dev::template fill<T>(ctx, value, out.data<T>(), out.numel());
  });
}

namespace cpu {
void movement(KernelContext& ctx);
void pad(KernelContext& ctx);
void gather(KernelContext& ctx);
void host_computed(KernelContext& ctx);
void constant_of_shape(KernelContext& ctx);
}  // namespace cpu
namespace cuda {
void movement(KernelContext& ctx);
void pad(KernelContext& ctx);
void gather(KernelContext& ctx);
void host_computed(KernelContext& ctx);
void constant_of_shape(KernelContext& ctx);
}  // namespace cuda

}  // namespace lockstep
