// build_vision_language_model: encoder (and its weights), adapter, text model, strategy.
#include "train/vision_language_build.h"

#include <fmt/format.h>

#include "checkpoint/encoder_weights.h"
#include "kforge/sdk/error.h"
#include "log/log.h"

namespace kforge::train {
namespace {

// The size images are resized to: the encoder's own, else [data] hf_image_size (which must then agree).
int64_t image_size(const config::JobConfig& job, int64_t encoder_size) {
  const config::Value* data = job.tree.find("data");
  const config::Value* configured = data != nullptr ? data->find("hf_image_size") : nullptr;
  const int64_t size = job.view("data").get_int("hf_image_size");
  if (encoder_size == 0) return size;
  if (configured != nullptr && !configured->source.origin.empty() && size != encoder_size) {
    throw sdk::ConfigError(fmt::format(
        "{}: [data] hf_image_size = {}, but [vision_encoder] type = \"{}\" takes {}x{} images; remove the key or set "
        "it to {}",
        configured->source.describe(), size, job.view("vision_encoder").get_string("type"), encoder_size,
        encoder_size, encoder_size));
  }
  return encoder_size;
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
  out.model = components.vision_language_model({std::move(encoder), std::move(adapter), std::move(text)});
  return out;
}

}  // namespace kforge::train
