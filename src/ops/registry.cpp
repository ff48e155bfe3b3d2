#include "ops/registry.h"

namespace lockstep {

namespace {
using FamilyFn = std::span<const OpEntry> (*)();
constexpr FamilyFn kFamilies[] = {conv_ops,   gemm_ops,   elementwise_ops, reduce_ops, normalization_ops, pool_ops,
                                  tensor_ops, resize_ops, layout_ops,      index_ops,  attention_ops};
}  // namespace

std::vector<const OpEntry*> all_ops() {
  std::vector<const OpEntry*> rows;
  for (FamilyFn family : kFamilies)
    for (const OpEntry& e : family()) rows.push_back(&e);
  return rows;
}

const OpEntry* find_op(const std::string& op_type, int64_t opset) {
  for (FamilyFn family : kFamilies)
    for (const OpEntry& e : family())
      if (op_type == e.op_type && opset >= e.since && opset <= e.until) return &e;
  return nullptr;
}

const OpEntry* find_fused_op(const std::string& op_type) {
  for (const OpEntry& e : fused_elementwise_ops())
    if (op_type == e.op_type) return &e;
  return nullptr;
}

}  // namespace lockstep
