// VitConfig: the shape of a Hugging Face SigLIP (SigLIP2 fixed-resolution) or CLIP vision tower, read
// from the config.json of a local model directory with Hugging Face's defaults for absent keys.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

namespace kforge::vision {

/// Which tower: siglip2 (no CLS, post_layernorm on the output, gelu tanh) or clip (CLS token,
/// pre_layrnorm, quick_gelu, CLS stripped from the output).
enum class VitTower { siglip2, clip };

/// "siglip2" or "clip".
const char* tower_name(VitTower tower);

struct VitConfig {
  VitTower tower = VitTower::siglip2;
  int64_t hidden_size = 768;
  int64_t intermediate_size = 3072;
  int64_t num_hidden_layers = 12;
  int64_t num_attention_heads = 12;
  int64_t num_channels = 3;
  int64_t image_size = 224;
  int64_t patch_size = 16;
  double layer_norm_eps = 1e-6;
  std::string hidden_act = "gelu_pytorch_tanh";

  /// Hugging Face's defaults for the tower (SiglipVisionConfig, CLIPVisionConfig).
  static VitConfig defaults(VitTower tower);

  /// Patches per image: (image_size / patch_size)^2, the encoder's output tokens.
  int64_t num_patches() const;
  /// Throws sdk::ConfigError naming `origin` and the key (after `key_prefix`, e.g. "vision_config.") when
  /// a size is not positive, hidden_size is not a multiple of num_attention_heads, the image is smaller
  /// than a patch or hidden_act is not one of activation.h's tower activations.
  void validate(const std::string& origin, const std::string& key_prefix = "") const;
};

/// Reads DIR/config.json: the "vision_config" object of a full model's config (SiglipModel,
/// CLIPModel), else the top level (a vision-only SiglipVisionModel / CLIPVisionModel). A model_type
/// that is not the tower's (e.g. a NaFlex "siglip2", whose patch embedding is a Linear) is refused, as
/// is a non-zero attention_dropout; every error names the file and the key.
VitConfig read_vit_config(const std::filesystem::path& dir, VitTower tower);

}  // namespace kforge::vision
