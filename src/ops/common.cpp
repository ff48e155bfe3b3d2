#include "ops/common.h"

#include <algorithm>

namespace lockstep {

int64_t normalize_axis(const onnx::Node& node, int64_t axis, int64_t rank) {
  int64_t a = axis < 0 ? axis + rank : axis;
  if (a < 0 || a >= std::max<int64_t>(rank, 1) || (rank == 0 && a != 0))
    throw node.error(ErrorCode::InvalidArgument,
                     "axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
  return a;
}

Shape broadcast_shapes(const onnx::Node& node, const Shape& a, const Shape& b) {
  size_t rank = std::max(a.size(), b.size());
  Shape out(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1)
      throw node.error(ErrorCode::InvalidArgument,
                       "shapes " + shape_string(a) + " and " + shape_string(b) + " cannot be broadcast");
    out[i] = da == 1 ? db : da;
  }
  return out;
}

std::vector<int64_t> strides_of(const Shape& shape) {
  std::vector<int64_t> s(shape.size());
  int64_t step = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    s[i] = step;
    step *= shape[i];
  }
  return s;
}

std::vector<int64_t> broadcast_strides(const Shape& in, const Shape& out) {
  std::vector<int64_t> s(out.size(), 0);
  std::vector<int64_t> own = strides_of(in);
  size_t offset = out.size() - in.size();
  for (size_t i = 0; i < in.size(); ++i) s[offset + i] = in[i] == 1 ? 0 : own[i];
  return s;
}

}  // namespace lockstep
