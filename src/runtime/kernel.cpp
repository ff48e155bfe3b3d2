#include "runtime/kernel.h"

namespace lockstep {

const Tensor& KernelContext::input(int i) const {
  if (!has_input(i)) throw error("required input " + std::to_string(i) + " is missing", ErrorCode::InvalidGraph);
  return *inputs[i];
}

Tensor KernelContext::host_input(int i) const {
  const Tensor& t = input(i);
  return t.device() == Device::CPU ? t : to_host(t);
}

Tensor& KernelContext::output(int i, DType dtype, Shape shape) {
  for (int64_t d : shape)
    if (d < 0) throw error("computed a negative output dimension " + shape_string(shape));
  size_t bytes = static_cast<size_t>(shape_numel(shape)) * dtype_size(dtype);
  outputs.at(i) = Tensor::over(dtype, std::move(shape), allocator->allocate(bytes));
  return outputs[i];
}

}  // namespace lockstep
