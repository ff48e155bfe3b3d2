// The index family's definitions (GatherND, ScatterND, ScatterElements, Compress, NonZero, TensorScatter) as source
// maps (src/ops/layout.h): every index is read and validated on the host, so out-of-range indices are errors naming
// the node on both devices.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>

#include "ops/elementwise.h"
#include "ops/layout.h"

namespace lockstep {

namespace {

// Index v into [0, n): negative values count from the end; anything else outside is an error.
int64_t checked_index(const KernelContext& ctx, int64_t v, int64_t n, const char* what) {
  int64_t i = v < 0 ? v + n : v;
  if (i < 0 || i >= n)
    throw ctx.error(std::string(what) + " index " + std::to_string(v) + " is out of range [-" + std::to_string(n) +
                    ", " + std::to_string(n) + ")");
  return i;
}

Tensor host_indices(const KernelContext& ctx, int i) {
  Tensor t = ctx.host_input(i);
  if (t.dtype() != DType::Int64 && t.dtype() != DType::Int32)
    throw ctx.error(std::string("indices must be int32 or int64, got ") + dtype_name(t.dtype()));
  return t;
}

int64_t product(const Shape& s, size_t from, size_t to) {
  int64_t p = 1;
  for (size_t d = from; d < to; ++d) p *= s[d];
  return p;
}

// A Scatter's reduction (16+): "none", or the binary op that folds each update into its element.
BinaryOp scatter_reduction(const KernelContext& ctx, bool& reduces) {
  const std::string r = ctx.node.attr_string("reduction", "none");
  reduces = r != "none";
  if (r == "none" || r == "add") return BinaryOp::Add;
  if (r == "mul") return BinaryOp::Mul;
  if (r == "max") return BinaryOp::Max;
  if (r == "min") return BinaryOp::Min;
  throw ctx.error("reduction must be none, add, mul, max or min, got '" + r + "'");
}

// The data offsets addressed by the index tuples of an (..., m) indices tensor over data's dims [b, b+m), for
// `batch` leading batch dims shared by data and indices; one offset per tuple, in tuple order.
std::vector<int64_t> tuple_offsets(const KernelContext& ctx, const Shape& data, const Tensor& idx, int64_t b) {
  int64_t m = idx.dim(-1), tuples = idx.numel() / (m ? m : 1);
  if (m == 0) tuples = product(idx.shape(), 0, idx.shape().size() - 1);
  std::vector<int64_t> strides = strides_of(data);
  int64_t per_batch = tuples / std::max<int64_t>(1, product(data, 0, b));
  std::vector<int64_t> offsets(tuples);
  for (int64_t t = 0; t < tuples; ++t) {
    int64_t off = 0, rest = per_batch ? t / per_batch : 0;
    for (int64_t d = b - 1; d >= 0; --d) {
      off += (rest % data[d]) * strides[d];
      rest /= data[d];
    }
    for (int64_t k = 0; k < m; ++k)
      off += checked_index(ctx, idx.int_at(t * m + k), data[b + k], "tuple") * strides[b + k];
    offsets[t] = off;
  }
  return offsets;
}

// The start of both Scatters: data unchanged (identity map), the updates (input 2) as the extra elements.
SourceMap scatter_base(const KernelContext& ctx) {
  const Tensor& data = ctx.input(0);
  if (ctx.input(2).dtype() != data.dtype()) throw ctx.error("updates and data differ in element type");
  SourceMap plan{data.dtype(), data.shape(), std::vector<int64_t>(data.numel()), ctx.host_input(2)};
  for (int64_t e = 0; e < data.numel(); ++e) plan.map[e] = e;
  return plan;
}

// Applies the updates, (target element, update element) in update order: without a reduction the last update of
// an element wins; with one, the host folds them in that order, out = out (op) update (the binary op's rule), and
// the result becomes the extra elements.
void finish_scatter(const KernelContext& ctx, SourceMap& plan, const std::vector<std::pair<int64_t, int64_t>>& moves) {
  bool reduces = false;
  const BinaryOp op = scatter_reduction(ctx, reduces);
  if (!reduces) {
    for (auto [target, update] : moves) plan.map[target] = from_extra(update);
    return;
  }
  Tensor out = ctx.host_input(0).clone();
  dispatch_dtype<arith::kFloats | arith::kInts>(ctx, out.dtype(), [&](auto tag) {
    using T = decltype(tag);
    T* o = out.data<T>();
    const T* u = plan.extra.data<T>();
    auto fold = [&](auto f) {
      for (auto [target, update] : moves) o[target] = f(o[target], u[update]);
    };
    if (op == BinaryOp::Add) fold(arith::AddOp{});
    else if (op == BinaryOp::Mul) fold(arith::MulOp{});
    else if (op == BinaryOp::Max) fold(arith::MaxOp{});
    else fold(arith::MinOp{});
  });
  plan.extra = out.reshaped({out.numel()});
  for (int64_t e = 0; e < out.numel(); ++e) plan.map[e] = from_extra(e);
}

}  // namespace

// GatherND: out[g, r] = data[batch(g), idx[g], r] for each tuple g of indices and each trailing element r.
SourceMap gather_nd_map(const KernelContext& ctx) {
  const Tensor& data = ctx.input(0);
  Tensor idx = host_indices(ctx, 1);
  int64_t b = ctx.node.attr_int("batch_dims", 0), r = data.rank(), q = idx.rank();
  if (q < 1 || b < 0 || b >= std::min(r, q)) throw ctx.error("batch_dims " + std::to_string(b) + " out of range");
  int64_t m = idx.dim(-1);
  if (m > r - b) throw ctx.error("index tuples of length " + std::to_string(m) + " exceed data rank " + std::to_string(r));
  for (int64_t d = 0; d < b; ++d)
    if (data.dim(d) != idx.dim(d)) throw ctx.error("batch dims of data and indices differ");
  Shape out(idx.shape().begin(), idx.shape().end() - 1);
  out.insert(out.end(), data.shape().begin() + b + m, data.shape().end());
  int64_t inner = product(data.shape(), b + m, r);
  std::vector<int64_t> offsets = tuple_offsets(ctx, data.shape(), idx, b);
  SourceMap plan{data.dtype(), out, std::vector<int64_t>(shape_numel(out)), Tensor()};
  for (size_t t = 0; t < offsets.size(); ++t)
    for (int64_t i = 0; i < inner; ++i) plan.map[t * inner + i] = offsets[t] + i;
  return plan;
}

// ScatterND: a copy of data where updates[g, r] replaces data[idx[g], r]; later tuples win on repeats.
SourceMap scatter_nd_map(const KernelContext& ctx) {
  const Tensor& data = ctx.input(0);
  Tensor idx = host_indices(ctx, 1);
  const Tensor& upd = ctx.input(2);
  if (idx.rank() < 1 || idx.dim(-1) > data.rank()) throw ctx.error("index tuples longer than the data rank");
  int64_t m = idx.dim(-1);
  Shape want(idx.shape().begin(), idx.shape().end() - 1);
  want.insert(want.end(), data.shape().begin() + m, data.shape().end());
  if (upd.shape() != want)
    throw ctx.error("updates shape " + shape_string(upd.shape()) + ", expected " + shape_string(want));
  int64_t inner = product(data.shape(), m, data.rank());
  std::vector<int64_t> offsets = tuple_offsets(ctx, data.shape(), idx, 0);
  SourceMap plan = scatter_base(ctx);
  std::vector<std::pair<int64_t, int64_t>> moves;
  for (size_t t = 0; t < offsets.size(); ++t)
    for (int64_t i = 0; i < inner; ++i) moves.emplace_back(offsets[t] + i, t * inner + i);
  finish_scatter(ctx, plan, moves);
  return plan;
}

// TensorScatter: a copy of past_cache where update's position s along `axis` replaces position write_indices[b] + s
// (modulo the cache length in circular mode).
SourceMap tensor_scatter_map(const KernelContext& ctx) {
  const Tensor& past = ctx.input(0);
  const Tensor& update = ctx.input(1);
  if (update.dtype() != past.dtype()) throw ctx.error("update and past_cache differ in element type");
  const int64_t rank = past.rank();
  if (rank < 2) throw ctx.error("past_cache must have rank 2 or more, got " + shape_string(past.shape()));
  const int64_t axis = normalize_axis(ctx.node, ctx.node.attr_int("axis", -2), rank);
  if (axis == 0) throw ctx.error("axis must not be 0 (the batch dimension)");
  Shape want = past.shape();
  want[axis] = update.dim(axis);
  if (update.rank() != rank || update.shape() != want || update.dim(axis) > past.dim(axis))
    throw ctx.error("update " + shape_string(update.shape()) + " must be past_cache " + shape_string(past.shape()) +
                    " with at most as many positions along axis " + std::to_string(axis));
  const std::string mode = ctx.node.attr_string("mode", "linear");
  if (mode != "linear" && mode != "circular")
    throw ctx.error("mode must be 'linear' or 'circular', got '" + mode + "'");
  const int64_t batch = past.dim(0), length = past.dim(axis), steps = update.dim(axis);
  std::vector<int64_t> write(batch, 0);
  if (ctx.has_input(2)) {
    Tensor w = host_indices(ctx, 2);
    if (w.rank() != 1 || w.dim(0) != batch)
      throw ctx.error("write_indices " + shape_string(w.shape()) + " must be (" + std::to_string(batch) + ")");
    for (int64_t b = 0; b < batch; ++b) {
      write[b] = w.int_at(b);
      if (write[b] < 0 || (mode == "linear" && write[b] + steps > length))
        throw ctx.error("write_indices[" + std::to_string(b) + "] = " + std::to_string(write[b]) + " with " +
                        std::to_string(steps) + " update positions does not fit the cache length " +
                        std::to_string(length) + (mode == "linear" ? " (linear mode)" : ""));
    }
  }
  SourceMap plan{past.dtype(), past.shape(), std::vector<int64_t>(past.numel()), ctx.host_input(1)};
  for (int64_t e = 0; e < past.numel(); ++e) plan.map[e] = e;
  const int64_t outer = product(past.shape(), 0, axis), inner = product(past.shape(), axis + 1, rank);
  const int64_t per_batch = outer / std::max<int64_t>(batch, 1);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t s = 0; s < steps; ++s) {
      const int64_t p = (write[o / per_batch] + s) % length;  // linear mode: below length already
      for (int64_t i = 0; i < inner; ++i)
        plan.map[(o * length + p) * inner + i] = from_extra((o * steps + s) * inner + i);
    }
  return plan;
}

