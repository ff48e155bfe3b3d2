#include "runtime/profiler.h"

#include <unistd.h>

#include <cstdio>
#include <ctime>
#include <fstream>

namespace lockstep {

namespace {

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\u%04x", c);
      out += escaped;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

// onnxruntime's form: [{"float":[1,3,224,224]},{"int64":[4]}]
std::string typed_shapes_json(const std::vector<TypedShape>& shapes) {
  std::string out = "[";
  for (size_t i = 0; i < shapes.size(); ++i) {
    out += i ? ",{" : "{";
    out += json_string(shapes[i].dtype);
    out += ":[";
    for (size_t d = 0; d < shapes[i].dims.size(); ++d) {
      if (d) out += ',';
      out += std::to_string(shapes[i].dims[d]);
    }
    out += "]}";
  }
  return out + "]";
}

std::string args_json(const ProfileEvent& e) {
  if (e.category != "Node") return "{}";
  return "{\"op_name\":" + json_string(e.op_type) + ",\"provider\":" + json_string(e.provider) +
         ",\"input_type_shape\":" + typed_shapes_json(e.inputs) + ",\"output_type_shape\":" + typed_shapes_json(e.outputs) +
         "}";
}

std::string event_json(const ProfileEvent& e, int64_t pid) {
  std::string name = e.category == "Node" ? e.name + "_kernel_time" : e.name;
  return "{\"cat\":" + json_string(e.category) + ",\"pid\":" + std::to_string(pid) + ",\"tid\":" + std::to_string(pid) +
         ",\"dur\":" + std::to_string((e.duration_ns + 500) / 1000) + ",\"ts\":" + std::to_string((e.start_ns + 500) / 1000) +
         ",\"ph\":\"X\",\"name\":" + json_string(name) + ",\"args\":" + args_json(e) + "}";
}

// onnxruntime names the file after the time profiling started, to the millisecond.
std::string local_time_text(int64_t epoch_ns) {
  std::chrono::system_clock::time_point when{std::chrono::duration_cast<std::chrono::system_clock::duration>(
      std::chrono::nanoseconds(epoch_ns))};
  std::time_t seconds = std::chrono::system_clock::to_time_t(when);
  std::tm local{};
  localtime_r(&seconds, &local);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%d_%H-%M-%S", &local);
  int64_t ms = epoch_ns / 1000000 % 1000;
  char with_ms[40];
  std::snprintf(with_ms, sizeof with_ms, "%s_%03d", text, static_cast<int>(ms));
  return with_ms;
}

}  // namespace

Profiler::Profiler()
    : start_(std::chrono::steady_clock::now()),
      start_epoch_ns_(std::chrono::duration_cast<std::chrono::nanoseconds>(
                          std::chrono::system_clock::now().time_since_epoch())
                          .count()) {}

int64_t Profiler::now_ns() const {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start_).count();
}

void Profiler::record(ProfileEvent event) {
  std::lock_guard<std::mutex> lock(mutex_);
  events_.push_back(std::move(event));
}

std::vector<ProfileEvent> Profiler::events() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return events_;
}

std::string trace_json(const std::vector<ProfileEvent>& events, int64_t pid) {
  std::string out = "[\n";
  for (size_t i = 0; i < events.size(); ++i) out += event_json(events[i], pid) + (i + 1 < events.size() ? ",\n" : "\n");
  return out + "]\n";
}

std::string Profiler::write_trace(const std::string& prefix) const {
  std::string path = prefix + "_" + local_time_text(start_epoch_ns_) + ".json";
  std::ofstream file(path, std::ios::binary);
  file << trace_json(events(), getpid());
  if (!file.flush()) throw Error(ErrorCode::Fail, "cannot write the profile file '" + path + "'");
  return path;
}

}  // namespace lockstep
