// make_vision_encoder: builds the [vision_encoder] type by name from its keys (KempnerForge's
// VisionEncoderConfig: type, path, feature_dim, num_tokens).
#pragma once

#include <kforge/sdk/vision_encoder.h>

#include <memory>
#include <string>
#include <vector>

namespace kforge::vision {

struct EncoderOptions {
  std::string type = "random";
  std::string path;         // siglip2, clip: a local Hugging Face model directory
  int64_t feature_dim = 0;  // 0: the encoder's own (random: 768)
  int64_t num_tokens = 0;   // 0: the encoder's own (random: 16)
  int64_t seed = 0;         // random
};

/// "random", "siglip2", "clip".
const std::vector<std::string>& encoder_types();

/// random: RandomEncoder(num_tokens or 16, feature_dim or 768, seed). siglip2 / clip: a VitEncoder shaped
/// by read_vit_config(path) with LibTorch's default init; the caller loads the weights of
/// path/model.safetensors with load_hf_tensors. Throws sdk::ConfigError naming the key: an unknown type
/// (listing encoder_types()), a negative size, siglip2/clip without a path, or a feature_dim/num_tokens
/// that differs from the tower's (a tower's sizes come from its config.json and cannot be overridden).
std::shared_ptr<sdk::VisionEncoder> make_vision_encoder(const EncoderOptions& options);

}  // namespace kforge::vision
