// Tensor, dtype and shape helpers of the public API.
#include "lockstep/tensor.h"

#include <cstdlib>
#include <algorithm>
#include <cstring>

#include "lockstep/error.h"

namespace lockstep {

size_t dtype_size(DType t) {
  switch (t) {
    case DType::Float: case DType::Int32: case DType::UInt32: return 4;
    case DType::Int64: case DType::UInt64: case DType::Double: return 8;
    case DType::Int16: case DType::UInt16: case DType::Float16: case DType::BFloat16: return 2;
    case DType::Int8: case DType::UInt8: case DType::Bool: return 1;
    case DType::Float8E4M3FN: case DType::Float8E4M3FNUZ: case DType::Float8E5M2: case DType::Float8E5M2FNUZ:
    case DType::UInt4: case DType::Int4: case DType::Float4E2M1: case DType::UInt2: case DType::Int2:
    case DType::Float8E8M0: return 1;
    default: return 0;
  }
}

int dtype_bits(DType t) {
  switch (t) {
    case DType::UInt4: case DType::Int4: case DType::Float4E2M1: return 4;
    case DType::UInt2: case DType::Int2: return 2;
    default: return 8 * static_cast<int>(dtype_size(t));
  }
}

const char* dtype_name(DType t) {
  switch (t) {
    case DType::Float: return "float";
    case DType::UInt8: return "uint8";
    case DType::Int8: return "int8";
    case DType::UInt16: return "uint16";
    case DType::Int16: return "int16";
    case DType::Int32: return "int32";
    case DType::Int64: return "int64";
    case DType::String: return "string";
    case DType::Bool: return "bool";
    case DType::Float16: return "float16";
    case DType::Double: return "double";
    case DType::UInt32: return "uint32";
    case DType::UInt64: return "uint64";
    case DType::BFloat16: return "bfloat16";
    case DType::Float8E4M3FN: return "float8e4m3fn";
    case DType::Float8E4M3FNUZ: return "float8e4m3fnuz";
    case DType::Float8E5M2: return "float8e5m2";
    case DType::Float8E5M2FNUZ: return "float8e5m2fnuz";
    case DType::UInt4: return "uint4";
    case DType::Int4: return "int4";
    case DType::Float4E2M1: return "float4e2m1";
    case DType::Float8E8M0: return "float8e8m0";
    case DType::UInt2: return "uint2";
    case DType::Int2: return "int2";
    default: break;
  }
  // ONNX element types lockstep has no DType for, so that errors name what a model asked for.
  switch (static_cast<int>(t)) {
    case 14: return "complex64";
    case 15: return "complex128";
    default: return "undefined";
  }
}

bool dtype_supported(DType t) {
  switch (t) {
    case DType::Float: case DType::Double: case DType::Int8: case DType::UInt8: case DType::Int16:
    case DType::UInt16: case DType::Int32: case DType::UInt32: case DType::Int64: case DType::UInt64:
    case DType::Bool: return true;
    default: return false;
  }
}

int64_t shape_numel(const Shape& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

std::string shape_string(const Shape& s) {
  std::string out = "[";
  for (size_t i = 0; i < s.size(); ++i) out += (i ? "," : "") + std::to_string(s[i]);
  return out + "]";
}

namespace {
void check_dims(const Shape& shape) {
  for (int64_t d : shape)
    if (d < 0) throw Error(ErrorCode::InvalidArgument, "negative dimension in shape " + shape_string(shape));
}

std::shared_ptr<Buffer> host_buffer(size_t bytes) {
  auto buf = std::make_shared<Buffer>();
  // 64-byte alignment for AVX-512 loads; at least one byte so empty tensors still have an address.
  size_t rounded = (bytes + 63) / 64 * 64;
  void* p = std::aligned_alloc(64, rounded ? rounded : 64);
  if (!p) throw Error(ErrorCode::RuntimeError, "out of host memory allocating " + std::to_string(bytes) + " bytes");
  buf->data = p;
  buf->bytes = bytes;
  buf->device = Device::CPU;
  buf->owner = std::shared_ptr<void>(p, std::free);
  return buf;
}
}  // namespace

Tensor Tensor::empty(DType dtype, Shape shape) {
  check_dims(shape);
  if (dtype == DType::String) return strings(std::move(shape));
  size_t bytes = static_cast<size_t>(shape_numel(shape)) * dtype_size(dtype);
  return over(dtype, std::move(shape), host_buffer(bytes));
}

Tensor Tensor::strings(Shape shape) {
  check_dims(shape);
  size_t n = static_cast<size_t>(shape_numel(shape));
  auto buf = std::make_shared<Buffer>();
  auto* elements = new std::string[n ? n : 1];  // one at least, so that an empty tensor still has an address
  buf->data = elements;
  buf->bytes = n * sizeof(std::string);
  buf->owner = std::shared_ptr<void>(elements, [](void* p) { delete[] static_cast<std::string*>(p); });
  return over(DType::String, std::move(shape), std::move(buf));
}

Tensor Tensor::from_bytes(DType dtype, Shape shape, const void* bytes) {
  if (dtype == DType::String) throw Error(ErrorCode::Fail, "Tensor::from_bytes of a string tensor");
  Tensor t = empty(dtype, std::move(shape));
  if (t.bytes()) std::memcpy(t.raw(), bytes, t.bytes());
  return t;
}

Tensor Tensor::over(DType dtype, Shape shape, std::shared_ptr<Buffer> buffer) {
  Tensor t;
  t.dtype_ = dtype;
  t.shape_ = std::move(shape);
  t.buffer_ = std::move(buffer);
  return t;
}

Tensor Tensor::wrap(DType dtype, Shape shape, void* data, Device device, int device_id, std::shared_ptr<void> owner) {
  check_dims(shape);
  auto buf = std::make_shared<Buffer>();
  buf->data = data;
  buf->bytes = static_cast<size_t>(shape_numel(shape)) * dtype_size(dtype);
  buf->device = device;
  buf->device_id = device == Device::CPU ? 0 : device_id;
  buf->owner = std::move(owner);
  return over(dtype, std::move(shape), std::move(buf));
}

namespace {

std::string value_kind(const Tensor& t) {
  if (t.is_sequence()) return "a sequence";
  if (t.is_map()) return std::string("a map(") + dtype_name(t.map_key()) + ", " + dtype_name(t.dtype()) + ")";
  return std::string("a ") + dtype_name(t.dtype()) + " tensor";
}

// The key type of a sequence's items: that of its maps (all the same), or Undefined for tensors.
DType items_map_key(DType element, const std::vector<Tensor>& items, DType map_key) {
  if (map_key == DType::Undefined && !items.empty()) map_key = items[0].map_key();
  const std::string holds = map_key == DType::Undefined ? std::string(dtype_name(element)) + " tensors"
                                                        : std::string("map(") + dtype_name(map_key) + ", " +
                                                              dtype_name(element) + ")";
  for (const Tensor& item : items)
    if (item.is_sequence() || item.dtype() != element || item.is_map() != (map_key != DType::Undefined) ||
        item.map_key() != map_key)
      throw Error(ErrorCode::InvalidArgument, "a sequence of " + holds + " cannot hold " + value_kind(item));
  return map_key;
}

template <typename Key>
bool ascending(const Tensor& keys) {
  const Key* k = keys.data<Key>();
  for (int64_t i = 1; i < keys.numel(); ++i)
    if (!(k[i - 1] < k[i])) return false;
  return true;
}

}  // namespace

Tensor Tensor::sequence(DType element, std::vector<Tensor> items, DType map_key) {
  Tensor t;
  t.dtype_ = element;
  t.map_key_ = items_map_key(element, items, map_key);
  t.items_ = std::make_shared<const std::vector<Tensor>>(std::move(items));
  return t;
}

const std::vector<Tensor>& Tensor::items() const {
  static const std::vector<Tensor> none;
  return is_sequence() ? *items_ : none;
}

Tensor Tensor::map(Tensor keys, Tensor values) {
  const bool plain = !keys.items_ && !values.items_ && keys.defined() && values.defined();
  if (!plain || keys.rank() != 1 || values.rank() != 1 || keys.numel() != values.numel() ||
      keys.device() != Device::CPU || values.device() != Device::CPU)
    throw Error(ErrorCode::InvalidArgument, "a map needs 1-D host tensors of keys and values of one length, got " +
                                                value_kind(keys) + shape_string(keys.shape()) + " and " +
                                                value_kind(values) + shape_string(values.shape()));
  if (keys.dtype() != DType::Int64 && keys.dtype() != DType::String)
    throw Error(ErrorCode::InvalidArgument, std::string("map keys must be int64 or string, not ") + dtype_name(keys.dtype()));
  if (!(keys.dtype() == DType::Int64 ? ascending<int64_t>(keys) : ascending<std::string>(keys)))
    throw Error(ErrorCode::InvalidArgument, "map keys must be in ascending order, each once");
  Tensor t;
  t.dtype_ = values.dtype();
  t.map_key_ = keys.dtype();
  t.is_map_ = true;
  t.items_ = std::make_shared<const std::vector<Tensor>>(std::vector<Tensor>{std::move(keys), std::move(values)});
  return t;
}

const Tensor& Tensor::map_keys() const {
  if (!is_map_) throw Error(ErrorCode::InvalidArgument, "map_keys() of " + value_kind(*this));
  return (*items_)[0];
}

const Tensor& Tensor::map_values() const {
  if (!is_map_) throw Error(ErrorCode::InvalidArgument, "map_values() of " + value_kind(*this));
  return (*items_)[1];
}

Tensor Tensor::reshaped(Shape shape) const {
  if (shape_numel(shape) != numel())
    throw Error(ErrorCode::InvalidArgument, "cannot reshape " + shape_string(shape_) + " to " + shape_string(shape));
  return over(dtype_, std::move(shape), buffer_);
}

Tensor Tensor::clone() const {
  if (is_map_) return map(map_keys().clone(), map_values().clone());
  if (is_sequence()) {
    std::vector<Tensor> copies;
    for (const Tensor& item : *items_) copies.push_back(item.clone());
    return sequence(dtype_, std::move(copies), map_key_);
  }
  if (device() != Device::CPU) throw Error(ErrorCode::Fail, "Tensor::clone of a device tensor");
  if (dtype_ != DType::String) return from_bytes(dtype_, shape_, raw());
  Tensor t = strings(shape_);
  std::copy_n(data<std::string>(), numel(), t.data<std::string>());
  return t;
}

int64_t Tensor::int_at(int64_t i) const {
  if (device() != Device::CPU) throw Error(ErrorCode::Fail, "int_at on a device tensor");
  switch (dtype_) {
    case DType::Int64: return data<int64_t>()[i];
    case DType::Int32: return data<int32_t>()[i];
    case DType::UInt64: return static_cast<int64_t>(data<uint64_t>()[i]);
    case DType::UInt32: return data<uint32_t>()[i];
    case DType::Int16: return data<int16_t>()[i];
    case DType::UInt16: return data<uint16_t>()[i];
    case DType::Int8: return data<int8_t>()[i];
    case DType::UInt8: case DType::Bool: return data<uint8_t>()[i];
    case DType::Float: return static_cast<int64_t>(data<float>()[i]);
    case DType::Double: return static_cast<int64_t>(data<double>()[i]);
    default: throw Error(ErrorCode::InvalidArgument, std::string("expected an integer tensor, got ") + dtype_name(dtype_));
  }
}

std::vector<int64_t> Tensor::to_ints() const {
  std::vector<int64_t> v(static_cast<size_t>(numel()));
  for (int64_t i = 0; i < numel(); ++i) v[i] = int_at(i);
  return v;
}

}  // namespace lockstep
