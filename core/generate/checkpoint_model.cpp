// CheckpointModel: find the step directory, resolve its config, build the model, copy the weights.
#include "generate/checkpoint_model.h"

#include <fmt/format.h>

#include "checkpoint/checkpoint_manager.h"
#include "checkpoint/model_loading.h"
#include "config/hub_cache.h"
#include "kforge/sdk/error.h"
#include "log/log.h"
#include "plugins/catalog.h"
#include "plugins/components.h"
#include "train/vision_language_build.h"

namespace kforge::generate {

CheckpointModel load_checkpoint_model(const std::filesystem::path& dir, const plugins::Registry& registry,
                                      const std::vector<std::string>& overrides, ModelKinds kinds) {
  if (!std::filesystem::is_directory(dir)) throw sdk::Error(fmt::format("checkpoint '{}' is not a directory", dir.string()));
  CheckpointModel out;
  if (std::filesystem::exists(dir / "metadata.json")) {
    out.step_dir = dir;
    out.snapshot = checkpoint::CheckpointManager::load(dir, 0, checkpoint::CheckpointManager::model_tensor);
  } else {
    const checkpoint::CheckpointManager manager(dir, 0, [](int64_t) { return false; });
    auto newest = manager.load_newest([](const std::string& message) { log::get().warn("{}", message); },
                                      checkpoint::CheckpointManager::model_tensor);
    if (!newest) {
      throw sdk::Error(fmt::format("'{}' holds no checkpoint (neither a step_N directory with metadata.json nor a "
                                   "checkpoint.dir with step_N directories)",
                                   dir.string()));
    }
    out.snapshot = std::move(*newest);
    out.step_dir = dir / fmt::format("step_{}", out.snapshot.step);
  }
  const auto config_file = out.step_dir / "config.toml";
  if (!std::filesystem::exists(config_file)) {
    throw sdk::Error(fmt::format("checkpoint '{}' has no config.toml to rebuild its model from", out.step_dir.string()));
  }
  out.job = config::load_job_config(config_file, overrides, plugins::make_catalog(registry));
  config::resolve_hub_ids(out.job);
  const plugins::Components components(registry, out.job);
  if (const config::Value* vlm = out.job.tree.find("vlm")) {
    if (kinds == ModelKinds::Text) {
      throw sdk::ConfigError(fmt::format(
          "{}: checkpoint step {} is a vision-language model ([vlm] arch = \"{}\" in its config.toml); this command "
          "loads text models only (kforge generate --image PATH continues prompts about an image)",
          config_file.string(), out.snapshot.step, vlm->find("arch")->s));
    }
    train::VisionLanguageBuild built =
        train::build_vision_language_model(out.job, components, train::EncoderWeightsFrom::Checkpoint);
    out.vision_language = built.model;
    out.pixels = built.pixels;
    out.model = std::move(built.model);
  } else {
    out.model = components.model();
  }
  checkpoint::load_model_weights(*out.model, out.snapshot);
  return out;
}

}  // namespace kforge::generate
