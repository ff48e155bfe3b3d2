#include "ops/registry.h"

namespace lockstep {

namespace {
using FamilyFn = std::span<const OpEntry> (*)();
struct Family {
  const char* name;
  FamilyFn rows;
};
constexpr Family kFamilies[] = {
    {"conv", conv_ops},       {"gemm", gemm_ops},     {"elementwise", elementwise_ops},
    {"reduce", reduce_ops},   {"normalization", normalization_ops}, {"pool", pool_ops},
    {"tensor", tensor_ops},   {"resize", resize_ops}, {"layout", layout_ops},
    {"index", index_ops},     {"loss", loss_ops},     {"recurrent", recurrent_ops},
    {"quantize", quantize_ops}, {"attention", attention_ops}, {"detection", detection_ops},
    {"signal", signal_ops},
    {"strings", strings_ops},
};
}  // namespace

std::vector<RegisteredOp> all_ops() {
  std::vector<RegisteredOp> rows;
  for (const Family& family : kFamilies)
    for (const OpEntry& e : family.rows()) rows.push_back({family.name, &e});
  return rows;
}

const OpEntry* find_op(const std::string& op_type, int64_t opset) {
  for (const Family& family : kFamilies)
    for (const OpEntry& e : family.rows())
      if (op_type == e.op_type && opset >= e.since && opset <= e.until) return &e;
  return nullptr;
}

const OpEntry* find_fused_op(const std::string& op_type) {
  for (FamilyFn family : {fused_elementwise_ops, fused_reduce_ops, fused_product_ops})
    for (const OpEntry& e : family())
      if (op_type == e.op_type) return &e;
  return nullptr;
}

std::span<const OpEntry> microsoft_ops() { return microsoft_elementwise_ops(); }

const OpEntry* find_microsoft_op(const std::string& op_type) {
  for (const OpEntry& e : microsoft_ops())
    if (op_type == e.op_type) return &e;
  return nullptr;
}

}  // namespace lockstep
