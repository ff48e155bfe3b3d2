// lockstep public API: element types, shapes and tensors.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace lockstep {

/// Element types. The values are ONNX TensorProto.DataType codes, so they can be read off a model directly.
///
/// The low-precision types take one byte per element in memory (as ml_dtypes' numpy arrays do), even those that
/// ONNX packs several to a byte in a model (int4, uint4, float4e2m1: two; int2, uint2: four): the reader unpacks
/// them on load, each element's bit pattern in the low bits of its byte, the high bits zero. dtype_bits gives the
/// width ONNX stores.
enum class DType : int32_t {
  Undefined = 0,
  Float = 1,
  UInt8 = 2,
  Int8 = 3,
  UInt16 = 4,
  Int16 = 5,
  Int32 = 6,
  Int64 = 7,
  String = 8,
  Bool = 9,
  Float16 = 10,
  Double = 11,
  UInt32 = 12,
  UInt64 = 13,
  BFloat16 = 16,
  Float8E4M3FN = 17,
  Float8E4M3FNUZ = 18,
  Float8E5M2 = 19,
  Float8E5M2FNUZ = 20,
  UInt4 = 21,
  Int4 = 22,
  Float4E2M1 = 23,
  Float8E8M0 = 24,
  UInt2 = 25,
  Int2 = 26,
};

/// Bytes per element; 0 for Undefined and String (string tensors hold std::string objects, not bytes: see
/// Tensor::strings).
size_t dtype_size(DType t);
/// Bits per element as ONNX stores it in a model (4 for int4/uint4/float4e2m1, 2 for int2/uint2, else
/// 8*dtype_size).
int dtype_bits(DType t);
/// The onnxruntime spelling of a type, e.g. "float", "int64", "bool".
const char* dtype_name(DType t);
/// True for the types lockstep kernels compute on.
bool dtype_supported(DType t);

using Shape = std::vector<int64_t>;

/// Number of elements of a shape (1 for a scalar, 0 if any dim is 0).
int64_t shape_numel(const Shape& s);
/// "[1,3,224,224]".
std::string shape_string(const Shape& s);

/// Where memory lives.
enum class Device : int32_t { CPU = 0, CUDA = 1 };

/// A block of bytes owned by an allocator; freed (returned to its pool) when the last Tensor drops it.
struct Buffer {
  void* data = nullptr;
  size_t bytes = 0;
  Device device = Device::CPU;
  int device_id = 0;            // the CUDA ordinal of device memory; 0 on the host
  std::shared_ptr<void> owner;  // keeps the allocation alive; its deleter returns it to the pool (may be null for
                                // memory the caller keeps alive, see wrap())
};

/// A dense, row-major tensor. Copying a Tensor shares its buffer; use clone() for a deep copy.
class Tensor {
 public:
  Tensor() = default;
  /// An uninitialised host tensor of the given type and shape (for String: empty strings, as strings() makes).
  static Tensor empty(DType dtype, Shape shape);
  /// A host string tensor of empty strings: its data is numel std::string objects (data<std::string>()), which
  /// live on the host only. Copying elements (clone, kernels) copies the strings; bytes() is 0.
  static Tensor strings(Shape shape);
  /// A host tensor holding a copy of `bytes` (which must be numel*dtype_size long); not for String.
  static Tensor from_bytes(DType dtype, Shape shape, const void* bytes);
  /// A tensor of `dtype` and `shape` over an existing buffer (which must be large enough).
  static Tensor over(DType dtype, Shape shape, std::shared_ptr<Buffer> buffer);
  /// A tensor over memory that lockstep did not allocate (no copy): `data` on `device` (CUDA ordinal
  /// `device_id`), at least numel*dtype_size bytes. `owner` is kept with the tensor and released with its last
  /// copy; pass nullptr when the caller keeps the memory alive for as long as the tensor is used.
  /// Use lockstep::wrap_memory (lockstep/device.h) to have a CUDA pointer checked first.
  static Tensor wrap(DType dtype, Shape shape, void* data, Device device, int device_id, std::shared_ptr<void> owner);

