// MetricBackend: receives every logged metric (console, JSON lines, TensorBoard, ...).
#pragma once

#include <cstdint>
#include <string>

#include "kforge/sdk/hook.h"

namespace kforge::sdk {

struct RunInfo {
  std::string run_dir;       ///< where a backend may write files
  int rank = 0;
  bool interactive = false;  ///< stdout is a terminal
};

class MetricBackend {
 public:
  virtual ~MetricBackend() = default;
  virtual void log(int64_t step, const MetricList& metrics) = 0;
  virtual void flush() {}
};

}  // namespace kforge::sdk
