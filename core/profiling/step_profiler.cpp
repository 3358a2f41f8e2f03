// StepProfiler (see step_profiler.h).
#include "profiling/step_profiler.h"

#include <string>
#include <utility>

namespace kforge::profiling {

StepProfiler::StepProfiler(bool enable, int64_t start_step, int64_t end_step, std::filesystem::path trace_dir, int rank)
    : enable_(enable),
      start_step_(start_step),
      end_step_(end_step),
      path_(std::move(trace_dir) / ("trace_steps" + std::to_string(start_step) + "-" + std::to_string(end_step) +
                                    "_rank" + std::to_string(rank) + ".json")) {}

void StepProfiler::before_step(int64_t step) {
  if (enable_ && step == start_step_ && !recorder_.recording()) recorder_.start();
}

std::optional<std::filesystem::path> StepProfiler::after_step(int64_t completed) {
  if (!recorder_.recording() || completed < end_step_) return std::nullopt;
  recorder_.stop();
  recorder_.write(path_);
  return path_;
}

}  // namespace kforge::profiling
