// libFuzzer harness for the ONNX protobuf reader: any input must parse or throw lockstep::Error, nothing else.
// Built by scripts/sanitize.sh (CMake option LOCKSTEP_FUZZ, clang, ASan and UBSan).
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
