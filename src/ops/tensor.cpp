// The tensor family: attribute parsing, validation, output shapes and copy plans, shared by both devices.
#include "ops/tensor.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

#include "arith/math.h"
#include "ops/registry.h"

namespace lockstep {

namespace {

std::vector<int64_t> ints_of(const KernelContext& ctx, int input) {
  Tensor t = ctx.host_input(input);
  if (t.dtype() != DType::Int64 && t.dtype() != DType::Int32)
    throw ctx.error(std::string("input ") + std::to_string(input) + " must be int64 or int32, got " +
                    dtype_name(t.dtype()));
  return t.to_ints();
}

// A shape-like list that moved from an attribute to input `input` at opset `since` (Squeeze axes, Split split...).
// Returns false when it is absent in both places.
bool attr_or_input(const KernelContext& ctx, const char* attr, int input, int since, std::vector<int64_t>& out) {
  if (ctx.opset < since) {
    if (!ctx.node.has(attr)) return false;
    out = ctx.node.attr_ints(attr);
    return true;
  }
  if (!ctx.has_input(input)) return false;
  out = ints_of(ctx, input);
  return true;
}

std::vector<int64_t> normalized_axes(const KernelContext& ctx, const std::vector<int64_t>& axes, int64_t rank) {
  std::vector<int64_t> out;
  for (int64_t a : axes) {
    int64_t n = a < 0 ? a + rank : a;
    if (n < 0 || n >= rank)
      throw ctx.error("axis " + std::to_string(a) + " is out of range for rank " + std::to_string(rank));
    if (std::find(out.begin(), out.end(), n) != out.end())
      throw ctx.error("axis " + std::to_string(a) + " is repeated");
    out.push_back(n);
  }
  return out;
}

Shape reshape_shape(const KernelContext& ctx, const Shape& in) {
  std::vector<int64_t> spec = ints_of(ctx, 1);
  bool allowzero = ctx.opset >= 14 && ctx.node.attr_int("allowzero", 0) != 0;
  Shape out(spec.size());
  int infer = -1;
  int64_t known = 1;
  for (size_t i = 0; i < spec.size(); ++i) {
    int64_t d = spec[i];
    if (d == -1) {
      if (infer >= 0) throw ctx.error("shape has more than one -1");
      infer = static_cast<int>(i);
      continue;
    }
    if (d == 0 && !allowzero) {
      if (i >= in.size()) throw ctx.error("shape has a 0 at position " + std::to_string(i) + " beyond the input rank");
      d = in[i];
    }
    if (d < 0) throw ctx.error("invalid dimension " + std::to_string(d) + " in shape");
    out[i] = d;
    known *= d;
  }
  int64_t n = shape_numel(in);
  if (infer >= 0) {
    if (allowzero && std::find(spec.begin(), spec.end(), 0) != spec.end())
      throw ctx.error("allowzero=1 with both 0 and -1 in the shape");
    if (known == 0 || n % known != 0)
      throw ctx.error("cannot infer the -1 of " + shape_string(spec) + " from input " + shape_string(in));
    out[infer] = n / known;
  } else if (known != n) {
    throw ctx.error("cannot reshape " + shape_string(in) + " to " + shape_string(out));
  }
  return out;
}

Shape flatten_shape(const KernelContext& ctx, const Shape& in) {
  int64_t r = static_cast<int64_t>(in.size());
  int64_t axis = ctx.node.attr_int("axis", 1);
  if (axis < 0) axis += r;
  if (axis < 0 || axis > r) throw ctx.error("axis " + std::to_string(ctx.node.attr_int("axis", 1)) + " is out of range");
  int64_t a = 1, b = 1;
  for (int64_t i = 0; i < r; ++i) (i < axis ? a : b) *= in[i];
  return {a, b};
}

Shape squeeze_shape(const KernelContext& ctx, const Shape& in) {
  int64_t r = static_cast<int64_t>(in.size());
  std::vector<int64_t> axes;
  bool given = attr_or_input(ctx, "axes", 1, 13, axes);
  std::vector<bool> drop(in.size(), false);
  if (given) {
    for (int64_t a : normalized_axes(ctx, axes, r)) {
      if (in[a] != 1) throw ctx.error("cannot squeeze axis " + std::to_string(a) + " of size " + std::to_string(in[a]));
      drop[a] = true;
    }
  } else {
    for (int64_t i = 0; i < r; ++i) drop[i] = in[i] == 1;
  }
  Shape out;
  for (int64_t i = 0; i < r; ++i)
    if (!drop[i]) out.push_back(in[i]);
  return out;
}

Shape unsqueeze_shape(const KernelContext& ctx, const Shape& in) {
  std::vector<int64_t> axes;
  if (!attr_or_input(ctx, "axes", 1, 13, axes)) throw ctx.error("axes are required");
  int64_t r = static_cast<int64_t>(in.size() + axes.size());
  std::vector<int64_t> ax = normalized_axes(ctx, axes, r);
  Shape out(r);
  size_t next = 0;
  for (int64_t i = 0; i < r; ++i)
    out[i] = std::find(ax.begin(), ax.end(), i) != ax.end() ? 1 : in[next++];
  return out;
}

StridedCopy contiguous_copy(const KernelContext& ctx, const Shape& dims, const std::vector<int64_t>& src_strides,
                            int64_t src_offset) {
  return make_copy(ctx.node, dims, src_strides, strides_of(dims), src_offset, 0);
}

MovementPlan transpose_plan(const KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  int64_t r = x.rank();
  std::vector<int64_t> perm = ctx.node.attr_ints("perm");
  if (!ctx.node.has("perm"))
    for (int64_t i = r - 1; i >= 0; --i) perm.push_back(i);
  if (static_cast<int64_t>(perm.size()) != r) throw ctx.error("perm has " + std::to_string(perm.size()) + " entries for rank " + std::to_string(r));
  perm = normalized_axes(ctx, perm, r);
  std::vector<int64_t> in_strides = strides_of(x.shape()), src(r);
  Shape out(r);
  for (int64_t d = 0; d < r; ++d) {
    out[d] = x.shape()[perm[d]];
    src[d] = in_strides[perm[d]];
  }
  return {{out}, x.dtype(), {{0, 0, contiguous_copy(ctx, out, src, 0)}}};
}

MovementPlan slice_plan(const KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  int64_t r = x.rank();
  std::vector<int64_t> starts, ends, axes, steps;
  if (ctx.opset < 10) {
    starts = ctx.node.attr_ints("starts");
    ends = ctx.node.attr_ints("ends");
    axes = ctx.node.attr_ints("axes");
  } else {
    starts = ints_of(ctx, 1);
    ends = ints_of(ctx, 2);
    if (ctx.has_input(3)) axes = ints_of(ctx, 3);
    if (ctx.has_input(4)) steps = ints_of(ctx, 4);
  }
  if (starts.size() != ends.size()) throw ctx.error("starts and ends have different lengths");
  if (axes.empty())
    for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (axes.size() != starts.size() || steps.size() != starts.size())
    throw ctx.error("starts, ends, axes and steps must have the same length");
  axes = normalized_axes(ctx, axes, r);
  std::vector<int64_t> in_strides = strides_of(x.shape()), src = in_strides;
  Shape out = x.shape();
  int64_t offset = 0;
  for (size_t i = 0; i < axes.size(); ++i) {
    int64_t a = axes[i], dim = x.shape()[a], step = steps[i];
    if (step == 0) throw ctx.error("step 0 on axis " + std::to_string(a));
    int64_t s = starts[i], e = ends[i];
    if (s < 0) s += dim;
    if (e < 0) e += dim;
    if (step > 0) {
      s = std::clamp<int64_t>(s, 0, dim);
      e = std::clamp<int64_t>(e, 0, dim);
    } else {
      s = std::clamp<int64_t>(s, 0, dim - 1);
      e = std::clamp<int64_t>(e, -1, dim - 1);
    }
    int64_t len = step > 0 ? (e > s ? (e - s + step - 1) / step : 0) : (s > e ? (s - e - step - 1) / -step : 0);
    out[a] = len;
    src[a] = in_strides[a] * step;
    if (len > 0) offset += s * in_strides[a];
  }
  return {{out}, x.dtype(), {{0, 0, contiguous_copy(ctx, out, src, shape_numel(out) ? offset : 0)}}};
}

MovementPlan expand_plan(const KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  Shape out = broadcast_shapes(ctx.node, x.shape(), ints_of(ctx, 1));
  ctx.check_output(0, x.dtype(), out);  // the shape comes from a feed: refuse an overflowing one before its strides
  return {{out}, x.dtype(), {{0, 0, contiguous_copy(ctx, out, broadcast_strides(x.shape(), out), 0)}}};
}

// Tile as one copy of rank 2r: output axis d is (repeat, d_in) with input strides (0, stride_d).
MovementPlan tile_plan(const KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  std::vector<int64_t> reps = ints_of(ctx, 1);
  int64_t r = x.rank();
  if (static_cast<int64_t>(reps.size()) != r) throw ctx.error("repeats must have one entry per input axis");
  Shape out(r);
  for (int64_t d = 0; d < r; ++d) {
    if (reps[d] < 0) throw ctx.error("negative repeat " + std::to_string(reps[d]));
    if (__builtin_mul_overflow(x.shape()[d], reps[d], &out[d]))
      throw ctx.error("output dim " + std::to_string(d) + " (" + std::to_string(x.shape()[d]) + " x " +
                          std::to_string(reps[d]) + " repeats) overflows 64 bits",
                      ErrorCode::RuntimeError);
  }
  ctx.check_output(0, x.dtype(), out);  // before its strides, which would overflow too
  std::vector<int64_t> in_strides = strides_of(x.shape()), out_strides = strides_of(out);
  std::vector<int64_t> dims, src, dst;
  for (int64_t d = 0; d < r; ++d) {
    dims.insert(dims.end(), {reps[d], x.shape()[d]});
    src.insert(src.end(), {0, in_strides[d]});
    dst.insert(dst.end(), {x.shape()[d] * out_strides[d], out_strides[d]});
  }
  return {{out}, x.dtype(), {{0, 0, make_copy(ctx.node, dims, src, dst)}}};
}

MovementPlan concat_plan(const KernelContext& ctx) {
  const Tensor& first = ctx.input(0);
  int64_t r = first.rank();
  if (!ctx.node.has("axis")) throw ctx.error("attribute 'axis' is required");
  int64_t axis = normalize_axis(ctx.node, ctx.node.attr_int("axis", 0), r);
  if (r == 0) throw ctx.error("cannot concatenate scalars");
  Shape out = first.shape();
  out[axis] = 0;
  for (int i = 0; i < ctx.num_inputs(); ++i) {
    const Tensor& t = ctx.input(i);
    if (t.dtype() != first.dtype()) throw ctx.error("inputs have different types");
    if (t.rank() != r) throw ctx.error("inputs have different ranks");
    for (int64_t d = 0; d < r; ++d)
      if (d != axis && t.shape()[d] != first.shape()[d])
        throw ctx.error("input " + std::to_string(i) + " has shape " + shape_string(t.shape()) + ", expected " +
                        shape_string(first.shape()) + " outside axis " + std::to_string(axis));
    out[axis] += t.shape()[axis];
  }
  MovementPlan plan{{out}, first.dtype(), {}};
  std::vector<int64_t> out_strides = strides_of(out);
  int64_t at = 0;
  for (int i = 0; i < ctx.num_inputs(); ++i) {
    const Shape& s = ctx.input(i).shape();
    if (shape_numel(s) > 0)
      plan.jobs.push_back({i, 0, make_copy(ctx.node, s, strides_of(s), out_strides, 0, at * out_strides[axis])});
    at += s[axis];
  }
  return plan;
}

MovementPlan split_plan(const KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  int64_t r = x.rank();
  int64_t axis = normalize_axis(ctx.node, ctx.node.attr_int("axis", 0), r);
  if (r == 0) throw ctx.error("cannot split a scalar");
  int64_t dim = x.shape()[axis];
  int64_t n_out = static_cast<int64_t>(ctx.node.outputs.size());
  std::vector<int64_t> sizes;
  if (attr_or_input(ctx, "split", 1, 13, sizes)) {
    if (static_cast<int64_t>(sizes.size()) != n_out) throw ctx.error("split has " + std::to_string(sizes.size()) + " entries for " + std::to_string(n_out) + " outputs");
    int64_t total = 0;
    for (int64_t s : sizes) {
      if (s < 0) throw ctx.error("negative split size");
      total += s;
    }
    if (total != dim) throw ctx.error("split sizes sum to " + std::to_string(total) + ", axis has " + std::to_string(dim));
  } else if (ctx.opset >= 18 && ctx.node.has("num_outputs")) {
    int64_t n = ctx.node.attr_int("num_outputs", 0);
    if (n != n_out || n <= 0) throw ctx.error("num_outputs does not match the node's outputs");
    int64_t chunk = (dim + n - 1) / n;
    for (int64_t i = 0; i < n; ++i) sizes.push_back(std::clamp<int64_t>(dim - i * chunk, 0, chunk));
  } else {
    if (n_out <= 0 || dim % n_out != 0) throw ctx.error("axis of size " + std::to_string(dim) + " cannot be split evenly into " + std::to_string(n_out));
    sizes.assign(n_out, dim / n_out);
  }
  MovementPlan plan{{}, x.dtype(), {}};
  std::vector<int64_t> in_strides = strides_of(x.shape());
  int64_t at = 0;
  for (int64_t i = 0; i < n_out; ++i) {
    Shape s = x.shape();
    s[axis] = sizes[i];
    plan.out_shapes.push_back(s);
    if (shape_numel(s) > 0)
      plan.jobs.push_back({0, static_cast<int>(i), contiguous_copy(ctx, s, in_strides, at * in_strides[axis])});
    at += sizes[i];
  }
  return plan;
}

template <typename T>
uint64_t bits_as(double v) {
  T t = static_cast<T>(v);
  uint64_t bits = 0;
  std::memcpy(&bits, &t, sizeof(T));
  return bits;
}

// The pre-opset-11 Pad 'value' attribute (a float) converted to the data type.
uint64_t value_bits_from_float(const KernelContext& ctx, DType t, float v) {
  switch (t) {
    case DType::Float: return bits_as<float>(v);
    case DType::Double: return bits_as<double>(v);
    case DType::Int8: return bits_as<int8_t>(v);
    case DType::UInt8: return bits_as<uint8_t>(v);
    case DType::Int16: return bits_as<int16_t>(v);
    case DType::UInt16: return bits_as<uint16_t>(v);
    case DType::Int32: return bits_as<int32_t>(v);
    case DType::UInt32: return bits_as<uint32_t>(v);
    case DType::Int64: return bits_as<int64_t>(v);
    case DType::UInt64: return bits_as<uint64_t>(v);
    case DType::Bool: return v != 0.0f;
    default: throw ctx.error(std::string("Pad value for type ") + dtype_name(t), ErrorCode::NotImplemented);
  }
}

Tensor int64_vector(const std::vector<int64_t>& v) {
  return Tensor::from_bytes(DType::Int64, {static_cast<int64_t>(v.size())}, v.data());
}

Tensor shape_value(const KernelContext& ctx) {
  const Shape& s = ctx.input(0).shape();
  int64_t r = static_cast<int64_t>(s.size());
  int64_t start = 0, end = r;
  if (ctx.opset >= 15) {
    start = ctx.node.attr_int("start", 0);
    end = ctx.node.attr_int("end", r);
    if (start < 0) start += r;
    if (end < 0) end += r;
    start = std::clamp<int64_t>(start, 0, r);
    end = std::clamp<int64_t>(end, 0, r);
  }
  std::vector<int64_t> v;
  for (int64_t i = start; i < end; ++i) v.push_back(s[i]);
  return int64_vector(v);
}

Tensor constant_value(const KernelContext& ctx) {
  const onnx::Node& n = ctx.node;
  if (const Tensor* t = n.attr_tensor("value")) return t->clone();
  if (n.has("value_float")) {
    float f = n.attr_float("value_float", 0);
    return Tensor::from_bytes(DType::Float, {}, &f);
  }
  if (n.has("value_floats")) {
    std::vector<float> f = n.attr_floats("value_floats");
    return Tensor::from_bytes(DType::Float, {static_cast<int64_t>(f.size())}, f.data());
  }
  if (n.has("value_int")) {
    int64_t i = n.attr_int("value_int", 0);
    return Tensor::from_bytes(DType::Int64, {}, &i);
  }
  if (n.has("value_ints")) return int64_vector(n.attr_ints("value_ints"));
  if (const Tensor* t = n.attr_tensor("sparse_value")) return t->clone();  // densified by the reader
  if (n.has("value_string")) {
    Tensor t = Tensor::strings({});
    t.data<std::string>()[0] = n.attr_string("value_string", "");
    return t;
  }
  if (const onnx::Attribute* a = n.find("value_strings")) {
    Tensor t = Tensor::strings({static_cast<int64_t>(a->strings.size())});
    std::copy(a->strings.begin(), a->strings.end(), t.data<std::string>());
    return t;
  }
  throw ctx.error("Constant has no value attribute", ErrorCode::InvalidGraph);
}

// Range element i: float types compute start + float(i) * delta (one rounding each: docs/arithmetic.md#range).
template <typename T>
Tensor range_float(const Tensor& s, const Tensor& l, const Tensor& d, const KernelContext& ctx) {
  T start = s.data<T>()[0], limit = l.data<T>()[0], delta = d.data<T>()[0];
  if (delta == 0) throw ctx.error("delta is 0");
  double count = std::ceil(static_cast<double>(limit - start) / static_cast<double>(delta));
  if (!(count < 9.0e18)) throw ctx.error("Range has too many elements");
  int64_t n = count > 0 ? static_cast<int64_t>(count) : 0;
  Tensor out = Tensor::empty(s.dtype(), {n});
  T* o = out.data<T>();
  for (int64_t i = 0; i < n; ++i) {
    T fi = static_cast<T>(i);
    T step = fi * delta;
    o[i] = start + step;
  }
  return out;
}

template <typename T>
Tensor range_int(const Tensor& s, const Tensor& l, const Tensor& d, const KernelContext& ctx) {
  int64_t start = s.data<T>()[0], limit = l.data<T>()[0], delta = d.data<T>()[0];
  if (delta == 0) throw ctx.error("delta is 0");
  int64_t diff = limit - start;
  int64_t n = diff / delta;
  if (diff % delta != 0 && ((diff > 0) == (delta > 0))) ++n;
  n = std::max<int64_t>(n, 0);
  Tensor out = Tensor::empty(s.dtype(), {n});
  T* o = out.data<T>();
  for (int64_t i = 0; i < n; ++i) o[i] = static_cast<T>(start + i * delta);
  return out;
}

Tensor range_value(const KernelContext& ctx) {
  Tensor s = ctx.host_input(0), l = ctx.host_input(1), d = ctx.host_input(2);
  if (s.dtype() != l.dtype() || s.dtype() != d.dtype()) throw ctx.error("start, limit and delta have different types");
  if (s.numel() != 1 || l.numel() != 1 || d.numel() != 1) throw ctx.error("start, limit and delta must be scalars");
  switch (s.dtype()) {
    case DType::Float: return range_float<float>(s, l, d, ctx);
    case DType::Double: return range_float<double>(s, l, d, ctx);
    case DType::Int16: return range_int<int16_t>(s, l, d, ctx);
    case DType::Int32: return range_int<int32_t>(s, l, d, ctx);
    case DType::Int64: return range_int<int64_t>(s, l, d, ctx);
    default: throw ctx.error(std::string("Range of type ") + dtype_name(s.dtype()), ErrorCode::NotImplemented);
  }
}

}  // namespace

StridedCopy make_copy(const onnx::Node& node, const std::vector<int64_t>& dims, const std::vector<int64_t>& src_strides,
                      const std::vector<int64_t>& dst_strides, int64_t src_offset, int64_t dst_offset) {
  StridedCopy c;
  c.src_offset = src_offset;
  c.dst_offset = dst_offset;
  if (std::find(dims.begin(), dims.end(), 0) != dims.end()) {
    c.rank = 1;
    c.dims[0] = 0;
    c.src_strides[0] = c.dst_strides[0] = 1;
    return c;
  }
  std::vector<int64_t> d, s, t;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] == 1) continue;
    if (!d.empty() && s.back() == src_strides[i] * dims[i] && t.back() == dst_strides[i] * dims[i]) {
      d.back() *= dims[i];
      s.back() = src_strides[i];
      t.back() = dst_strides[i];
      continue;
    }
    d.push_back(dims[i]);
    s.push_back(src_strides[i]);
    t.push_back(dst_strides[i]);
  }
  if (d.size() > static_cast<size_t>(kCopyMaxRank))
    throw node.error(ErrorCode::NotImplemented, "copy of rank " + std::to_string(d.size()) + " (after merging) exceeds " +
                                                    std::to_string(kCopyMaxRank));
  c.rank = static_cast<int>(d.size());
  for (int i = 0; i < c.rank; ++i) {
    c.dims[i] = d[i];
    c.src_strides[i] = s[i];
    c.dst_strides[i] = t[i];
  }
  return c;
}

