// StepProfiler: the [profiling] schedule around the step loop: records the steps with 0-based
// index in [start_step, end_step) and writes them as one Chrome trace (see trace_recorder.h).
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>

#include "profiling/trace_recorder.h"

namespace kforge::profiling {

class StepProfiler {
 public:
  /// Does nothing when `enable` is false. The trace goes to
  /// <trace_dir>/trace_steps<start_step>-<end_step>_rank<rank>.json.
  StepProfiler(bool enable, int64_t start_step, int64_t end_step, std::filesystem::path trace_dir, int rank);

  /// Call before the work of the step with 0-based index `step`: starts recording at start_step.
  void before_step(int64_t step);
  /// Call once `completed` steps are done: at end_step, stops, writes the trace and returns its path.
  std::optional<std::filesystem::path> after_step(int64_t completed);
  const TraceRecorder& recorder() const { return recorder_; }

 private:
  bool enable_;
  int64_t start_step_, end_step_;
  std::filesystem::path path_;
  TraceRecorder recorder_;
};

}  // namespace kforge::profiling
