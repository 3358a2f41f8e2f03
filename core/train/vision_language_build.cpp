// build_vision_language_model: encoder (and its weights), adapter, text model, strategy.
#include "train/vision_language_build.h"

#include <ATen/ATen.h>
#include <fmt/format.h>

#include <filesystem>
#include <set>

#include "checkpoint/checkpoint_manager.h"
#include "checkpoint/encoder_weights.h"
#include "kforge/sdk/error.h"
#include "log/log.h"

namespace kforge::train {
namespace {

// The size images are resized to: the encoder's own, else [data] hf_image_size (in a video run [video] frame_size),
// which must then agree.
int64_t image_size(const config::JobConfig& job, int64_t encoder_size) {
  const bool video = job.tree.find("video") != nullptr;
  const char* section = video ? "video" : "data";
  const char* key = video ? "frame_size" : "hf_image_size";
  const config::Value* configured = job.tree.find(section) != nullptr ? job.tree.find(section)->find(key) : nullptr;
  const int64_t size = job.view(section).get_int(key);
  if (encoder_size == 0) return size;
  if (configured != nullptr && !configured->source.origin.empty() && size != encoder_size) {
    throw sdk::ConfigError(fmt::format(
        "{}: [{}] {} = {}, but [vision_encoder] type = \"{}\" takes {}x{} images; remove the key or set it to {}",
        configured->source.describe(), section, key, size, job.view("vision_encoder").get_string("type"), encoder_size,
        encoder_size, encoder_size));
  }
  return encoder_size;
}

// Copies what the strategy makes of the text checkpoint it names into its parameters, checking each shape.
void warm_start_from_text(sdk::VisionLanguageModel& model, const std::string& path, const std::string& arch) {
  const std::string what = fmt::format("[vlm] arch = \"{}\": warm start from the text checkpoint {}", arch, path);
  if (!std::filesystem::is_directory(path)) {
    throw sdk::ConfigError(
        fmt::format("{}: not a directory; give a checkpoint's step directory (e.g. "
                    "checkpoints/text/step_1000)",
                    what));
  }
  checkpoint::Snapshot text;
  try {
    text = checkpoint::CheckpointManager::load(path, 0, checkpoint::CheckpointManager::model_tensor);
  } catch (const sdk::Error& e) {
    throw sdk::Error(fmt::format("{}: {}", what, e.what()));
  }
  const std::map<std::string, at::Tensor> made = model.from_text_state(text.model);
  std::map<std::string, at::Tensor> params;
  for (const auto& item : model.named_parameters(/*recurse=*/true)) params.emplace(item.key(), item.value());
  at::NoGradGuard no_grad;
  for (const auto& [name, value] : made) {
    const auto it = params.find(name);
    if (it == params.end()) {
      throw sdk::Error(fmt::format("{}: the strategy made '{}', which is not one of its parameters", what, name));
    }
    if (!it->second.sizes().equals(value.sizes())) {
      throw sdk::ConfigError(
          fmt::format("{}: '{}' is {} there but {} here; warm-start from a run with the same "
                      "[model] shape",
                      what, name, c10::str(value.sizes()), c10::str(it->second.sizes())));
    }
    it->second.copy_(value);
  }
  log::get().info("{} (step {}): {} of the model's {} parameters copied from it", what, text.step, made.size(),
                  params.size());
}

}  // namespace

VisionLanguageBuild build_vision_language_model(const config::JobConfig& job, const plugins::Components& components,
                                                EncoderWeightsFrom weights) {
  auto& log = log::get();
  std::shared_ptr<sdk::VisionEncoder> encoder = components.vision_encoder();
  if (const std::string path = job.view("vision_encoder").get_string("path");
      !path.empty() && weights == EncoderWeightsFrom::Path) {
    const checkpoint::EncoderWeights read = checkpoint::load_encoder_weights(*encoder, path);
    log.info("[vision_encoder] path = \"{}\": {} tensors from {} file(s){}", path, read.loaded, read.files.size(),
             read.unused.empty() ? "" : fmt::format(" ({} other tensors in them not read)", read.unused.size()));
  }
  VisionLanguageBuild out;
  out.pixels = encoder->pixel_format();
  out.pixels.image_size = image_size(job, out.pixels.image_size);
  const int64_t dim = job.view("model").get_int("dim");
  std::shared_ptr<sdk::Adapter> adapter = components.adapter({encoder->feature_dim(), dim});
  std::shared_ptr<sdk::Model> text = components.model();
  const int64_t frames = job.tree.find("video") != nullptr ? job.view("video").get_int("max_frames") : 1;
  std::set<const c10::TensorImpl*> encoder_tensors;
  for (const auto& item : encoder->named_parameters(/*recurse=*/true)) {
    encoder_tensors.insert(item.value().unsafeGetTensorImpl());
  }
  sdk::VisionLanguageParts parts{std::move(encoder), std::move(adapter), std::move(text)};
  parts.frames = frames;
  if (frames > 1) parts.time_embedding = components.time_embedding({dim});
  out.model = components.vision_language_model(std::move(parts));
  if (const std::string path = out.model->text_warm_start_path();
      !path.empty() && weights == EncoderWeightsFrom::Path) {
    warm_start_from_text(*out.model, path, job.view("vlm").get_string("arch"));
  }
  for (const auto& item : out.model->named_parameters(/*recurse=*/true)) {
    if (encoder_tensors.count(item.value().unsafeGetTensorImpl())) out.encoder_params.push_back(item.key());
  }
  return out;
}

}  // namespace kforge::train
