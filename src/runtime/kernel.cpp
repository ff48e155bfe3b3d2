#include "runtime/kernel.h"

#include <new>
#include <string>

namespace lockstep {

const Tensor& KernelContext::input(int i) const {
  if (!has_input(i)) throw error("required input " + std::to_string(i) + " is missing", ErrorCode::InvalidGraph);
  return *inputs[i];
}

Tensor KernelContext::host_input(int i) const {
  const Tensor& t = input(i);
  if (t.device() == Device::CPU) return t;
  if (host_copies && i < static_cast<int>(host_copies->size()) && (*host_copies)[i])
    return *(*host_copies)[i];
  return to_host(t);
}

uint64_t KernelContext::check_output_on(int i, DType dtype, const Shape& shape, Device where) const {
  // A malformed node may declare fewer outputs than its op writes (found by fuzz_session: a MaxPool with none).
  if (i < 0 || static_cast<size_t>(i) >= outputs.size())
    throw error("has " + std::to_string(outputs.size()) + " outputs; its op writes output " + std::to_string(i),
                ErrorCode::InvalidGraph);
  for (int64_t d : shape)
    if (d < 0) throw error("computed a negative output dimension " + shape_string(shape));
  const bool strings = dtype == DType::String;
  if (strings && where != Device::CPU)
    throw error(output_what(i, dtype, shape) + ": string tensors live on the host; this kernel runs on the device",
                ErrorCode::Fail);
  uint64_t bytes = strings ? sizeof(std::string) : dtype_size(dtype);  // a string's own characters not counted
  for (int64_t d : shape)
    if (__builtin_mul_overflow(bytes, static_cast<uint64_t>(d), &bytes))
      throw error(output_what(i, dtype, shape) + " has a size that overflows 64 bits", ErrorCode::RuntimeError);
  if (max_tensor_bytes != 0 && bytes > max_tensor_bytes)
    throw error(output_what(i, dtype, shape) + " would take " + std::to_string(bytes) +
                    " bytes, more than the session's cap of " + std::to_string(max_tensor_bytes) +
                    " (SessionOptions max_tensor_bytes)",
                ErrorCode::RuntimeError);
  return bytes;
}

bool KernelContext::may_write_over(int from, DType dtype, const Shape& shape) const {
  if (from < 0 || static_cast<size_t>(from) >= donatable.size() || !donatable[from] || !inputs[from]) return false;
  const Tensor& x = *inputs[from];
  // The same element count and element size: the input is not broadcast, so element j is read only to write j.
  return dtype != DType::String && x.dtype() != DType::String && x.numel() > 0 && x.numel() == shape_numel(shape) &&
         dtype_size(x.dtype()) == dtype_size(dtype);
}

Tensor& KernelContext::output_over_input(int i, int from, DType dtype, Shape shape) {
  if (i >= 0 && static_cast<size_t>(i) < outputs.size() && may_write_over(from, dtype, shape)) {
    check_output(i, dtype, shape);
    outputs[i] = Tensor::over(dtype, std::move(shape), inputs[from]->buffer());
    return outputs[i];
  }
  return output(i, dtype, std::move(shape));
}

std::string KernelContext::output_what(int i, DType dtype, const Shape& shape) const {
  return "output " + std::to_string(i) + " (" + dtype_name(dtype) + shape_string(shape) + ")";
}

Tensor& KernelContext::output(int i, DType dtype, Shape shape) {
  const uint64_t bytes = check_output(i, dtype, shape);
  if (dtype == DType::String) return outputs.at(i) = Tensor::strings(std::move(shape));
  const std::string what = output_what(i, dtype, shape);
  std::shared_ptr<Buffer> buffer;
  try {
    buffer = allocator->allocate(static_cast<size_t>(bytes));
  } catch (const std::bad_alloc&) {
    throw error("out of memory allocating " + what + ", " + std::to_string(bytes) + " bytes", ErrorCode::RuntimeError);
  } catch (const Error& e) {  // the allocator's own out-of-memory report: add the node
    throw error(what + ": " + e.what(), ErrorCode::RuntimeError);
  }
  outputs.at(i) = Tensor::over(dtype, std::move(shape), std::move(buffer));
  return outputs[i];
}

Tensor& KernelContext::host_string_output(int i, Shape shape) {
  check_output_on(i, DType::String, shape, Device::CPU);
  return outputs.at(i) = Tensor::strings(std::move(shape));
}

void require_float(const KernelContext& ctx, const Tensor& t, const std::string& what) {
  if (t.dtype() != DType::Float)
    throw ctx.error(what + " of type " + dtype_name(t.dtype()) + ": only float32, float16 and bfloat16 are supported",
                    ErrorCode::NotImplemented);
}

}  // namespace lockstep