// ScatterElements: a copy of data where updates[p] replaces data[p with coordinate `axis` set to idx[p]].
SourceMap scatter_elements_map(const KernelContext& ctx) {
  const Tensor& data = ctx.input(0);
  Tensor idx = host_indices(ctx, 1);
  const Tensor& upd = ctx.input(2);
  if (idx.shape() != upd.shape() || idx.rank() != data.rank())
    throw ctx.error("indices " + shape_string(idx.shape()) + " and updates " + shape_string(upd.shape()) +
                    " must have one shape, of data's rank");
  int64_t axis = normalize_axis(ctx.node, ctx.node.attr_int("axis", 0), data.rank());
  std::vector<int64_t> ds = strides_of(data.shape());
  SourceMap plan = scatter_base(ctx);
  std::vector<std::pair<int64_t, int64_t>> moves;
  for (int64_t p = 0; p < idx.numel(); ++p) {
    int64_t off = 0, rest = p;
    for (int64_t d = data.rank() - 1; d >= 0; --d) {
      int64_t c = rest % idx.dim(d);
      rest /= idx.dim(d);
      if (d == axis) c = checked_index(ctx, idx.int_at(p), data.dim(d), "scatter");
      else if (c >= data.dim(d)) throw ctx.error("indices exceed data's dims outside the axis");
      off += c * ds[d];
    }
    moves.emplace_back(off, p);
  }
  finish_scatter(ctx, plan, moves);
  return plan;
}

