// SessionOptions::enable_profiling: per-node events kept in memory, written as an onnxruntime-style Chrome trace.
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "lockstep/session.h"

namespace lockstep {

class Profiler {
 public:
  /// Profiling starts now: event times are counted from here.
  Profiler();

  /// Nanoseconds since profiling started, from a monotonic clock.
  int64_t now_ns() const;
  int64_t start_time_ns() const { return start_epoch_ns_; }
  /// Thread-safe: runs of one session may overlap.
  void record(ProfileEvent event);
  std::vector<ProfileEvent> events() const;
  /// Writes the events to `<prefix>_<local date and time profiling started>.json` in the current directory; returns the path.
  std::string write_trace(const std::string& prefix) const;

 private:
  std::chrono::steady_clock::time_point start_;
  int64_t start_epoch_ns_;
  mutable std::mutex mutex_;
  std::vector<ProfileEvent> events_;
};

/// The events as onnxruntime's profile file holds them: a JSON list of complete ("ph":"X") events, times in
/// microseconds; Node events are named `<node>_kernel_time` and carry op_name, provider and typed shapes.
std::string trace_json(const std::vector<ProfileEvent>& events, int64_t pid);

}  // namespace lockstep
