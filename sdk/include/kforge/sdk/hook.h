// Hook: observes the training loop at fixed events; throw StopTraining to end the run cleanly.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "kforge/sdk/error.h"
#include "kforge/sdk/export.h"

namespace kforge::sdk {

class Model;

struct StepEvent {
  int64_t step = 0;         ///< optimizer steps completed
  double loss = 0;
  double grad_norm = 0;     ///< before clipping
  double lr = 0;
  int64_t tokens_seen = 0;
  /// Under FSDP ([distributed] dp_shard > 1) its parameters hold no data between steps (each
  /// rank keeps only its shards): read metrics from it, not weights.
  Model* model = nullptr;
};

using MetricList = std::vector<std::pair<std::string, double>>;

/// Thrown by a hook to stop training after the current step (a checkpoint is saved).
class KFORGE_SDK_API StopTraining : public Error {
 public:
  explicit StopTraining(const std::string& reason);
  ~StopTraining() override;
};

class Hook {
 public:
  virtual ~Hook() = default;
  virtual void on_train_begin(int64_t /*start_step*/) {}
  virtual void on_step_end(const StepEvent& /*event*/) {}
  virtual void on_eval_end(int64_t /*step*/, const MetricList& /*metrics*/) {}
  virtual void on_checkpoint_save(int64_t /*step*/, const std::string& /*path*/) {}
  virtual void on_train_end(int64_t /*step*/, int64_t /*tokens_seen*/) {}
};

}  // namespace kforge::sdk
