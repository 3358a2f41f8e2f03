// MetricBackend: receives every logged metric (console, JSON lines, TensorBoard, ...).
#pragma once

#include <cstdint>
#include <string>

#include "kforge/sdk/hook.h"

namespace kforge::sdk {

struct RunInfo {
  std::string run_dir;  ///< where a backend may write files (rank r > 0 with per_rank: <run_dir>/rank_<r>)
  int rank = 0;
  bool interactive = false;  ///< stdout is a terminal
  /// The step training continues from (0: a fresh start). A backend that keeps a history of the
  /// run drops what it holds of later steps, so that no step is logged twice after a resume.
  int64_t resumed_step = 0;
  /// What this backend's run_id() returned in the run that wrote the checkpoint this run resumed
  /// from ("" on a fresh start, or when it returned ""): the backend continues that run.
  std::string resumed_run_id;
  /// The resolved config as TOML, for backends that record a run's parameters.
  std::string config_toml;
  /// [metrics] per_rank: every rank has backends and logs its own metrics (its step time, memory),
  /// and a backend that writes files writes this rank's into run_dir. Off, only rank 0 has backends.
  bool per_rank = false;
};

/// How a run ended: finished (all steps, or stopped cleanly), failed (an error), killed (stopped by a
/// signal or preemption before max_steps; the process exits 75 to be requeued).
enum class RunEnd { finished, failed, killed };

class MetricBackend {
 public:
  virtual ~MetricBackend() = default;
  virtual void log(int64_t step, const MetricList& metrics) = 0;
  virtual void flush() {}
  /// The id of this run in the backend's own store (e.g. an MLflow run id), kept in checkpoints so
  /// that a resumed run continues it; "" when the backend has none.
  virtual std::string run_id() const { return {}; }
  /// Called once when the run ends, after the last log().
  virtual void end(RunEnd how) { (void)how; }
};

}  // namespace kforge::sdk
