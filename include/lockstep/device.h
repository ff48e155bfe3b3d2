// lockstep public API: tensors on a CUDA device outside a session, and copies between the host and devices.
//
//   lockstep::Tensor x = lockstep::copy_to_cuda(host_x, 0);          // feed it to a CUDA session: no copy there
//   std::vector<lockstep::Tensor> y = session.run({{"x", x}}, {}, {lockstep::Device::CUDA});  // y stays on cuda:0
//   lockstep::Tensor host_y = lockstep::copy_to_host(y[0]);
//
// Every function here returns once its copy is complete, so the host may reuse or free the source right away.
// In a build without CUDA (LOCKSTEP_CUDA=OFF) the CUDA functions throw Error(NotImplemented); on a machine
// without a GPU they throw Error(RuntimeError).
#pragma once

#include <memory>
#include <string>

#include "lockstep/tensor.h"

namespace lockstep {

/// An uninitialised tensor on CUDA device `device_id`, in memory of its own (cudaMalloc, freed with the last copy
/// of the Tensor).
Tensor cuda_empty(DType dtype, Shape shape, int device_id = 0);

/// A new host tensor holding the values of `t` (a deep copy, also when `t` is on the host).
Tensor copy_to_host(const Tensor& t);

/// A new tensor on CUDA device `device_id` holding the values of `t` (from the host or any CUDA device).
Tensor copy_to_cuda(const Tensor& t, int device_id = 0);

/// Copies the bytes of `src` into the memory of `dst`, which must have the same dtype and shape; either may be on
/// the host or on any CUDA device. Throws Error(InvalidArgument) naming both shapes and types when they differ.
void copy_into(const Tensor& src, const Tensor& dst);

/// Tensor::wrap, after checking that `data` is memory of `device` (for CUDA: memory of ordinal `device_id`, as
/// cudaPointerGetAttributes reports it). Throws Error(InvalidArgument) saying where the memory really is.
Tensor wrap_memory(DType dtype, Shape shape, void* data, Device device, int device_id, std::shared_ptr<void> owner);

/// Waits until all work queued on CUDA device `device_id` (every stream, sessions' included) is complete; does
/// nothing for Device::CPU.
void synchronize_device(Device device, int device_id = 0);

/// "cpu" or "cuda:N".
std::string device_string(Device device, int device_id);

}  // namespace lockstep
