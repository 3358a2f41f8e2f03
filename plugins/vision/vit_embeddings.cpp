// VitEmbeddings: pixels to patch tokens plus positions.
#include "vit_embeddings.h"

#include <ATen/ATen.h>
#include <kforge/sdk/error.h>

namespace kforge::vision {

VitEmbeddings::VitEmbeddings(const VitConfig& config) : config_(config) {
  const bool clip = config.tower == VitTower::clip;
  patch_embedding_ = register_module(
      "patch_embedding",
      torch::nn::Conv2d(torch::nn::Conv2dOptions(config.num_channels, config.hidden_size, config.patch_size)
                            .stride(config.patch_size)
                            .bias(!clip)));
  if (clip) class_embedding_ = register_parameter("class_embedding", at::randn({config.hidden_size}));
  position_embedding_ = register_module(
      "position_embedding", torch::nn::Embedding(config.num_patches() + (clip ? 1 : 0), config.hidden_size));
}

at::Tensor VitEmbeddings::forward(const at::Tensor& pixels) {
  const int64_t s = config_.image_size;
  if (pixels.dim() != 4 || pixels.size(1) != config_.num_channels || pixels.size(2) != s || pixels.size(3) != s) {
    throw sdk::Error(std::string("vision encoder ") + tower_name(config_.tower) + ": pixel_values of shape " +
                     c10::str(pixels.sizes()) + ", expected (B, " + std::to_string(config_.num_channels) + ", " +
                     std::to_string(s) + ", " + std::to_string(s) + ") (the checkpoint's image_size)");
  }
  const at::Tensor& weight = patch_embedding_->weight;
  at::Tensor tokens = patch_embedding_->forward(pixels.to(weight.scalar_type())).flatten(2).transpose(1, 2);
  if (class_embedding_.defined()) {
    tokens = at::cat({class_embedding_.view({1, 1, -1}).expand({tokens.size(0), 1, -1}), tokens}, 1);
  }
  return tokens + position_embedding_->weight.unsqueeze(0);
}

}  // namespace kforge::vision
