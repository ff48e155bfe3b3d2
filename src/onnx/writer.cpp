// Serializes the in-memory model back to onnx.proto bytes: the graph a session runs, after its rewrites
// (SessionOptions::optimized_model_filepath). Tensors are written inline (raw_data, or string_data for strings),
// except initializers an ExternalWrite sends to its file, so the file does not depend on the original's external data.
#include <filesystem>
#include <fstream>

#include "onnx/model.h"
#include "onnx/packed.h"

namespace lockstep::onnx {

namespace {

// A protobuf message being built: fields appended in order, nested messages as length-delimited bytes.
class Message {
 public:
  Message& varint(uint32_t field, uint64_t v) {
    key(field, 0);
    put_varint(v);
    return *this;
  }
  Message& bytes(uint32_t field, const std::string& s) { return bytes(field, s.data(), s.size()); }
  Message& bytes(uint32_t field, const void* data, size_t size) {
    key(field, 2);
    put_varint(size);
    out_.append(static_cast<const char*>(data), size);
    return *this;
  }
  Message& message(uint32_t field, const Message& m) { return bytes(field, m.out_); }
  Message& fixed32(uint32_t field, float f) {
    key(field, 5);
    out_.append(reinterpret_cast<const char*>(&f), 4);  // little-endian host (asserted by the reader)
    return *this;
  }
  // Strings a message has only when set: proto3 leaves empty fields out.
  Message& text(uint32_t field, const std::string& s) { return s.empty() ? *this : bytes(field, s); }
  const std::string& str() const { return out_; }

 private:
  void key(uint32_t field, int wire) { put_varint((uint64_t{field} << 3) | wire); }
  void put_varint(uint64_t v) {
    while (v >= 0x80) {
      out_.push_back(static_cast<char>((v & 0x7f) | 0x80));
      v >>= 7;
    }
    out_.push_back(static_cast<char>(v));
  }
  std::string out_;
};

// TensorProto fields.
enum : uint32_t {
  kDims = 1, kDataType = 2, kStringData = 6, kTensorName = 8, kRawData = 9, kExternalData = 13, kDataLocation = 14
};

Message tensor_header(const Tensor& t, const std::string& name) {
  if (t.device() != Device::CPU) throw Error(ErrorCode::Fail, "tensor '" + name + "' is not on the host");
  Message m;
  for (int64_t d : t.shape()) m.varint(kDims, static_cast<uint64_t>(d));
  m.varint(kDataType, static_cast<uint64_t>(t.dtype()));
  m.text(kTensorName, name);
  return m;
}

// The bytes ONNX stores for t: its own, or a packed copy for the sub-byte types (onnx/packed.h).
struct StoredBytes {
  std::vector<uint8_t> packed;
  const void* data;
  size_t size;
  explicit StoredBytes(const Tensor& t) : data(t.raw()), size(t.bytes()) {
    if (dtype_bits(t.dtype()) >= 8) return;
    packed = pack(static_cast<const uint8_t*>(t.raw()), static_cast<uint64_t>(t.numel()), dtype_bits(t.dtype()));
    data = packed.data();
    size = packed.size();
  }
};

Message tensor_message(const Tensor& t, const std::string& name) {
  Message m = tensor_header(t, name);
  if (t.dtype() == DType::String) {
    for (int64_t i = 0; i < t.numel(); ++i) m.bytes(kStringData, t.data<std::string>()[i]);
  } else {
    StoredBytes stored(t);
    m.bytes(kRawData, stored.data, stored.size);
  }
  return m;
}

// The external data file of an ExternalWrite: initializers are appended to it as the graphs are serialized. They
// go to a temporary file renamed over the target at the end, because the model being written may be the one the
// session loaded, its tensors mapped from the target: truncating that would destroy the data being written.
class ExternalFile {
 public:
  ExternalFile(const ExternalWrite& spec, const std::string& model_path) : spec_(spec) {
    if (std::filesystem::path(spec.file_name).is_absolute())
      throw Error(ErrorCode::InvalidArgument, "the optimized model's external initializers file '" + spec.file_name +
                                                  "' must be a path relative to the model's folder");
    path_ = (std::filesystem::path(model_path).parent_path() / spec.file_name).string();
    temp_ = path_ + ".lockstep-partial";
    out_.open(temp_, std::ios::binary | std::ios::trunc);
    if (!out_) throw Error(ErrorCode::NoSuchFile, "cannot open '" + temp_ + "' to write the external initializers");
  }
  ExternalFile(const ExternalFile&) = delete;
  ExternalFile& operator=(const ExternalFile&) = delete;
  ~ExternalFile() {
    std::error_code ec;  // a destructor must not throw; a leftover temporary is harmless
    if (!done_) std::filesystem::remove(temp_, ec);
  }