void check_movable(const KernelContext& ctx, DType t) {
  if (t != DType::String || ctx.device != Device::CPU) movable_size(ctx, t);
}

int movable_size(const KernelContext& ctx, DType t) {
  size_t s = dtype_size(t);
  if (s != 1 && s != 2 && s != 4 && s != 8)
    throw ctx.error(std::string("type ") + dtype_name(t) + " is not supported", ErrorCode::NotImplemented);
  return static_cast<int>(s);
}

Shape alias_shape(const KernelContext& ctx) {
  const Shape& in = ctx.input(0).shape();
  const std::string& op = ctx.node.op_type;
  if (op == "Reshape") return reshape_shape(ctx, in);
  if (op == "Flatten") return flatten_shape(ctx, in);
  if (op == "Squeeze") return squeeze_shape(ctx, in);
  if (op == "Unsqueeze") return unsqueeze_shape(ctx, in);
  return in;  // Identity
}

// Contract: no data is touched; the output shares the input's buffer. See docs/arithmetic.md#aliases.
void alias(KernelContext& ctx) { ctx.alias_output(0, ctx.input(0).reshaped(alias_shape(ctx))); }

// Contract: no data is touched; the output is the input's bytes read as `to`. See docs/arithmetic.md#aliases.
void bitcast(KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  if (!ctx.node.has("to")) throw ctx.error("missing required attribute 'to'", ErrorCode::InvalidGraph);
  const DType to = static_cast<DType>(ctx.node.attr_int("to", 0));
  const int from_size = movable_size(ctx, x.dtype()), to_size = movable_size(ctx, to);
  if (from_size != to_size)
    throw ctx.error(std::string("cannot reinterpret ") + dtype_name(x.dtype()) + " (" + std::to_string(from_size) +
                        " bytes) as " + dtype_name(to) + " (" + std::to_string(to_size) + " bytes)",
                    ErrorCode::InvalidGraph);
  ctx.alias_output(0, Tensor::over(to, x.shape(), x.buffer()));
}

