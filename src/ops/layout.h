// The layout and index families (Trilu, DepthToSpace, SpaceToDepth, EyeLike, Dropout, CenterCropPad,
// ReverseSequence; GatherND, ScatterND, ScatterElements, Compress, NonZero, OneHot, TopK, MaxUnpool,
// Unique): no arithmetic.
// Each is planned on the host as a source map, one entry per output element, and both devices then run the same
// exact copy (docs/arithmetic.md#source-maps).
#pragma once

#include <cstdint>
#include <vector>

#include "ops/common.h"
#include "ops/tensor.h"
#include "runtime/kernel.h"

namespace lockstep {

/// out[e] = map[e] >= 0 ? input0[map[e]] : extra[-map[e] - 1], element bytes copied unchanged.
/// `extra` is a host tensor of the output dtype (zeros and ones, a Scatter's updates, NonZero's coordinates).
struct SourceMap {
  DType dtype = DType::Undefined;
  Shape shape;
  std::vector<int64_t> map;
  Tensor extra;
};

/// A host tensor of `n` zero elements of dtype t (the extra element of maps that fill with zeros).
Tensor host_zeros(DType t, int64_t n);

/// The encoded map entry for extra element j.
inline int64_t from_extra(int64_t j) { return -j - 1; }

/// OpEntry::variant of the mapped rows: which planner builds the map.
enum class MappedOp : int {
  Trilu = 0, DepthToSpace, SpaceToDepth, EyeLike,
  GatherND, ScatterND, ScatterElements, Compress, NonZero, OneHot, TopK, CenterCropPad, ReverseSequence,
  MaxUnpool, Unique, TensorScatter,
};

/// The plan of the node's op (ctx.entry.variant); reads index and shape inputs with host_input.
SourceMap source_map(const KernelContext& ctx);
/// Planners of the index family (src/ops/index.cpp), called by source_map.
SourceMap gather_nd_map(const KernelContext& ctx);
SourceMap scatter_nd_map(const KernelContext& ctx);
SourceMap scatter_elements_map(const KernelContext& ctx);
SourceMap compress_map(const KernelContext& ctx);
SourceMap nonzero_map(const KernelContext& ctx);
SourceMap one_hot_map(const KernelContext& ctx);
SourceMap max_unpool_map(const KernelContext& ctx);
SourceMap tensor_scatter_map(const KernelContext& ctx);
/// TopK's two plans: Values (into input 0) and Indices (int64, all extra elements).
std::vector<SourceMap> top_k_maps(const KernelContext& ctx);
/// The plans of every output of the node: one for most ops, two for TopK, four for
/// Unique.
std::vector<SourceMap> source_maps(const KernelContext& ctx);
/// Unique's four outputs (Y, indices, inverse_indices, counts), computed on the host.
std::vector<SourceMap> unique_maps(const KernelContext& ctx);

/// Dropout in inference (training_mode absent or false, or ratio 0): the plan of its mask output (all ones, bool
/// from opset 10, the input's type before); throws NotImplemented for a training run with a non-zero ratio.
SourceMap dropout_mask_map(const KernelContext& ctx);
void check_dropout_inference(const KernelContext& ctx);

/// Allocates output `out` by the plan; `Dev::apply<W>(ctx, plan, src, dst)` then runs the map (src: input 0).
template <class Dev>
void apply_map(KernelContext& ctx, int out_index, const SourceMap& plan) {
  Tensor& out = ctx.output(out_index, plan.dtype, plan.shape);
  if (out.numel() == 0) return;
  const void* src = ctx.num_inputs() > 0 && ctx.inputs[0] ? ctx.inputs[0]->raw() : nullptr;
  by_element_size(movable_size(ctx, plan.dtype), [&](auto w) {
    using W = decltype(w);
    Dev::template apply<W>(ctx, plan, static_cast<const W*>(src), out.data<W>());
  });
}

template <class Dev>
void run_mapped(KernelContext& ctx) {
  std::vector<SourceMap> plans = source_maps(ctx);
  for (size_t i = 0; i < plans.size() && i < ctx.node.outputs.size(); ++i)
    if (!ctx.node.outputs[i].empty()) apply_map<Dev>(ctx, static_cast<int>(i), plans[i]);
}

/// Dropout: output 0 is input 0 itself; the optional mask is all ones.
template <class Dev>
void run_dropout(KernelContext& ctx) {
  check_dropout_inference(ctx);
  ctx.alias_output(0, ctx.input(0));
  if (ctx.node.outputs.size() > 1 && !ctx.node.outputs[1].empty()) apply_map<Dev>(ctx, 1, dropout_mask_map(ctx));
}

namespace cpu { void mapped(KernelContext& ctx); void dropout(KernelContext& ctx); }
namespace cuda { void mapped(KernelContext& ctx); void dropout(KernelContext& ctx); }

}  // namespace lockstep