  // Strings stay inline: onnx keeps them in string_data, never in external files.
  bool takes(const Tensor& t) const { return t.dtype() != DType::String && t.bytes() >= spec_.min_bytes; }

  Message tensor_message(const Tensor& t, const std::string& name) {
    Message m = tensor_header(t, name);
    entry(m, "location", spec_.file_name);
    entry(m, "offset", std::to_string(offset_));
    StoredBytes stored(t);
    entry(m, "length", std::to_string(stored.size));
    m.varint(kDataLocation, 1);
    out_.write(static_cast<const char*>(stored.data), static_cast<std::streamsize>(stored.size));
    offset_ += stored.size;
    return m;
  }

  void commit() {
    out_.close();
    if (!out_) throw Error(ErrorCode::Fail, "writing the external initializers to '" + temp_ + "' failed");
    std::error_code ec;
    std::filesystem::rename(temp_, path_, ec);
    if (ec) throw Error(ErrorCode::Fail, "renaming '" + temp_ + "' to '" + path_ + "' failed: " + ec.message());
    done_ = true;
  }

 private:
  static void entry(Message& m, const char* key, const std::string& value) {
    m.message(kExternalData, Message().bytes(1, key).bytes(2, value));
  }

  const ExternalWrite& spec_;
  std::string path_, temp_;
  std::ofstream out_;
  uint64_t offset_ = 0;
  bool done_ = false;
};

Message graph_message(const Graph& g, ExternalFile* external);

Message attribute_message(const Node& n, const Attribute& a, ExternalFile* external) {
  Message m;
  // The reader keeps a Constant's sparse_value densified; a dense `value` holds the same elements.
  const bool densified = n.op_type == "Constant" && a.name == "sparse_value";
  m.bytes(1, densified ? std::string("value") : a.name);
  switch (a.type) {
    case Attribute::Float: m.fixed32(2, a.f); break;
    case Attribute::Int: m.varint(3, static_cast<uint64_t>(a.i)); break;
    case Attribute::String: m.bytes(4, a.s); break;
    case Attribute::TensorT: m.message(5, tensor_message(a.t, "")); break;
    case Attribute::GraphT: m.message(6, graph_message(*a.g, external)); break;
    case Attribute::Floats: for (float f : a.floats) m.fixed32(7, f); break;
    case Attribute::Ints: for (int64_t i : a.ints) m.varint(8, static_cast<uint64_t>(i)); break;
    case Attribute::Strings: for (const auto& s : a.strings) m.bytes(9, s); break;
    case Attribute::Tensors: for (const auto& t : a.tensors) m.message(10, tensor_message(t, "")); break;
    case Attribute::Graphs: for (const auto& sub : a.graphs) m.message(11, graph_message(*sub, external)); break;
    default:
      // sparse_tensors, tp and type_protos are read as a type code without their payload.
      throw n.error(ErrorCode::NotImplemented, "attribute '" + a.name + "' of type " + std::to_string(a.type) +
                                                   " cannot be written back (lockstep does not keep its value)");
  }
  m.varint(20, static_cast<uint64_t>(a.type));
  return m;
}

Message node_message(const Node& n, ExternalFile* external) {
  Message m;
  for (const auto& i : n.inputs) m.bytes(1, i);
  for (const auto& o : n.outputs) m.bytes(2, o);
  m.text(3, n.name).bytes(4, n.op_type);
  for (const auto& [name, a] : n.attributes) m.message(5, attribute_message(n, a, external));
  m.text(7, n.domain);
  return m;
}

Message value_info_message(const ValueInfo& v) {
  Message m;
  m.bytes(1, v.name);
  if (v.dtype != DType::Undefined) {
    Message tensor_type;
    tensor_type.varint(1, static_cast<uint64_t>(v.dtype));
    if (v.has_shape) {
      Message shape;
      for (const Dim& d : v.dims) {
        Message dim;
        if (d.value) dim.varint(1, static_cast<uint64_t>(*d.value));
        else dim.text(2, d.param);
        dim.text(3, d.denotation);
        shape.message(1, dim);
      }
      tensor_type.message(2, shape);
    }
    Message type = Message().message(1, tensor_type);
    if (v.map_key != DType::Undefined)
      type = Message().message(5, Message().varint(1, static_cast<uint64_t>(v.map_key)).message(2, type));
    if (v.sequence) type = Message().message(4, Message().message(1, type));
    if (v.optional) type = Message().message(9, Message().message(1, type));
    m.message(2, type);
  }
  m.text(3, v.doc_string);
  return m;
}

Message graph_message(const Graph& g, ExternalFile* external) {
  Message m;
  for (const auto& n : g.nodes) m.message(1, node_message(n, external));
  m.text(2, g.name);
  for (const auto& [name, t] : g.initializers)
    m.message(5, external && external->takes(t) ? external->tensor_message(t, name) : tensor_message(t, name));
  m.text(10, g.doc_string);
  for (const auto& v : g.inputs) m.message(11, value_info_message(v));
  for (const auto& v : g.outputs) m.message(12, value_info_message(v));
  for (const auto& v : g.value_info) m.message(13, value_info_message(v));
  return m;
}

std::string serialize(const Model& model, ExternalFile* external) {
  Message m;
  m.varint(1, static_cast<uint64_t>(model.ir_version));
  m.text(2, model.producer_name).text(3, model.producer_version).text(4, model.domain);
  if (model.model_version) m.varint(5, static_cast<uint64_t>(model.model_version));
  m.text(6, model.doc_string);
  m.message(7, graph_message(model.graph, external));
  for (const auto& o : model.opset_imports) m.message(8, Message().text(1, o.domain).varint(2, static_cast<uint64_t>(o.version)));
  for (const auto& [key, value] : model.metadata) m.message(14, Message().bytes(1, key).bytes(2, value));
  // protobuf refuses to parse a message of 2 GiB or more, so such a file would not load anywhere.
  if (m.str().size() >= (size_t{1} << 31))
    throw Error(ErrorCode::NotImplemented, "the optimized model takes " + std::to_string(m.str().size()) +
                                               " bytes; models of 2 GiB or more cannot be written (set "
                                               "session.optimized_model_external_initializers_file_name to move "
                                               "initializers out of it)");
  return m.str();
}

}  // namespace

std::string serialize_model(const Model& model) { return serialize(model, nullptr); }

void save_model_file(const Model& model, const std::string& path, const ExternalWrite& external) {
  std::optional<ExternalFile> file;
  if (!external.file_name.empty()) file.emplace(external, path);
  std::string bytes = serialize(model, file ? &*file : nullptr);
  if (file) file->commit();
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw Error(ErrorCode::NoSuchFile, "cannot open '" + path + "' to write the optimized model");
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out.flush()) throw Error(ErrorCode::Fail, "writing the optimized model to '" + path + "' failed");
}

}  // namespace lockstep::onnx