// Contract: no data is touched; the output is input 0 itself. An optional is a tensor (or a sequence, which the
// executor passes on itself) or empty, and an empty one is a value that is not there: Optional without an input
// makes one (its output stays unset), OptionalGetElement has nothing to return from one.
void optional_element(KernelContext& ctx) {
  if (ctx.has_input(0)) return ctx.alias_output(0, ctx.input(0));
  if (ctx.node.op_type != "Optional") throw ctx.error("the optional input is empty");
}

MovementPlan movement_plan(const KernelContext& ctx) {
  const std::string& op = ctx.node.op_type;
  MovementPlan plan = op == "Transpose" ? transpose_plan(ctx)
                      : op == "Slice"   ? slice_plan(ctx)
                      : op == "Expand"  ? expand_plan(ctx)
                      : op == "Tile"    ? tile_plan(ctx)
                      : op == "Concat"  ? concat_plan(ctx)
                      : op == "Split"   ? split_plan(ctx)
                                        : throw ctx.error("not a data-movement op", ErrorCode::Fail);
  check_movable(ctx, plan.dtype);
  return plan;
}

PadPlan pad_plan(const KernelContext& ctx, Shape& out_shape) {
  const Tensor& x = ctx.input(0);
  int64_t r = x.rank();
  if (r > kMaxRank) throw ctx.error("Pad of rank " + std::to_string(r), ErrorCode::NotImplemented);
  PadPlan p;
  p.rank = static_cast<int>(r);
  std::string mode = ctx.node.attr_string("mode", "constant");
  if (mode == "constant") p.mode = PadMode::Constant;
  else if (mode == "reflect") p.mode = PadMode::Reflect;
  else if (mode == "edge") p.mode = PadMode::Edge;
  else if (mode == "wrap") p.mode = PadMode::Wrap;
  else throw ctx.error("unknown mode '" + mode + "'");
  movable_size(ctx, x.dtype());
  std::vector<int64_t> pads, axes;
  if (ctx.opset < 11) {
    pads = ctx.node.attr_ints("pads");
    p.value_bits = value_bits_from_float(ctx, x.dtype(), ctx.node.attr_float("value", 0.0f));
  } else {
    pads = ints_of(ctx, 1);
    if (ctx.has_input(2)) {
      Tensor v = ctx.host_input(2);
      if (v.dtype() != x.dtype()) throw ctx.error("constant_value has a different type from the data");
      if (v.numel() > 1) throw ctx.error("constant_value must hold one element");
      if (v.numel() == 1) std::memcpy(&p.value_bits, v.raw(), dtype_size(v.dtype()));
    }
    if (ctx.opset >= 18 && ctx.has_input(3)) axes = normalized_axes(ctx, ints_of(ctx, 3), r);
  }
  if (axes.empty())
    for (int64_t i = 0; i < r; ++i) axes.push_back(i);
  if (pads.size() != 2 * axes.size())
    throw ctx.error("pads has " + std::to_string(pads.size()) + " entries, expected " + std::to_string(2 * axes.size()));
  std::vector<int64_t> begin(r, 0), end(r, 0);
  for (size_t i = 0; i < axes.size(); ++i) {
    begin[axes[i]] = pads[i];
    end[axes[i]] = pads[i + axes.size()];
  }
  std::vector<int64_t> strides = strides_of(x.shape());
  out_shape.assign(r, 0);
  for (int64_t d = 0; d < r; ++d) {
    int64_t n = x.shape()[d], o = n + begin[d] + end[d];
    if (o < 0) throw ctx.error("pads make axis " + std::to_string(d) + " negative");
    if (n == 0 && o > 0 && p.mode != PadMode::Constant)
      throw ctx.error("cannot " + mode + "-pad the empty axis " + std::to_string(d));
    out_shape[d] = o;
    p.out_dims[d] = o;
    p.in_dims[d] = n;
    p.in_strides[d] = strides[d];
    p.begin[d] = begin[d];
  }
  return p;
}