  /// A sequence of tensors (ONNX seq(tensor(element))), as graph inputs and outputs and the sequence ops hold them.
  /// It shares its items' buffers and never changes (sequence ops make new sequences). It has no data of its own:
  /// dtype() is the items' element type, shape() is empty, raw() is null, and no kernel is given one. An item may be
  /// any tensor of the element type, on the device of the session that holds the sequence.
  ///
  /// A sequence of maps (ONNX seq(map(K, tensor(V))), what ZipMap makes) holds maps whose values are of type
  /// `element` and whose keys are all of one type: map_key() names it, `map_key` where given (needed for an empty
  /// sequence of maps), else the items'. Tensors and maps do not mix in one sequence.
  static Tensor sequence(DType element, std::vector<Tensor> items, DType map_key = DType::Undefined);
  bool is_sequence() const { return items_ != nullptr && !is_map_; }
  /// The items of a sequence; empty for a tensor or a map.
  const std::vector<Tensor>& items() const;

  /// A map (ONNX map(K, tensor(V))): `keys`, a 1-D host tensor of Int64 or String in strictly ascending order (each
  /// key once; strings compared bytewise), and `values`, a 1-D host tensor of the same length, entry i the value of
  /// key i. Keys are kept in order, as onnxruntime's maps are, so a map is read back (as a Python dict, say) in
  /// ascending key order whatever order it was built in. Like a sequence it holds its two tensors and never changes:
  /// dtype() is the values' type, map_key() the keys', shape() is empty and raw() null. Maps live on the host; only
  /// the kernels that take maps (DictVectorizer) read one. Throws InvalidArgument for keys out of order or repeated.
  static Tensor map(Tensor keys, Tensor values);
  bool is_map() const { return is_map_; }
  /// The key type of a map, or of the maps of a sequence of maps; Undefined otherwise.
  DType map_key() const { return map_key_; }
  /// A map's keys and values (throw InvalidArgument for any other value).
  const Tensor& map_keys() const;
  const Tensor& map_values() const;

  DType dtype() const { return dtype_; }
  const Shape& shape() const { return shape_; }
  int64_t dim(int i) const { return shape_[i < 0 ? i + rank() : i]; }
  int rank() const { return static_cast<int>(shape_.size()); }
  int64_t numel() const { return shape_numel(shape_); }
  size_t bytes() const { return static_cast<size_t>(numel()) * dtype_size(dtype_); }
  Device device() const { return buffer_ ? buffer_->device : Device::CPU; }
  /// The CUDA ordinal of a device tensor (0 for host tensors).
  int device_id() const { return buffer_ ? buffer_->device_id : 0; }
  bool defined() const { return dtype_ != DType::Undefined; }

  void* raw() { return buffer_ ? buffer_->data : nullptr; }
  const void* raw() const { return buffer_ ? buffer_->data : nullptr; }
  template <typename T> T* data() { return static_cast<T*>(raw()); }
  template <typename T> const T* data() const { return static_cast<const T*>(raw()); }

  const std::shared_ptr<Buffer>& buffer() const { return buffer_; }
  /// Same buffer, new shape with the same element count (Reshape, Flatten, Squeeze...).
  Tensor reshaped(Shape shape) const;
  /// A host deep copy (of every item, for a sequence; of keys and values, for a map).
  Tensor clone() const;

  /// Element i converted to int64 (host tensors of integer, bool or float type); used for shape inputs.
  int64_t int_at(int64_t i) const;
  /// All elements as int64 (host tensors only).
  std::vector<int64_t> to_ints() const;

 private:
  DType dtype_ = DType::Undefined;
  Shape shape_;
  std::shared_ptr<Buffer> buffer_;
  std::shared_ptr<const std::vector<Tensor>> items_;  // a sequence's items, or a map's {keys, values}
  bool is_map_ = false;
  DType map_key_ = DType::Undefined;  // a map's key type, or that of a sequence's maps
};

}  // namespace lockstep