// Compress: the slices along `axis` (or the elements of the flattened input) whose condition entry is true.
SourceMap compress_map(const KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  Tensor cond = ctx.host_input(1);
  if (cond.dtype() != DType::Bool || cond.rank() != 1) throw ctx.error("condition must be a 1-D bool tensor");
  bool flat = !ctx.node.has("axis");
  int64_t axis = flat ? 0 : normalize_axis(ctx.node, ctx.node.attr_int("axis", 0), x.rank());
  Shape dims = flat ? Shape{x.numel()} : x.shape();
  int64_t n = dims[axis], inner = product(dims, axis + 1, dims.size()), outer = product(dims, 0, axis);
  if (cond.numel() > n) throw ctx.error("condition is longer than the compressed dim");
  std::vector<int64_t> kept;
  for (int64_t i = 0; i < cond.numel(); ++i)
    if (cond.data<uint8_t>()[i]) kept.push_back(i);
  dims[axis] = static_cast<int64_t>(kept.size());
  SourceMap plan{x.dtype(), dims, {}, Tensor()};
  plan.map.reserve(shape_numel(dims));
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i : kept)
      for (int64_t r = 0; r < inner; ++r) plan.map.push_back((o * n + i) * inner + r);
  return plan;
}

// NonZero: the coordinates (rank x count, int64, row-major order of the input) of the elements that are not zero;
// floats compare as values (-0 is zero, NaN is not).
SourceMap nonzero_map(const KernelContext& ctx) {
  Tensor x = ctx.host_input(0);
  auto nonzero = [&](int64_t e) -> bool {
    switch (x.dtype()) {
      case DType::Float: return x.data<float>()[e] != 0.0f;
      case DType::Double: return x.data<double>()[e] != 0.0;
      case DType::Float16: case DType::BFloat16: return (x.data<uint16_t>()[e] & 0x7FFF) != 0;
      default: return x.int_at(e) != 0;
    }
  };
  std::vector<int64_t> hits;
  for (int64_t e = 0; e < x.numel(); ++e)
    if (nonzero(e)) hits.push_back(e);
  int64_t rank = x.rank(), count = static_cast<int64_t>(hits.size());
  std::vector<int64_t> coords(static_cast<size_t>(rank * count));
  for (int64_t h = 0; h < count; ++h)
    for (int64_t d = rank - 1, rest = hits[h]; d >= 0; --d) {
      coords[d * count + h] = rest % x.dim(d);
      rest /= x.dim(d);
    }
  Shape shape{rank, count};
  SourceMap plan{DType::Int64, shape, std::vector<int64_t>(coords.size()),
                 Tensor::from_bytes(DType::Int64, {static_cast<int64_t>(coords.size())}, coords.data())};
  for (size_t e = 0; e < coords.size(); ++e) plan.map[e] = from_extra(static_cast<int64_t>(e));
  return plan;
}