GatherPlan gather_plan(const KernelContext& ctx, Shape& out_shape) {
  const Tensor& x = ctx.input(0);
  const Tensor& idx = ctx.input(1);
  if (x.rank() == 0) throw ctx.error("data must have rank >= 1");
  if (idx.dtype() != DType::Int64 && idx.dtype() != DType::Int32)
    throw ctx.error(std::string("indices of type ") + dtype_name(idx.dtype()), ErrorCode::NotImplemented);
  check_movable(ctx, x.dtype());
  int64_t axis = normalize_axis(ctx.node, ctx.node.attr_int("axis", 0), x.rank());
  GatherPlan p;
  p.outer = 1;
  p.inner = 1;
  out_shape.clear();
  for (int64_t d = 0; d < axis; ++d) {
    out_shape.push_back(x.shape()[d]);
    p.outer *= x.shape()[d];
  }
  for (int64_t d : idx.shape()) out_shape.push_back(d);
  for (int64_t d = axis + 1; d < x.rank(); ++d) {
    out_shape.push_back(x.shape()[d]);
    p.inner *= x.shape()[d];
  }
  p.n_idx = idx.numel();
  p.axis_dim = x.shape()[axis];
  return p;
}

GatherElementsPlan gather_elements_plan(const KernelContext& ctx, Shape& out_shape) {
  const Tensor& x = ctx.input(0);
  const Tensor& idx = ctx.input(1);
  if (idx.dtype() != DType::Int64 && idx.dtype() != DType::Int32)
    throw ctx.error(std::string("indices of type ") + dtype_name(idx.dtype()), ErrorCode::NotImplemented);
  check_movable(ctx, x.dtype());
  if (x.rank() == 0 || x.rank() != idx.rank()) throw ctx.error("data and indices must have the same rank >= 1");
  if (x.rank() > kMaxRank) throw ctx.error("GatherElements of rank " + std::to_string(x.rank()), ErrorCode::NotImplemented);
  GatherElementsPlan p;
  p.rank = x.rank();
  p.axis = static_cast<int>(normalize_axis(ctx.node, ctx.node.attr_int("axis", 0), x.rank()));
  std::vector<int64_t> strides = strides_of(x.shape());
  for (int d = 0; d < p.rank; ++d) {
    if (d != p.axis && idx.shape()[d] > x.shape()[d])
      throw ctx.error("indices " + shape_string(idx.shape()) + " exceed data " + shape_string(x.shape()) + " on axis " + std::to_string(d));
    p.out_dims[d] = idx.shape()[d];
    p.data_strides[d] = strides[d];
  }
  p.axis_dim = x.shape()[p.axis];
  out_shape = idx.shape();
  return p;
}

