// make_vision_encoder: [vision_encoder] type -> encoder module.
#include "encoder_factory.h"

#include <kforge/sdk/error.h>

#include "random_encoder.h"
#include "vit_encoder.h"

namespace kforge::vision {
namespace {

// A [vision_encoder] size key set for a tower must equal the tower's own value.
void check_tower_size(const std::string& key, int64_t set, int64_t tower_value, const EncoderOptions& o) {
  if (set == 0 || set == tower_value) return;
  throw sdk::ConfigError("[vision_encoder] " + key + " = " + std::to_string(set) + ": the " + o.type + " tower in " +
                         o.path + " gives " + std::to_string(tower_value) + " (from its config.json); set " + key +
                         " = 0 or " + std::to_string(tower_value));
}

}  // namespace

const std::vector<std::string>& encoder_types() {
  static const std::vector<std::string> types = {"random", "siglip2", "clip"};
  return types;
}

std::shared_ptr<sdk::VisionEncoder> make_vision_encoder(const EncoderOptions& o) {
  if (o.feature_dim < 0 || o.num_tokens < 0) {
    throw sdk::ConfigError("[vision_encoder] feature_dim = " + std::to_string(o.feature_dim) +
                           ", num_tokens = " + std::to_string(o.num_tokens) + ": must be >= 0 (0: the encoder's own)");
  }
  if (o.type == "random") {
    return std::make_shared<RandomEncoder>(o.num_tokens > 0 ? o.num_tokens : 16,
                                           o.feature_dim > 0 ? o.feature_dim : 768, o.seed);
  }
  if (o.type == "siglip2" || o.type == "clip") {
    if (o.path.empty()) {
      throw sdk::ConfigError("[vision_encoder] path is required for type = \"" + o.type +
                             "\": a local Hugging Face model directory (config.json, model.safetensors)");
    }
    auto encoder =
        std::make_shared<VitEncoder>(read_vit_config(o.path, o.type == "clip" ? VitTower::clip : VitTower::siglip2));
    check_tower_size("feature_dim", o.feature_dim, encoder->feature_dim(), o);
    check_tower_size("num_tokens", o.num_tokens, encoder->num_tokens(), o);
    return encoder;
  }
  std::string names;
  for (const auto& t : encoder_types()) names += (names.empty() ? "" : ", ") + t;
  throw sdk::ConfigError("[vision_encoder] type = \"" + o.type + "\": unknown vision encoder (registered: " + names +
                         ")");
}

}  // namespace kforge::vision