// OneHot: out[o, d, i] = values[1] where indices[o, i] (negative: + depth) equals d, else values[0]; indices
// outside [-depth, depth) give a row of values[0].
SourceMap one_hot_map(const KernelContext& ctx) {
  Tensor idx = ctx.host_input(0), depth_t = ctx.host_input(1), values = ctx.host_input(2);
  if (depth_t.numel() != 1)
    throw ctx.error("depth must hold exactly one element, got " + shape_string(depth_t.shape()));
  if (values.numel() != 2)
    throw ctx.error("values must hold [off_value, on_value], got " + shape_string(values.shape()));
  const int64_t depth = depth_t.int_at(0);
  if (depth < 1) throw ctx.error("depth must be positive, got " + std::to_string(depth));
  const int64_t axis = normalize_axis(ctx.node, ctx.node.attr_int("axis", -1), idx.rank() + 1);
  Shape out = idx.shape();
  out.insert(out.begin() + axis, depth);
  const int64_t inner = product(idx.shape(), axis, idx.rank());
  SourceMap plan{values.dtype(), out, std::vector<int64_t>(shape_numel(out)), values.reshaped({2})};
  for (int64_t e = 0; e < static_cast<int64_t>(plan.map.size()); ++e) {
    const int64_t i = e % inner, d = (e / inner) % depth, o = e / (inner * depth);
    int64_t v = idx.int_at(o * inner + i);
    if (v < 0) v += depth;
    plan.map[e] = from_extra(v == d ? 1 : 0);
  }
  return plan;
}

namespace {

// TopK's order: a before b when a is greater (largest) or smaller; NaN is greater than every number; equal
// elements (+0 and -0, two NaNs) keep their index order (stable sort).
template <typename T>
bool greater_than(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(a)) return !std::isnan(b);
    if (std::isnan(b)) return false;
  }
  return a > b;
}

template <typename T>
void top_k_rows(const T* x, int64_t outer, int64_t n, int64_t inner, int64_t k, bool largest, int64_t* picked) {
  std::vector<int64_t> order(n);
  for (int64_t r = 0; r < outer * inner; ++r) {
    const T* row = x + (r / inner) * n * inner + r % inner;
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
      return largest ? greater_than(row[a * inner], row[b * inner]) : greater_than(row[b * inner], row[a * inner]);
    });
    for (int64_t j = 0; j < k; ++j) picked[((r / inner) * k + j) * inner + r % inner] = order[j];
  }
}

// Unique's order on elements: by value, NaN after every number and equal to NaN (numpy's equal_nan).
template <class T>
bool element_less(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(a)) return false;
    if (std::isnan(b)) return true;
  }
  return a < b;
}