void validate_indices(const KernelContext& ctx, const Tensor& idx, int64_t n) {
  for (int64_t i = 0; i < idx.numel(); ++i) {
    int64_t v = idx.int_at(i);
    if (v < -n || v >= n)
      throw ctx.error("index " + std::to_string(v) + " is out of range [" + std::to_string(-n) + ", " + std::to_string(n) + ")");
  }
}

// The window generators (17): w_n = a0 - a1 * cos(x) (+ a2 * cos(2x) for Blackman), x = (2pi * n) / N with
// N = size (periodic, default) or size - 1, in float32 with one rounding per operation (cos_f32 of math.h).
Tensor window_value(const KernelContext& ctx, HostOp op) {
  const int64_t size = ctx.host_input(0).int_at(0);
  if (size < 0) throw ctx.error("window size " + std::to_string(size) + " is negative");
  if (ctx.node.attr_int("output_datatype", 1) != static_cast<int64_t>(DType::Float))
    throw ctx.error("output_datatype other than float is not supported", ErrorCode::NotImplemented);
  const float n_den = static_cast<float>(ctx.node.attr_int("periodic", 1) != 0 ? size : size - 1);
  const float a0 = op == HostOp::HannWindow ? 0.5f : op == HostOp::HammingWindow ? 25.0f / 46.0f : 0.42f;
  const float a1 = op == HostOp::HannWindow ? 0.5f : op == HostOp::HammingWindow ? 21.0f / 46.0f : 0.5f;
  std::vector<float> w(static_cast<size_t>(size));
  for (int64_t n = 0; n < size; ++n) {
    const float x = (6.2831853f * static_cast<float>(n)) / n_den;
    w[n] = a0 - a1 * arith::cos_f32(x);
    if (op == HostOp::BlackmanWindow) w[n] = w[n] + 0.08f * arith::cos_f32(2.0f * x);
  }
  return Tensor::from_bytes(DType::Float, {size}, w.data());
}

