// The layout family's definitions: Trilu, DepthToSpace, SpaceToDepth, EyeLike and Dropout's mask as source maps, and the op table
// rows of the layout and index families (both run the mapped kernels).
#include "ops/layout.h"

#include <cstring>

#include "ops/registry.h"

namespace lockstep {

Tensor host_zeros(DType t, int64_t n) {
  std::vector<uint8_t> bytes(static_cast<size_t>(n) * dtype_size(t), 0);
  return Tensor::from_bytes(t, {n}, bytes.data());
}

namespace {


// The bytes of the value 1 in dtype t (EyeLike's diagonal).
uint64_t one_bits(const KernelContext& ctx, DType t) {
  switch (t) {
    case DType::Float: { float f = 1.0f; uint32_t b; std::memcpy(&b, &f, 4); return b; }
    case DType::Double: { double d = 1.0; uint64_t b; std::memcpy(&b, &d, 8); return b; }
    case DType::Float16: return 0x3C00;
    case DType::BFloat16: return 0x3F80;
    case DType::Int8: case DType::Int16: case DType::Int32: case DType::Int64: case DType::UInt8:
    case DType::UInt16: case DType::UInt32: case DType::UInt64: case DType::Bool: return 1;
    default: throw ctx.error(std::string("element type ") + dtype_name(t) + " is not supported",
                             ErrorCode::NotImplemented);
  }
}

// Trilu: keeps x[..., i, j] where j - i >= k (upper) or j - i <= k (lower); the rest is zero.
SourceMap trilu_map(const KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  if (x.rank() < 2) throw ctx.error("Trilu needs an input of rank >= 2, got " + shape_string(x.shape()));
  int64_t k = 0;
  if (ctx.has_input(1)) {
    Tensor kt = ctx.host_input(1);
    if (kt.numel() != 1) throw ctx.error("Trilu's k must be a scalar");
    k = kt.int_at(0);
  }
  bool upper = ctx.node.attr_int("upper", 1) != 0;
  SourceMap m{x.dtype(), x.shape(), std::vector<int64_t>(x.numel()), host_zeros(x.dtype(), 1)};
  int64_t rows = x.dim(-2), cols = x.dim(-1);
  for (int64_t e = 0; e < x.numel(); ++e) {
    int64_t j = e % cols, i = (e / cols) % rows;
    bool keep = upper ? j - i >= k : j - i <= k;
    m.map[e] = keep ? e : from_extra(0);
  }
  return m;
}

// DepthToSpace and SpaceToDepth: y[n, c, h*b+i, w*b+j] of the space side is the depth side's channel
// (i*b + j)*C + c (DCR) or c*b*b + i*b + j (CRD); one planner serves both directions.
SourceMap depth_space_map(const KernelContext& ctx, bool to_space) {
  const Tensor& x = ctx.input(0);
  if (x.rank() != 4) throw ctx.error("expected a 4-D input (N, C, H, W), got " + shape_string(x.shape()));
  int64_t b = ctx.node.attr_int("blocksize", 0);
  if (b <= 0) throw ctx.error("blocksize must be positive, got " + std::to_string(b));
  // DepthToSpace has a mode from opset 11, SpaceToDepth from opset 28.
  bool has_mode = ctx.opset >= (to_space ? 11 : 28);
  std::string mode = has_mode ? ctx.node.attr_string("mode", "DCR") : "DCR";
  if (mode != "DCR" && mode != "CRD") throw ctx.error("mode must be DCR or CRD, got '" + mode + "'");
  int64_t n = x.dim(0), c = x.dim(1), h = x.dim(2), w = x.dim(3);
  if (to_space && c % (b * b) != 0)
    throw ctx.error("channels " + std::to_string(c) + " not divisible by blocksize^2 = " + std::to_string(b * b));
  if (!to_space && (h % b != 0 || w % b != 0))
    throw ctx.error("spatial dims " + shape_string(x.shape()) + " not divisible by blocksize " + std::to_string(b));
  // Dims of the space side (sc channels, sh x sw pixels) and of the depth side.
  int64_t sc = to_space ? c / (b * b) : c, sh = to_space ? h * b : h, sw = to_space ? w * b : w;
  int64_t dc = sc * b * b, dh = sh / b, dw = sw / b;
  Shape out = to_space ? Shape{n, sc, sh, sw} : Shape{n, dc, dh, dw};
  SourceMap m{x.dtype(), out, std::vector<int64_t>(shape_numel(out)), Tensor()};
  for (int64_t in = 0; in < n; ++in)
    for (int64_t ic = 0; ic < sc; ++ic)
      for (int64_t y = 0; y < sh; ++y)
        for (int64_t xx = 0; xx < sw; ++xx) {
          int64_t i = y % b, j = xx % b;
          int64_t depth_c = mode == "DCR" ? (i * b + j) * sc + ic : ic * b * b + i * b + j;
          int64_t space = ((in * sc + ic) * sh + y) * sw + xx;
          int64_t depth = ((in * dc + depth_c) * dh + y / b) * dw + xx / b;
          if (to_space) m.map[space] = depth; else m.map[depth] = space;
        }
  return m;
}

// EyeLike: ones where j - i == k, zeros elsewhere, in the dtype attribute (default: the input's).
SourceMap eye_like_map(const KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  if (x.rank() != 2) throw ctx.error("EyeLike needs a 2-D input, got " + shape_string(x.shape()));
  DType t = static_cast<DType>(ctx.node.attr_int("dtype", static_cast<int64_t>(x.dtype())));
  int64_t k = ctx.node.attr_int("k", 0);
  uint64_t one = one_bits(ctx, t);
  SourceMap m{t, x.shape(), std::vector<int64_t>(x.numel()), host_zeros(t, 2)};
  std::memcpy(static_cast<uint8_t*>(m.extra.raw()) + dtype_size(t), &one, dtype_size(t));
  int64_t cols = x.dim(1);
  for (int64_t e = 0; e < x.numel(); ++e) m.map[e] = from_extra(e % cols - e / cols == k ? 1 : 0);
  return m;
}

}  // namespace

void check_dropout_inference(const KernelContext& ctx) {
  bool training = ctx.opset >= 12 && ctx.has_input(2) && ctx.host_input(2).int_at(0) != 0;
  if (!training) return;
  float ratio = 0.5f;
  if (ctx.has_input(1)) {
    Tensor r = ctx.host_input(1);
    if (r.dtype() == DType::Float) ratio = r.data<float>()[0];
    else if (r.dtype() == DType::Double) ratio = static_cast<float>(r.data<double>()[0]);
    else throw ctx.error("ratio must be float or double", ErrorCode::NotImplemented);
  }
  if (ratio != 0.0f)
    throw ctx.error("training_mode with a non-zero ratio (random dropping) is not supported", ErrorCode::NotImplemented);
}

SourceMap dropout_mask_map(const KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  DType t = ctx.opset >= 10 ? DType::Bool : x.dtype();
  uint64_t one = one_bits(ctx, t);
  SourceMap m{t, x.shape(), std::vector<int64_t>(x.numel(), from_extra(0)), host_zeros(t, 1)};
  std::memcpy(m.extra.raw(), &one, dtype_size(t));
  return m;
}

namespace {

// The source offset of output element e of `out` reading x (shape `in`) at coordinate c_d = o_d + shift_d per
// axis, or -1 when some c_d falls outside x.
int64_t shifted_source(const Shape& in, const Shape& out, const std::vector<int64_t>& shift, int64_t e) {
  int64_t off = 0, stride = 1;
  for (int64_t d = static_cast<int64_t>(out.size()) - 1; d >= 0; --d) {
    const int64_t c = e % out[d] + shift[d];
    e /= out[d];
    if (c < 0 || c >= in[d]) return -1;
    off += c * stride;
    stride *= in[d];
  }
  return off;
}

// CenterCropPad (18): each listed axis is cropped or zero-padded to its target size around the centre; the smaller
// half of the difference goes before.
SourceMap center_crop_pad_map(const KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  std::vector<int64_t> sizes = ctx.host_input(1).to_ints();
  std::vector<int64_t> axes = ctx.node.attr_ints("axes");
  if (axes.empty())
    for (int64_t d = 0; d < x.rank(); ++d) axes.push_back(d);
  if (sizes.size() != axes.size())
    throw ctx.error("shape has " + std::to_string(sizes.size()) + " sizes for " + std::to_string(axes.size()) + " axes");
  Shape out = x.shape();
  std::vector<int64_t> shift(x.rank(), 0);
  for (size_t i = 0; i < axes.size(); ++i) {
    const int64_t a = normalize_axis(ctx.node, axes[i], x.rank());
    if (sizes[i] < 0) throw ctx.error("target size " + std::to_string(sizes[i]) + " is negative");
    const int64_t diff = x.dim(static_cast<int>(a)) - sizes[i];
    shift[a] = diff >= 0 ? diff / 2 : -((-diff) / 2);
    out[a] = sizes[i];
  }
  SourceMap m{x.dtype(), out, std::vector<int64_t>(shape_numel(out)), host_zeros(x.dtype(), 1)};
  for (int64_t e = 0; e < static_cast<int64_t>(m.map.size()); ++e) {
    const int64_t src = shifted_source(x.shape(), out, shift, e);
    m.map[e] = src >= 0 ? src : from_extra(0);
  }
  return m;
}

// ReverseSequence (10): along time_axis, the first sequence_lens[b] elements of batch b are reversed.
SourceMap reverse_sequence_map(const KernelContext& ctx) {
  const Tensor& x = ctx.input(0);
  if (x.rank() < 2) throw ctx.error("input must have rank >= 2, got " + shape_string(x.shape()));
  const int64_t batch_axis = ctx.node.attr_int("batch_axis", 1), time_axis = ctx.node.attr_int("time_axis", 0);
  if (batch_axis == time_axis || batch_axis < 0 || batch_axis > 1 || time_axis < 0 || time_axis > 1)
    throw ctx.error("batch_axis and time_axis must be 0 and 1 in some order");
  std::vector<int64_t> lens = ctx.host_input(1).to_ints();
  const int64_t batch = x.dim(static_cast<int>(batch_axis)), steps = x.dim(static_cast<int>(time_axis));
  if (static_cast<int64_t>(lens.size()) != batch)
    throw ctx.error("sequence_lens has " + std::to_string(lens.size()) + " entries for a batch of " +
                    std::to_string(batch));
  for (int64_t l : lens)
    if (l < 0 || l > steps) throw ctx.error("sequence length " + std::to_string(l) + " is outside [0, " +
                                            std::to_string(steps) + "]");
  const int64_t inner = x.numel() / std::max<int64_t>(1, batch * steps);
  SourceMap m{x.dtype(), x.shape(), std::vector<int64_t>(x.numel()), Tensor()};
  for (int64_t e = 0; e < x.numel(); ++e) {
    const int64_t i = e % inner, outer = e / inner;
    const int64_t first = outer / x.dim(1), second = outer % x.dim(1);
    const int64_t t = time_axis == 0 ? first : second, b = time_axis == 0 ? second : first;
    const int64_t src_t = t < lens[b] ? lens[b] - 1 - t : t;
    m.map[e] = ((time_axis == 0 ? src_t * x.dim(1) + b : b * x.dim(1) + src_t) * inner) + i;
  }
  return m;
}

}  // namespace

SourceMap source_map(const KernelContext& ctx) {
  switch (static_cast<MappedOp>(ctx.entry.variant)) {
    case MappedOp::Trilu: return trilu_map(ctx);
    case MappedOp::DepthToSpace: return depth_space_map(ctx, true);
    case MappedOp::SpaceToDepth: return depth_space_map(ctx, false);
    case MappedOp::EyeLike: return eye_like_map(ctx);
    case MappedOp::GatherND: return gather_nd_map(ctx);
    case MappedOp::ScatterND: return scatter_nd_map(ctx);
    case MappedOp::ScatterElements: return scatter_elements_map(ctx);
    case MappedOp::Compress: return compress_map(ctx);
    case MappedOp::NonZero: return nonzero_map(ctx);
    case MappedOp::OneHot: return one_hot_map(ctx);
    case MappedOp::MaxUnpool: return max_unpool_map(ctx);
    case MappedOp::TensorScatter: return tensor_scatter_map(ctx);
    case MappedOp::CenterCropPad: return center_crop_pad_map(ctx);
    case MappedOp::ReverseSequence: return reverse_sequence_map(ctx);
    case MappedOp::TopK:
    case MappedOp::Unique: break;  // several outputs: source_maps
  }
  throw ctx.error("unknown mapped op");
}

std::vector<SourceMap> source_maps(const KernelContext& ctx) {
  if (static_cast<MappedOp>(ctx.entry.variant) == MappedOp::TopK) return top_k_maps(ctx);
  if (static_cast<MappedOp>(ctx.entry.variant) == MappedOp::Unique) return unique_maps(ctx);
  std::vector<SourceMap> plans;
  plans.push_back(source_map(ctx));
  return plans;
}

namespace {
#define MAPPED(op) &cpu::mapped, LOCKSTEP_CUDA_KERNEL(mapped), int(MappedOp::op)
const OpEntry kLayoutRows[] = {
    {"Trilu", 14, kNewestOpset, MAPPED(Trilu)},
    {"DepthToSpace", 7, kNewestOpset, MAPPED(DepthToSpace)},
    {"SpaceToDepth", 7, kNewestOpset, MAPPED(SpaceToDepth)},
    {"EyeLike", 9, kNewestOpset, MAPPED(EyeLike)},
    {"Dropout", 7, kNewestOpset, &cpu::dropout, LOCKSTEP_CUDA_KERNEL(dropout)},
    {"CenterCropPad", 18, kNewestOpset, MAPPED(CenterCropPad)},
    {"ReverseSequence", 10, kNewestOpset, MAPPED(ReverseSequence)},
};
const OpEntry kIndexRows[] = {
    {"GatherND", 11, kNewestOpset, MAPPED(GatherND)},
    {"ScatterND", 11, kNewestOpset, MAPPED(ScatterND)},
    {"Scatter", 9, 10, MAPPED(ScatterElements)},
    {"ScatterElements", 11, kNewestOpset, MAPPED(ScatterElements)},
    {"Compress", 9, kNewestOpset, MAPPED(Compress)},
    {"NonZero", 9, kNewestOpset, MAPPED(NonZero)},
    {"OneHot", 9, kNewestOpset, MAPPED(OneHot)},
    {"MaxUnpool", 9, kNewestOpset, MAPPED(MaxUnpool)},
    {"TopK", 7, kNewestOpset, MAPPED(TopK)},
    {"Unique", 11, kNewestOpset, MAPPED(Unique)},
    {"TensorScatter", 24, kNewestOpset, MAPPED(TensorScatter)},
};
#undef MAPPED
}  // namespace

std::span<const OpEntry> layout_ops() { return kLayoutRows; }
std::span<const OpEntry> index_ops() { return kIndexRows; }

}  // namespace lockstep
