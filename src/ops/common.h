// Shape arithmetic shared by the op definitions of every family.
#pragma once

#include <cstdint>
#include <vector>

#include "lockstep/tensor.h"
#include "onnx/model.h"

namespace lockstep {

/// Whether a kernel driver's device holds string tensors (`Dev::kStrings`: the CPU's only). String tensors live
/// on the host; the executor runs every node that reads or makes one on the CPU.
template <class Dev>
constexpr bool kHoldsStrings = requires { Dev::kStrings; };

/// The largest rank the kernels index with fixed-size arrays (CUDA kernel arguments).
constexpr int kMaxRank = 8;

/// Maps a possibly negative axis into [0, rank); throws InvalidArgument naming the node if out of range.
int64_t normalize_axis(const onnx::Node& node, int64_t axis, int64_t rank);
/// Numpy-style multidirectional broadcast of two shapes; throws naming the node if incompatible.
Shape broadcast_shapes(const onnx::Node& node, const Shape& a, const Shape& b);
/// Row-major element strides of a shape.
std::vector<int64_t> strides_of(const Shape& shape);
/// Strides for reading `in` while iterating over `out` (right-aligned; 0 on broadcast dims).
std::vector<int64_t> broadcast_strides(const Shape& in, const Shape& out);

}  // namespace lockstep
