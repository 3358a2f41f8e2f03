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
  /// The step training continues from (0: a fresh start). A backend that keeps a history of the
  /// run drops what it holds of later steps, so that no step is logged twice after a resume.
  int64_t resumed_step = 0;
};

class MetricBackend {
 public:
  virtual ~MetricBackend() = default;
  virtual void log(int64_t step, const MetricList& metrics) = 0;
  virtual void flush() {}
};

}  // namespace kforge::sdk