// Slice s of x viewed as (outer, count, inner): its elements in (o, i) order, compared lexicographically.
template <class T>
std::vector<int64_t> unique_order(const T* x, int64_t outer, int64_t count, int64_t inner,
                                  std::vector<int64_t>& group_of_sorted) {
  auto at = [&](int64_t s, int64_t k) { return x[((k / inner) * count + s) * inner + k % inner]; };
  const int64_t len = outer * inner;
  auto less = [&](int64_t a, int64_t b) {
    for (int64_t k = 0; k < len; ++k) {
      if (element_less(at(a, k), at(b, k))) return true;
      if (element_less(at(b, k), at(a, k))) return false;
    }
    return false;
  };
  std::vector<int64_t> order(static_cast<size_t>(count));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), less);
  group_of_sorted.assign(order.size(), 0);
  for (size_t r = 1; r < order.size(); ++r)
    group_of_sorted[r] = group_of_sorted[r - 1] + (less(order[r - 1], order[r]) ? 1 : 0);
  return order;
}

SourceMap int64_map(const std::vector<int64_t>& values) {
  const int64_t n = static_cast<int64_t>(values.size());
  SourceMap plan{DType::Int64, {n}, std::vector<int64_t>(values.size()),
                 Tensor::from_bytes(DType::Int64, {n}, values.data())};
  for (int64_t e = 0; e < n; ++e) plan.map[e] = from_extra(e);
  return plan;
}

}  // namespace

// TopK: the k greatest (largest = 1) or smallest elements of each line along `axis`, always sorted, with their
// indices; see greater_than for the order.
std::vector<SourceMap> top_k_maps(const KernelContext& ctx) {
  Tensor x = ctx.host_input(0);
  if (x.rank() == 0) throw ctx.error("TopK needs an input of rank >= 1");
  int64_t k;
  if (ctx.opset < 10) {
    k = ctx.node.attr_int("k", -1);
  } else {
    Tensor kt = ctx.host_input(1);
    if (kt.numel() != 1) throw ctx.error("K must hold exactly one element, got " + shape_string(kt.shape()));
    k = kt.int_at(0);
  }
  const int64_t axis = normalize_axis(ctx.node, ctx.node.attr_int("axis", -1), x.rank());
  const int64_t n = x.dim(static_cast<int>(axis));
  if (k < 0 || k > n)
    throw ctx.error("k = " + std::to_string(k) + " is outside [0, " + std::to_string(n) + "] for axis " +
                    std::to_string(axis) + " of " + shape_string(x.shape()));
  const bool largest = ctx.opset < 11 || ctx.node.attr_int("largest", 1) != 0;
  Shape out = x.shape();
  out[axis] = k;
  const int64_t outer = product(x.shape(), 0, axis), inner = product(x.shape(), axis + 1, x.rank());
  std::vector<int64_t> picked(shape_numel(out));
  dispatch_dtype<arith::kFloats | arith::kInts>(ctx, x.dtype(), [&](auto tag) {
    top_k_rows(x.data<decltype(tag)>(), outer, n, inner, k, largest, picked.data());
  });
  std::vector<SourceMap> plans(2);
  plans[0] = {x.dtype(), out, std::vector<int64_t>(picked.size()), Tensor()};
  plans[1] = {DType::Int64, out, std::vector<int64_t>(picked.size()),
              Tensor::from_bytes(DType::Int64, {static_cast<int64_t>(picked.size())}, picked.data())};
  for (int64_t e = 0; e < static_cast<int64_t>(picked.size()); ++e) {
    const int64_t i = e % inner, o = e / (inner * k);
    plans[0].map[e] = (o * n + picked[e]) * inner + i;
    plans[1].map[e] = from_extra(e);
  }
  return plans;
}

