// The in-memory form of an ONNX model, as read by src/onnx/reader.cpp. It mirrors the onnx.proto messages the
// runtime uses; fields lockstep never reads are skipped by the reader.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lockstep/error.h"
#include "lockstep/tensor.h"

namespace lockstep::onnx {

struct Graph;

/// One dimension of a declared shape: a fixed size, a symbolic name, or unknown (both empty).
struct Dim {
  std::optional<int64_t> value;
  std::string param;
  std::string denotation;  // e.g. "DATA_BATCH"; only free-dimension overrides read it
};

/// TypeProto restricted to tensors, maps of tensors (map(K, tensor(V))), sequences of either and optionals: the
/// (element or map value) tensor's type and (optional) shape, and the wrappers around it. Opaque and sparse types
/// leave dtype Undefined.
struct ValueInfo {
  std::string name;
  DType dtype = DType::Undefined;  // a map's value type
  DType map_key = DType::Undefined;  // map(map_key, tensor(dtype)), or seq(map(...)) with `sequence`; Undefined: no map
  bool sequence = false;  // seq(tensor(dtype)): dims, if any, are each element's
  bool optional = false;  // optional(tensor(...)) or optional(seq(...)): may be fed or produced without a value
  bool has_shape = false;  // false: rank unknown
  std::vector<Dim> dims;
  std::string doc_string;
};

/// AttributeProto. `type` uses the onnx AttributeType codes.
struct Attribute {
  enum Type : int32_t {
    Undefined = 0, Float = 1, Int = 2, String = 3, TensorT = 4, GraphT = 5,
    Floats = 6, Ints = 7, Strings = 8, Tensors = 9, Graphs = 10,
  };
  std::string name;
  Type type = Undefined;
  float f = 0;
  int64_t i = 0;
  std::string s;
  Tensor t;
  std::shared_ptr<Graph> g;
  std::vector<float> floats;
  std::vector<int64_t> ints;
  std::vector<std::string> strings;
  std::vector<Tensor> tensors;
  std::vector<std::shared_ptr<Graph>> graphs;
};

/// NodeProto. Absent optional inputs/outputs are empty strings, as in ONNX.
struct Node {
  std::string name;
  std::string op_type;
  std::string domain;  // "" and "ai.onnx" both mean the default domain
  std::vector<std::string> inputs;
  std::vector<std::string> outputs;
  std::map<std::string, Attribute> attributes;
  /// The default-domain opset whose definition of the op this node follows: 0 for the graph's own (every node a
  /// model file has); another only for nodes that an expansion made (graph/expand.h), such as an opset-23
  /// Attention standing for a com.microsoft op in an older model.
  int64_t opset = 0;

  const Attribute* find(const std::string& attr) const;
  bool has(const std::string& attr) const { return find(attr) != nullptr; }
  // Typed attribute access. A present attribute of the wrong type throws InvalidGraph naming node and op.
  int64_t attr_int(const std::string& attr, int64_t fallback) const;
  float attr_float(const std::string& attr, float fallback) const;
  std::string attr_string(const std::string& attr, const std::string& fallback) const;
  std::vector<int64_t> attr_ints(const std::string& attr, std::vector<int64_t> fallback = {}) const;
  std::vector<float> attr_floats(const std::string& attr, std::vector<float> fallback = {}) const;
  std::vector<std::string> attr_strings(const std::string& attr, std::vector<std::string> fallback = {}) const;
  const Tensor* attr_tensor(const std::string& attr) const;
  const Graph* attr_graph(const std::string& attr) const;

  /// "Node 'conv1' (Conv)": the prefix of every error about this node.
  std::string label() const;
  /// An Error whose message starts with label().
  Error error(ErrorCode code, const std::string& message) const;
};

/// GraphProto.
struct Graph {
  std::string name;
  std::vector<Node> nodes;
  std::map<std::string, Tensor> initializers;  // includes sparse initializers once densified
  std::vector<ValueInfo> inputs;
  std::vector<ValueInfo> outputs;
  std::vector<ValueInfo> value_info;
  std::string doc_string;
};

struct OpsetImport {
  std::string domain;
  int64_t version = 0;
};

/// ModelProto.
struct Model {
  int64_t ir_version = 0;
  std::vector<OpsetImport> opset_imports;
  std::string producer_name;
  std::string producer_version;
  std::string domain;
  int64_t model_version = 0;
  std::string doc_string;
  std::map<std::string, std::string> metadata;
  Graph graph;

  /// The opset of the default domain (0 if not imported).
  int64_t default_opset() const;
};

/// External data supplied by the caller instead of the model's folder (onnxruntime's AddExternalInitializers and
/// AddExternalInitializersFromFilesInMemory). Null maps supply nothing.
struct ExternalSources {
  /// Values for main-graph initializers whose data is external, by initializer name: the file is not read.
  const std::map<std::string, Tensor>* initializers = nullptr;
  /// File contents by location as the model's tensors name it (compared after lexical normalization).
  const std::map<std::string, std::string_view>* files = nullptr;
};

/// Parses a serialized ModelProto. `model_dir` resolves external data; external files must stay inside it.
/// Throws Error(InvalidGraph) on malformed bytes, Error(NoSuchFile) on missing external files, and
/// Error(InvalidArgument) for a supplied initializer that names no external initializer or does not fit it.
Model parse_model(const void* bytes, size_t size, const std::string& model_dir, const ExternalSources& sources = {});
/// Reads and parses a model file.
Model load_model_file(const std::string& path, const ExternalSources& sources = {});

/// Throws Error(InvalidArgument) "<api>: '<name>' is <type>[dims], the model's initializer <type>[dims]" unless
/// `given` has the element type and shape of the initializer it replaces.
void check_replacement(const char* api, const std::string& name, const Tensor& given, DType dtype, const Shape& dims);

/// Where serialize_model puts large initializers: an external data file next to the model (onnxruntime's
/// session.optimized_model_external_initializers_file_name). An empty file_name keeps every tensor inline.
struct ExternalWrite {
  std::string file_name;    // relative to the model's folder, written as each tensor's location
  uint64_t min_bytes = 1024;  // initializers smaller than this stay inline
};

/// Serializes a model as onnx.proto bytes (src/onnx/writer.cpp); every tensor inline. Throws NotImplemented for
/// attributes the reader kept without their value, and for a model of 2 GiB or more.
std::string serialize_model(const Model& model);
/// Writes the model to `path` (NoSuchFile when it cannot be opened), with the graphs' non-string initializers of at
/// least `external.min_bytes` in the file `external.file_name` of the same folder when that is set.
void save_model_file(const Model& model, const std::string& path, const ExternalWrite& external = {});

}  // namespace lockstep::onnx