Tensor host_value(const KernelContext& ctx, HostOp op) {
  switch (op) {
    case HostOp::Shape: return shape_value(ctx);
    case HostOp::Size: {
      int64_t n = ctx.input(0).numel();
      return Tensor::from_bytes(DType::Int64, {}, &n);
    }
    case HostOp::Constant: return constant_value(ctx);
    case HostOp::Range: return range_value(ctx);
    case HostOp::HannWindow: case HostOp::HammingWindow: case HostOp::BlackmanWindow: return window_value(ctx, op);
    case HostOp::OptionalHasElement: {  // a tensor input holds its element; an absent input is the empty optional
      const uint8_t has = ctx.has_input(0) ? 1 : 0;
      return Tensor::from_bytes(DType::Bool, {}, &has);
    }
  }
  throw ctx.error("unknown host op", ErrorCode::Fail);
}

Tensor constant_of_shape_value(const KernelContext& ctx, Shape& out_shape) {
  out_shape = ints_of(ctx, 0);
  for (int64_t d : out_shape)
    if (d < 0) throw ctx.error("negative dimension in shape " + shape_string(out_shape));
  if (const Tensor* v = ctx.node.attr_tensor("value")) {
    if (v->numel() != 1) throw ctx.error("value must hold exactly one element");
    movable_size(ctx, v->dtype());
    return v->clone();
  }
  float zero = 0.0f;
  return Tensor::from_bytes(DType::Float, {1}, &zero);
}

