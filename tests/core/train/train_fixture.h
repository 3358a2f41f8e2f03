// A tiny end-to-end training setup: a cyclic token corpus on disk and a config for it.
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "plugins/host.h"
#include "config/job_config.h"
#include "kforge/sdk/hook.h"
#include "train/trainer.h"

namespace kforge::test {

/// Records every event a hook sees; optionally stops the run or raises a signal at a step.
class RecordingHook final : public sdk::Hook {
 public:
  std::map<int64_t, double> losses;  ///< step -> loss
  std::vector<std::string> events;
  int64_t stop_at = -1;     ///< throw StopTraining at this step
  int64_t signal_at = -1;   ///< raise(signal) at this step
  int signal = 0;

  void on_train_begin(int64_t start_step) override;
  void on_step_end(const sdk::StepEvent& event) override;
  void on_eval_end(int64_t step, const sdk::MetricList& metrics) override;
  void on_checkpoint_save(int64_t step, const std::string& path) override;
  void on_train_end(int64_t step, int64_t tokens_seen) override;
};

class TrainFixture {
 public:
  /// Writes a learnable corpus (tokens (i * 7) % vocab) as two uint16 .npy shards.
  TrainFixture();

  /// The [checkpoint] (under checkpoint_dir, every 5 steps) and [metrics] (jsonl, every step) sections of toml.
  std::string output_toml() const;
  /// The fixture's TOML config with extra lines appended (later keys win via overrides).
  config::JobConfig job(const std::vector<std::string>& overrides = {}) const;
  /// Runs training in-process with the given hooks.
  train::TrainingResult run(const std::vector<std::string>& overrides, std::vector<std::shared_ptr<sdk::Hook>> hooks,
                            train::StepFn step_fn = {}) const;

  std::filesystem::path root, data_dir, checkpoint_dir;
  std::unique_ptr<plugins::PluginHost> plugins;
  std::string toml;
};

}  // namespace kforge::test
