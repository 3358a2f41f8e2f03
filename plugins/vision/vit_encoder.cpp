// VitEncoder: the SigLIP2 / CLIP vision tower under Hugging Face's module tree.
#include "vit_encoder.h"

#include <ATen/ATen.h>
#include <torch/nn/modules/container/modulelist.h>

#include "hf_tensors.h"

namespace kforge::vision {

VitEncoder::VitEncoder(const VitConfig& config) : config_(config) {
  config_.validate(std::string("vision encoder ") + tower_name(config.tower));
  auto vision_model = register_module("vision_model", std::make_shared<torch::nn::Module>());
  embeddings_ = vision_model->register_module("embeddings", std::make_shared<VitEmbeddings>(config_));
  const auto norm = torch::nn::LayerNormOptions({config_.hidden_size}).eps(config_.layer_norm_eps);
  if (config_.tower == VitTower::clip) {
    pre_layrnorm_ = vision_model->register_module("pre_layrnorm", torch::nn::LayerNorm(norm));
  }
  auto encoder = vision_model->register_module("encoder", std::make_shared<torch::nn::Module>());
  torch::nn::ModuleList list;
  for (int64_t i = 0; i < config_.num_hidden_layers; ++i) {
    layers_.push_back(std::make_shared<VitLayer>(config_));
    list->push_back(layers_.back());
  }
  encoder->register_module("layers", list);
  if (config_.tower == VitTower::siglip2) {
    post_layernorm_ = vision_model->register_module("post_layernorm", torch::nn::LayerNorm(norm));
  }
}

at::Tensor VitEncoder::forward(const at::Tensor& pixels) {
  at::Tensor h = embeddings_->forward(pixels);
  if (pre_layrnorm_) h = pre_layrnorm_->forward(h);
  for (const auto& layer : layers_) h = layer->forward(h);
  if (post_layernorm_) return post_layernorm_->forward(h);
  return h.slice(1, 1);  // clip: strip the CLS token
}

std::vector<std::string> VitEncoder::load_hf_weights(const std::map<std::string, at::Tensor>& tensors,
                                                     const std::string& origin) {
  return load_hf_tensors(*this, tensors, origin);
}

sdk::PixelFormat VitEncoder::pixel_format() const {
  sdk::PixelFormat format;
  format.image_size = config_.image_size;
  if (config_.tower == VitTower::clip) {  // OpenAI CLIP's statistics, the CLIP image processor's defaults
    format.mean = {0.48145466f, 0.4578275f, 0.40821073f};
    format.std = {0.26862954f, 0.26130258f, 0.27577711f};
  }
  return format;
}

}  // namespace kforge::vision
