// VitEncoder: the siglip2 and clip vision encoders, native ViTs whose parameter names are Hugging Face's
// (vision_model.embeddings.patch_embedding.weight, vision_model.encoder.layers.0.self_attn.q_proj.weight,
// ...), so a model.safetensors loads by name (hf_tensors.h).
#pragma once

#include <kforge/sdk/vision_encoder.h>
#include <torch/nn/modules/normalization.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "vit_config.h"
#include "vit_embeddings.h"
#include "vit_layer.h"

namespace kforge::vision {

/// The output is Hugging Face's vision_model(...).last_hidden_state, as KempnerForge returns it:
/// siglip2: post_layernorm(last layer's output), every patch token (no CLS exists); clip:
/// embeddings -> pre_layrnorm -> layers, the last layer's output with the CLS token (position 0)
/// stripped. CLIP's post_layernorm only normalises the pooled CLS output, which is not returned, so the
/// clip encoder has no post_layernorm parameters (a checkpoint's are reported unused by load_hf_tensors,
/// as are the SigLIP pooling head and any text tower).
class VitEncoder : public sdk::VisionEncoder {
 public:
  /// Validates the config (VitConfig::validate) and builds the tower with LibTorch's default init.
  explicit VitEncoder(const VitConfig& config);
  int64_t feature_dim() const override { return config_.hidden_size; }
  int64_t num_tokens() const override { return config_.num_patches(); }
  /// config.json's image_size; SigLIP's statistics (0.5, 0.5) or, for clip, OpenAI CLIP's.
  sdk::PixelFormat pixel_format() const override;
  const VitConfig& config() const { return config_; }
  at::Tensor forward(const at::Tensor& pixels) override;
  /// load_hf_tensors(*this, tensors, origin) (hf_tensors.h).
  std::vector<std::string> load_hf_weights(const std::map<std::string, at::Tensor>& tensors,
                                           const std::string& origin) override;

 private:
  VitConfig config_;
  std::shared_ptr<VitEmbeddings> embeddings_;
  torch::nn::LayerNorm pre_layrnorm_{nullptr}, post_layernorm_{nullptr};
  std::vector<std::shared_ptr<VitLayer>> layers_;
};

}  // namespace kforge::vision
