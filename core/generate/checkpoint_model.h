// CheckpointModel: a trained model rebuilt from a checkpoint's own config.toml and weights.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "checkpoint/snapshot.h"
#include "config/job_config.h"
#include "kforge/sdk/model.h"
#include "kforge/sdk/vision_language_model.h"
#include "plugins/registry.h"

namespace kforge::generate {

struct CheckpointModel {
  std::filesystem::path step_dir;  ///< the step_N directory loaded
  checkpoint::Snapshot snapshot;   ///< with the model's tensors only (the optimizer's are never copied out)
  config::JobConfig job;           ///< step_dir/config.toml resolved (with overrides) against the registry
  std::shared_ptr<sdk::Model> model;
  /// A vision-language checkpoint's model (the same object as `model`), else null.
  std::shared_ptr<sdk::VisionLanguageModel> vision_language;
  /// The images a vision-language model takes (its encoder's size and normalisation).
  sdk::PixelFormat pixels;
};

/// Which models a command loads: text models only, or vision-language ones too.
enum class ModelKinds { Text, TextAndVisionLanguage };

/// `dir` is a step_N directory (holds metadata.json) or a checkpoint.dir, whose newest complete
/// checkpoint is taken. Builds the model through plugins::Components and loads its weights.
/// Throws sdk::Error / sdk::ConfigError naming the directory or file at fault, and for a vision-language checkpoint
/// when `kinds` is Text.
CheckpointModel load_checkpoint_model(const std::filesystem::path& dir, const plugins::Registry& registry,
                                      const std::vector<std::string>& overrides = {},
                                      ModelKinds kinds = ModelKinds::Text);

}  // namespace kforge::generate
