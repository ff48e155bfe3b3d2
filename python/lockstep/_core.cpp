// The native half of the Python package: Session, tensors to and from numpy and DLPack, and exception classes.
// The onnxruntime-compatible API (InferenceSession, NodeArg...) is built on this in lockstep/__init__.py, and
// OrtValue / IOBinding on the Tensor class below in lockstep/_values.py.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/map.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <cstring>

#include "cpu/isa.h"
#include "lockstep/device.h"
#include "lockstep/session.h"

namespace nb = nanobind;
using namespace nb::literals;
using namespace lockstep;

namespace {

struct DTypeMap {
  DType dtype;
  nb::dlpack::dtype_code code;
  int bits;
};
constexpr DTypeMap kDTypes[] = {
    {DType::Float, nb::dlpack::dtype_code::Float, 32},   {DType::Double, nb::dlpack::dtype_code::Float, 64},
    {DType::Float16, nb::dlpack::dtype_code::Float, 16}, {DType::Int8, nb::dlpack::dtype_code::Int, 8},
    {DType::Int16, nb::dlpack::dtype_code::Int, 16},     {DType::Int32, nb::dlpack::dtype_code::Int, 32},
    {DType::Int64, nb::dlpack::dtype_code::Int, 64},     {DType::UInt8, nb::dlpack::dtype_code::UInt, 8},
    {DType::UInt16, nb::dlpack::dtype_code::UInt, 16},   {DType::UInt32, nb::dlpack::dtype_code::UInt, 32},
    {DType::UInt64, nb::dlpack::dtype_code::UInt, 64},   {DType::Bool, nb::dlpack::dtype_code::Bool, 8},
};

// Read-only arrays (np.frombuffer, numpy_helper.to_array) are valid feeds, as in onnxruntime.
using AnyArray = nb::ndarray<nb::ro, nb::numpy, nb::c_contig, nb::device::cpu>;

// The element types numpy has only through ml_dtypes (which onnx depends on): their numpy dtype names. DLPack has no
// code for most, so their arrays cross as unsigned integers of the same width (one byte, two for bfloat16) and are
// viewed back as the ml_dtypes type.
struct MlDType {
  DType dtype;
  const char* name;
};
constexpr MlDType kMlDTypes[] = {
    {DType::BFloat16, "bfloat16"},       {DType::Float8E4M3FN, "float8_e4m3fn"},
    {DType::Float8E4M3FNUZ, "float8_e4m3fnuz"}, {DType::Float8E5M2, "float8_e5m2"},
    {DType::Float8E5M2FNUZ, "float8_e5m2fnuz"}, {DType::UInt4, "uint4"},
    {DType::Int4, "int4"},               {DType::Float4E2M1, "float4_e2m1fn"},
    {DType::UInt2, "uint2"},             {DType::Int2, "int2"},
    {DType::Float8E8M0, "float8_e8m0fnu"},
};

const MlDType* ml_dtype_of(DType t) {
  for (const auto& m : kMlDTypes)
    if (m.dtype == t) return &m;
  return nullptr;
}

// The ml_dtypes type of a numpy array, or null for any other object.
const MlDType* ml_dtype_of_array(nb::handle obj) {
  // Looked up once and never released (the module outlives every call; a static nb::object would be released after
  // the interpreter is gone). Every run passes here once per feed, so the common case stays two attribute reads.
  static PyTypeObject* const ndarray = reinterpret_cast<PyTypeObject*>(
      nb::object(nb::module_::import_("numpy").attr("ndarray")).release().ptr());
  if (!PyObject_TypeCheck(obj.ptr(), ndarray)) return nullptr;
  nb::object dtype = obj.attr("dtype");
  // ml_dtypes' types are user-defined numpy dtypes (type numbers from NPY_USERDEF = 256 up); reading the name of a
  // built-in one would run numpy's Python code for dtype.name on every feed.
  if (nb::cast<int>(dtype.attr("num")) < 256) return nullptr;
  std::string name = nb::cast<std::string>(dtype.attr("name"));
  for (const auto& m : kMlDTypes)
    if (name == m.name) return &m;
  return nullptr;
}

// The unsigned numpy type as wide as an ml_dtypes element.
nb::object carrier_type(DType t) {
  return nb::module_::import_("numpy").attr(dtype_size(t) == 2 ? "uint16" : "uint8");
}

DType dtype_of_dlpack(nb::dlpack::dtype d, const std::string& what) {
  for (const auto& m : kDTypes)
    if (static_cast<uint8_t>(m.code) == d.code && m.bits == d.bits && d.lanes == 1) return m.dtype;
  throw Error(ErrorCode::InvalidArgument, what + " has an element type lockstep does not support (DLPack code " +
                                              std::to_string(d.code) + ", " + std::to_string(d.bits) + " bits)");
}

nb::dlpack::dtype dlpack_of(DType t) {
  for (const auto& m : kDTypes)
    if (m.dtype == t) return {static_cast<uint8_t>(m.code), static_cast<uint8_t>(m.bits), 1};
  throw Error(ErrorCode::NotImplemented, std::string("cannot return a tensor of type ") + dtype_name(t));
}

template <typename Array>
Shape shape_of_array(const Array& a) {
  Shape shape;
  for (size_t i = 0; i < a.ndim(); ++i) shape.push_back(static_cast<int64_t>(a.shape(i)));
  return shape;
}

Shape shape_of(const std::vector<int64_t>& dims) { return Shape(dims.begin(), dims.end()); }

// Keeps a Python object alive for as long as a Tensor uses its memory. The last Tensor may be dropped on a
// thread that does not hold the GIL (a run's worker), so the release takes it.
template <typename T>
std::shared_ptr<void> python_owner(T value) {
  return std::shared_ptr<void>(new T(std::move(value)), [](void* p) {
    if (!Py_IsInitialized()) return;  // at interpreter exit: leave it rather than touch a finalized runtime
    nb::gil_scoped_acquire gil;
    delete static_cast<T*>(p);
  });
}

Device device_named(const std::string& name) {
  if (name == "cpu") return Device::CPU;
  if (name == "cuda") return Device::CUDA;
  throw Error(ErrorCode::InvalidArgument, "unknown device '" + name + "' (lockstep has 'cpu' and 'cuda')");
}

const char* device_label(Device d) { return d == Device::CPU ? "cpu" : "cuda"; }

// A host array as a Tensor: over the array's own memory when `share` (the array is kept alive with it), else a copy.
// `what` names it in errors. An ml_dtypes array crosses as its unsigned carrier (see kMlDTypes).
Tensor tensor_over_numpy(nb::handle obj, bool share, const std::string& what) {
  const MlDType* ml = ml_dtype_of_array(obj);
  AnyArray a;
  if (!nb::try_cast<AnyArray>(ml ? obj.attr("view")(carrier_type(ml->dtype)) : nb::borrow(obj), a))
    throw nb::type_error((what + " is not a C-contiguous numpy array on the host").c_str());
  DType dtype = ml ? ml->dtype : dtype_of_dlpack(a.dtype(), what);
  if (!share) return Tensor::from_bytes(dtype, shape_of_array(a), a.data());
  return Tensor::wrap(dtype, shape_of_array(a), const_cast<void*>(a.data()), Device::CPU, 0, python_owner(a));
}

// Any object with __dlpack__ (torch, cupy, jax, numpy...) as a Tensor over its memory, which it keeps alive.
using DLPackArray = nb::ndarray<nb::ro>;

// A tensor without elements is contiguous whatever its strides say (numpy gives them as if the zero dims were 1).
bool c_contiguous(const DLPackArray& a) {
  if (a.size() == 0) return true;
  int64_t expected_stride = 1;
  for (size_t i = a.ndim(); i-- > 0;) {
    if (a.shape(i) != 1 && a.stride(i) != expected_stride) return false;
    expected_stride *= static_cast<int64_t>(a.shape(i));
  }
  return true;
}

// `as_bool`: uint8 elements are bools (onnxruntime's is_bool_tensor, for producers that export bools as uint8).
Tensor tensor_from_dlpack(const DLPackArray& a, bool as_bool) {
  int type = a.device_type();
  if (type != nb::device::cpu::value && type != nb::device::cuda::value && type != nb::device::cuda_managed::value)
    throw Error(ErrorCode::InvalidArgument, "from_dlpack: lockstep takes CPU and CUDA tensors, not DLPack device type " +
                                                std::to_string(type));
  if (!c_contiguous(a))
    throw Error(ErrorCode::InvalidArgument, "from_dlpack: the tensor is not C-contiguous (make it so first, e.g. "
                                            "with torch's .contiguous())");
  DType dtype = dtype_of_dlpack(a.dtype(), "from_dlpack: the tensor");
  if (as_bool && dtype != DType::UInt8 && dtype != DType::Bool)
    throw Error(ErrorCode::InvalidArgument, std::string("from_dlpack: is_bool_tensor needs uint8 or bool elements, the "
                                                        "tensor has ") + dtype_name(dtype));
  Device device = type == nb::device::cpu::value ? Device::CPU : Device::CUDA;
  return Tensor::wrap(as_bool ? DType::Bool : dtype, shape_of_array(a), const_cast<void*>(a.data()), device,
                      device == Device::CPU ? 0 : a.device_id(), python_owner(a));
}

// Whether a DLPack capsule holds uint8 elements, read without consuming the capsule (onnxruntime's
// is_dlpack_uint8_tensor, asked before from_dlpack takes it).
bool is_dlpack_uint8(nb::handle capsule) {
  auto* t = static_cast<const nb::dlpack::dltensor*>(PyCapsule_GetPointer(capsule.ptr(), "dltensor"));
  if (!t) {
    PyErr_Clear();
    throw nb::type_error("is_dlpack_uint8_tensor takes an unused DLPack capsule (\"dltensor\")");
  }
  return t->dtype.code == static_cast<uint8_t>(nb::dlpack::dtype_code::UInt) && t->dtype.bits == 8;
}

// A Tensor as a numpy array (host tensors) or, without a framework, a DLPack capsule (any device), over the tensor's
// memory, which the array or capsule keeps alive.
template <typename Framework>
nb::object tensor_as_array(const Tensor& t) {
  const MlDType* ml = ml_dtype_of(t.dtype());
  nb::dlpack::dtype d = ml ? nb::dlpack::dtype{static_cast<uint8_t>(nb::dlpack::dtype_code::UInt),
                                               static_cast<uint8_t>(8 * dtype_size(t.dtype())), 1}
                           : dlpack_of(t.dtype());
  auto* owner = new Tensor(t);
  nb::capsule keep(owner, [](void* p) noexcept { delete static_cast<Tensor*>(p); });
  std::vector<size_t> shape(t.shape().begin(), t.shape().end());
  int type = t.device() == Device::CPU ? nb::device::cpu::value : nb::device::cuda::value;
  return nb::cast(nb::ndarray<Framework>(owner->raw(), shape.size(), shape.data(), keep, nullptr, d, type, t.device_id()));
}

// A string tensor as onnxruntime returns one: a numpy object array of str (UTF-8 decoded).
nb::object strings_to_numpy(const Tensor& t) {
  nb::list items;
  const std::string* s = t.data<std::string>();
  for (int64_t i = 0; i < t.numel(); ++i) {
    PyObject* text = PyUnicode_DecodeUTF8(s[i].data(), static_cast<Py_ssize_t>(s[i].size()), "strict");
    if (!text) {
      PyErr_Clear();
      throw Error(ErrorCode::Fail, "string element " + std::to_string(i) + " is not valid UTF-8, so it cannot be "
                                   "returned as a Python str");
    }
    items.append(nb::steal(text));
  }
  nb::module_ np = nb::module_::import_("numpy");
  nb::object shape = nb::cast(std::vector<int64_t>(t.shape().begin(), t.shape().end()));
  return np.attr("array")(items, "dtype"_a = np.attr("object_")).attr("reshape")(shape);
}

nb::object tensor_to_numpy(const Tensor& t) {
  if (t.dtype() == DType::String) return strings_to_numpy(t);
  nb::object array = tensor_as_array<nb::numpy>(t);
  if (const MlDType* ml = ml_dtype_of(t.dtype())) return array.attr("view")(nb::module_::import_("ml_dtypes").attr(ml->name));
  return array;
}

// A host string tensor from the UTF-8 (or raw) bytes of each element, in row-major order.
Tensor tensor_from_strings(const std::vector<nb::bytes>& items, const std::vector<int64_t>& dims) {
  Tensor t = Tensor::strings(shape_of(dims));
  if (static_cast<int64_t>(items.size()) != t.numel())
    throw Error(ErrorCode::InvalidArgument, "from_strings: " + std::to_string(items.size()) + " strings for shape " +
                                                shape_string(t.shape()));
  std::string* out = t.data<std::string>();
  for (const auto& b : items) *out++ = std::string(b.c_str(), b.size());
  return t;
}

nb::object dims_of(const ValueInfo& v) {
  if (!v.has_shape) return nb::none();
  nb::list dims;
  for (size_t i = 0; i < v.dims.size(); ++i) {
    if (v.dims[i] >= 0)
      dims.append(v.dims[i]);
    else if (!v.dim_params[i].empty())
      dims.append(v.dim_params[i]);
    else
      dims.append(nb::none());
  }
  return dims;
}

// onnxruntime's spelling of a declared type: "tensor(float)", "seq(tensor(float))", "optional(seq(tensor(float)))",
// "map(string,tensor(float))", "seq(map(int64,tensor(float)))".
std::string type_string(const ValueInfo& v) {
  std::string type = "tensor(" + std::string(dtype_name(v.dtype)) + ")";
  if (v.map_key != DType::Undefined) type = "map(" + std::string(dtype_name(v.map_key)) + "," + type + ")";
  if (v.sequence) type = "seq(" + type + ")";
  return v.optional ? "optional(" + type + ")" : type;
}

nb::list infos(const std::vector<ValueInfo>& values) {
  nb::list out;
  for (const auto& v : values) out.append(nb::make_tuple(v.name, type_string(v), dims_of(v)));
  return out;
}

// In-memory external data files, by location: uint8 arrays that the options dict keeps alive while the session is
// created (it copies what it reads).
std::map<std::string, std::string_view> memory_files(nb::handle files) {
  std::map<std::string, std::string_view> out;
  for (auto [name, buffer] : nb::cast<nb::dict>(files)) {
    auto bytes = nb::cast<nb::ndarray<nb::ro, uint8_t, nb::ndim<1>, nb::c_contig, nb::device::cpu>>(buffer);
    out[nb::cast<std::string>(name)] = std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  }
  return out;
}

SessionOptions options_from(const nb::dict& d) {
  SessionOptions o;
  if (d.contains("provider")) o.provider = nb::cast<std::string>(d["provider"]) == "cuda" ? Device::CUDA : Device::CPU;
  if (d.contains("device_id")) o.device_id = nb::cast<int>(d["device_id"]);
  if (d.contains("intra_op_num_threads")) o.intra_op_num_threads = nb::cast<int>(d["intra_op_num_threads"]);
  if (d.contains("force_spinning_stop")) o.force_spinning_stop = nb::cast<bool>(d["force_spinning_stop"]);
  if (d.contains("graph_optimization_level")) o.graph_optimization_level = nb::cast<int>(d["graph_optimization_level"]);
  if (d.contains("log_severity_level")) o.log_severity_level = nb::cast<int>(d["log_severity_level"]);
  if (d.contains("enable_profiling")) o.enable_profiling = nb::cast<bool>(d["enable_profiling"]);
  if (d.contains("profile_file_prefix")) o.profile_file_prefix = nb::cast<std::string>(d["profile_file_prefix"]);
  if (d.contains("disable_cpu_fallback")) o.disable_cpu_fallback = nb::cast<bool>(d["disable_cpu_fallback"]);
  if (d.contains("initializers"))
    o.initializer_overrides = nb::cast<std::map<std::string, Tensor>>(d["initializers"]);
  if (d.contains("optimized_model_filepath"))
    o.optimized_model_filepath = nb::cast<std::string>(d["optimized_model_filepath"]);
  if (d.contains("optimized_model_external_initializers_file_name"))
    o.optimized_model_external_initializers_file_name =
        nb::cast<std::string>(d["optimized_model_external_initializers_file_name"]);
  if (d.contains("optimized_model_external_initializers_min_size_in_bytes"))
    o.optimized_model_external_initializers_min_size_in_bytes =
        nb::cast<uint64_t>(d["optimized_model_external_initializers_min_size_in_bytes"]);
  if (d.contains("external_initializers"))
    o.external_initializers = nb::cast<std::map<std::string, Tensor>>(d["external_initializers"]);
  if (d.contains("external_files_in_memory")) o.external_files_in_memory = memory_files(d["external_files_in_memory"]);
  if (d.contains("max_tensor_bytes")) o.max_tensor_bytes = nb::cast<size_t>(d["max_tensor_bytes"]);
  if (d.contains("max_cached_host_bytes")) o.max_cached_host_bytes = nb::cast<int64_t>(d["max_cached_host_bytes"]);
  if (d.contains("max_cached_device_bytes"))
    o.max_cached_device_bytes = nb::cast<int64_t>(d["max_cached_device_bytes"]);
  if (d.contains("free_dimension_overrides_by_name"))
    o.free_dimension_overrides_by_name = nb::cast<std::map<std::string, int64_t>>(d["free_dimension_overrides_by_name"]);
  if (d.contains("free_dimension_overrides_by_denotation"))
    o.free_dimension_overrides_by_denotation =
        nb::cast<std::map<std::string, int64_t>>(d["free_dimension_overrides_by_denotation"]);
  return o;
}

// A numpy feed is read in place, as onnxruntime reads it: the run's feed map holds it for the whole run, so no kernel
// takes its buffer over (Executor::run_kernel's donation needs the only reference), and the session's outputs never
// share memory with a feed (Session::run).
Tensor feed_tensor(nb::handle value, const std::string& what) {
  return nb::isinstance<Tensor>(value) ? nb::cast<Tensor>(value)  // string feeds, made by the package
                                       : tensor_over_numpy(value, true, what);
}

// A feed: an array or a map, or for an input declared seq(...) a list of them (the package has converted each item:
// a dict is a Tensor::map already).
Tensor feed_value(const Session& s, const std::string& name, nb::handle value) {
  if (!nb::isinstance<nb::list>(value)) return feed_tensor(value, "input '" + name + "'");
  auto it = std::find_if(s.inputs().begin(), s.inputs().end(), [&](const ValueInfo& v) { return v.name == name; });
  if (it == s.inputs().end() || !it->sequence)
    throw Error(ErrorCode::InvalidArgument, "input '" + name + "' is given a list, but it is not a sequence input");
  std::vector<Tensor> items;
  for (nb::handle item : nb::cast<nb::list>(value))
    items.push_back(feed_tensor(item, "item " + std::to_string(items.size()) + " of input '" + name + "'"));
  for (const Tensor& item : items)
    if (item.dtype() != it->dtype)
      throw Error(ErrorCode::InvalidArgument, "item of input '" + name + "' is " + dtype_name(item.dtype()) +
                                                  ", expected " + dtype_name(it->dtype) + " (" + type_string(*it) + ")");
  return Tensor::sequence(it->dtype, std::move(items), it->map_key);
}

// A map as onnxruntime's run() returns it: a dict of Python ints or strs to Python numbers or strs, in key order.
nb::dict map_to_dict(const Tensor& t) {
  nb::object keys = tensor_to_numpy(t.map_keys()).attr("tolist")();
  nb::object values = tensor_to_numpy(t.map_values()).attr("tolist")();
  nb::dict out;
  for (size_t i = 0, n = static_cast<size_t>(t.map_keys().numel()); i < n; ++i) out[keys[i]] = values[i];
  return out;
}

// An output as onnxruntime's run() returns it: a numpy array, a dict for a map, a list of either for a sequence,
// None for an empty optional.
nb::object output_value(const Tensor& t) {
  if (!t.defined()) return nb::none();
  if (t.is_map()) return map_to_dict(t);
  if (!t.is_sequence()) return tensor_to_numpy(t);
  nb::list items;
  for (const Tensor& item : t.items()) items.append(output_value(item));
  return items;
}

nb::list run_session(Session& s, const std::vector<std::string>& names, const nb::dict& feeds,
                     const RunOptions* run_options) {
  std::map<std::string, Tensor> tensors;
  for (auto [key, value] : feeds) {
    std::string name = nb::cast<std::string>(key);
    tensors[name] = feed_value(s, name, value);
  }
  std::vector<Tensor> outputs;
  {
    nb::gil_scoped_release release;
    size_t count = names.empty() ? s.outputs().size() : names.size();
    outputs = s.run(tensors, names, std::vector<Device>(count, Device::CPU), run_options);
  }
  nb::list result;
  for (const auto& t : outputs) result.append(output_value(t));
  return result;
}

// onnxruntime's OrtValueVector: what Session.run_with_ort_values returns.
struct OrtValueVector {
  std::vector<Tensor> values;
};

// OrtValues and bindings hold tensors: a sequence, map or empty optional output is refused, naming run() instead.
std::vector<Tensor> tensors_only(std::vector<Tensor> outputs) {
  for (const Tensor& t : outputs)
    if (t.is_sequence() || t.is_map() || !t.defined())
      throw Error(ErrorCode::NotImplemented, std::string("an output is ") +
                                                 (t.is_sequence() ? "a sequence" : t.is_map() ? "a map" : "an empty optional") +
                                                 ": OrtValues and IOBinding hold tensors here; use run() for it");
  return outputs;
}

// The flag object of a run: a _core.RunOptions, or the lockstep.RunOptions that holds one as _native.
const RunOptions* native_run_options(nb::handle options) {
  if (options.is_none()) return nullptr;
  nb::object native = nb::isinstance<RunOptions>(options) ? nb::borrow(options) : nb::getattr(options, "_native", nb::none());
  if (!nb::isinstance<RunOptions>(native))
    throw nb::type_error("run_options must be a lockstep.RunOptions");
  return nb::cast<const RunOptions*>(native);
}

// onnxruntime's native run_with_ort_values(feeds, output_names, run_options): outputs left on the session's device.
OrtValueVector run_with_ort_values(Session& s, const std::map<std::string, Tensor>& feeds,
                                   const std::vector<std::string>& names, nb::handle run_options) {
  const RunOptions* options = native_run_options(run_options);
  size_t count = names.empty() ? s.outputs().size() : names.size();
  nb::gil_scoped_release release;
  return {tensors_only(s.run(feeds, names, std::vector<Device>(count, s.options().provider), options))};
}

nb::list node_assignments(const Session& s) {
  nb::list out;
  for (const auto& a : s.node_assignments()) out.append(nb::make_tuple(a.name, a.op_type, a.domain, a.provider));
  return out;
}

// Session.run with Tensors in and out: each output on the host ("cpu") or left on the session's device ("cuda").
nb::list run_tensors(Session& s, const std::vector<std::string>& names, const std::map<std::string, Tensor>& feeds,
                     const std::vector<std::string>& places, const RunOptions* run_options) {
  std::vector<Device> devices;
  for (const auto& p : places) devices.push_back(device_named(p));
  std::vector<Tensor> outputs;
  {
    nb::gil_scoped_release release;
    outputs = tensors_only(s.run(feeds, names, devices, run_options));
  }
  nb::list result;
  for (const auto& t : outputs) result.append(nb::cast(t));
  return result;
}

void bind_tensor(nb::module_& m) {
  nb::class_<Tensor>(m, "Tensor")
      .def_static("from_numpy", [](nb::handle a, bool share) { return tensor_over_numpy(a, share, "the array"); })
      .def_static("from_dlpack", [](const DLPackArray& a, bool is_bool_tensor) { return tensor_from_dlpack(a, is_bool_tensor); },
                  nb::arg("data"), nb::arg("is_bool_tensor") = false)
      .def_static("from_strings", &tensor_from_strings)
      // A map feed from two 1-D tensors, keys in ascending order (the package sorts a dict's items).
      .def_static("map", [](const Tensor& keys, const Tensor& values) { return Tensor::map(keys, values); })
      .def_static("from_pointer", [](uintptr_t ptr, int dtype, const std::vector<int64_t>& shape,
                                     const std::string& device, int device_id) {
        return wrap_memory(static_cast<DType>(dtype), shape_of(shape), reinterpret_cast<void*>(ptr),
                           device_named(device), device_id, nullptr);
      })
      .def_static("empty", [](const std::vector<int64_t>& shape, int dtype, const std::string& device, int device_id) {
        Device d = device_named(device);
        return d == Device::CPU ? Tensor::empty(static_cast<DType>(dtype), shape_of(shape))
                                : cuda_empty(static_cast<DType>(dtype), shape_of(shape), device_id);
      })
      .def_prop_ro("dtype", [](const Tensor& t) { return static_cast<int>(t.dtype()); })
      // shape() and data_ptr() are methods, as on onnxruntime's native OrtValue.
      .def("shape", [](const Tensor& t) { return std::vector<int64_t>(t.shape().begin(), t.shape().end()); })
      .def_prop_ro("device", [](const Tensor& t) { return std::string(device_label(t.device())); })
      .def_prop_ro("device_id", &Tensor::device_id)
      .def("data_ptr", [](const Tensor& t) { return reinterpret_cast<uintptr_t>(t.raw()); })
      .def_prop_ro("nbytes", &Tensor::bytes)
      .def("numpy", [](const Tensor& t) {
        if (t.device() != Device::CPU) throw Error(ErrorCode::InvalidArgument, "numpy() of a device tensor: copy it to the host first");
        return tensor_to_numpy(t);
      })
      // A DLPack 0.x capsule ("dltensor"), which every consumer accepts; the protocol's arguments change nothing,
      // because lockstep finishes every write to a tensor before handing it out.
      .def("to_dlpack", &tensor_as_array<nb::no_framework>)
      .def("__dlpack__", [](const Tensor& t, const nb::kwargs&) { return tensor_as_array<nb::no_framework>(t); })
      .def("__dlpack_device__", [](const Tensor& t) {
        return t.device() == Device::CPU ? nb::make_tuple(1, 0) : nb::make_tuple(2, t.device_id());
      })
      .def("to_host", [](const Tensor& t) {
        nb::gil_scoped_release release;
        return copy_to_host(t);
      })
      .def("to_cuda", [](const Tensor& t, int device_id) {
        nb::gil_scoped_release release;
        return copy_to_cuda(t, device_id);
      })
      .def("copy_from", [](const Tensor& self, const Tensor& src) {
        nb::gil_scoped_release release;
        copy_into(src, self);
      });
  m.def("is_dlpack_uint8_tensor", &is_dlpack_uint8);
  nb::class_<OrtValueVector>(m, "OrtValueVector")
      .def(nb::init<>())
      .def("push_back", [](OrtValueVector& v, const Tensor& t) { v.values.push_back(t); })
      .def("clear", [](OrtValueVector& v) { v.values.clear(); })
      .def("__len__", [](const OrtValueVector& v) { return v.values.size(); })
      .def("__getitem__", [](const OrtValueVector& v, size_t i) {
        if (i >= v.values.size()) throw nb::index_error();
        return v.values[i];
      });
  m.def("synchronize_device", [](const std::string& device, int device_id) {
    nb::gil_scoped_release release;
    synchronize_device(device_named(device), device_id);
  });
}

nb::list typed_shapes_list(const std::vector<TypedShape>& shapes) {
  nb::list out;
  for (const auto& s : shapes) out.append(nb::make_tuple(s.dtype, s.dims));
  return out;
}

nb::list profile_events_list(const Session& s) {
  nb::list out;
  for (const auto& e : s.profile_events()) {
    nb::dict d;
    d["category"] = e.category;
    d["name"] = e.name;
    d["op_type"] = e.op_type;
    d["provider"] = e.provider;
    d["inputs"] = typed_shapes_list(e.inputs);
    d["outputs"] = typed_shapes_list(e.outputs);
    d["start_ns"] = e.start_ns;
    d["duration_ns"] = e.duration_ns;
    out.append(d);
  }
  return out;
}

}  // namespace