namespace {
#define BOTH(fn) &cpu::fn, LOCKSTEP_CUDA_KERNEL(fn)
// A kernel that touches no data serves both devices.
#define ANY_DEVICE(fn) &fn, (LOCKSTEP_WITH_CUDA ? &fn : nullptr)
const OpEntry kRows[] = {
    {"Reshape", 7, kNewestOpset, ANY_DEVICE(alias)},
    {"Flatten", 7, kNewestOpset, ANY_DEVICE(alias)},
    {"Squeeze", 7, kNewestOpset, ANY_DEVICE(alias)},
    {"Unsqueeze", 7, kNewestOpset, ANY_DEVICE(alias)},
    {"Identity", 7, kNewestOpset, ANY_DEVICE(alias)},
    {"BitCast", 26, kNewestOpset, ANY_DEVICE(bitcast)},
    {"Transpose", 7, kNewestOpset, BOTH(movement)},
    {"Slice", 7, kNewestOpset, BOTH(movement)},
    {"Expand", 8, kNewestOpset, BOTH(movement)},
    {"Tile", 7, kNewestOpset, BOTH(movement)},
    {"Concat", 7, kNewestOpset, BOTH(movement)},
    {"Split", 7, kNewestOpset, BOTH(movement)},
    {"Pad", 7, kNewestOpset, BOTH(pad)},
    {"Gather", 7, kNewestOpset, BOTH(gather), int(GatherOp::Gather)},
    {"GatherElements", 11, kNewestOpset, BOTH(gather), int(GatherOp::Elements)},
    {"Shape", 7, kNewestOpset, BOTH(host_computed), int(HostOp::Shape)},
    {"Size", 7, kNewestOpset, BOTH(host_computed), int(HostOp::Size)},
    {"Constant", 7, kNewestOpset, BOTH(host_computed), int(HostOp::Constant)},
    {"Range", 11, kNewestOpset, BOTH(host_computed), int(HostOp::Range)},
    {"ConstantOfShape", 9, kNewestOpset, BOTH(constant_of_shape)},
    {"HannWindow", 17, kNewestOpset, BOTH(host_computed), int(HostOp::HannWindow)},
    {"HammingWindow", 17, kNewestOpset, BOTH(host_computed), int(HostOp::HammingWindow)},
    {"BlackmanWindow", 17, kNewestOpset, BOTH(host_computed), int(HostOp::BlackmanWindow)},
    {"Optional", 15, kNewestOpset, ANY_DEVICE(optional_element)},
    {"OptionalGetElement", 15, kNewestOpset, ANY_DEVICE(optional_element)},
    {"OptionalHasElement", 15, kNewestOpset, BOTH(host_computed), int(HostOp::OptionalHasElement)},
};
#undef BOTH
#undef ANY_DEVICE
}  // namespace

std::span<const OpEntry> tensor_ops() { return kRows; }

}  // namespace lockstep
