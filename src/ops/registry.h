// The op table: for every supported op, its opset range and its kernel on each device.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "runtime/kernel.h"

namespace lockstep {

/// The row for a default-domain op_type at opset, or nullptr.
const OpEntry* find_op(const std::string& op_type, int64_t opset);

/// The domain of the ops that only lockstep's graph rewrites create (src/graph/fuse.cpp); a model's own nodes of
/// this domain are refused unless the model imports the domain (refuse_fused_domain).
constexpr const char* kFusedDomain = "lockstep";
/// The opset version of that domain that models written by lockstep import.
constexpr int64_t kFusedDomainVersion = 1;
/// The row for a fused op (domain kFusedDomain), or nullptr.
const OpEntry* find_fused_op(const std::string& op_type);
/// onnxruntime's contrib domain, whose ops exported and optimized transformer models carry.
constexpr const char* kMicrosoftDomain = "com.microsoft";
/// The row for a com.microsoft op (version 1, the only one that domain has), or nullptr.
const OpEntry* find_microsoft_op(const std::string& op_type);
/// The com.microsoft rows (for `lockstep ops`).
std::span<const OpEntry> microsoft_ops();

/// A row of the op table with the name of its family ("conv", "gemm", ...).
struct RegisteredOp {
  const char* family;
  const OpEntry* entry;
};
/// Every row, in family order (for `lockstep ops` and coverage listings).
std::vector<RegisteredOp> all_ops();

// Each op family contributes its rows from src/ops/<family>.cpp.
std::span<const OpEntry> conv_ops();
std::span<const OpEntry> gemm_ops();
std::span<const OpEntry> elementwise_ops();
std::span<const OpEntry> reduce_ops();
std::span<const OpEntry> normalization_ops();
std::span<const OpEntry> pool_ops();
std::span<const OpEntry> tensor_ops();
std::span<const OpEntry> resize_ops();
std::span<const OpEntry> layout_ops();
std::span<const OpEntry> index_ops();
std::span<const OpEntry> loss_ops();
std::span<const OpEntry> recurrent_ops();
std::span<const OpEntry> quantize_ops();
std::span<const OpEntry> attention_ops();
std::span<const OpEntry> detection_ops();
std::span<const OpEntry> signal_ops();
std::span<const OpEntry> strings_ops();
std::span<const OpEntry> fused_elementwise_ops();
std::span<const OpEntry> fused_reduce_ops();
std::span<const OpEntry> fused_product_ops();
std::span<const OpEntry> microsoft_elementwise_ops();

}  // namespace lockstep

#if LOCKSTEP_WITH_CUDA
#define LOCKSTEP_CUDA_KERNEL(fn) &cuda::fn
#else
#define LOCKSTEP_CUDA_KERNEL(fn) nullptr
#endif
