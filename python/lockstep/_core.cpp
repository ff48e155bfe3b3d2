// The native half of the Python package: Session, tensors to and from numpy, and exception classes.
// The onnxruntime-compatible API (InferenceSession, NodeArg...) is built on this in lockstep/__init__.py.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/map.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstring>

#include "lockstep/session.h"

namespace nb = nanobind;
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

DType dtype_of(const AnyArray& a, const std::string& name) {
  nb::dlpack::dtype d = a.dtype();
  for (const auto& m : kDTypes)
    if (static_cast<uint8_t>(m.code) == d.code && m.bits == d.bits && d.lanes == 1) return m.dtype;
  throw Error(ErrorCode::InvalidArgument, "input '" + name + "' has a numpy dtype lockstep does not support");
}

Tensor tensor_from_numpy(const AnyArray& a, const std::string& name) {
  Shape shape;
  for (size_t i = 0; i < a.ndim(); ++i) shape.push_back(static_cast<int64_t>(a.shape(i)));
  return Tensor::from_bytes(dtype_of(a, name), shape, a.data());
}

nb::object tensor_to_numpy(const Tensor& t) {
  for (const auto& m : kDTypes) {
    if (m.dtype != t.dtype()) continue;
    auto* owner = new Tensor(t);
    nb::capsule keep(owner, [](void* p) noexcept { delete static_cast<Tensor*>(p); });
    std::vector<size_t> shape(t.shape().begin(), t.shape().end());
    nb::dlpack::dtype d{static_cast<uint8_t>(m.code), static_cast<uint8_t>(m.bits), 1};
    return nb::cast(nb::ndarray<nb::numpy>(owner->raw(), shape.size(), shape.data(), keep, nullptr, d));
  }
  throw Error(ErrorCode::NotImplemented, std::string("cannot return a tensor of type ") + dtype_name(t.dtype()));
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

nb::list infos(const std::vector<ValueInfo>& values) {
  nb::list out;
  for (const auto& v : values) out.append(nb::make_tuple(v.name, std::string(dtype_name(v.dtype)), dims_of(v)));
  return out;
}

SessionOptions options_from(const nb::dict& d) {
  SessionOptions o;
  if (d.contains("provider")) o.provider = nb::cast<std::string>(d["provider"]) == "cuda" ? Device::CUDA : Device::CPU;
  if (d.contains("device_id")) o.device_id = nb::cast<int>(d["device_id"]);
  if (d.contains("intra_op_num_threads")) o.intra_op_num_threads = nb::cast<int>(d["intra_op_num_threads"]);
  if (d.contains("graph_optimization_level")) o.graph_optimization_level = nb::cast<int>(d["graph_optimization_level"]);
  if (d.contains("log_severity_level")) o.log_severity_level = nb::cast<int>(d["log_severity_level"]);
  if (d.contains("enable_profiling")) o.enable_profiling = nb::cast<bool>(d["enable_profiling"]);
  if (d.contains("profile_file_prefix")) o.profile_file_prefix = nb::cast<std::string>(d["profile_file_prefix"]);
  if (d.contains("disable_cpu_fallback")) o.disable_cpu_fallback = nb::cast<bool>(d["disable_cpu_fallback"]);
  if (d.contains("free_dimension_overrides_by_name"))
    o.free_dimension_overrides_by_name = nb::cast<std::map<std::string, int64_t>>(d["free_dimension_overrides_by_name"]);
  if (d.contains("free_dimension_overrides_by_denotation"))
    o.free_dimension_overrides_by_denotation =
        nb::cast<std::map<std::string, int64_t>>(d["free_dimension_overrides_by_denotation"]);
  return o;
}

nb::list run_session(Session& s, const std::vector<std::string>& names, const nb::dict& feeds) {
  std::map<std::string, Tensor> tensors;
  for (auto [key, value] : feeds) {
    std::string name = nb::cast<std::string>(key);
    tensors[name] = tensor_from_numpy(nb::cast<AnyArray>(value), name);
  }
  std::vector<Tensor> outputs;
  {
    nb::gil_scoped_release release;
    outputs = s.run(tensors, names);
  }
  nb::list result;
  for (const auto& t : outputs) result.append(tensor_to_numpy(t));
  return result;
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
      .def("run", &run_session);

  m.def("available_providers", &available_providers);
  m.def("built_with_cuda", [] { return LOCKSTEP_WITH_CUDA != 0; });
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
