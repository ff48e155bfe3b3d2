// Minimal severity-filtered logging to stderr, configured by SessionOptions.log_severity_level.
#pragma once

#include <iostream>
#include <string>

namespace lockstep {

enum class Severity { Verbose = 0, Info = 1, Warning = 2, Error = 3, Fatal = 4 };

class Logger {
 public:
  explicit Logger(int min_severity = 2) : min_(min_severity) {}
  void log(Severity s, const std::string& message) const {
    static const char* tags[] = {"V", "I", "W", "E", "F"};
    if (static_cast<int>(s) >= min_) std::cerr << "[lockstep " << tags[static_cast<int>(s)] << "] " << message << "\n";
  }
  void warn(const std::string& m) const { log(Severity::Warning, m); }
  void info(const std::string& m) const { log(Severity::Info, m); }

 private:
  int min_;
};

}  // namespace lockstep
