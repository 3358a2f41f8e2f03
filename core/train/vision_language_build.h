// Building a vision-language run's model: the [vision_encoder] (with its pretrained weights when [vision_encoder]
// path names them), the [adapter] into the text model's width, the [model] text model, and the [vlm] arch that
// composes them; and the image size and normalisation its data must have.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "config/job_config.h"
#include "kforge/sdk/vision_language_model.h"
#include "plugins/components.h"

namespace kforge::train {

struct VisionLanguageBuild {
  std::shared_ptr<sdk::VisionLanguageModel> model;
  /// The encoder's pixel format, image_size resolved: the encoder's own size, else [data] hf_image_size.
  sdk::PixelFormat pixels;
  /// The names, in `model`, of the vision encoder's parameters.
  std::vector<std::string> encoder_params;
};

/// Where the encoder's weights come from: [vision_encoder] path (a run), or a checkpoint loaded over the model after.
enum class EncoderWeightsFrom { Path, Checkpoint };

/// With EncoderWeightsFrom::Path, a strategy that names a text checkpoint to warm-start from
/// (text_warm_start_path()) gets what it makes of that checkpoint's model tensors, shapes checked. Throws
/// sdk::ConfigError when [data] hf_image_size, set in the config, differs from the size the encoder takes, and what
/// load_encoder_weights, the warm start and the plugins refuse.
VisionLanguageBuild build_vision_language_model(const config::JobConfig& job, const plugins::Components& components,
                                                EncoderWeightsFrom weights = EncoderWeightsFrom::Path);

}  // namespace kforge::train
