// Trainer: one training run, built top to bottom (config -> plugins -> mesh -> model -> data ->
// loop -> checkpoints/metrics) and then driven step by step by train().
#pragma once

#include <memory>
#include <optional>
#include <vector>

#include "checkpoint/checkpoint_manager.h"
#include "config/job_config.h"
#include "data/sampler.h"
#include "kforge/sdk/hook.h"
#include "metrics/tracker.h"
#include "plugins/registry.h"
#include "train/components.h"
#include "train/step.h"

namespace kforge::train {

enum class Outcome {
  Completed,      ///< reached train.max_steps (final checkpoint written)
  Preempted,      ///< SIGTERM/SIGUSR1: checkpoint written, rerun to resume
  StoppedByHook,  ///< a hook threw sdk::StopTraining: checkpoint written
  TooManyNans,    ///< train.nan_max_consecutive non-finite losses in a row: no checkpoint
};

struct TrainingResult {
  Outcome outcome = Outcome::Completed;
  int64_t step = 0;         ///< optimizer steps completed
  int64_t tokens_seen = 0;
  int64_t resumed_from = -1;  ///< step of the checkpoint the run started from, or -1
};

/// Options of the library entry point.
struct TrainingOptions {
  StepFn step_fn;                                ///< default: standard_step
  std::vector<std::shared_ptr<sdk::Hook>> hooks;  ///< run after the config's train.hooks
};

class Trainer {
 public:
  /// Builds everything and resumes from the newest complete checkpoint (or checkpoint.load_path).
  /// `job` and `registry` must outlive the trainer.
  Trainer(const config::JobConfig& job, const plugins::Registry& registry, TrainingOptions options = {});
  ~Trainer();

  /// Runs the loop until max_steps, a shutdown signal, a hook's StopTraining or the NaN limit.
  TrainingResult train();

  // For step bodies and hooks.
  const config::JobConfig& job() const { return job_; }
  sdk::Model& model() { return *model_; }
  sdk::Loss& loss() { return *loss_; }
  sdk::Optimizer& optimizer() { return *optimizer_; }
  const std::vector<sdk::NamedParameter>& parameters() const { return params_; }
  int64_t step() const { return step_; }

 private:
  void resume();
  void restore(const checkpoint::Snapshot& snapshot);
  checkpoint::Snapshot snapshot() const;
  void save_checkpoint();
  std::vector<data::Batch> next_micro_batches();
  void zero_grad();

  const config::JobConfig& job_;
  const plugins::Registry& registry_;
  TrainingOptions options_;
  Components components_;
  std::shared_ptr<sdk::Model> model_;
  std::vector<sdk::NamedParameter> params_;
  std::unique_ptr<sdk::Optimizer> optimizer_;
  std::unique_ptr<sdk::Scheduler> scheduler_;
  std::unique_ptr<sdk::Loss> loss_;
  std::unique_ptr<sdk::Dataset> train_data_, eval_data_;
  std::unique_ptr<data::BatchSampler> sampler_;
  std::vector<std::shared_ptr<sdk::Hook>> hooks_;
  std::unique_ptr<metrics::MetricsTracker> tracker_;
  std::unique_ptr<checkpoint::CheckpointManager> checkpoints_;

  int64_t step_ = 0;
  int64_t tokens_seen_ = 0;
  int64_t consecutive_nans_ = 0;
  int64_t total_nans_ = 0;
  int64_t last_saved_step_ = -1;
  int64_t resumed_from_ = -1;
};

/// The library entry point (KempnerForge's run_training(config, step_fn, hooks)).
TrainingResult run_training(const config::JobConfig& job, const plugins::Registry& registry,
                            TrainingOptions options = {});

}  // namespace kforge::train
