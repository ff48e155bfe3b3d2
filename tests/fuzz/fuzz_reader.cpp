// libFuzzer harness for the ONNX protobuf reader: any input must parse or throw lockstep::Error, nothing else.
// Build: clang++ -std=c++20 -O1 -g -fsanitize=fuzzer,address,undefined -Iinclude -Isrc
//        src/onnx/reader.cpp src/onnx/model.cpp src/runtime/tensor.cpp tests/fuzz/fuzz_reader.cpp -o fuzz_reader
#include <cstddef>
#include <cstdint>

#include "onnx/model.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    // No model folder: external data must be rejected without touching the filesystem.
    lockstep::onnx::parse_model(data, size, "");
  } catch (const lockstep::Error&) {
  }
  return 0;
}
