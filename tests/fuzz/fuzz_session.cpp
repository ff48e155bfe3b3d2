// libFuzzer harness for session creation: any input must become a Session or throw lockstep::Error. This covers
// the reader and then what runs on the graph before the first run(): validation, shape inference, constant folding,
// fusion and planning. Built by scripts/sanitize.sh (CMake option LOCKSTEP_FUZZ, clang, ASan and UBSan).
#include <cstddef>
#include <cstdint>

#include "lockstep/session.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  lockstep::SessionOptions options;
  options.intra_op_num_threads = 1;  // one thread: a finding reproduces from its input alone
  options.log_severity_level = 3;
  try {
    lockstep::Session session(data, size, options);
  } catch (const lockstep::Error&) {
  }
  return 0;
}
