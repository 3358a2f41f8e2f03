// StatusLine: a one-line progress display (step, loss, speed, ETA) redrawn in place on an
// interactive terminal; does nothing when stderr is not a terminal.
#pragma once

#include <chrono>
#include <cstdint>

namespace kforge::metrics {

class StatusLine {
 public:
  /// Enabled when stderr is a terminal.
  StatusLine(int64_t first_step, int64_t max_steps);
  ~StatusLine();

  /// Redraws the line after `step` finished with `loss`.
  void update(int64_t step, double loss);
  /// Erases the line (before the process prints anything else for good).
  void clear();

 private:
  bool enabled_;
  int64_t first_step_, max_steps_;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace kforge::metrics
