// lockstep public API: the one exception type the library throws.
#pragma once

#include <stdexcept>
#include <string>

namespace lockstep {

/// The kinds of failure, mirroring onnxruntime's status codes so the Python layer can raise the same classes.
enum class ErrorCode {
  Fail,             // anything else
  InvalidArgument,  // a bad feed: wrong name, dtype, rank or dims; a bad option
  NoSuchFile,       // a model or external-data file that does not exist
  InvalidGraph,     // a malformed model: bad bytes, dangling names, bad attributes, wrong types
  NotImplemented,   // an op, opset or type lockstep does not support
  RuntimeError,     // a failure while running (device errors, allocation failure)
};

/// Thrown by every lockstep entry point. what() is a complete, human-readable message.
class Error : public std::runtime_error {
 public:
  Error(ErrorCode code, const std::string& message) : std::runtime_error(message), code_(code) {}
  ErrorCode code() const { return code_; }

 private:
  ErrorCode code_;
};

}  // namespace lockstep
