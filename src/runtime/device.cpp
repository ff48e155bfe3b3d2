// lockstep/device.h: CUDA tensors outside a session and copies between places, on the primitives of provider.h.
#include "lockstep/device.h"

#include <cstdio>
#include <cstring>

#include "lockstep/error.h"
#include "runtime/provider.h"

namespace lockstep {

namespace {

std::string typed_shape(const Tensor& t) {
  return std::string("tensor(") + dtype_name(t.dtype()) + ")" + shape_string(t.shape());
}

std::string pointer_text(const void* p) {
  char text[32];
  std::snprintf(text, sizeof text, "%p", p);
  return text;
}

}  // namespace

std::string device_string(Device device, int device_id) {
  return device == Device::CPU ? "cpu" : "cuda:" + std::to_string(device_id);
}

Tensor cuda_empty(DType dtype, Shape shape, int device_id) {
  Tensor unbacked = Tensor::wrap(dtype, std::move(shape), nullptr, Device::CUDA, device_id, nullptr);  // checks dims
  return Tensor::over(dtype, unbacked.shape(), cuda_buffer(unbacked.bytes(), device_id));
}

Tensor copy_to_host(const Tensor& t) {
  Tensor out = Tensor::empty(t.dtype(), t.shape());
  copy_into(t, out);
  return out;
}

Tensor copy_to_cuda(const Tensor& t, int device_id) {
  Tensor out = cuda_empty(t.dtype(), t.shape(), device_id);
  copy_into(t, out);
  return out;
}

void copy_into(const Tensor& src, const Tensor& dst) {
  if (!src.defined() || !dst.defined()) throw Error(ErrorCode::InvalidArgument, "copy_into needs two defined tensors");
  if (src.dtype() != dst.dtype() || src.shape() != dst.shape())
    throw Error(ErrorCode::InvalidArgument, "cannot copy a " + typed_shape(src) + " into a " + typed_shape(dst) +
                                                ": the types and shapes must be the same");
  if (src.bytes() == 0 || src.raw() == dst.raw()) return;
  if (src.device() == Device::CPU && dst.device() == Device::CPU)
    std::memcpy(const_cast<void*>(dst.raw()), src.raw(), src.bytes());
  else
    copy_device_bytes(const_cast<void*>(dst.raw()), src.raw(), src.bytes());
}

Tensor wrap_memory(DType dtype, Shape shape, void* data, Device device, int device_id, std::shared_ptr<void> owner) {
  Tensor t = Tensor::wrap(dtype, std::move(shape), data, device, device_id, std::move(owner));
  if (t.bytes() == 0) return t;
  if (!data) throw Error(ErrorCode::InvalidArgument, "a null pointer for a tensor of " + std::to_string(t.bytes()) + " bytes");
  if (device == Device::CPU && !cuda_available()) return t;
  Device actual = Device::CPU;
  int actual_id = 0;
  cuda_pointer_location(data, actual, actual_id);
  if (actual != device || (device == Device::CUDA && actual_id != device_id))
    throw Error(ErrorCode::InvalidArgument, "the memory at " + pointer_text(data) + " is " +
                                                (actual == Device::CPU ? std::string("host memory")
                                                                       : "memory of " + device_string(actual, actual_id)) +
                                                ", not memory of " + device_string(device, device_id));
  return t;
}

void synchronize_device(Device device, int device_id) {
  if (device == Device::CUDA) cuda_synchronize_device(device_id);
}

}  // namespace lockstep
