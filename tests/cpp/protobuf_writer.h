// A minimal protobuf writer for the C++ tests: builds ONNX models and tensors field by field, so that a test can
// make exactly the bytes it needs (malformed ones included) without the onnx library.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace lockstep::test {

struct ProtobufWriter {
  std::string bytes;

  static std::string varint_bytes(uint64_t v) {
    std::string out;
    do {
      uint8_t b = v & 0x7f;
      v >>= 7;
      out.push_back(static_cast<char>(v ? b | 0x80 : b));
    } while (v);
    return out;
  }
  ProtobufWriter& tag(uint32_t field, int wire) {
    bytes += varint_bytes(uint64_t{field} << 3 | wire);
    return *this;
  }
  ProtobufWriter& varint(uint32_t field, uint64_t v) {
    tag(field, 0);
    bytes += varint_bytes(v);
    return *this;
  }
  ProtobufWriter& fixed32(uint32_t field, uint32_t v) {
    tag(field, 5);
    bytes.append(reinterpret_cast<const char*>(&v), 4);
    return *this;
  }
  ProtobufWriter& fixed64(uint32_t field, uint64_t v) {
    tag(field, 1);
    bytes.append(reinterpret_cast<const char*>(&v), 8);
    return *this;
  }
  ProtobufWriter& str(uint32_t field, const std::string& s) {
    tag(field, 2);
    bytes += varint_bytes(s.size()) + s;
    return *this;
  }
  ProtobufWriter& msg(uint32_t field, const ProtobufWriter& m) { return str(field, m.bytes); }
  ProtobufWriter& f32(uint32_t field, float v) {
    uint32_t u;
    std::memcpy(&u, &v, 4);
    return fixed32(field, u);
  }
  ProtobufWriter& packed_varints(uint32_t field, const std::vector<uint64_t>& vs) {
    std::string payload;
    for (uint64_t v : vs) payload += varint_bytes(v);
    return str(field, payload);
  }
  template <typename T>
  ProtobufWriter& packed_fixed(uint32_t field, const std::vector<T>& vs) {
    return str(field, std::string(reinterpret_cast<const char*>(vs.data()), vs.size() * sizeof(T)));
  }
};

}  // namespace lockstep::test