NB_MODULE(_core, m) {
  static nb::exception<Error> fail(m, "Fail", PyExc_RuntimeError);
  static nb::object classes[6];
  const char* names[] = {"Fail", "InvalidArgument", "NoSuchFile", "InvalidGraph", "NotImplemented", "RuntimeException"};
  classes[0] = fail;
  for (int i = 1; i < 6; ++i) {
    PyObject* cls = PyErr_NewException((std::string("lockstep._core.") + names[i]).c_str(), fail.ptr(), nullptr);
    classes[i] = nb::steal(cls);
    m.attr(names[i]) = classes[i];
  }
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const Error& e) {
      PyErr_SetString(classes[static_cast<int>(e.code())].ptr(), e.what());
    }
  });

  nb::class_<Session>(m, "Session")
      .def("__init__", [](Session* self, nb::bytes model, const nb::dict& opts) {
             new (self) Session(model.c_str(), model.size(), options_from(opts));
           })
      .def("__init__", [](Session* self, const std::string& path, const nb::dict& opts) {
             new (self) Session(path, options_from(opts));
           })
      .def("inputs", [](const Session& s) { return infos(s.inputs()); })
      .def("outputs", [](const Session& s) { return infos(s.outputs()); })
      .def("metadata", [](const Session& s) {
        const ModelMetadata& md = s.metadata();
        nb::dict d;
        d["producer_name"] = md.producer_name;
        d["graph_name"] = md.graph_name;
        d["domain"] = md.domain;
        d["description"] = md.description;
        d["graph_description"] = md.graph_description;
        d["version"] = md.version;
        d["custom_metadata_map"] = md.custom_metadata_map;
        d["opset_imports"] = md.opset_imports;
        return d;
      })
      .def("fallback_ops", &Session::fallback_ops)
      .def("profile_events", &profile_events_list)
      .def("end_profiling", &Session::end_profiling)
      .def("profiling_start_time_ns", &Session::profiling_start_time_ns)
      .def("run", &run_session, nb::arg("names"), nb::arg("feeds"), nb::arg("run_options").none() = nb::none())
      .def("node_assignments", &node_assignments)
      .def("run_with_ort_values", &run_with_ort_values, nb::arg("feeds"), nb::arg("output_names"),
           nb::arg("run_options").none() = nb::none())
      .def("run_tensors", &run_tensors, nb::arg("names"), nb::arg("feeds"), nb::arg("places"),
           nb::arg("run_options").none() = nb::none());
  // The flag a run polls between nodes and Loop/Scan iterations; Python's RunOptions.terminate sets it, from any thread.
  nb::class_<RunOptions>(m, "RunOptions")
      .def(nb::init<>())
      .def_prop_rw("terminate", [](const RunOptions& r) { return r.terminate.load(); },
                   [](RunOptions& r, bool v) { r.terminate.store(v); });
  bind_tensor(m);

  m.def("available_providers", &available_providers);
  m.def("supported_ops", [] {
    nb::list rows;
    for (const SupportedOp& o : supported_ops())
      rows.append(nb::make_tuple(o.family, o.op_type, o.since, o.until, o.cuda));
    return rows;
  });
  m.def("built_with_cuda", [] { return LOCKSTEP_WITH_CUDA != 0; });
  // The ISA the CPU kernels run (LOCKSTEP_CPU_ISA where this CPU has it) and the best one it has, for
  // tests/test_isa_invariance.py.
  m.def("cpu_isa", [] { return std::string(cpu::cpu_isa_name(cpu::cpu_isa())); });
  m.def("cpu_best_isa", [] { return std::string(cpu::cpu_isa_name(cpu::cpu_best_isa())); });
  m.def("summarize_model", [](const std::string& path) {
    ModelSummary s = summarize_model(path);
    nb::list ops;
    for (const auto& u : s.ops) ops.append(nb::make_tuple(u.op_type, u.domain, u.count, u.cpu, u.cuda));
    nb::dict d;
    d["inputs"] = infos(s.inputs);
    d["outputs"] = infos(s.outputs);
    d["producer_name"] = s.metadata.producer_name;
    d["graph_name"] = s.metadata.graph_name;
    d["opset_imports"] = s.metadata.opset_imports;
    d["ops"] = ops;
    return d;
  });
}