// MaxUnpool (9+): zeros of the pooled input's natural shape ((in - 1) * stride - pads + kernel per spatial axis),
// with x[i] at flat position indices[i] (later elements win); with output_shape, that tensor sits in the leading
// corner of the larger output (the ONNX reference).
SourceMap max_unpool_map(const KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  Tensor idx = host_indices(ctx, 1);
  if (idx.shape() != x.shape()) throw ctx.error("indices must have X's shape " + shape_string(x.shape()));
  const int64_t nsp = x.rank() - 2;
  std::vector<int64_t> kernel = ctx.node.attr_ints("kernel_shape");
  std::vector<int64_t> strides = ctx.node.attr_ints("strides", std::vector<int64_t>(nsp, 1));
  std::vector<int64_t> pads = ctx.node.attr_ints("pads", std::vector<int64_t>(2 * nsp, 0));
  if (nsp < 1 || static_cast<int64_t>(kernel.size()) != nsp || static_cast<int64_t>(strides.size()) != nsp ||
      static_cast<int64_t>(pads.size()) != 2 * nsp)
    throw ctx.error("kernel_shape, strides and pads must match the " + std::to_string(nsp) + " spatial dims");
  Shape natural = x.shape();
  for (int64_t d = 0; d < nsp; ++d)
    natural[2 + d] = (x.dim(2 + d) - 1) * strides[d] - (pads[d] + pads[nsp + d]) + kernel[d];
  Shape out = ctx.has_input(2) ? ctx.host_input(2).to_ints() : natural;
  if (out.size() != natural.size()) throw ctx.error("output_shape must have rank " + std::to_string(natural.size()));
  for (size_t d = 0; d < out.size(); ++d)
    if (out[d] < natural[d])
      throw ctx.error("output_shape " + shape_string(out) + " is smaller than the unpooled " + shape_string(natural));
  SourceMap plan{x.dtype(), out, std::vector<int64_t>(shape_numel(out), from_extra(0)), host_zeros(x.dtype(), 1)};
  const int64_t n = shape_numel(natural);
  for (int64_t i = 0; i < x.numel(); ++i) {
    int64_t t = idx.int_at(i);
    if (t < 0 || t >= n) throw ctx.error("index " + std::to_string(t) + " is outside [0, " + std::to_string(n) + ")");
    int64_t off = 0, stride = 1;
    for (int64_t d = static_cast<int64_t>(out.size()) - 1; d >= 0; --d) {
      off += (t % natural[d]) * stride;
      t /= natural[d];
      stride *= out[d];
    }
    plan.map[off] = i;
  }
  return plan;
}

// Unique: the distinct elements (or slices along axis) with their first index, inverse map and counts.
std::vector<SourceMap> unique_maps(const KernelContext& ctx) {
  Tensor x = ctx.host_input(0);
  const bool has_axis = ctx.node.has("axis");
  const int64_t axis = has_axis ? normalize_axis(ctx.node, ctx.node.attr_int("axis", 0), x.rank()) : 0;
  int64_t outer = 1, count = x.numel(), inner = 1;
  if (has_axis) {
    count = x.dim(axis);
    for (int64_t d = 0; d < axis; ++d) outer *= x.dim(d);
    for (int64_t d = axis + 1; d < x.rank(); ++d) inner *= x.dim(d);
  }
  std::vector<int64_t> order, group;
  constexpr unsigned kTypes = arith::kFloats | arith::kInts | arith::kBool;
  dispatch_dtype<kTypes>(ctx, x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    order = unique_order(x.data<T>(), outer, count, inner, group);
  });
  const int64_t groups = order.empty() ? 0 : group.back() + 1;
  std::vector<int64_t> first(static_cast<size_t>(groups), -1), counts(static_cast<size_t>(groups), 0);
  for (size_t r = 0; r < order.size(); ++r) {
    if (first[group[r]] < 0) first[group[r]] = order[r];
    ++counts[group[r]];
  }
  // sorted = 0: the groups in the order of their first occurrence.
  std::vector<int64_t> rank(static_cast<size_t>(groups));
  std::iota(rank.begin(), rank.end(), 0);
  if (ctx.node.attr_int("sorted", 1) == 0)
    std::sort(rank.begin(), rank.end(), [&](int64_t a, int64_t b) { return first[a] < first[b]; });
  std::vector<int64_t> position(static_cast<size_t>(groups)), indices, out_counts, inverse(order.size());
  for (int64_t u = 0; u < groups; ++u) {
    position[rank[u]] = u;
    indices.push_back(first[rank[u]]);
    out_counts.push_back(counts[rank[u]]);
  }
  for (size_t r = 0; r < order.size(); ++r) inverse[order[r]] = position[group[r]];
  Shape y_shape = has_axis ? x.shape() : Shape{groups};
  if (has_axis) y_shape[axis] = groups;
  SourceMap y{x.dtype(), y_shape, {}, {}};
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t u = 0; u < groups; ++u)
      for (int64_t i = 0; i < inner; ++i) y.map.push_back((o * count + indices[u]) * inner + i);
  return {y, int64_map(indices), int64_map(inverse), int64_map(out_counts)};
}

}  // namespace lockstep
